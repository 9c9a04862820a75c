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
# step's latency evidence is what puts it first: the wall time its calls
# added becomes its cost when that exceeds its CPU time. When it does not
# (on a machine loaded past its cores both runs' call latencies are mostly
# preemption, or the scanner saw few calls), step and worker share the same
# ticks and the same (0) discount, and their order is the tick or two
# worker's walks saw beyond step's (worker ranked first in two CI clones) -
# both must still lead the ranking.
check "step ranks first when its added latency is its cost, else step and worker lead" py '
l = f["step"]["latency"]; added = l["buggy_cost"] - l["normal_cost"]
why = (r[:3], l["state"], added, f["step"]["pc_cost"])
if l["state"] == "differs" and added > 1.05 * f["step"]["pc_cost"]: assert r[0] == "step", why
else: assert sorted(r[:2]) == ["step", "worker"], why'
finish
