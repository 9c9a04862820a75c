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

# --- a runtime that hangs: described before it is killed, nothing left
cat > hang.c <<'EOF'
#include <stdlib.h>
#include <unistd.h>
__attribute__((constructor)) static void stuck(void)
{
    if (getenv("VPROF_META"))
        pause();
}
EOF
gcc -shared -fPIC -o hang.so hang.c
python3 "$SOAK" --files 2 --quick --seed ci --work "$TMP/w3" --out s3.json --lib "$TMP/hang.so" \
    --timeout 3 > soak3.txt 2>&1
n=$(python3 -c "import json; print(json.load(open('s3.json'))['hangs'])")
check "a hanging runtime: every case is a hang ($n of 2)" test "$n" = 2
h=$(ls "$TMP"/w3/repro/*/hang.txt | head -1)
check "the hang's report has the threads' state and kernel stack" \
    grep -q 'thread .*state S' "$h"
if command -v gdb > /dev/null; then
    check "and gdb's backtrace (the constructor in pause)" grep -q 'in stuck ()' "$h"
fi
check "no process of the hung runs left" test -z "$(pgrep -f "$TMP/w3/")"

# --- a runtime whose helper outlives the program: left behind, killed;
# and one whose helper ends with the program: a zombie until init reaps
# it, which is not a process left behind
cat > helper.c <<'EOF'
#include <stdlib.h>
#include <unistd.h>
__attribute__((constructor)) static void helper(void)
{
    int fd[2];
    if (!getenv("VPROF_META") || pipe(fd) < 0 || fork() != 0)
        return;             /* the program goes on; the helper: */
    close(fd[1]);
    close(1);
    close(2);
    char c;
    if (getenv("HELPER_STAYS"))
        sleep(30);
    else if (read(fd[0], &c, 1) < 0)   /* end of file: the program ended */
        _exit(1);
    _exit(0);
}
EOF
gcc -shared -fPIC -o helper.so helper.c
HELPER_STAYS=1 python3 "$SOAK" --files 2 --quick --seed ci --work "$TMP/w4" --out s4.json \
    --lib "$TMP/helper.so" > soak4.txt 2>&1
# left_behind JSON: cases that left processes behind
left_behind() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['failure_kinds'].get('processes', 0))" "$1"; }
n=$(left_behind s4.json)
check "a helper that outlives the program is left behind in every case ($n of 2)" test "$n" = 2
check "and killed" test -z "$(pgrep -f "$TMP/w4/")"
python3 "$SOAK" --files 2 --quick --seed ci --work "$TMP/w5" --out s5.json \
    --lib "$TMP/helper.so" > soak5.txt 2>&1
check "a helper that ends with the program is not left behind" test "$(left_behind s5.json)" = 0
finish
