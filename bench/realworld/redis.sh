#!/bin/bash
# Real-world check of vprof-cc (not run in CI): builds Debian's redis source
# twice, with plain `clang-14 -pg -g` and with vprof-cc (same -O2), runs the
# vprof build's redis-server under redis-benchmark on loopback for a bounded
# number of requests, and prints build times, schema and metadata sizes, and
# what the run left (gmon file, value samples).
#
# Knobs (environment, defaults in brackets):
#   VPROF_RW_DIR   work directory [/tmp/vprof-realworld]
#   JOBS           make -j for the builds [2]
#   REQUESTS       requests per benchmark test [20000]
#   PORT           loopback port for redis-server [16379]
# Needs root for the one-time apt setup (deb-src line, apt-get source).
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
VCC=$ROOT/build/bin/vprof-cc
W=${VPROF_RW_DIR:-/tmp/vprof-realworld}
JOBS=${JOBS:-2} REQUESTS=${REQUESTS:-20000} PORT=${PORT:-16379}
[ -x "$VCC" ] || { echo "redis.sh: $VCC missing: run make first" >&2; exit 1; }
mkdir -p "$W" && cd "$W"

# 1. Source: Debian's redis package (bench/apps/lib/debsrc.sh, shared with
# bench/apps and bench/meta).
source "$ROOT/bench/apps/lib/debsrc.sh"
SRCDIR=$(debsrc_fetch redis "$W/src") || exit 1
echo "source: $SRCDIR"

# 2. Two builds from clean copies; the same flags but for the compiler.
build() { # build NAME CC EXTRA_CFLAGS EXTRA_LDFLAGS
    rm -rf "$W/$1" && cp -r "$SRCDIR" "$W/$1"
    # wall time and CPU time (user+sys of make and every compiler under it;
    # the CPU figure is the one to compare on a loaded machine)
    /usr/bin/time -f '%e s wall, %U+%S s CPU' -o "$W/$1.time" \
        make -C "$W/$1" -j"$JOBS" MALLOC=libc USE_SYSTEMD=no BUILD_TLS=no \
        OPTIMIZATION=-O2 CC="$2" CFLAGS="$3" LDFLAGS="$4" >"$W/$1.log" 2>&1 ||
        { echo "redis.sh: $1 build failed, see $W/$1.log" >&2; tail -20 "$W/$1.log" >&2; exit 1; }
    cat "$W/$1.time"
}
t_plain=$(build plain clang-14 "-pg -g" "-pg")
t_vprof=$(build vprof "$VCC" "" "")
B=$W/vprof/src
echo "build (make -j$JOBS): plain clang-14 -pg -g: $t_plain; vprof-cc: $t_vprof"

# 3. Schema and metadata.
objcopy --dump-section .vprof_schema="$W/redis-server.schema" "$B/redis-server" "$W/.tmp.o"
schema_bytes=$(stat -c %s "$W/redis-server.schema")
nvar=$(grep -vc '^#\|^@block' "$W/redis-server.schema" || true)
nblk=$(grep -c '^@block' "$W/redis-server.schema" || true)
nunits=$(grep -c '^# vprof-schema' "$W/redis-server.schema" || true)
echo "schema: $schema_bytes bytes, $nunits units, $nvar variable lines, $nblk block lines"
for t in "loop" "cond" "args"; do
    echo "  tag $t: $(grep -v '^@\|^#' "$W/redis-server.schema" | awk -F', ' -v t=$t '$6 ~ t' | wc -l) lines"
done
echo "metadata: $(stat -c %s "$B/redis-server.vmeta") bytes (redis-server.vmeta)"
t0=$(date +%s.%N)
"$ROOT/build/bin/vprof-meta" -o "$W/again.vmeta" "$B/redis-server" 2>/dev/null
echo "vprof-meta on redis-server alone: $(echo "$(date +%s.%N) - $t0" | bc)s (runs once per linked program)"
echo "binary: plain $(stat -c %s "$W/plain/src/redis-server") bytes, vprof $(stat -c %s "$B/redis-server") bytes"
readelf -d "$B/redis-server" | grep -E 'NEEDED|RUNPATH|RPATH' | sed 's/^/  /'

# 4. A bounded run: server on loopback, benchmark, clean shutdown.
OUT=$W/run && rm -rf "$OUT" && mkdir -p "$OUT"
( cd "$OUT" && VPROF_OUT=$OUT exec "$B/redis-server" --port "$PORT" --bind 127.0.0.1 \
    --save '' --appendonly no --daemonize no >"$W/server.log" 2>&1 ) &
spid=$!
for _ in $(seq 50); do VPROF_OUT=$W/clients "$B/redis-cli" -p "$PORT" ping >/dev/null 2>&1 && break; sleep 0.1; done
mkdir -p "$W/clients"   # the vprof-built client tools profile themselves here
VPROF_OUT=$W/clients "$B/redis-benchmark" -h 127.0.0.1 -p "$PORT" -n "$REQUESTS" -q \
    -t set,get,lpush,lpop 2>&1 | tr '\r' '\n' | grep 'requests per second' | sed 's/^/  /'
VPROF_OUT=$W/clients "$B/redis-cli" -p "$PORT" shutdown nosave >/dev/null 2>&1 || kill -INT $spid
wait $spid || true
echo "run directory $OUT:"
ls -la "$OUT" | sed 's/^/  /'
for v in "$OUT"/values.*; do
    [ -f "$v" ] || continue
    echo "  $(basename "$v"): $(( ($(stat -c %s "$v") - 64) / 40 )) value records (40 bytes each)"
done
grep -h '^meta\|^end' "$OUT"/layout.* | sed 's/^/  /'
