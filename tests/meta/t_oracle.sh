#!/bin/bash
# gdb oracle for vprof-meta (schema-less mode): gcc 12 and clang 14 at -O0,
# -O1, -O2, DWARF 5 and DWARF 4, PIE and non-PIE. At every line-table PC of
# the test program (first execution), every variable gdb prints with a value
# must agree with what the runtime's reader reads through vprof-meta's
# entries, no entry may claim a PC where gdb says <optimized out>, and the
# coverage (entries where gdb has a value) must be at least 85%. The misses
# are DW_OP_entry_value ranges and expressions with arithmetic (reg+k as a
# value), which vprof-meta skips by design; thread-locals are unsupported.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/oracle_lib.sh"
command -v gdb >/dev/null || skip "gdb not installed"
[ -x "$META" ] || skip "vprof-meta not built"
oracle_build || { not_ok "build oracle_trace"; finish; }
cp "$HERE/progs/basic.c" "$HERE/progs/mixed.c" "$TMP/"
cd "$TMP" || exit 1

configs=("gcc -O0" "gcc -O1" "gcc -O2" "gcc -O2 -gdwarf-4" "gcc -O0 -gdwarf-4"
         "gcc -O2 -no-pie")
if command -v clang-14 >/dev/null; then
    configs+=("clang-14 -O0" "clang-14 -O1" "clang-14 -O2"
              "clang-14 -O2 -gdwarf-4")
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
finish
