#!/bin/bash
# Real-world check of vprof-cc (not run in CI): Debian's sqlite3 source, an
# autoconf project, configured and built twice -- `CC=clang-14` with
# `-O2 -g -pg`, and `CC=vprof-cc` with `-O2` -- then the vprof build's shell
# runs a short SQL workload. Prints configure/build times, schema and
# metadata sizes, and what the run left (gmon file, value samples).
# The amalgamation (sqlite3.c, ~250k lines) is one very large unit for the pass.
#
# Knobs (environment, defaults in brackets):
#   VPROF_RW_DIR   work directory [/tmp/vprof-realworld]
#   JOBS           make -j [2]
#   ROWS           rows the workload inserts [200000]
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
VCC=$ROOT/build/bin/vprof-cc
W=${VPROF_RW_DIR:-/tmp/vprof-realworld}
JOBS=${JOBS:-2} ROWS=${ROWS:-200000}
[ -x "$VCC" ] || { echo "sqlite3.sh: $VCC missing: run make first" >&2; exit 1; }
mkdir -p "$W" && cd "$W"

source "$ROOT/bench/apps/lib/debsrc.sh"
SRCDIR=$(debsrc_fetch sqlite3 "$W/src") || exit 1
echo "source: $SRCDIR"

build() { # build NAME CC CFLAGS LDFLAGS -> prints seconds
    local d=$W/sq-$1
    rm -rf "$d" && cp -r "$SRCDIR" "$d"
    # wall and CPU (user+sys of everything under it) time
    /usr/bin/time -f '%e s wall, %U+%S s CPU' -o "$W/sq-$1.time" bash -c \
        'cd "$1" && ./configure CC="$2" CFLAGS="$3" LDFLAGS="$4" --disable-tcl \
            --disable-shared --enable-static >"$5.configure.log" 2>&1 &&
         make -j"$6" sqlite3 >"$5.log" 2>&1' _ "$d" "$2" "$3" "$4" "$W/sq-$1" "$JOBS" ||
        { echo "sqlite3.sh: $1 build failed, see $W/sq-$1*.log" >&2; exit 1; }
    cat "$W/sq-$1.time"
}
t_plain=$(build plain clang-14 "-O2 -g -pg" "-pg")
t_vprof=$(build vprof "$VCC" "-O2" "")
S=$W/sq-vprof
echo "configure + make sqlite3 (-j$JOBS): plain clang-14 -O2 -g -pg: $t_plain; vprof-cc -O2: $t_vprof"
# configure's answers with either compiler (compiler name normalised).
answers() { grep '^checking' "$W/sq-$1.configure.log" | sed "s|$2|CC|g"; }
if diff <(answers plain clang-14) <(answers vprof "$VCC") >"$W/sq-configure.diff"; then
    echo "configure answers: identical to the plain build"
else
    echo "configure answers that differ from the plain build:"; grep '^[<>]' "$W/sq-configure.diff" | sed 's/^/  /'
fi
BIN=$S/sqlite3
[ -x "$S/.libs/sqlite3" ] && BIN=$S/.libs/sqlite3
objcopy --dump-section .vprof_schema="$W/sqlite3.schema" "$BIN" "$W/.tmp.o"
echo "schema: $(stat -c %s "$W/sqlite3.schema") bytes, $(grep -vc '^#\|^@block' "$W/sqlite3.schema") variable lines, $(grep -c '^@block' "$W/sqlite3.schema") block lines"
echo "metadata: $(stat -c %s "$BIN.vmeta") bytes"

OUT=$W/sq-run && rm -rf "$OUT" && mkdir -p "$OUT"
t0=$(date +%s.%N)
VPROF_OUT=$OUT "$BIN" :memory: <<SQL
CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT, c INTEGER);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $ROWS)
INSERT INTO t SELECT i, hex(randomblob(8)), i % 97 FROM n;
CREATE INDEX tc ON t(c);
SELECT c, count(*), max(b) FROM t GROUP BY c ORDER BY 2 DESC LIMIT 3;
SQL
echo "workload: $(echo "$(date +%s.%N) - $t0" | bc)s"
ls -la "$OUT" | sed 's/^/  /'
for v in "$OUT"/values.*; do
    echo "  $(basename "$v"): $(( ($(stat -c %s "$v") - 64) / 40 )) value records"
done
grep -h '^meta\|^end' "$OUT"/layout.* | sed 's/^/  /'
gprof -b -p "$BIN" "$OUT"/gmon.*.out 2>/dev/null | sed -n '1,9p' | sed 's/^/  /'
