#!/bin/bash
# vprof's own threads are never profiled (issue 14 item 2): the stack
# scanner thread (VPROF_LATENCY=on) never owns a profiling timer and keeps
# SIGPROF blocked, in the parent and in a fork child, where profiling is
# already on when the scanner is restarted. An idle child takes no ticks.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
cd "$TMP"
build po prog_ownthreads.c gcc -O1
# Both tick sources: POSIX timers (/proc/self/timers names the thread each
# signals) and perf events (one descriptor per profiled thread).
for tm in posix perf; do
rm -rf out
# A busy scanner (VPROF_SCAN_NS=0) would take many ticks if it had a timer.
VPROF_TIMER=$tm VPROF_LATENCY=on VPROF_SCAN_NS=0 prof out ./po > out.txt 2> err.txt
st=$?
cat out.txt
check "$tm: program ran (status $st)" test $st = 0
for who in parent child; do
    scan=$(awk -v w=$who '$1==w && $2=="scanner"{print $3}' out.txt | sort -u)
    check "$tm $who: the scanner thread is running" test -n "$scan"
    own=$(awk -v w=$who -v s=" $(echo $scan) " '$1==w && $2=="timer" && index(s, " " $3 " ") {print $3}' out.txt)
    check "$tm $who: no profiling timer signals the scanner thread (${own:-none})" test -z "$own"
    self=$(awk -v w=$who '$1==w && $2=="self"{print $3}' out.txt | head -1)
    if [ $tm = posix ]; then
        check "$tm $who: the program's own thread has its timer" \
            grep -qx "$who timer $self" out.txt
    else
        check "$tm $who: one perf event, the program's thread's (not the scanner's)" \
            test "$(awk -v w=$who '$1==w && $2=="perf"{print $3}' out.txt | sort -u)" = 1
    fi
    blk=$(awk -v w=$who '$1==w && $2=="scanner"{print $4}' out.txt | head -1)
    check "$tm $who: the scanner keeps SIGPROF blocked (SigBlk $blk)" \
        test -n "$blk" -a $(( 0x${blk:-0} >> 26 & 1 )) = 1
done
child=$(awk '$1=="child" && $2=="self"{print $3}' out.txt)
read -r _ has_end _ _ _ _ _ _ ticks _ < <("$VPCHECK" layout "out/layout.$child")
check "$tm idle child: its layout log is complete, no tick taken by a vprof thread ($ticks ticks)" \
    test "$has_end" = 1 -a "${ticks:-99}" -le 2
done
finish
