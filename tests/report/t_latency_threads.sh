#!/bin/bash
# Thread start routines in the latency dimension: tests/report/latency_threads.c
# runs 2 workers whose start routine lives as long as the run; the buggy run
# gives step() ten times the work. The start routine's "call" is the thread's
# lifetime, which grows with any slowdown: it must not be a latency culprit
# (it was ranked first on that alone), while step()'s calls still are.
source "$(dirname "$0")/../lib.sh"
R=$VPROF_BIN/vprof-report CC=$VPROF_BIN/vprof-cc
[ -x "$CC" ] && [ -e "$VPROF_LIB/libvprof.so" ] && [ -e "$VPROF_LIB/vprof-latency.so" ] ||
    skip "vprof-cc, libvprof or the latency pass not built"
cd "$TMP"
"$CC" --latency -O1 -g -o thr "$VPROF_ROOT/tests/report/latency_threads.c" -pthread > cc.log 2>&1 ||
    { cat cc.log; echo "not ok - vprof-cc --latency builds latency_threads.c"; exit 1; }
VPROF_OUT=n VPROF_LATENCY=1 ./thr 20000 > /dev/null 2>&1 &&
    VPROF_OUT=b VPROF_LATENCY=1 ./thr 200000 > /dev/null 2>&1 || { echo "not ok - runs"; exit 1; }
"$R" -q --json n b > out.json
py() { python3 -c "import json; d = json.load(open('out.json')); f = {x['name']: x for x in d['functions']}; r = [x['name'] for x in d['functions']]; $1"; }
check "the start routine's lifetime is not a call latency" py '
w = f["worker"]; assert w["latency"] is None and w["discounter"] != "latency", w["latency"]'
check "step's calls still are (those the scanner saw)" py '
l = f["step"]["latency"]; assert l and l["buggy"]["count"] >= 20, l'
# step's latency evidence is what puts it first: the latency it added
# becomes its cost. On a machine loaded past its cores, both runs' call
# latencies can be mostly preemption and the test says "same"; then step
# and worker share the same ticks and the same (0) discount, and their
# order is the few ticks worker's walks saw beyond step's (worker ranked
# first in a CI clone) - both must still lead the ranking.
check "step ranks first (its latency differs), or step and worker lead" py '
if f["step"]["latency"]["state"] == "differs": assert r[0] == "step", (r[:3], "latency differs")
else: assert sorted(r[:2]) == ["step", "worker"], (r[:3], f["step"]["latency"]["state"])'
finish
