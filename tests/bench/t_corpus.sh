#!/bin/bash
# The bug corpus (bench/bugs): every case builds warning-free with gcc -pg,
# both workloads run, the root cause exists in the binary, plain gprof does not
# rank it first, and the buggy workload inflates the cost function's call
# count. Needs only gcc, binutils (gprof, nm) and python3.
source "$(dirname "$0")/../lib.sh"
command -v gprof >/dev/null || skip "binutils gprof not installed"
command -v python3 >/dev/null || skip "python3 not installed"
n_cases=$(ls "$VPROF_ROOT"/bench/bugs/*/case.conf 2>/dev/null | wc -l)
python3 "$VPROF_ROOT/bench/tools/check_corpus.py" "$TMP"
rc=$?
[ "$n_cases" -ge 12 ] && ok "corpus has $n_cases cases (>= 12)" || not_ok "corpus has $n_cases cases, need >= 12"
for p in wrong_constraint missing_constraint scalability; do
    k=$(grep -l "^pattern=$p\$" "$VPROF_ROOT"/bench/bugs/*/case.conf 2>/dev/null | wc -l)
    [ "$k" -ge 3 ] && ok "$k cases of pattern $p (>= 3)" || not_ok "$k cases of pattern $p, need >= 3"
done
[ $rc -eq 0 ] || _n_fail=$((_n_fail + 1))
finish
