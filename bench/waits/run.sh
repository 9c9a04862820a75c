#!/bin/bash
# Recording overhead of the wait/wake events (vprof-report --waits) as a
# ratio against the same build without latency events, measured in one run
# (docs/vprof-report.md "Waits"; paper 003 reports 5.1 % on average):
#  1. the --waits corpus cases (and memcached_lru_crawler): each built once
#     with vprof-cc --latency, its buggy workload run REPS times in three
#     modes in turn (VPROF_OUT in all): off (VPROF_LATENCY=0), on (=1, the
#     scanner polling every 20 us, the default) and on-1ms (=1 with
#     VPROF_SCAN_NS=1000000: the wait and wake events are timed by the shims,
#     not by the scanner, so --waits does not need fine polling); median wall
#     time per mode, and the ratio to off of each repetition (the three modes
#     of one repetition run back to back, so they share the machine's load):
#     median [min-max] over the repetitions; the same for the CPU time of
#     the process (user + system: what recording costs, without the waits
#     for a CPU that dominate wall time on a shared machine);
#  2. memcached 1.6.18 from Debian's source package, built once with
#     vprof-cc --latency, under closed-loop load (bench/waits/mcload.c:
#     CONNS connections, 1 SET in 10 GETs) for SECS seconds per run, REPS
#     runs per mode in turn; median requests per second, and off/mode per
#     repetition: median [min-max]; and the server's CPU time per request
#     (utime + stime from /proc/PID/stat when the load ends), mode/off per
#     repetition.
# Prints a Markdown table for bench/RESULTS.md. Not run in CI (memcached:
# apt-get source and a build of a few minutes; needs libevent-dev).
#
# Knobs: REPS [5], SECS [4], CONNS [8], THREADS (memcached -t) [4],
#        PORT [16411], VPROF_APPS_DIR [/tmp/vprof-apps], SKIP_MEMCACHED [0]
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BIN=${VPROF_BIN:-$ROOT/build/bin}
REPS=${REPS:-5} SECS=${SECS:-4} CONNS=${CONNS:-8} THREADS=${THREADS:-4} PORT=${PORT:-16411}
W=${VPROF_APPS_DIR:-/tmp/vprof-apps}
[ -x "$BIN/vprof-cc" ] || { echo "waits/run.sh: run make first" >&2; exit 1; }
T=$(mktemp -d "${TMPDIR:-/tmp}/vprof-waits-bench.XXXXXX")
trap 'rm -rf "$T"' EXIT
median() { python3 -c 'import statistics,sys; print(statistics.median(float(x) for x in sys.argv[1:]))' "$@"; }
# Paired ratios: "A1 A2 ... / B1 B2 ..." -> median [min-max] of Ai/Bi.
ratios() { python3 -c '
import statistics, sys
a = sys.argv[1:]; k = a.index("/"); r = [float(x) / float(y) for x, y in zip(a[:k], a[k + 1:])]
print("%.2f [%.2f-%.2f]" % (statistics.median(r), min(r), max(r)))' "$@"; }
now() { date +%s.%N; }

MODES=("VPROF_LATENCY=0" "VPROF_LATENCY=1" "VPROF_LATENCY=1 VPROF_SCAN_NS=1000000")
events() { python3 -c "import struct,glob; print(sum(struct.unpack_from('<Q', open(f,'rb').read(), 16)[0] for f in glob.glob('$1/latency.*')))"; }
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| program | workload | off | on (20 us scanner) | on/off median [range] | on, 1 ms scanner | on-1ms/off median [range] | CPU on/off | CPU on-1ms/off | events |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for c in waits_pool_writer waits_lock_io waits_cpu_bound memcached_lru_crawler; do
    # the waits cases live in waits/cases, memcached_lru_crawler in the bug corpus
    cd_=$ROOT/bench/waits/cases/$c
    [ -d "$cd_" ] || cd_=$ROOT/bench/bugs/$c
    ( source "$cd_/case.conf"
      "$BIN/vprof-cc" --latency -O2 -g -fno-inline -pthread -o "$T/$c" "$cd_"/*.c \
          > "$T/$c.cc" 2>&1 || { cat "$T/$c.cc" >&2; exit 1; }
      t0=() t1=() t2=() u0=() u1=() u2=()
      for r in $(seq "$REPS"); do
          for m in 0 1 2; do
              rm -rf "$T/run$m" && mkdir "$T/run$m"
              s=$(now)
              (cd "$T/run$m" && env VPROF_OUT=. ${MODES[$m]} /usr/bin/time -f '%U %S' -o "$T/cpu" \
                  "$T/$c" $buggy_args > /dev/null)
              t=$(python3 -c "print($(now) - $s)")
              u=$(awk '{ print $1 + $2 }' "$T/cpu")
              case $m in 0) t0+=("$t") u0+=("$u");; 1) t1+=("$t") u1+=("$u");;
                          2) t2+=("$t") u2+=("$u");; esac
          done
      done
      m0=$(median "${t0[@]}") m1=$(median "${t1[@]}") m2=$(median "${t2[@]}")
      printf '| %s | `%s` | %.3f s | %.3f s | %s | %.3f s | %s | %s | %s | %s |\n' "$c" "$buggy_args" \
          "$m0" "$m1" "$(ratios "${t1[@]}" / "${t0[@]}")" "$m2" "$(ratios "${t2[@]}" / "${t0[@]}")" \
          "$(ratios "${u1[@]}" / "${u0[@]}")" "$(ratios "${u2[@]}" / "${u0[@]}")" "$(events "$T/run1")"
      printf '    %s wall (s): off %s; on %s; on-1ms %s\n' "$c" "$(printf '%.3f ' "${t0[@]}")" \
          "$(printf '%.3f ' "${t1[@]}")" "$(printf '%.3f ' "${t2[@]}")" >&2
      printf '    %s CPU (s): off %s; on %s; on-1ms %s\n' "$c" "${u0[*]}" "${u1[*]}" "${u2[*]}" >&2 )
done

[ "${SKIP_MEMCACHED:-0}" = 1 ] && exit 0
M=$W/memcached
mkdir -p "$M" && cd "$M"
if ! ls -d memcached-*/ > /dev/null 2>&1; then
    apt-get source -qq memcached > fetch.log 2>&1 || { cat fetch.log >&2; exit 1; }
fi
SRC=$(ls -d memcached-*/ | head -1); SRC=$M/${SRC%/}
if [ ! -x "$M/vprof/memcached" ]; then
    [ -e /usr/include/event.h ] || { echo "waits/run.sh: memcached needs libevent-dev" >&2; exit 1; }
    rm -rf "$M/vprof" && cp -a "$SRC" "$M/vprof"
    (cd "$M/vprof" && ./configure -q CC="$BIN/vprof-cc --latency" CFLAGS="-O2 -g" \
        --disable-extstore --disable-docs && make -j2 memcached) > "$M/build.log" 2>&1 ||
        { tail -20 "$M/build.log" >&2; exit 1; }
fi
gcc -O2 -pthread -o "$T/mcload" "$HERE/mcload.c"
serve() {   # MODE: one server, load, stop; prints requests/s and server CPU us per request
    local m=$1 dir=$T/mc$1
    rm -rf "$dir" && mkdir "$dir"
    (cd "$dir" && exec env VPROF_OUT=. ${MODES[$m]} "$M/vprof/memcached" -u root -p "$PORT" \
        -U 0 -l 127.0.0.1 -t "$THREADS" > mc.log 2>&1) &
    local spid=$!
    for _ in $(seq 50); do "$T/mcload" 127.0.0.1 "$PORT" 1 0.05 > /dev/null 2>&1 && break; sleep 0.1; done
    local rps cpu
    rps=$("$T/mcload" 127.0.0.1 "$PORT" "$CONNS" "$SECS")
    # utime + stime (fields 14, 15 after the command name) in clock ticks
    cpu=$(sed 's/.*) //' "/proc/$spid/stat" | awk -v hz="$(getconf CLK_TCK)" '{ print ($12 + $13) / hz }')
    echo "$rps $(python3 -c "print('%.1f' % ($cpu * 1e6 / ($rps * $SECS)))")"
    kill -TERM "$spid"
    wait "$spid" || true
}
r0=() r1=() r2=() c0=() c1=() c2=()
for r in $(seq "$REPS"); do
    for m in 0 1 2; do
        read -r x y <<< "$(serve $m)"
        case $m in 0) r0+=("$x") c0+=("$y");; 1) r1+=("$x") c1+=("$y");; 2) r2+=("$x") c2+=("$y");; esac
    done
done
m0=$(median "${r0[@]}") m1=$(median "${r1[@]}") m2=$(median "${r2[@]}")
printf '| memcached 1.6.18 (-t %s) | mcload, %s connections, %s s | %.0f req/s | %.0f req/s | %s (off/on) | %.0f req/s | %s (off/on) | %s | %s | %s |\n' \
    "$THREADS" "$CONNS" "$SECS" "$m0" "$m1" "$(ratios "${r0[@]}" / "${r1[@]}")" "$m2" \
    "$(ratios "${r0[@]}" / "${r2[@]}")" "$(ratios "${c1[@]}" / "${c0[@]}")" \
    "$(ratios "${c2[@]}" / "${c0[@]}")" "$(events "$T/mc1")"
echo
echo "memcached runs (req/s): off ${r0[*]}; on ${r1[*]}; on-1ms ${r2[*]}"
echo "memcached server CPU per request (us): off ${c0[*]}; on ${c1[*]}; on-1ms ${c2[*]}"
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
"$BIN/vprof-report" -q --waits "$T/mc1" | sed -n '1,30p'
