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
# Prints requests per second per test, round and build, and the server's
# CPU time over the whole benchmark (all its threads, /proc schedstat),
# then per test the median and range over the rounds of gprof / plain and
# of each vprof configuration against gprof and plain (a ratio of two runs
# of the same round, so load drifts cancel as far as they can on a shared
# machine; CPU time is the steadier of the two when other processes compete
# for the CPUs, throughput the one the issue asks for).
#
# Knobs (environment, defaults in brackets):
#   VPROF_RW_DIR   work directory, source and builds kept [/tmp/vprof-redis-throughput]
#   JOBS           make -j for the builds [2]
#   ROUNDS         interleaved rounds [5]
#   REQUESTS       requests per test [200000]
#   PIPELINE       requests per pipeline (redis-benchmark -P) [16]
#   TESTS          redis-benchmark tests [set,get]
#   PORT           loopback port [16390]
#   VPROF_ENVS     vprof configurations to run, `;`-separated environment
#                  settings for the vprof server, each one more build in the
#                  rotation (vprof, vprof2, ...), e.g. ";VPROF_HZ=100" for the
#                  defaults and 100 Hz [""]: the defaults only
#   VPROF_CC_VARIANTS  more vprof builds, `;`-separated environment settings
#                  for their compiles, each one more build in the rotation
#                  with the runtime's defaults, e.g. "VPROF_CC_CALLS=0"
#                  (without the default guarded call counters) [""]: none
# Needs root once per machine for apt's deb-src entry (bench/apps/lib/debsrc.sh).
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
VCC=$ROOT/build/bin/vprof-cc
W=${VPROF_RW_DIR:-/tmp/vprof-redis-throughput}
JOBS=${JOBS:-2} ROUNDS=${ROUNDS:-5} REQUESTS=${REQUESTS:-200000} PIPELINE=${PIPELINE:-16}
TESTS=${TESTS:-set,get} PORT=${PORT:-16390} VPROF_ENVS=${VPROF_ENVS:-}
VPROF_CC_VARIANTS=${VPROF_CC_VARIANTS:-}
[ -x "$VCC" ] || { echo "redis.sh: $VCC missing: run make first" >&2; exit 1; }
command -v clang-14 >/dev/null || { echo "redis.sh: clang-14 missing" >&2; exit 1; }
mkdir -p "$W" && cd "$W"

source "$ROOT/bench/apps/lib/debsrc.sh"
SRCDIR=$(debsrc_fetch redis "$W/src") || exit 1
echo "source: $SRCDIR"

# build NAME CC CFLAGS LDFLAGS: a clean copy, built once (kept until the
# compiler command or vprof's schema pass changes; delete $W/NAME to rebuild)
build() {
    # the stamp: the compiler command, and for vprof-cc the schema pass it loads
    local stamp="$2"
    [[ "$2" != *"$VCC"* ]] || stamp="$2 $(md5sum < "$ROOT/build/lib/vprof-schema.so" | cut -c1-12)"
    if [ -x "$W/$1/src/redis-server" ] && [ -f "$W/$1.done" ] && [ "$(cat "$W/$1.done")" = "$stamp" ]; then
        echo "build $1: kept ($W/$1)"
        return
    fi
    rm -rf "$W/$1" "$W/$1.done" && cp -r "$SRCDIR" "$W/$1"
    /usr/bin/time -f '%e s wall, %U+%S s CPU' -o "$W/$1.time" \
        make -C "$W/$1" -j"$JOBS" MALLOC=libc USE_SYSTEMD=no BUILD_TLS=no \
        OPTIMIZATION=-O2 CC="$2" CFLAGS="$3" LDFLAGS="$4" >"$W/$1.log" 2>&1 ||
        { echo "redis.sh: $1 build failed, see $W/$1.log" >&2; tail -20 "$W/$1.log" >&2; exit 1; }
    echo "$stamp" > "$W/$1.done"    # rebuilt when the compiler or the pass changes
    echo "build $1: $(cat "$W/$1.time")"
}
build plain clang-14 "-g" ""
build gprof clang-14 "-g -pg" "-pg"
build vprof "$VCC" "" ""
BENCH=$W/plain/src/redis-benchmark CLI=$W/plain/src/redis-cli

