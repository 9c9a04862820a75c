#!/bin/bash
# Cost of vprof-report --variance (issue 15): bench/bugs/memcached_lru_crawler,
# buggy configuration (--items 300000), built with vprof-cc --latency and run
# for about a minute with VPROF_LATENCY=1 (REQUESTS GETs, one per --think-us
# 1000 µs). Prints the events written per second of the run, then the time
# and peak memory of vprof-report --variance on that run directory next to
# two peers measured on the same files in the same run: `cat` of the
# latency file (reading it) and the ranking mode (vprof-report RUN RUN,
# which loads the same events). Usage: bench/variance/run.sh [WORKDIR]
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=$ROOT/build/bin
WORK=${1:-$ROOT/build/bench/variance}
REQUESTS=${REQUESTS:-50000}
CASE=$ROOT/bench/bugs/memcached_lru_crawler
[ -x "$BIN/vprof-cc" ] && [ -x "$BIN/vprof-report" ] || { echo "build first (make)"; exit 1; }
rm -rf "$WORK" && mkdir -p "$WORK" && cd "$WORK" || exit 1
"$BIN/vprof-cc" --latency -O2 -g -fno-inline -pthread -o prog "$CASE/main.c" > cc.log 2>&1 ||
    { cat cc.log; exit 1; }
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
t0=$(date +%s.%N)
VPROF_OUT=run VPROF_LATENCY=1 ./prog --items 300000 --requests "$REQUESTS" > run.out 2>&1 ||
    { cat run.out; exit 1; }
t1=$(date +%s.%N)
lat=$(ls run/latency.*)
events=$(/usr/bin/python3 -c "
import struct, sys
b = open('$lat', 'rb').read(64)
n, cap, dropped = struct.unpack_from('<QQQ', b, 16)
print(min(n, cap), dropped)")
set -- $events
awk -v n="$1" -v d="$2" -v t0="$t0" -v t1="$t1" -v sz="$(stat -c %s "$lat")" -v r="$REQUESTS" 'BEGIN {
    w = t1 - t0
    printf "run: %d requests in %.1f s wall; %d latency events (%d dropped), %.0f events/s, %.1f MiB (%.0f KiB/s)\n",
           r, w, n, d, n / w, sz / 1048576, sz / 1024 / w }'
measure() {     # label, command...: wall, user+sys CPU, peak RSS (best of 3 by wall)
    local label=$1; shift
    local best=
    for i in 1 2 3; do
        /usr/bin/time -f "%e %U %S %M" -o t.txt "$@" > /dev/null 2> err.txt || { cat err.txt; return 1; }
        read -r w u s m < t.txt
        if [ -z "$best" ] || awk -v a="$w" -v b="${best%% *}" 'BEGIN { exit !(a < b) }'; then
            best="$w $(awk -v u="$u" -v s="$s" 'BEGIN { print u + s }') $m"
        fi
    done
    set -- $best
    printf '%-34s wall %6.2f s  CPU %6.2f s  peak RSS %6.1f MiB\n' "$label" "$1" "$2" "$(awk -v m="$3" 'BEGIN { print m / 1024 }')"
}
cat "$lat" > /dev/null
measure "cat latency.<id>" cat "$lat"
measure "vprof-report --variance" "$BIN/vprof-report" --variance run
measure "vprof-report --variance --json" "$BIN/vprof-report" --variance --json run
measure "vprof-report RUN RUN (ranking)" "$BIN/vprof-report" -q run run
"$BIN/vprof-report" --variance run > variance.txt
sed -n '2,3p' variance.txt
sed -n '/^Top factors/,/^$/p' variance.txt
