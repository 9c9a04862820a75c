#!/bin/bash
# --waits --perf-script: the scheduler's tracepoints as the input (wPerf's
# own source). A hand-written sample (tests/report/data/sched.perf.txt, and
# the same without the PID column) with known weights: a wait woken by a
# thread (call chains give both sites), an uninterruptible wait woken in a
# NET_RX softirq (network), a sleep ended by an hrtimer interrupt that ran
# in another process's task ([timer], not that task), the plugin's short
# sched_switch form, runnable time. Then, where perf can record tracepoints
# (root), a live recording of tests/report/waitprog.c.
source "$(dirname "$0")/../lib.sh"
R=$VPROF_BIN/vprof-report
D=$VPROF_ROOT/tests/report/data
# the ASan/UBSan build when present and not older than the normal one
S=${VPROF_SAN_BIN:-}/vprof-report
if [ -x "$S" ] && ! [ "$S" -ot "$R" ]; then R=$S; echo "# using $S"; fi
export ASAN_OPTIONS=detect_leaks=0
cd "$TMP"
"$R" --waits --json --waits-min 0 --perf-script "$D/sched.perf.txt" > s.json
check "sample: exit 0" [ $? -eq 0 ]
py() { python3 -c "import json; d=json.load(open('$1'))['waits'][0]
e={(x['from'],x['to']): x for x in d['edges']}
w={k: round(v['weight_s']*1e6, 3) for k, v in e.items()}
v={x['name']: x for x in d['vertices']}
$2"; }
check "sample: the source is the perf tracepoints, pid 100" py s.json '
assert d["source"] == "perf sched tracepoints" and d["pid"] == 100, d["source"]'
check "sample: weights in us (4+5 | 7.91+2.01 cascaded | 10 | 2+2 cascaded)" py s.json '
assert w == {("main","prog"): 9000.0, ("prog","network"): 9920.0, ("prog","main"): 10000.0,
             ("main","[timer]"): 4000.0}, w'
check "sample: wait and wake sites from the call chains (outside libc)" py s.json '
x = e[("main","prog")]
assert "wait_for_reply (prog)" in [s["site"] for s in x["wait_sites"]], x
assert [s["site"] for s in x["wake_sites"]] == ["send_reply (prog)"], x'
check "sample: runnable from the wake-ups to the next run (5.6 ms of main)" py s.json '
assert abs(v["main"]["runnable_s"] - 0.0056) < 1e-9, v["main"]'
"$R" --waits --json --waits-min 0 --waits-merge none --perf-script "$D/sched-nopid.perf.txt" > n.json
check "sample without the PID column: same weights (one process of all traced tasks)" py n.json '
assert w[("prog#1","prog#2")] == 9000.0 and w[("prog#2","network")] == 9920.0 and w[("prog#1","[timer]")] == 4000.0, w'
"$R" --waits --json --waits-min 0 --perf-script "$D/sched-waking.perf.txt" > k.json
check "cross-CPU wake-up: sched_waking names the waker, not the IPI's idle task" py k.json '
assert w == {("main","prog"): 2000.0, ("prog","main"): 1000.0}, w
assert [s["site"] for s in e[("main","prog")]["wake_sites"]] == ["drop_lock (prog)"], e'
# without sched_waking the wake-up is the idle task's interrupt: what the
# docs warn about, kept so that the difference stays visible
sed '/sched:sched_waking:/,/^$/d' "$D/sched-waking.perf.txt" > nowaking.txt
"$R" --waits --json --waits-min 0 --perf-script nowaking.txt > nk.json
check "cross-CPU wake-up without sched_waking: an interrupt" py nk.json '
assert ("main","prog") not in w and ("main","[interrupt]") in w, w'
"$R" --waits --perf-script "$D/sched.perf.txt" --perf-pid 999 > /dev/null 2> e1.txt; rc=$?
check "--perf-pid of a process without waits: exit 1" eval '[ $rc -eq 1 ] && grep -q "no waits" e1.txt'
printf 'nothing here\n' > bad.txt
"$R" --waits --perf-script bad.txt > /dev/null 2> e2.txt; rc=$?
check "no scheduler events: exit 1 with how to record them" eval \
    '[ $rc -eq 1 ] && grep -q "bad.txt: no sched:sched_switch" e2.txt'
"$R" --waits --perf-script missing.txt > /dev/null 2> e3.txt; rc=$?
check "missing file: exit 1, named" eval '[ $rc -eq 1 ] && grep -q "missing.txt" e3.txt'

# live: perf record -a of the real program (wakeups by interrupts happen in
# other tasks' contexts, so -a is needed to see them)
command -v perf > /dev/null || { finish; }
gcc -O1 -g -pthread -I"$VPROF_ROOT/libvprof/include" -I"$VPROF_ROOT/stack-scanner" -o wp \
    "$VPROF_ROOT/tests/report/waitprog.c" -x c - <<'C' || { echo "not ok - build waitprog"; exit 1; }
void vprof_wait_begin(const void *o) { (void)o; }
void vprof_wait_end(const void *o) { (void)o; }
void vprof_wake(const void *o) { (void)o; }
C
if ! timeout 60 perf record -q -a -g -e sched:sched_switch,sched:sched_waking,sched:sched_wakeup,sched:sched_wakeup_new \
        -o p.data -- ./wp "$TMP/w.dat" > wp.out 2> perf.err; then
    echo "# perf cannot record scheduler tracepoints here: $(tail -1 perf.err)"
    finish
fi
perf script -i p.data -F comm,pid,tid,cpu,time,event,trace,ip,sym,dso > p.txt 2> /dev/null
pid=$(awk '$1 == "wp" { split($2, a, "/"); print a[1]; exit }' p.txt)
"$R" --waits --json --waits-merge none --waits-min 0 --perf-script p.txt --perf-pid "$pid" > l.json
check "live perf: the process's waits were read" [ -s l.json ]
# workers are numbered by creation (sched_wakeup_new), not by first run:
# the holder is wp#1 in every recording
check "live perf: waits on the mutex holder and on main (condition, semaphore, pipe)" py l.json '
assert ("wp#2", "wp#1") in e and ("wp#2", "main") in e, list(e)'
check "live perf: main's sleeps end by the timer interrupt" py l.json '
assert ("main", "[timer]") in e, list(e)'
finish
