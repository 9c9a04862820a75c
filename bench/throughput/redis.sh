#!/bin/bash
# redis-server throughput under each profiler (issue 13 item 3; not run in
# CI): Debian's redis source built three times with the same compiler and
# -O2 -g,
#   plain   clang-14, no instrumentation
#   gprof   clang-14 -pg (glibc's gmon, its fixed 100 Hz)
#   vprof   vprof-cc (the schema pass, -pg, libvprof; its default rate)
# and ROUNDS interleaved rounds, each running every build's redis-server on
# loopback, in a rotating order, under the plain build's redis-benchmark
# (`-t TESTS -n REQUESTS -P PIPELINE -q`; the client is never profiled).
# Prints requests per second per test, round and build, then per test the
# median and range over the rounds of vprof / gprof and of each against
# plain (a ratio of two runs of the same round, so load drifts cancel as
# far as they can on a shared machine).
#
# Knobs (environment, defaults in brackets):
#   VPROF_RW_DIR   work directory, source and builds kept [/tmp/vprof-redis-throughput]
#   JOBS           make -j for the builds [2]
#   ROUNDS         interleaved rounds [5]
#   REQUESTS       requests per test [200000]
#   PIPELINE       requests per pipeline (redis-benchmark -P) [16]
#   TESTS          redis-benchmark tests [set,get]
#   PORT           loopback port [16390]
#   VPROF_ENV      extra environment for the vprof server, e.g. VPROF_HZ=1000 []
# Needs root once per machine for apt's deb-src entry (bench/apps/lib/debsrc.sh).
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
VCC=$ROOT/build/bin/vprof-cc
W=${VPROF_RW_DIR:-/tmp/vprof-redis-throughput}
JOBS=${JOBS:-2} ROUNDS=${ROUNDS:-5} REQUESTS=${REQUESTS:-200000} PIPELINE=${PIPELINE:-16}
TESTS=${TESTS:-set,get} PORT=${PORT:-16390} VPROF_ENV=${VPROF_ENV:-}
[ -x "$VCC" ] || { echo "redis.sh: $VCC missing: run make first" >&2; exit 1; }
command -v clang-14 >/dev/null || { echo "redis.sh: clang-14 missing" >&2; exit 1; }
mkdir -p "$W" && cd "$W"

source "$ROOT/bench/apps/lib/debsrc.sh"
SRCDIR=$(debsrc_fetch redis "$W/src") || exit 1
echo "source: $SRCDIR"

# build NAME CC CFLAGS LDFLAGS: a clean copy, built once (kept: delete
# $W/NAME to rebuild)
build() {
    if [ -x "$W/$1/src/redis-server" ] && [ -f "$W/$1.done" ]; then
        echo "build $1: kept ($W/$1)"
        return
    fi
    rm -rf "$W/$1" "$W/$1.done" && cp -r "$SRCDIR" "$W/$1"
    /usr/bin/time -f '%e s wall, %U+%S s CPU' -o "$W/$1.time" \
        make -C "$W/$1" -j"$JOBS" MALLOC=libc USE_SYSTEMD=no BUILD_TLS=no \
        OPTIMIZATION=-O2 CC="$2" CFLAGS="$3" LDFLAGS="$4" >"$W/$1.log" 2>&1 ||
        { echo "redis.sh: $1 build failed, see $W/$1.log" >&2; tail -20 "$W/$1.log" >&2; exit 1; }
    touch "$W/$1.done"
    echo "build $1: $(cat "$W/$1.time")"
}
build plain clang-14 "-g" ""
build gprof clang-14 "-g -pg" "-pg"
build vprof "$VCC" "" ""
BENCH=$W/plain/src/redis-benchmark CLI=$W/plain/src/redis-cli

# run NAME ROUND: one server of build NAME, the benchmark against it;
# appends "NAME ROUND TEST RPS" lines to results.txt
run() {
    local name=$1 round=$2 out=$W/runs/$1.$2 spid
    rm -rf "$out" && mkdir -p "$out"
    # gprof writes gmon.out into the working directory at exit; vprof into
    # VPROF_OUT (its values, layout and stack samples too)
    ( cd "$out" && exec env VPROF_OUT="$out" $VPROF_ENV "$W/$name/src/redis-server" \
        --port "$PORT" --bind 127.0.0.1 --save '' --appendonly no --daemonize no \
        >"$out/server.log" 2>&1 ) &
    spid=$!
    for _ in $(seq 100); do "$CLI" -p "$PORT" ping >/dev/null 2>&1 && break; sleep 0.1; done
    "$BENCH" -h 127.0.0.1 -p "$PORT" -n "$REQUESTS" -P "$PIPELINE" -t "$TESTS" -q 2>&1 |
        tr '\r' '\n' | grep 'requests per second' |
        awk -v n="$name" -v r="$round" '{sub(":", "", $1); print n, r, $1, $2}' >> "$W/results.txt"
    "$CLI" -p "$PORT" shutdown nosave >/dev/null 2>&1 || kill -INT "$spid" 2>/dev/null || true
    wait "$spid" || true
}

: > "$W/results.txt"
builds=(plain gprof vprof)
for ((r = 0; r < ROUNDS; r++)); do
    for ((k = 0; k < 3; k++)); do run "${builds[(r + k) % 3]}" "$r"; done
done

echo "redis-server throughput — $(date -u '+%F %H:%M UTC') — $(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg)"
echo "redis-benchmark -t $TESTS -n $REQUESTS -P $PIPELINE, $ROUNDS interleaved rounds${VPROF_ENV:+; vprof: $VPROF_ENV}"
l=$(ls "$W"/runs/vprof.0/layout.* 2>/dev/null | head -1)
[ -n "$l" ] && echo "vprof: $(grep -h '^hz\|^timer\|^meta' "$l" | tr '\t' ' ' | tr '\n' ';' | sed 's/;$//')"
echo "requests per second (round: plain gprof vprof):"
awk '{v[$3" "$2" "$1]=$4; t[$3]=1; r[$2]=1}
     END{for (x in t) for (y in r) printf "  %-4s round %s: %10s %10s %10s\n", x, y, v[x" "y" plain"], v[x" "y" gprof"], v[x" "y" vprof"]}' \
    "$W/results.txt" | sort
echo "ratios, median (min-max) over the rounds:"
awk '{v[$3" "$2" "$1]=$4; t[$3]=1; r[$2]=1}
     function stats(a, n,   i, j, x) {
         for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { x = a[i]; a[i] = a[j]; a[j] = x }
         return sprintf("%.3f (%.3f-%.3f)", n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2, a[1], a[n])
     }
     END{
         for (x in t) {
             n = 0
             for (y in r) if (v[x" "y" plain"] && v[x" "y" gprof"] && v[x" "y" vprof"]) {
                 n++; vg[n] = v[x" "y" vprof"] / v[x" "y" gprof"]
                 gp[n] = v[x" "y" gprof"] / v[x" "y" plain"]; vp[n] = v[x" "y" vprof"] / v[x" "y" plain"]
             }
             if (n) printf "  %-4s vprof/gprof %s   gprof/plain %s   vprof/plain %s   (%d rounds)\n",
                           x, stats(vg, n), stats(gp, n), stats(vp, n), n
         }
     }' "$W/results.txt" | sort
