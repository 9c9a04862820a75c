#!/bin/bash
# Real application: SQLite 3 from Debian's source package, with a one-line
# injected planner defect (defect.patch), diagnosed by vprof and gprof.
# Not run in CI (downloads ~14 MB and builds SQLite twice: several minutes).
#
# Steps: apt-get source sqlite3 (adds a deb-src entry if apt has none);
# apply defect.patch; build the sqlite3 shell (static library, no
# amalgamation so the schema can be limited to the planner files) with
# `gcc -pg` (gprof), plain gcc (perf) and with vprof-cc
# (VPROF_COMPONENT=where*.c, the paper's
# "user names the file" setting); run the normal and buggy workloads of
# gen_workload.sh on an in-memory database; print the rank of the root
# cause whereLoopAddBtree according to vprof, gprof and perf, and write
# bench/results/apps-sqlite3.json.
#
# Knobs (environment, defaults in brackets):
#   VPROF_APPS_DIR  work directory [/tmp/vprof-apps]
#   JOBS            make -j for the builds [2]
#   REPEAT          runs per tool; the median rank is reported [3]
#   SQLITE_COMPONENT  VPROF_COMPONENT of the vprof build [where*.c]; empty = all
#                   files (delete $VPROF_APPS_DIR/sqlite3/vprof to rebuild)
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
BIN=${VPROF_BIN:-$ROOT/build/bin}
W=${VPROF_APPS_DIR:-/tmp/vprof-apps}/sqlite3
JOBS=${JOBS:-2} REPEAT=${REPEAT:-3}
ROOT_CAUSE=whereLoopAddBtree
RESULT=$ROOT/bench/results/apps-sqlite3.json
for t in "$BIN/vprof-cc" "$BIN/vprof-report"; do
    [ -x "$t" ] || { echo "sqlite3/run.sh: $t missing: run make first" >&2; exit 1; }
done
command -v tclsh >/dev/null || echo "sqlite3/run.sh: note: no tclsh (not needed: non-amalgamation build)" >&2
mkdir -p "$W" && cd "$W"

# 1. Source.
if ! ls -d sqlite3-*/src >/dev/null 2>&1; then
    if ! apt-get source --print-uris sqlite3 >/dev/null 2>&1; then
        echo "sqlite3/run.sh: adding a deb-src entry for bookworm" >&2
        printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: bookworm\nComponents: main\n' \
            > /etc/apt/sources.list.d/vprof-deb-src.sources
        apt-get update -qq
    fi
    apt-get source -qq sqlite3 > fetch.log 2>&1 || { cat fetch.log >&2; exit 1; }
fi
SRC=$(ls -d sqlite3-*/ | head -1); SRC=$W/${SRC%/}

# 2. Two builds of the defective source.
build() {   # build NAME CC CFLAGS [env...]
    local name=$1 cc=$2 cflags=$3; shift 3
    if [ -x "$W/$name/sqlite3" ]; then echo "== $name build: reusing $W/$name/sqlite3"; return; fi
    echo "== $name build ($cc $cflags)"
    rm -rf "$W/$name" && cp -a "$SRC" "$W/$name"
    (cd "$W/$name" && patch -p1 -s < "$HERE/defect.patch" \
        && env "$@" ./configure -q --disable-amalgamation --disable-tcl --disable-readline \
               --disable-shared --disable-load-extension CC="$cc" CFLAGS="$cflags" \
        && env "$@" make -s -j"$JOBS" sqlite3) > "$W/$name.log" 2>&1 \
        || { tail -20 "$W/$name.log" >&2; echo "sqlite3/run.sh: $name build failed" >&2; exit 1; }
}
start=$(date +%s)
build gprof gcc "-O2 -g -pg"
build plain gcc "-O2 -g"
build vprof "$BIN/vprof-cc" "-O2 -g" VPROF_COMPONENT="${SQLITE_COMPONENT-where*.c}"
echo "   builds: $(( $(date +%s) - start )) s"
grep -c . "$W/vprof/sqlite3.vmeta" >/dev/null 2>&1 || true

# 3. Workloads and the run helper.
for w in normal buggy; do "$HERE/gen_workload.sh" $w > "$W/$w.sql"; done
run() {     # run DIR EXE WORKLOAD [wrapper...]
    local dir=$1 exe=$2 w=$3; shift 3
    rm -rf "$dir" && mkdir -p "$dir"
    (cd "$dir" && GMON_OUT_PREFIX=$dir/gmon "$@" "$exe" :memory: < "$W/$w.sql" > out.txt)
}
# 3+4. Runs and ranks, REPEAT times (a single run's rank of a function with
# almost no self time is noisy; the median is reported).
gr=() vr=() pr=()
perf_ok=0
perf record -q -e cpu-clock -o /dev/null true >/dev/null 2>&1 && perf_ok=1
for i in $(seq "$REPEAT"); do
    for w in normal buggy; do
        run "$W/runs/gprof-$w" "$W/gprof/sqlite3" $w
        run "$W/runs/vprof-$w" "$W/vprof/sqlite3" $w env VPROF_OUT="$W/runs/vprof-$w" VPROF_QUIET=1
    done
    cmp -s "$W/runs/gprof-normal/out.txt" "$W/runs/gprof-buggy/out.txt" \
        || echo "   note: query results differ between the workloads" >&2
    gr+=("$(python3 "$ROOT/bench/tools/rank_tool.py" gprof "$W/gprof/sqlite3" "$W/runs/gprof-buggy" $ROOT_CAUSE)")
    vr+=("$(python3 "$ROOT/bench/tools/rank_tool.py" vprof "$W/runs/vprof-normal" "$W/runs/vprof-buggy" \
        $ROOT_CAUSE "$W/runs/vprof-report.$i.json")")
    if [ $perf_ok = 1 ]; then
        run "$W/runs/perf-buggy" "$W/plain/sqlite3" buggy perf record -q -e cpu-clock -F 1000 \
            -o "$W/runs/perf-buggy/perf.data" --
        pr+=("$(python3 "$ROOT/bench/tools/rank_tool.py" perf "$W/runs/perf-buggy" $ROOT_CAUSE)")
    fi
    last_perf=n/a; [ ${#pr[@]} -gt 0 ] && last_perf=${pr[${#pr[@]}-1]%% *}
    echo "   run $i: vprof ${vr[${#vr[@]}-1]%% *}, gprof ${gr[${#gr[@]}-1]%% *}, perf $last_perf"
done
echo "   both workloads print the same query results: $(cmp -s "$W/runs/gprof-normal/out.txt" "$W/runs/gprof-buggy/out.txt" && echo yes || echo NO)"

mkdir -p "$(dirname "$RESULT")"
python3 "$ROOT/bench/tools/apps_result.py" "$RESULT" \
    --app "sqlite3 (Debian source package, defect.patch applied)" --root-cause $ROOT_CAUSE \
    --fix "src/where.c:3502 (remove the injected line)" --pattern wrong_constraint \
    --vprof "${vr[@]}" --gprof "${gr[@]}" --perf "${pr[@]}"
