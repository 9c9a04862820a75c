#!/bin/bash
# bench/meta/run.sh - vprof-meta speed on a whole real program, against the
# time `readelf --debug-dump=info` takes to print the same binary's DWARF.
#
# Builds Debian's redis (apt-get source) with plain `gcc -g -O2` (the
# schema-less use case: any existing -g build), then times, best of RUNS:
#   vprof-meta --all --files '*' -o /dev/null redis-server
#   readelf --debug-dump=info redis-server >/dev/null
# and prints both, their ratio and vprof-meta's peak RSS. The issue's
# target: under 3 s and 500 MB, single-threaded.
#
# Knobs (environment, defaults in brackets):
#   VPROF_META_BENCH_DIR  work directory [/tmp/vprof-bench-meta]
#   VPROF_META_BENCH_BIN  time this binary instead of building redis []
#   JOBS                  make -j for the build [2]
#   RUNS                  repetitions, best time is reported [3]
# Needs root once (deb-src entry, apt-get source) unless BIN is given.
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
META=$ROOT/build/bin/vprof-meta
W=${VPROF_META_BENCH_DIR:-/tmp/vprof-bench-meta}
JOBS=${JOBS:-2} RUNS=${RUNS:-3}
[ -x "$META" ] || { echo "bench/meta: $META missing: run make first" >&2; exit 1; }
mkdir -p "$W" && cd "$W"

BIN=${VPROF_META_BENCH_BIN:-}
if [ -z "$BIN" ]; then
    if ! ls -d redis-*/src >/dev/null 2>&1; then
        if ! apt-get source --print-uris redis >/dev/null 2>&1; then
            cat > /etc/apt/sources.list.d/vprof-deb-src.sources <<'SRC'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
            apt-get update -qq
        fi
        apt-get source -qq redis >/dev/null
    fi
    SRC=$(ls -d "$W"/redis-*/ | head -1)
    SRC=${SRC%/}
    BIN=$SRC/src/redis-server
    if [ ! -x "$BIN" ]; then
        echo "bench/meta: building redis with gcc -g -O2 (make -j$JOBS)" >&2
        make -C "$SRC" -j"$JOBS" MALLOC=libc USE_SYSTEMD=no BUILD_TLS=no \
            OPTIMIZATION=-O2 CC=gcc CFLAGS=-g >"$W/build.log" 2>&1 ||
            { tail -20 "$W/build.log" >&2; exit 1; }
    fi
fi

best() {  # best CMD...: best wall time of RUNS runs, in seconds
    local b=""
    for _ in $(seq "$RUNS"); do
        local t0 t1
        t0=$(date +%s.%N)
        "$@" >/dev/null 2>&1
        t1=$(date +%s.%N)
        b=$(python3 -c 'import sys; t = float(sys.argv[2]) - float(sys.argv[1])
print(min(t, float(sys.argv[3])) if sys.argv[3] else t)' "$t0" "$t1" "$b")
    done
    echo "$b"
}
info=$(( 16#$(readelf -S -W "$BIN" | awk '$2 == ".debug_info" { print $6 }') ))
t_meta=$(best "$META" --all --files '*' -q -o /dev/null "$BIN")
t_readelf=$(best sh -c "readelf --debug-dump=info '$BIN' >/dev/null")
rss=$( { /usr/bin/time -f %M "$META" --all --files '*' -q -o /dev/null "$BIN" >/dev/null; } 2>&1 | tail -1)
summary=$("$META" --all --files '*' -o /dev/null "$BIN" 2>&1 | head -1)
echo "binary: $BIN ($(stat -c %s "$BIN") bytes, .debug_info $info bytes)"
echo "$summary"
printf "vprof-meta --all: %.3f s, peak RSS %d MB\n" "$t_meta" $((rss / 1024))
printf "readelf --debug-dump=info: %.3f s\n" "$t_readelf"
printf "ratio vprof-meta / readelf: %.2f\n" \
    "$(python3 -c 'import sys; print(float(sys.argv[1]) / float(sys.argv[2]))' "$t_meta" "$t_readelf")"
