#!/bin/bash
# bench/meta/run.sh - vprof-meta speed on a whole real program, against the
# time `readelf --debug-dump=info` takes to print the same binary's DWARF.
#
# Builds Debian's redis (apt-get source) with plain `gcc -g -O2` (the
# schema-less use case: any existing -g build), then times, best of RUNS:
#   vprof-meta --all --files '*' -o /dev/null redis-server
#   readelf --debug-dump=info redis-server >/dev/null
# (readelf's output is discarded, so both are measured reading the same
# DWARF) and prints wall and CPU times, their ratios and vprof-meta's peak
# RSS. The issue's target: under 3 s and 500 MB, single-threaded.
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
    source "$ROOT/bench/apps/lib/debsrc.sh"
    SRC=$(debsrc_fetch redis "$W/src") || exit 1
    BIN=$SRC/src/redis-server
    if [ ! -x "$BIN" ]; then
        echo "bench/meta: building redis with gcc -g -O2 (make -j$JOBS)" >&2
        make -C "$SRC" -j"$JOBS" MALLOC=libc USE_SYSTEMD=no BUILD_TLS=no \
            OPTIMIZATION=-O2 CC=gcc CFLAGS=-g >"$W/build.log" 2>&1 ||
            { tail -20 "$W/build.log" >&2; exit 1; }
    fi
fi

# Best-of-RUNS wall and CPU (user+sys) time and peak RSS of a command, from
# getrusage of the child: CPU time is the figure to trust on a busy machine.
measure() {  # measure CMD... -> "wall cpu rss_kb"
    python3 - "$RUNS" "$@" <<'PY'
import resource, subprocess, sys, time
runs, cmd = int(sys.argv[1]), sys.argv[2:]
best_wall = best_cpu = None
rss = 0
for _ in range(runs):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    rss = max(rss, after.ru_maxrss)
    best_wall = wall if best_wall is None else min(best_wall, wall)
    best_cpu = cpu if best_cpu is None else min(best_cpu, cpu)
print("%.3f %.3f %d" % (best_wall, best_cpu, rss))
PY
}
info=$(( 16#$(readelf -S -W "$BIN" | awk '$2 == ".debug_info" { print $6 }') ))
read -r m_wall m_cpu m_rss <<<"$(measure "$META" --all --files '*' -q -o /dev/null "$BIN")"
read -r r_wall r_cpu _ <<<"$(measure readelf --debug-dump=info "$BIN")"
summary=$("$META" --all --files '*' -o /dev/null "$BIN" 2>&1 | head -1)
echo "binary: $BIN ($(stat -c %s "$BIN") bytes, .debug_info $info bytes)"
echo "$summary"
echo "vprof-meta --all --files '*': wall ${m_wall} s, cpu ${m_cpu} s, peak RSS $((m_rss / 1024)) MB"
echo "readelf --debug-dump=info:   wall ${r_wall} s, cpu ${r_cpu} s"
python3 -c 'import sys; w = float(sys.argv[1]) / float(sys.argv[2]); c = float(sys.argv[3]) / max(float(sys.argv[4]), 1e-9)
print("ratio vprof-meta / readelf: wall %.2f, cpu %.2f (best of %s)" % (w, c, sys.argv[5]))' \
    "$m_wall" "$r_wall" "$m_cpu" "$r_cpu" "$RUNS"
