#!/bin/bash
# bench/latency/run.sh - measures the stack scanner on this machine:
#  1. instructions per instrumented call (valgrind --tool=callgrind, total
#     instructions of callbench with and without the plugin, latency off),
#  1b. cost of the mutex shims (latency off: callgrind; off/on: CPU time),
#  2. overhead ratios (working thread's CPU time) of a call-heavy workload: instrumented with
#     latency off, with the 20 us scanner, with the busy scanner,
#  3. scanner granularity (LDB §6.1: depth-20 recursion, refresh period
#     1..100 us), busy and 20 us polling.
# Usage: bench/latency/run.sh [--quick]   (from the repository root, after make)
# Prints a report on stdout; exit 1 if something could not be built or run.
set -u
cd "$(dirname "$0")/../.." || exit 1
LIB=${VPROF_LIB:-$PWD/build/lib}
PLUGIN=$LIB/vprof-latency.so RT=$LIB/libvprof-latency.a FMT=$LIB/libvprof-format.a
QUICK=0; [ "${1:-}" = --quick ] && QUICK=1
for f in "$PLUGIN" "$RT" "$FMT"; do
    [ -f "$f" ] || { echo "run.sh: missing $f (run make)" >&2; exit 1; }
done
T=$(mktemp -d "${TMPDIR:-/tmp}/vprof-latbench.XXXXXX"); trap 'rm -rf "$T"' EXIT
B=bench/latency
INC="-Istack-scanner -Istack-scanner/rt"
LIBS="$RT $FMT -lpthread -ldl"
set -e
gcc -O2 $INC -c -o "$T/harness.o" tests/scanner/harness.c
clang-14 -O2 -o "$T/call_plain" $B/callbench.c
clang-14 -O2 -fpass-plugin="$PLUGIN" -o "$T/call_inst" $B/callbench.c "$T/harness.o" $LIBS
clang-14 -O2 $INC -fpass-plugin="$PLUGIN" -o "$T/gran" $B/granularity.c "$T/harness.o" $LIBS
clang-14 -O2 -o "$T/shim_plain" $B/shimbench.c -lpthread
clang-14 -O2 -o "$T/shim_rt" $B/shimbench.c "$T/harness.o" $LIBS
set +e
mkdir -p "$T/out"

echo "== vprof stack scanner benchmark ($(date -u +%FT%TZ), $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg))"
echo "   (figures depend on the machine's load: a busy scanner and the working"
echo "    thread compete with everything else for the cores)"

# 1. instructions per call
N=1000000
if command -v valgrind >/dev/null; then
    ir() {  # total instructions of one run, from callgrind's summary
        valgrind --tool=callgrind --callgrind-out-file="$T/cg.out" "$@" >/dev/null 2>&1 || return 1
        awk '/^summary:/ {print $2}' "$T/cg.out"
    }
    p=$(ir "$T/call_plain" $N 20 1) i=$(ir "$T/call_inst" $N 20 1)
    calls=$("$T/call_plain" $N 20 1 | awk '$1=="calls"{print $2}')
    awk -v p="$p" -v i="$i" -v c="$calls" 'BEGIN {
        printf "instructions per call (callgrind): plain %.2f, instrumented %.2f, added %.2f per call; ratio %.2fx (%d calls)\n",
               p/c, i/c, (i-p)/c, i/p, c }'
else
    echo "instructions per call: valgrind not installed"
fi

# 1b. shims: uncontended lock/unlock pairs
wall() {  # median ns of 3 runs
    for k in 1 2 3; do "$@" 2>/dev/null | awk '$1=="ns"{print $2}'; done | sort -n | sed -n 2p
}
if command -v valgrind >/dev/null; then
    p=$(ir "$T/shim_plain" 200000) i=$(ir "$T/shim_rt" 200000)
    awk -v p="$p" -v i="$i" 'BEGIN {
        printf "mutex lock+unlock shims, latency off (callgrind): +%.1f instructions per pair (%.1f -> %.1f)\n",
               (i-p)/600000, p/600000, i/600000 }'
