#!/bin/bash
# The --waits corpus cases (bench/waits/cases/waits_*, their case.conf "waits_shape"):
# each built with vprof-cc --latency as the bench builds it, its buggy
# workload run with VPROF_LATENCY=1, and vprof-report --waits must find
# (a) the knot worker_main <-> writer_main of a pool too small for its log
# writer, (b) the knot of the lock's clients and the disk, naming the lock's
# call site and the holder's fdatasync, (c) no knot, the CPU-bound workers as
# sinks with their CPU ranking.
source "$(dirname "$0")/../lib.sh"
R=$VPROF_BIN/vprof-report CC=$VPROF_BIN/vprof-cc
[ -x "$CC" ] && [ -e "$VPROF_LIB/libvprof.so" ] && [ -e "$VPROF_LIB/vprof-latency.so" ] ||
    skip "vprof-cc, libvprof or the latency pass not built"
B=$VPROF_ROOT/bench/waits/cases
cd "$TMP"
run_case() {        # NAME: builds, runs the buggy workload, writes NAME.json
    local name=$1
    ( source "$B/$name/case.conf"
      "$CC" --latency -O2 -g -fno-inline -pthread -o "$name" "$B/$name"/*.c > "$name.cc" 2>&1 || exit 1
      mkdir -p "$name.run" && cd "$name.run" &&
      env VPROF_OUT=. $vprof_env "../$name" $buggy_args > out.txt ) ||
        { cat "$name.cc"; echo "not ok - $name builds and runs"; return 1; }
    "$R" -q --waits --json "$name.run" > "$name.json"
}
py() { python3 -c "import json; d=json.load(open('$1.json'))['waits'][0]
e={(x['from'],x['to']): x for x in d['edges']}
knots=[sorted(x['vertices']) for x in d['results'] if x['type'] == 'knot']
sinks=[x for x in d['results'] if x['type'] == 'sink']
$2"; }

run_case waits_pool_writer &&
check "pool_writer: one knot, worker_main x2 <-> writer_main" py waits_pool_writer '
assert knots == [["worker_main x2", "writer_main"]] and d["knots"] == 1, (knots, d["verdict"], [(x["from"], x["to"], round(x["weight_s"] / d["observed_s"], 3)) for x in d["edges"]])' &&
check "pool_writer: the workers wait at log_wait_durable for the writer's broadcast" py waits_pool_writer '
x = e[("worker_main x2", "writer_main")]
assert x["wait_sites"][0]["function"] == "log_wait_durable" and x["wait_sites"][0]["what"] == "condition", x["wait_sites"]
assert x["wake_sites"][0]["function"] == "writer_main", x["wake_sites"]' &&
check "pool_writer: the writer waits for log_submit's signal" py waits_pool_writer '
x = e[("writer_main", "worker_main x2")]
assert x["wake_sites"][0]["function"] == "log_submit", x["wake_sites"]'

run_case waits_lock_io &&
check "lock_io: one knot of client_main x4 and the disk" py waits_lock_io '
assert len(knots) == 1 and "client_main x4" in knots[0] and any(v.startswith("disk ") for v in knots[0]), (knots, d["verdict"], [(x["from"], x["to"], round(x["weight_s"] / d["observed_s"], 3)) for x in d["edges"]])' &&
check "lock_io: the knot names the lock's call site (journal_append, mutex)" py waits_lock_io '
x = e[("client_main x4", "client_main x4")]
assert x["wait_sites"][0]["function"] == "journal_append" and x["wait_sites"][0]["what"] == "mutex", x["wait_sites"]' &&
check "lock_io: ... and the holder's I/O (fdatasync in journal_sync while they waited)" py waits_lock_io '
x = e[("client_main x4", "client_main x4")]["waker_ran"]["functions"]
assert any(f["function"] == "journal_sync" and f["waiting"] == "fdatasync" and f["share"] > 0.05 for f in x), x'

run_case waits_cpu_bound &&
check "cpu_bound: no knot; the verdict says execution is the bottleneck" py waits_cpu_bound '
assert d["knots"] == 0 and not knots and d["verdict"].startswith("no knot") and "execution" in d["verdict"], d["verdict"]' &&
check "cpu_bound: hash_worker x2 is a sink with its CPU ranking" py waits_cpu_bound '
s = [x for x in sinks if x["vertices"] == ["hash_worker x2"]]
assert s and "cpu_ranking" in s[0], sinks'
"$R" -q --waits waits_cpu_bound.run > cpu.txt
check "cpu_bound: the text points to the CPU ranking" grep -q "CPU ranking" cpu.txt
# the advice names the run directory the ranking reads (it once named the
# label dir/<pid>, which is no directory); ranking that run against itself
# must work
dir=$(sed -n 's/^For the cause, rank the functions against a normal run: vprof-report NORMAL_DIR //p' cpu.txt)
check "cpu_bound: the advised ranking command names the run directory, and it runs" \
    bash -c '[ "$1" = waits_cpu_bound.run ] && "$2" -q "$1" "$1" > rank.txt 2>&1' _ "$dir" "$R"
finish
