#!/bin/bash
# gdb oracle for vprof-meta (schema-less mode): gcc 12 and clang 14 at -O0,
# -O1, -O2, DWARF 5 and DWARF 4, PIE and non-PIE, compressed debug sections,
# split DWARF (.dwo files). At every line-table PC of
# the test program (first execution), every variable gdb prints with a value
# must agree with what the runtime's reader reads through vprof-meta's
# entries, no entry may claim a PC where gdb says <optimized out>, and the
# coverage (entries where gdb has a value) must be at least 85%. The misses
# are DW_OP_entry_value ranges, which vprof-meta skips by design;
# thread-locals are unsupported.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/oracle_lib.sh"
command -v gdb >/dev/null || skip "gdb not installed"
[ -x "$META" ] || skip "vprof-meta not built"
oracle_build || { not_ok "build oracle_trace"; finish; }
cp "$HERE/progs/basic.c" "$HERE/progs/mixed.c" "$HERE/progs/cpp.cc" "$TMP/"
cd "$TMP" || exit 1

configs=("gcc -O0" "gcc -O1" "gcc -O2" "gcc -O2 -gdwarf-4" "gcc -O0 -gdwarf-4"
         "gcc -O2 -no-pie" "gcc -O2 -gz" "gcc -O0 -gsplit-dwarf"
         "gcc -O2 -gsplit-dwarf")
if command -v clang-14 >/dev/null; then
    configs+=("clang-14 -O0" "clang-14 -O1" "clang-14 -O2"
              "clang-14 -O2 -gdwarf-4" "clang-14 -O1 -gz")
else
    echo "# clang-14 missing: clang configurations not run"
fi
n=0
for cfg in "${configs[@]}"; do
    for prog in basic mixed; do
        n=$((n + 1))
        bin=$TMP/$prog$n
        # shellcheck disable=SC2086
        if ! $cfg -g -o "$bin" $prog.c; then
            not_ok "$prog $cfg: compile"; continue
        fi
        if ! "$META" --all --files "$prog.c" -o "$bin.vmeta" -q "$bin"; then
            not_ok "$prog $cfg: vprof-meta"; continue
        fi
        oracle_run "$prog $cfg" "$bin" $prog.c "$bin.vmeta" "" -- \
            --unsupported g_tls --min-coverage 0.85
    done
done

# A pointer parameter of an inlined copy pointing at its caller's stack
# object: DWARF computes its value ("frame base + 8, as a value"); what it
# points at is memory there (locexpr.c addr_val, place.c). gdb must agree on
# the pointee wherever vprof-meta now describes it.
cp "$HERE/progs/inlptr.c" "$TMP/"
for cfg in "gcc -O2" "clang-14 -O2"; do
    command -v "${cfg%% *}" >/dev/null || continue
    n=$((n + 1))
    bin=$TMP/inlptr$n
    # shellcheck disable=SC2086
    $cfg -g -o "$bin" inlptr.c || { not_ok "inlptr $cfg: compile"; continue; }
    "$META" --all --files inlptr.c -o "$bin.vmeta" -q "$bin" || { not_ok "inlptr $cfg: vprof-meta"; continue; }
    oracle_run "inlptr $cfg" "$bin" inlptr.c "$bin.vmeta" "" -- --min-coverage 0.5
done
if command -v clang-14 >/dev/null; then
    "$META" --all --files inlptr.c -o inl.vmeta -q "$TMP/inlptr$n" &&
        "$META" --dump inl.vmeta > inl.dump
    check "clang -O2: spend's count (rsp+k as a value) read as memory at rsp+k" python3 -c "
import re
d = open('inl.dump').read()
v = re.search(r'^var (\d+) \S+ spend count ', d, re.M).group(1)
e = re.findall(r'^entry \S+ \S+ var=%s (BREG|FBREG) .*flags=(\d+) offset=(-?\d+)' % v, d, re.M)
assert any(int(f) & 1 == 0 and int(o) != 0 for _, f, o in e), e"
fi

# Computed values (DW_OP_stack_value after arithmetic, clang's
# DW_OP_convert): vprof-meta writes EXPR programs (FORMATS.md §2.1), the
# runtime's evaluator (value_read.c) computes them; every such value must
# be gdb's, and enough of them must be there to mean something.
cp "$HERE/progs/exprs.c" "$TMP/"
for cfg in "gcc -O2:8" "gcc -O1:4" "clang-14 -O2:4"; do
    want=${cfg##*:} cfg=${cfg%:*}
    command -v "${cfg%% *}" >/dev/null || continue
    n=$((n + 1))
    bin=$TMP/exprs$n
    # shellcheck disable=SC2086
    $cfg -g -o "$bin" exprs.c || { not_ok "exprs $cfg: compile"; continue; }
    "$META" --all --files exprs.c -o "$bin.vmeta" -q "$bin" || { not_ok "exprs $cfg: vprof-meta"; continue; }
    # (the misses: entry values, DW_OP_entry_value, as everywhere)
    oracle_run "exprs $cfg" "$bin" exprs.c "$bin.vmeta" "" -- --min-coverage 0.8 --min-expr "$want"
done

# C++: names are DWARF's plain names (gdb's qualified ones are reduced the
# same way); `this` is artificial and deliberately not described.
cxx=("g++ -O0" "g++ -O2")
command -v clang++-14 >/dev/null && cxx+=("clang++-14 -O0" "clang++-14 -O2")
for cfg in "${cxx[@]}"; do
    n=$((n + 1))
    bin=$TMP/cpp$n
    # shellcheck disable=SC2086
    if ! $cfg -g -o "$bin" cpp.cc; then
        not_ok "cpp $cfg: compile"; continue
    fi
    if ! "$META" --all --files cpp.cc -o "$bin.vmeta" -q "$bin"; then
        not_ok "cpp $cfg: vprof-meta"; continue
    fi
    oracle_run "cpp $cfg" "$bin" cpp.cc "$bin.vmeta" "" -- \
        --unsupported this --min-coverage 0.8
done

# clang split DWARF: gdb 13 loses many values of clang's .dwo location lists
# (it says <optimized out> where the non-split build has values), so gdb is
# no reference there; vprof-meta must describe the same variables as in the
# non-split build, with the same number of entries.
if command -v clang-14 >/dev/null; then
    clang-14 -g -O2 -o nosplit mixed.c
    clang-14 -g -O2 -gsplit-dwarf -o split mixed.c
    "$META" --all --files mixed.c -q -o nosplit.vmeta nosplit
    "$META" --all --files mixed.c -q -o split.vmeta split 2>split.err
    "$META" --dump nosplit.vmeta | grep '^var' >nosplit.vars
    "$META" --dump split.vmeta | grep '^var' >split.vars
    check "clang -gsplit-dwarf: same variables as without" cmp -s nosplit.vars split.vars
    check "clang -gsplit-dwarf: same number of entries" test \
        "$("$META" --dump nosplit.vmeta | grep -c '^entry')" -eq \
        "$("$META" --dump split.vmeta | grep -c '^entry')"
    rm -f ./*.dwo
    "$META" --all --files mixed.c -q -o gone.vmeta split 2>gone.err
    check "missing .dwo: warning, still exit 0" grep -q "split-DWARF .dwo file(s) of split could not be read" gone.err
fi
finish