fi
sp=$(wall "$T/shim_plain" 2000000); so=$(wall "$T/shim_rt" 2000000)
rm -rf "$T/out"/*; son=$(wall env VPROF_LATENCY=on VL_OUT="$T/out" "$T/shim_rt" 2000000)
awk -v a="$sp" -v b="$so" -v c="$son" 'BEGIN {
    printf "mutex lock+unlock pair, thread CPU time: glibc %.1f ns, shim off %.1f ns, shim on %.1f ns (uncontended: trylock + 2 clock reads)\n",
           a/2e6, b/2e6, c/2e6 }'

# 2. overhead: CPU time of the working thread (best of 3 repetitions inside
#    the program, median of 3 runs); the scanner's own CPU is not included
#    (on a dedicated core it is one core busy, or ~idle at 20 us polling).
N=20000000; FIB=30; [ $QUICK = 1 ] && N=5000000 FIB=27
base=$(wall "$T/call_plain" $N $FIB 3)
off=$(wall env VPROF_LATENCY=off "$T/call_inst" $N $FIB 3)
rm -rf "$T/out"/*; s20=$(wall env VPROF_LATENCY=on VL_OUT="$T/out" VPROF_LATENCY_MAX=65536 "$T/call_inst" $N $FIB 3)
rm -rf "$T/out"/*; s100=$(wall env VPROF_LATENCY=on VL_OUT="$T/out" VPROF_SCAN_NS=100000 VPROF_LATENCY_MAX=65536 "$T/call_inst" $N $FIB 3)
rm -rf "$T/out"/*; srt=$(wall env VPROF_LATENCY=on VL_OUT="$T/out" VPROF_SCAN_PRIO=rt VPROF_LATENCY_MAX=65536 "$T/call_inst" $N $FIB 3)
rm -rf "$T/out"/*; busy=$(wall env VPROF_LATENCY=on VL_OUT="$T/out" VPROF_SCAN_NS=0 VPROF_LATENCY_MAX=65536 "$T/call_inst" $N $FIB 3)
calls=$("$T/call_plain" $N $FIB 1 | awk '$1=="calls"{print $2}')
awk -v b="$base" -v o="$off" -v s="$s20" -v h="$s100" -v r="$srt" -v u="$busy" -v c="$calls" 'BEGIN {
    printf "thread CPU time, %d calls: plain %.1f ms (%.2f ns/call)\n", c, b/1e6, b/c
    printf "  instrumented, latency off     %.1f ms  ratio %.2fx  (+%.2f ns/call)\n", o/1e6, o/b, (o-b)/c
    printf "  instrumented, scanner 20 us   %.1f ms  ratio %.2fx\n", s/1e6, s/b
    printf "  instrumented, scanner 100 us  %.1f ms  ratio %.2fx\n", h/1e6, h/b
    printf "  instrumented, scanner 20 us rt %.1f ms ratio %.2fx\n", r/1e6, r/b
    printf "  instrumented, busy scanner    %.1f ms  ratio %.2fx\n", u/1e6, u/b }'

# 3. granularity (LDB: 119 ns at depth 20, 1 us refresh, busy scanner)
SECS=1; [ $QUICK = 1 ] && SECS=0.3
echo "granularity at depth 20 (mean time between valid looks at the thread):"
for mode in 0 20000 20000rt; do
    prio=normal; [ "${mode%rt}" != "$mode" ] && prio=rt
    for period in 1000 10000 100000; do
        rm -rf "$T/out"/*
        r=$(env VPROF_LATENCY=on VL_OUT="$T/out" VPROF_SCAN_NS=${mode%rt} VPROF_SCAN_PRIO=$prio \
                VPROF_LATENCY_MAX=1048576 "$T/gran" 20 $period $SECS 2>/dev/null | grep '^granularity')
        echo "$r" | awk -v m=$mode -v p=$period '{
            tot = $6 + $8 + $10; printf "  %-13s refresh %6d ns: granularity %8d ns  (%d looks: %.0f%% fast path, %.0f%% walks, %.0f%% seqlock retries)\n",
            (m == "0" ? "busy" : m == "20000" ? "scan 20 us" : "scan 20 us rt"), p, $2, tot, tot ? 100*$6/tot : 0, tot ? 100*$8/tot : 0, tot ? 100*$10/tot : 0 }'
    done
done