# The configurations: NAME BUILD ENV (ENV: settings for the server)
names=(plain gprof) dirs=(plain gprof) envs=("" "")
IFS=';' read -r -a venvs <<< "${VPROF_ENVS};"
[ ${#venvs[@]} -gt 0 ] || venvs=("")
for ((i = 0; i < ${#venvs[@]}; i++)); do
    suffix=$((i + 1)); [ $i -gt 0 ] || suffix=
    names+=("vprof$suffix") dirs+=(vprof) envs+=("${venvs[$i]}")
done
# compile-time variants: build NAME "env SETTING vprof-cc" (make's CC is a command)
IFS=';' read -r -a ccvars <<< "${VPROF_CC_VARIANTS}"
for ((i = 0; i < ${#ccvars[@]}; i++)); do
    [ -n "${ccvars[$i]}" ] || continue
    name="vprof_$(echo "${ccvars[$i]}" | tr -c 'A-Za-z0-9\n' '_')"
    build "$name" "env ${ccvars[$i]} $VCC" "" ""
    names+=("$name") dirs+=("$name") envs+=("")
done
nconf=${#names[@]}

# run K ROUND: one server of configuration K, the benchmark against it;
# appends "NAME ROUND TEST RPS" lines to results.txt
run() {
    local name=${names[$1]} round=$2 out=$W/runs/${names[$1]}.$2 spid
    rm -rf "$out" && mkdir -p "$out"
    # gprof writes gmon.out into the working directory at exit; vprof into
    # VPROF_OUT (its values, layout and stack samples too)
    ( cd "$out" && exec env VPROF_OUT="$out" ${envs[$1]} "$W/${dirs[$1]}/src/redis-server" \
        --port "$PORT" --bind 127.0.0.1 --save '' --appendonly no --daemonize no \
        >"$out/server.log" 2>&1 ) &
    spid=$!
    for _ in $(seq 100); do "$CLI" -p "$PORT" ping >/dev/null 2>&1 && break; sleep 0.1; done
    local c0 c1
    c0=$(cpu_ns "$spid")
    "$BENCH" -h 127.0.0.1 -p "$PORT" -n "$REQUESTS" -P "$PIPELINE" -t "$TESTS" -q 2>&1 |
        tr '\r' '\n' | grep 'requests per second' |
        awk -v n="$name" -v r="$round" '{sub(":", "", $1); print n, r, $1, $2}' >> "$W/results.txt"
    c1=$(cpu_ns "$spid")
    echo "$name $round CPU $(( (c1 - c0) / 1000 ))" >> "$W/results.txt"
    "$CLI" -p "$PORT" shutdown nosave >/dev/null 2>&1 || kill -INT "$spid" 2>/dev/null || true
    wait "$spid" || true
}

# cpu_ns PID: CPU time of all its threads so far, ns (schedstat)
cpu_ns() {
    cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{s += $1} END{printf "%d", s}'
}

: > "$W/results.txt"
for ((r = 0; r < ROUNDS; r++)); do
    for ((k = 0; k < nconf; k++)); do run $(((r + k) % nconf)) "$r"; done
done

echo "redis-server throughput — $(date -u '+%F %H:%M UTC') — $(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg)"
echo "redis-benchmark -t $TESTS -n $REQUESTS -P $PIPELINE, $ROUNDS interleaved rounds"
for ((k = 2; k < nconf; k++)); do
    l=$(ls "$W"/runs/${names[$k]}.0/layout.* 2>/dev/null | head -1)
    echo "${names[$k]}: ${envs[$k]:-defaults}${l:+; $(grep -h '^hz\|^timer\|^end' "$l" | tr '\t' ' ' | tr '\n' ';' | sed 's/;$//')}"
done
echo "requests per second per round, and the server's CPU time over the benchmark, ms (${names[*]}):"
awk -v names="${names[*]}" 'BEGIN{nn = split(names, nm, " ")}
     {v[$3" "$2" "$1]=$4; t[$3]=1; r[$2]=1}
     END{for (x in t) for (y in r) { line = sprintf("  %-4s round %s:", x, y)
             for (k = 1; k <= nn; k++)
                 line = line sprintf(" %10s", x == "CPU" ? sprintf("%.0f", v[x" "y" "nm[k]] / 1000) : v[x" "y" "nm[k]])
             print line }}' \
    "$W/results.txt" | sort
echo "ratios, median (min-max) over the rounds: requests per second (GET, SET, ...) and the"
echo "server's CPU time for them (CPU: the other way round, so that below 1 is slower everywhere:"
echo "on a loaded machine the CPU time is the steadier measure)"
awk -v names="${names[*]}" 'BEGIN{nn = split(names, nm, " ")}
     {v[$3" "$2" "$1]=$4; t[$3]=1; r[$2]=1}
     function stats(a, n,   i, j, x) {
         for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { x = a[i]; a[i] = a[j]; a[j] = x }
         return sprintf("%.3f (%.3f-%.3f)", n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2, a[1], a[n])
     }
     function ratio(x, a, b,   n, y) {
         n = 0
         for (y in r) if (v[x" "y" "a] && v[x" "y" "b]) {
             n++; q[n] = x == "CPU" ? v[x" "y" "b] / v[x" "y" "a] : v[x" "y" "a] / v[x" "y" "b]
         }
         return n ? sprintf("  %-4s %-14s %s (%d rounds)", x, a "/" b, stats(q, n), n) : ""
     }
     END{
         for (x in t) {
             print ratio(x, "gprof", "plain")
             for (k = 3; k <= nn; k++) { print ratio(x, nm[k], "gprof"); print ratio(x, nm[k], "plain") }
         }
     }' "$W/results.txt" | grep -v '^$' | sort
