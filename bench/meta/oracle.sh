#!/bin/bash
# bench/meta/oracle.sh - the gdb oracle of tests/meta on a real program (not
# run in CI): redis-server built with gcc -g -O2 by bench/meta/run.sh, run
# as `redis-server --port 0` (it initialises, loads its configuration and
# exits: "Configured to not listen anywhere"). At the first execution of
# every line-table PC of each FILE, gdb's view of every variable is compared
# with what the runtime's reader reads through vprof-meta's entries, and
# every memory location's address with gdb's &var.
#
# Redis is not deterministic between two runs (heap counters), so a value
# that differs where both put the variable at the same address is counted
# as run state, not as a mismatch (compare.py --same-address-ok).
#
# Knobs: VPROF_META_BENCH_DIR [/tmp/vprof-bench-meta], FILES [config.c
# zmalloc.c adlist.c].
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
W=${VPROF_META_BENCH_DIR:-/tmp/vprof-bench-meta}
FILES=${FILES:-config.c zmalloc.c adlist.c}
BIN=$(ls -d "$W"/redis-*/src/redis-server 2>/dev/null | head -1)
[ -x "$BIN" ] || { echo "bench/meta/oracle: run bench/meta/run.sh first (builds $W/redis-*)" >&2; exit 1; }
T=$W/oracle && mkdir -p "$T"
gcc -std=c11 -D_GNU_SOURCE -O1 -g -I"$ROOT/libvprof/format" -I"$ROOT/libvprof" \
    -o "$T/oracle_trace" "$ROOT/tests/meta/oracle_trace.c" \
    "$ROOT/libvprof/value_read.c" "$ROOT/build/lib/libvprof-format.a"
"$ROOT/build/bin/vprof-meta" --all --files '*' -q -o "$T/redis.vmeta" "$BIN"
for f in $FILES; do
    env -u _ ORACLE_SRC="$f" ORACLE_PCS="$T/$f.pcs" ORACLE_OUT="$T/$f.gdb" \
        timeout 900 gdb -batch -nx -x "$ROOT/tests/meta/gdb_oracle.py" \
        --args "$BIN" --port 0 >"$T/$f.gdblog" 2>&1 || true
    "$T/oracle_trace" "$T/redis.vmeta" "$T/$f.pcs" "$BIN" --port 0 >"$T/$f.trace" 2>/dev/null
    python3 "$ROOT/tests/meta/compare.py" "$T/$f.gdb" "$T/$f.trace" \
        --label "redis $f (gcc -O2)" --same-address-ok | head -4 || true
done
