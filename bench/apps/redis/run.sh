#!/bin/bash
# Real application: Redis from Debian's source package, with a workload pair
# that exposes a real slow path, diagnosed by vprof, gprof and perf.
# Not run in CI (downloads the source, builds Redis three times: gcc -pg for
# gprof, plain gcc for perf, vprof-cc; several minutes).
#
# The same command stream (gen_workload.sh: HSET/HGET on 40 hashes of
# 1,500 fields, plus some string traffic) is sent with `redis-cli --pipe` to
# a server with the default hash-max-listpack-entries 128 (normal) and to
# one configured with hash-max-listpack-entries 100000 (buggy). With the
# large threshold the hashes never convert to hash tables, and every
# HSET/HGET scans a listpack of up to 1,500 entries. The decision is taken
# in hashTypeSet() (t_hash.c: "hashTypeLength(o) > hash_max_listpack_entries");
# the time goes to lpFind/lpCompare/lpNext.
#
# Knobs (environment, defaults in brackets):
#   VPROF_APPS_DIR  work directory [/tmp/vprof-apps]
#   JOBS            make -j for the builds [2]
#   PORT            loopback port for redis-server [16390]
#   REPEAT          runs per tool; the median rank is reported [3]
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
BIN=${VPROF_BIN:-$ROOT/build/bin}
W=${VPROF_APPS_DIR:-/tmp/vprof-apps}/redis
JOBS=${JOBS:-2} PORT=${PORT:-16390} REPEAT=${REPEAT:-3}
ROOT_CAUSE=hashTypeSet
RESULT=$ROOT/bench/results/apps-redis.json
for t in "$BIN/vprof-cc" "$BIN/vprof-report"; do
    [ -x "$t" ] || { echo "redis/run.sh: $t missing: run make first" >&2; exit 1; }
done
mkdir -p "$W" && cd "$W"

# 1. Source.
if ! ls -d redis-*/src >/dev/null 2>&1; then
    if ! apt-get source --print-uris redis >/dev/null 2>&1; then
        echo "redis/run.sh: adding a deb-src entry for bookworm" >&2
        printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: bookworm\nComponents: main\n' \
            > /etc/apt/sources.list.d/vprof-deb-src.sources
        apt-get update -qq
    fi
    apt-get source -qq redis > fetch.log 2>&1 || { cat fetch.log >&2; exit 1; }
fi
SRC=$(ls -d redis-*/ | head -1); SRC=$W/${SRC%/}
FIXLINE=$(grep -n 'hashTypeLength(o) > server.hash_max_listpack_entries' "$SRC/src/t_hash.c" | head -1 | cut -d: -f1)

# 2. Two builds (Debian's Makefile, libc malloc so that the allocator is not in the way).
build() {   # build NAME CC CFLAGS LDFLAGS [env...]
    local name=$1 cc=$2 cflags=$3 ldflags=$4; shift 4
    if [ -x "$W/$name/src/redis-server" ]; then echo "== $name build: reusing"; return; fi
    echo "== $name build ($cc $cflags)"
    rm -rf "$W/$name" && cp -a "$SRC" "$W/$name"
    env "$@" make -C "$W/$name" -j"$JOBS" MALLOC=libc USE_SYSTEMD=no BUILD_TLS=no \
        OPTIMIZATION=-O2 CC="$cc" CFLAGS="$cflags" LDFLAGS="$ldflags" > "$W/$name.log" 2>&1 \
        || { tail -20 "$W/$name.log" >&2; echo "redis/run.sh: $name build failed" >&2; exit 1; }
}
start=$(date +%s)
build gprof gcc "-g -pg" "-pg"
build plain gcc "-g" ""
build vprof "$BIN/vprof-cc" "-g" "" VPROF_COMPONENT='t_hash.c'
echo "   builds: $(( $(date +%s) - start )) s"

