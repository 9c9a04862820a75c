#!/bin/bash
# The hostile-metadata soak (bench/soak, issue 14), short: 200 generated
# metadata files (mutations of vprof-meta's file and valid hostile files
# written by mkmeta), each under a program with threads and fork, perf or
# POSIX ticks, SIGTERM for some: vprof must never change the program's
# status or output, crash, hang, ignore SIGTERM or say more than its own
# lines. `make -C bench soak` runs 10,000 (bench/RESULTS.md). Then the soak
# itself must catch a runtime that crashes: every case fails, each with a
# reproducer that reproduces it.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
command -v python3 > /dev/null || skip "python3 missing"
[ -x "$VPROF_META_BIN" ] || skip "vprof-meta not built"
cd "$TMP"
SOAK=$VPROF_ROOT/bench/soak/run.py

python3 "$SOAK" --files 200 --quick --seed ci --work "$TMP/w" --out s.json > soak.txt 2>&1
st=$?
sed -n '/^soak: 200 files/,$p' soak.txt
check "200 hostile metadata files: no crash, hang or harm (status $st)" test $st = 0
# field NAME: a number from the summary
field() { python3 -c "import json,sys; s=json.load(open('s.json')); print(eval(sys.argv[1], {}, s))" "$1"; }
check "the soak counted 200 files" test "$(field files)" = 200
check "crashes 0, hangs 0, SIGTERM ignored 0" \
    test "$(field 'crashes + hangs + sigterm_ignored')" = 0
check "some files rejected with a message ($(field "outcomes.get('rejected', 0)"))" \
    test "$(field "outcomes.get('rejected', 0)")" -ge 20
check "some files sampled ($(field "outcomes.get('sampled', 0)"))" \
    test "$(field "outcomes.get('sampled', 0)")" -ge 20
check "guarded reads faulted and ticks were cut in some ($(field "flags.get('faults', 0)"), $(field "flags.get('cut', 0)"))" \
    test "$(field "flags.get('faults', 0)")" -gt 0 -a "$(field "flags.get('cut', 0)")" -gt 0
check "SIGTERM sent in some ($(field sigterm_cases))" test "$(field sigterm_cases)" -gt 0
check "both tick sources used" test "$(field 'len(timers)')" = 2

# --- a runtime that crashes (SIGSEGV at start-up when it has metadata)
cat > crash.c <<'EOF'
#include <signal.h>
#include <stdlib.h>
__attribute__((constructor)) static void boom(void)
{
    if (getenv("VPROF_META"))
        raise(SIGSEGV);
}
EOF
gcc -shared -fPIC -o crash.so crash.c
python3 "$SOAK" --files 6 --quick --seed ci --work "$TMP/w2" --out s2.json --lib "$TMP/crash.so" \
    > soak2.txt 2>&1
st=$?
check "a crashing runtime fails the soak (status $st)" test $st = 1
n=$(python3 -c "import json; print(json.load(open('s2.json'))['crashes'])")
check "and every case is a crash ($n of 6)" test "$n" = 6
r=( "$TMP"/w2/repro/*/repro.sh )
check "one reproducer per crash (${#r[@]})" test ${#r[@]} = 6
"${r[0]}" > /dev/null 2>&1
st=$?
check "a reproducer reproduces the crash (status $st)" test $st = 139
finish
