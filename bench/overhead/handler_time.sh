#!/bin/bash
# Handler time per tick, repeated (issue 13): VPROF_STATS=1's p50 and
# average (thread CPU time in the SIGPROF handler) on run.sh's generated
# program at 1 kHz, for four configurations, REPS rounds; in each round
# every configuration runs with this build's libvprof.so and, right after,
# with BEFORE_LIB's, so that the two see the same machine. Prints, per
# configuration and library, the median and the range over the rounds of
# the runs' p50, average and p90, in microseconds. One run's figures move
# by a factor of two or three with what else runs on the CPUs (a tick runs
# from cold caches): compare the libraries within a round, not runs of
# different times.
# Usage: BEFORE_LIB=path/to/libvprof.so [REPS=9] bench/overhead/handler_time.sh
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
LIB=$ROOT/build/lib/libvprof.so META=$ROOT/build/bin/vprof-meta
REPS=${REPS:-9} ROUNDS=${ROUNDS:-100000} BEFORE_LIB=${BEFORE_LIB:-}
[ -f "$LIB" ] && [ -x "$META" ] || { echo "handler_time: run make first"; exit 1; }
source "$ROOT/bench/overhead/common.sh"
overhead_workdir handler
overhead_prog "$META"
confs=("1264 vars, depth 3, stacks:VPROF_META=$W/vars.vmeta"
       "1264 vars, depth 3, no stacks:VPROF_META=$W/vars.vmeta VPROF_STACKS=0"
       "1264 vars, depth 0, stacks:VPROF_META=$W/vars.vmeta VPROF_UNWIND=0"
       "no metadata, stacks:VPROF_HZ=1000")
libs=("this build:$LIB")
[ -n "$BEFORE_LIB" ] && libs+=("before:$BEFORE_LIB")
: > raw.txt
for ((r = 0; r < REPS; r++)); do
    for c in "${confs[@]}"; do
        for l in "${libs[@]}"; do
            rm -rf out
            line=$(env ${c#*:} VPROF_OUT=out VPROF_STATS=1 VPROF_HZ=1000 LD_PRELOAD=${l#*:} \
                   ./pg "$ROUNDS" 2>&1 >/dev/null | grep 'stats:')
            echo "${c%%:*}|${l%%:*}|$(sed -n 's/.*avg=\([0-9]*\) p50<=\([0-9]*\) p90<=\([0-9]*\).*/\2 \1 \3/p' <<< "$line")" >> raw.txt
        done
    done
done
echo "handler time per tick, µs (VPROF_STATS=1, 1 kHz): median (min-max) of $REPS rounds — $(date -u '+%F %H:%M') UTC, load $(cut -d' ' -f1 /proc/loadavg)"
awk -F'|' '{split($3, v, " "); k = $1 " | " $2; n[k]++; p50[k, n[k]] = v[1]; avg[k, n[k]] = v[2]; p90[k, n[k]] = v[3]; order[k] = NR}
     function med(a, k, m,   i, j, x, s) { for (i = 1; i <= m; i++) s[i] = a[k, i]
         for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (s[j] < s[i]) { x = s[i]; s[i] = s[j]; s[j] = x }
         return sprintf("%.1f (%.1f-%.1f)", s[int((m + 1) / 2)] / 1000, s[1] / 1000, s[m] / 1000) }
     END { for (k in n) printf "%06d  %-42s p50 %-16s avg %-16s p90 %s\n", order[k], k, med(p50, k, n[k]), med(avg, k, n[k]), med(p90, k, n[k]) }' raw.txt |
    sort | cut -c9-
