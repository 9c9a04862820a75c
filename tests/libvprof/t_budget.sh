#!/bin/bash
# Bounded ticks (issue 14 item 1): valid metadata whose 10,000 entries are
# live over the whole text and each read an unmapped address (one system
# call each) made every tick cost more than the timer period; the program
# then never ran again and never received SIGTERM (thread-directed SIGPROF
# is delivered first). Each tick now has a budget of system-call reads and
# of time, ticks due right after a long one take no values, and the
# program finishes, dies promptly on SIGTERM and SIGINT, and the layout
# log says how many ticks the budget cut.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
cd "$TMP"
build pr prog_robust.c gcc -O2
N=10000
{
    echo "flags 0"
    echo "var far #global sint 8"
    for ((i = 0; i < N; i++)); do echo "entry far 0 0x7fffffffffff addr 0 8 0 0x7ff000000000"; done
} > hostile.txt
"$MKMETA" hostile.txt hostile.vmeta
export VPROF_META=$PWD/hostile.vmeta

# lay FILE FIELD...: fields of `vpcheck layout` (9 ticks 10 faults 11
# has_budget 12 cut 13 overdue)
lay() { local f=$1; shift; "$VPCHECK" layout "$f" | cut -d' ' -f"$(IFS=,; echo "$*")"; }

# --- the program finishes (a livelock is killed after 60 s)
prof run timeout -s KILL 60 ./pr spin 300 > run.txt 2> run.err
st=$?
check "hostile metadata ($N entries): program finishes (status $st)" test $st = 0
check "hostile metadata: program ran to its end" grep -qx done run.txt
l=$(one 'run/layout.*')
read -r ticks faults hb cut overdue < <(lay "$l" 9 10 11 12 13)
check "layout log: budget line read back, ticks cut counted ($cut of $ticks)" \
    test "${hb:-0}" = 1 -a "${cut:-0}" -gt 0
check "each cut tick made at most VPROF_TICK_READS=256 reads per frame it sampled ($faults faults)" \
    test "${faults:-1}" -le $((ticks * 256))
check "the cut is reported at exit" grep -q 'tick budget: [0-9]* of [0-9]* ticks cut short' run.err

# --- threads: every thread's ticks are bounded
prof thr timeout -s KILL 60 ./pr threads 4 200 > thr.txt 2>/dev/null
check "hostile metadata, 4 threads: program finishes" grep -qx done thr.txt

# --- the read budget is exact
VPROF_TICK_READS=5 prof r5 timeout -s KILL 60 ./pr spin 100 > /dev/null 2>&1
read -r ticks faults hb cut _ < <(lay "$(one 'r5/layout.*')" 9 10 11 12)
check "VPROF_TICK_READS=5: at most 5 reads per tick ($faults faults in $ticks ticks), every tick cut" \
    test "${ticks:-0}" -gt 0 -a "${faults:-1}" -le $((ticks * 5)) -a "${cut:-0}" -ge $((ticks - 1))
check "VPROF_TICK_READS and VPROF_TICK_US recorded" \
    grep -qx "budget	reads=5	us=500	cut=$cut	overdue=[0-9]*" "$(one 'r5/layout.*')"

# --- without the budget, overdue ticks alone keep the program going
VPROF_TICK_READS=1048576 VPROF_TICK_US=1000000 prof ovd timeout -s KILL 60 ./pr spin 200 \
    > ovd.txt 2>/dev/null
check "budget off: skipping overdue ticks still lets the program finish" grep -qx done ovd.txt
read -r overdue < <(lay "$(one 'ovd/layout.*')" 13)
check "budget off: overdue ticks counted ($overdue)" test "${overdue:-0}" -gt 0

# --- a long tick buys the program as much time before values are taken
# again: at 20 kHz a 5 ms tick is 100 periods, and skipping only the next
# tick (as before) let such ticks take almost all of the thread's time
# (the soak, bench/soak: a 72 ms program ran 40 s; 30x slower with the
# default budget at 20 kHz)
VPROF_TIMER=perf VPROF_HZ=20000 VPROF_TICK_US=5000 VPROF_TICK_READS=1048576 \
    prof duty timeout -s KILL 60 ./pr spin 300 > duty.txt 2>/dev/null
read -r cut overdue < <(lay "$(one 'duty/layout.*')" 12 13)
check "20 kHz, 5 ms ticks: the ticks in a long tick's quiet time take no values ($overdue overdue, $cut cut)" \
    test "${cut:-0}" -gt 0 -a "${overdue:-0}" -ge $((5 * ${cut:-0}))

# --- SIGTERM and SIGINT arrive promptly
# killtime SIG NAME CMD...: starts CMD in the background, sends SIG after
# 1 s, prints "STATUS MS" (MS: from the signal to the process's end; 99999
# if it did not end within 10 s, then it is killed).
killtime() {
    local sig=$1 dir=$2; shift 2
    VPROF_OUT=$dir LD_PRELOAD=$LIBVPROF "$@" > /dev/null 2>&1 &
    local pid=$! t0 t1 i
    sleep 1
    t0=$(date +%s%N)
    kill -"$sig" $pid
    for ((i = 0; i < 1000; i++)); do kill -0 $pid 2>/dev/null || break; sleep 0.01; done
    t1=$(date +%s%N)
    if kill -0 $pid 2>/dev/null; then kill -KILL $pid; wait $pid 2>/dev/null; echo "kill 99999"; return; fi
    wait $pid
    echo "$? $(((t1 - t0) / 1000000))"
}
read -r st ms < <(killtime TERM term ./pr spin 100000)
check "hostile metadata: SIGTERM ends the program (status $st, ${ms} ms)" test "$st" = 143 -a "$ms" -le 3000
check "SIGTERM: gmon and the layout's end line written" \
    test -n "$(one 'term/gmon.*.out')" -a "$(lay "$(one 'term/layout.*')" 2)" = 1
read -r st ms < <(killtime INT int env --default-signal=INT ./pr threads 4 100000)
check "hostile metadata, 4 threads: SIGINT ends the program (status $st, ${ms} ms)" \
    test "$st" = 130 -a "$ms" -le 3000

# --- bad knobs
VPROF_TICK_US=abc VPROF_TICK_READS=0 prof bad ./pr spin 20 > /dev/null 2> bad.err
check "bad VPROF_TICK_US / VPROF_TICK_READS: reported, defaults kept" \
    grep -q 'VPROF_TICK_US=abc' bad.err
check "bad knobs: defaults in the layout log" \
    grep -qx 'budget	reads=256	us=500	cut=[0-9]*	overdue=[0-9]*' "$(one 'bad/layout.*')"
finish
