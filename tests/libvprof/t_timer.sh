#!/bin/bash
# Where ticks come from (VPROF_TIMER, docs/RUNTIME.md): per-thread perf
# events deliver VPROF_HZ as asked (the kernel's tick limits POSIX timers to
# ~250 Hz); each thread gets ticks in proportion to its CPU time; fork and
# exec keep working; where perf_event_open is refused (seccomp), the POSIX
# timers take over and the layout log says so.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
cd "$TMP"
build pt prog_timer.c gcc -O1
gcc -O1 -o noperf "$SRC/noperf.c" || { echo "not ok - noperf builds"; exit 1; }
handmeta pt pt.vmeta
export VPROF_META=$PWD/pt.vmeta
timer_of() { sed -n 's/^timer\t//p' "$(one "$1/layout.*")"; }
ticks_of() { sed -n 's/^end\t.*ticks=\([0-9]*\).*/\1/p' "$(one "$1/layout.*")"; }

# rate: ticks per second of the process's CPU time (the event counts the
# thread's CPU time, and ticks when a period ends in the program's own code:
# a spinning program is there nearly always)
# On an oversubscribed machine (load above the cores: seen at load 4 on 2
# cores, with the test suite and a benchmark sharing them) 1 kHz lost 11-40 %
# of its ticks the same way 4 kHz does (below); the 10 % bound holds on a
# machine that is not, and the looser one is said when it applies.
busy=$(awk -v l="$(cut -d' ' -f1 /proc/loadavg)" -v n="$(nproc)" 'BEGIN { print (l > n) }')
VPROF_HZ=1000 prof r1 ./pt spin 400 > r1.txt
check "auto: perf events chosen, said in the layout log" test "$(timer_of r1)" = perf
t=$(ticks_of r1) u=$(awk '$1=="cpu_ms"{print $2}' r1.txt)
rate=$(awk -v t="$t" -v u="$u" 'BEGIN{printf "%.0f", t / (u / 1000)}')
if [ "$busy" = 1 ]; then
    check "1 kHz asked: $rate ticks per CPU second delivered (oversubscribed: within 50%)" \
        test "$rate" -ge 500 -a "$rate" -le 1100
else
    check "1 kHz asked: $rate ticks per CPU second delivered (within 10%)" \
        test "$rate" -ge 900 -a "$rate" -le 1100
fi
VPROF_HZ=4000 prof r4 ./pt spin 300 > r4.txt
t=$(ticks_of r4) u=$(awk '$1=="cpu_ms"{print $2}' r4.txt)
rate4=$(awk -v t="$t" -v u="$u" 'BEGIN{printf "%.0f", t / (u / 1000)}')
# 4 kHz: a period that ends while the previous tick's signal is still
# pending is lost (a pending signal is not queued twice), and on a loaded
# machine (other jobs on both CPUs) delivery lags often enough to lose
# 15-20 % of them; 1 kHz above keeps the 10 % bound
check "4 kHz asked: $rate4 delivered (within 25%)" test "$rate4" -ge 3000 -a "$rate4" -le 4400
check "gmon's rate is VPROF_HZ: gprof reads 0.00025 s per sample" \
    bash -c "gprof -b -p ./pt $(one "r4/gmon.*.out") | grep -q 'Each sample counts as 0.00025 seconds'"

# forced and refused: POSIX timers
VPROF_TIMER=posix VPROF_HZ=1000 prof p1 ./pt spin 200 > p1.txt
check "VPROF_TIMER=posix: the layout log says posix" test "$(timer_of p1)" = posix
# POSIX CPU-time timers expire only at a scheduler tick that finds the
# thread running: on a loaded machine 200 ms of CPU got 4-9 of them
check "VPROF_TIMER=posix: ticks still taken ($(ticks_of p1))" test "$(ticks_of p1)" -gt 2
VPROF_HZ=1000 prof s1 ./noperf ./pt spin 200 > s1.txt 2> s1.err
check "perf_event_open refused (seccomp): program unharmed" grep -q '^cpu_ms' s1.txt
check "perf_event_open refused: POSIX timers, said in the layout log" test "$(timer_of s1)" = posix
check "perf_event_open refused: still sampled ($(ticks_of s1) ticks)" test "$(ticks_of s1)" -gt 2
VPROF_TIMER=perf VPROF_HZ=1000 prof s2 ./noperf ./pt spin 100 > s2.txt 2> s2.err
check "VPROF_TIMER=perf refused: one warning naming the fallback" grep -q 'VPROF_TIMER=perf: perf_event_open.*POSIX' s2.err
check "VPROF_TIMER=perf refused: POSIX timers" test "$(timer_of s2)" = posix

# threads: each thread's share of the ticks follows its share of the CPU
VPROF_HZ=2000 prof th ./pt uneven 4 60 > th.txt
"$VPCHECK" values "$(one "th/values.*")" | awk '!/^#/{print $5, $6}' | sort -u |
    awk '{n[$1]++} END{for (t in n) print t, n[t]}' > ticks_by_tid.txt
# Within 10% of it, or three standard deviations of a share of T ticks when
# that is wider: 1,200 ticks give the 10% thread a deviation of 9% by
# chance alone (lost ticks, a tick's period split between threads), and the
# bound failed 1 run in 5 at 10%; a thread sampled twice as often as it
# runs, or not at all, is still far outside.
check "threads: every thread's ticks within 10% (or 3 sd) of its CPU share" python3 -c "
import math
cpu = {l.split()[1]: float(l.split()[2]) for l in open('th.txt') if l.startswith('thread')}
tk = {l.split()[0]: int(l.split()[1]) for l in open('ticks_by_tid.txt')}
assert len(cpu) == 4 and all(t in tk for t in cpu), (cpu, tk)
C, T = sum(cpu.values()), sum(tk[t] for t in cpu)
def bound(p): return max(0.1 * p, 3 * math.sqrt(p * (1 - p) / T))
bad = [(t, cpu[t] / C, tk[t] / T) for t in cpu if abs(tk[t] / T - cpu[t] / C) > bound(cpu[t] / C)]
assert not bad, (bad, T)"

# fork + exec with perf ticks: the child and its new image are profiled
VPROF_HZ=1000 prof fe ./pt forkexec 150 > fe.txt
check "fork+exec: the exec'd child ran to its end" grep -q '^cpu_ms' fe.txt
check "fork+exec: parent, child and its new image have layout logs" test "$(ls fe/layout.* | wc -l)" = 3
for l in fe/layout.*; do
    id=${l#fe/layout.}
    n=$("$VPCHECK" values "fe/values.$id" | awk '!/^#/{print $5, $6}' | sort -u | wc -l)
    check "fork+exec: process $id took perf ticks ($n; the pre-exec image's log has no end line)" \
        bash -c "grep -q '^timer.perf' '$l' && test $n -gt 50"
done
finish