# 3. The run helper: one server per run, the same command stream, clean shutdown so
# that the profile is written.
"$HERE/gen_workload.sh" > "$W/commands.txt"
CLI=$W/gprof/src/redis-cli
serve() {   # serve DIR SERVER CONFIG-ARGS... ; SERVER_ENV: its environment, WRAP: a wrapper
    local dir=$1 server=$2; shift 2
    rm -rf "$dir" && mkdir -p "$dir/cli"
    ( cd "$dir" && exec env $SERVER_ENV ${WRAP:-} "$server" --port "$PORT" --bind 127.0.0.1 --save '' \
        --appendonly no --daemonize no "$@" > server.log 2>&1 ) &
    local spid=$!
    for _ in $(seq 100); do (cd "$dir/cli" && "$CLI" -p "$PORT" ping >/dev/null 2>&1) && break; sleep 0.1; done
    (cd "$dir/cli" && "$CLI" -p "$PORT" --pipe < "$W/commands.txt" > pipe.log 2>&1)
    (cd "$dir/cli" && "$CLI" -p "$PORT" hlen user:7 > hlen.txt && "$CLI" -p "$PORT" object encoding user:7 > enc.txt)
    (cd "$dir/cli" && "$CLI" -p "$PORT" shutdown nosave >/dev/null 2>&1) || kill -INT $spid
    wait $spid || true
    echo "   $(basename "$dir"): $(grep -o 'replies: [0-9]*' "$dir/cli/pipe.log"), user:7 has $(cat "$dir/cli/hlen.txt") fields, encoding $(cat "$dir/cli/enc.txt")"
}
NORMAL_CFG=()
BUGGY_CFG=(--hash-max-listpack-entries 100000)
perf_ok=0
perf record -q -e cpu-clock -o /dev/null true >/dev/null 2>&1 && perf_ok=1

# 4. Ranks, REPEAT times (a single run's rank of a function with little
# self time is noisy; the median is reported).
gr=() vr=() pr=()
for i in $(seq "$REPEAT"); do
    SERVER_ENV="GMON_OUT_PREFIX=$W/runs/gprof-normal/gmon" serve "$W/runs/gprof-normal" "$W/gprof/src/redis-server" "${NORMAL_CFG[@]}"
    SERVER_ENV="GMON_OUT_PREFIX=$W/runs/gprof-buggy/gmon" serve "$W/runs/gprof-buggy" "$W/gprof/src/redis-server" "${BUGGY_CFG[@]}"
    SERVER_ENV="VPROF_OUT=$W/runs/vprof-normal VPROF_QUIET=1" serve "$W/runs/vprof-normal" "$W/vprof/src/redis-server" "${NORMAL_CFG[@]}"
    SERVER_ENV="VPROF_OUT=$W/runs/vprof-buggy VPROF_QUIET=1" serve "$W/runs/vprof-buggy" "$W/vprof/src/redis-server" "${BUGGY_CFG[@]}"
    gr+=("$(python3 "$ROOT/bench/tools/rank_tool.py" gprof "$W/gprof/src/redis-server" "$W/runs/gprof-buggy" $ROOT_CAUSE)")
    vr+=("$(python3 "$ROOT/bench/tools/rank_tool.py" vprof "$W/runs/vprof-normal" "$W/runs/vprof-buggy" \
        $ROOT_CAUSE "$W/runs/vprof-report.$i.json")")
    if [ $perf_ok = 1 ]; then
        rm -rf "$W/runs/perf-buggy"; mkdir -p "$W/runs/perf-buggy"
        WRAP="perf record -q -e cpu-clock -F 1000 -o $W/runs/perf-buggy/perf.data --" \
            SERVER_ENV="GMON_OUT_PREFIX=$W/runs/perf-buggy/gmon" \
            serve "$W/runs/perf-buggy.srv" "$W/plain/src/redis-server" "${BUGGY_CFG[@]}"
        pr+=("$(python3 "$ROOT/bench/tools/rank_tool.py" perf "$W/runs/perf-buggy" $ROOT_CAUSE)")
    fi
    last_perf=n/a; [ ${#pr[@]} -gt 0 ] && last_perf=${pr[${#pr[@]}-1]%% *}
    echo "   run $i: vprof ${vr[${#vr[@]}-1]%% *}, gprof ${gr[${#gr[@]}-1]%% *}, perf $last_perf"
done
mkdir -p "$(dirname "$RESULT")"
python3 "$ROOT/bench/tools/apps_result.py" "$RESULT" \
    --app "redis-server (Debian source package), hash-max-listpack-entries 128 vs 100000" \
    --root-cause $ROOT_CAUSE --fix "src/t_hash.c:$FIXLINE (conversion threshold check)" \
    --pattern wrong_constraint --vprof "${vr[@]}" --gprof "${gr[@]}" --perf "${pr[@]}"
