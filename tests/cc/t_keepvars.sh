#!/bin/bash
# vprof-cc --keep-vars: fake uses keep the schema's locals live at -O2.
# A variable clang -O2 optimizes out (prune's t in src/keepvars.c) is placed
# with the option, the program prints the same, and the values the runtime's
# reader reads through vprof-meta's entries equal gdb's (the oracle of
# tests/meta). The option must leave -O0 code, the default build, setjmp,
# varargs, musttail, sibling calls, naked functions, long double, __int128,
# C++ exceptions, coroutines and LTO working; a bad VPROF_KEEP_VARS fails
# the compile with a message naming it.
. tests/lib.sh
. tests/cc/lib_cc.sh
. tests/meta/oracle_lib.sh
cd "$TMP" || exit 1

K=$CC_SRC/keepvars.c
cp "$K" keepvars.c
"$VCC" -O2 --no-keep-vars -o off keepvars.c 2>/dev/null || not_ok "build without --keep-vars"
"$VCC" -O2 --keep-vars -o on keepvars.c 2>/dev/null || not_ok "build with --keep-vars"
check "same output with and without --keep-vars" \
    bash -c 'cmp -s <(./off) <(./on) && cmp -s <(./off 45) <(./on 45)'
"$META" --explain -o /dev/null off 2>off.explain
"$META" --explain -o /dev/null on 2>on.explain
check "without --keep-vars prune's t is optimized out (the case the option is for)" \
    grep -q 'prune: t: not placed: optimized out' off.explain
check "with --keep-vars prune's t is placed" \
    bash -c '! grep -q "prune: t: not placed" on.explain && grep -q "variables placed" on.explain'
# "N variables placed, ...; M not placed (K optimized out, ...)"
placed() { sed -n 's/^vprof-meta: \([0-9]*\) variables placed.*/\1/p' "$1"; }
outs() { grep 'variables placed' "$1" | grep -o '[0-9]* optimized out' | cut -d' ' -f1; }
check "--keep-vars places more variables ($(placed off.explain) -> $(placed on.explain))" \
    test "$(placed on.explain)" -gt "$(placed off.explain)"
check "--keep-vars leaves fewer optimized out ($(outs off.explain) -> $(outs on.explain))" \
    test "$(outs on.explain)" -lt "$(outs off.explain)"

# gdb must agree with every value read through the entries of the
# keep-vars build, prune's t among them.
if command -v gdb >/dev/null && oracle_build; then
    "$META" --all --files keepvars.c -o on.all.vmeta -q on
    oracle_run "keep-vars clang -O2 oracle" "$PWD/on" keepvars.c on.all.vmeta "" -- \
        --min-coverage 0.85
    # trace lines: PC, function, variable, line, value read, address
    check "oracle compared prune's t, with a value" \
        awk -F'\t' '$2 == "prune" && $3 == "t" && $5 ~ /^[0-9]+$/ {f = 1} END {exit !f}' "$PWD/on.trace"
else
    echo "# gdb missing or oracle_trace not built: oracle not run"
fi

# Off by default, and --no-keep-vars wins over the environment: the code
# is then exactly clang's; with the option it is not.
text_of() { objcopy -O binary --only-section=.text "$1" "$1.text" && cat "$1.text"; }
export -f text_of
"$VCC" -O2 -c "$K" -o default.o
"$VCC" -O2 --no-keep-vars -c "$K" -o no.o
VPROF_KEEP_VARS=1 "$VCC" -O2 --no-keep-vars -c "$K" -o envno.o
"$VCC" -O2 --keep-vars -c "$K" -o yes.o
check "default build has the code of --no-keep-vars" cmp -s <(text_of default.o) <(text_of no.o)
check "--no-keep-vars overrides VPROF_KEEP_VARS=1" cmp -s <(text_of envno.o) <(text_of no.o)
check "--keep-vars changes the -O2 code" bash -c "! cmp -s <(text_of yes.o) <(text_of no.o)"
"$VCC" -O0 -c "$K" -o o0.o
"$VCC" -O0 --keep-vars -c "$K" -o o0keep.o
check "-O0 code unchanged by --keep-vars" cmp -s <(text_of o0.o) <(text_of o0keep.o)
schema_of yes.o s.yes
schema_of no.o s.no
check "same schema with and without --keep-vars (it describes the source)" \
    bash -c "test -s s.yes && cmp -s s.yes s.no"

# The edge cases: same output, at -O0, -O2 and with LTO.
E=$CC_SRC/keepvars_edge.c
for cfg in "-O0" "-O2" "-O2 -flto" "-O2 -flto=thin"; do
    # shellcheck disable=SC2086
    "$VCC" $cfg --no-keep-vars -o edge.off "$E" 2>/dev/null &&
        "$VCC" $cfg --keep-vars -o edge.on "$E" 2>edge.err
    check "edge cases $cfg: build with --keep-vars" test -x edge.on
    check "edge cases $cfg: same output" bash -c 'cmp -s <(./edge.off 12) <(./edge.on 12) && cmp -s <(./edge.off 2) <(./edge.on 2)'
    rm -f edge.on edge.off
done
"$VCC" -O2 --keep-vars -o edge.on "$E" 2>/dev/null
check "sibling call kept: sib ends in jmp leaf" \
    bash -c "objdump -d --no-show-raw-insn edge.on | awk '/<sib>:/,/^\$/' | grep -q 'jmp.*<leaf>'"
VPROF_KEEP_VARS=1 "$VCC" -O2 -S -emit-llvm -o edge.ll "$E" 2>/dev/null
check "fake uses inserted (IR has !vprof.keep)" grep -q 'vprof.keep' edge.ll
check "no fake use in the naked function" \
    bash -c "! awk '/^define.*@naked_fn/,/^}/' edge.ll | grep -q vprof.keep"
check "no fake use between a musttail call and its ret" \
    bash -c "! awk '/^define.*@tail\\(/,/^}/' edge.ll | grep -q vprof.keep"

# C++: templates, destructors during unwinding, catch; coroutines.
X=$CC_SRC/keepvars_eh.cc
"$VCXX" -O2 --no-keep-vars -o eh.off "$X" 2>/dev/null
"$VCXX" -O2 --keep-vars -o eh.on "$X" 2>/dev/null
check "C++ exceptions: same output" bash -c 'cmp -s <(./eh.off) <(./eh.on) && cmp -s <(./eh.off x) <(./eh.on x)'
VPROF_KEEP_VARS=1 "$VCXX" -O0 -S -emit-llvm -Xclang -disable-O0-optnone -o eh.ll "$X" 2>/dev/null
check "C++: a fake use before resume (unwinding keeps the values too)" \
    bash -c "grep -B3 '^  resume ' eh.ll | grep -q vprof.keep"
C=$CC_SRC/keepvars_coro.cc
if "$VCXX" -std=c++20 -O2 --no-keep-vars -o coro.off "$C" 2>/dev/null; then
    "$VCXX" -std=c++20 -O2 --keep-vars -o coro.on "$C" 2>/dev/null
    check "C++20 coroutine: same output" bash -c 'cmp -s <(./coro.off) <(./coro.on)'
else
    echo "# no <coroutine>: coroutine case not run"
fi

# Bad value: a clear error, no object.
VPROF_KEEP_VARS=yes "$VCC" -O2 -c "$K" -o bad.o 2>bad.err
check "VPROF_KEEP_VARS=yes fails the compile" test ! -s bad.o
check "... with a message naming the value" grep -q "VPROF_KEEP_VARS='yes'" bad.err
finish
