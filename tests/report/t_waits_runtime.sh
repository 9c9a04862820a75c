#!/bin/bash
# Wait and wake events from the runtime (FORMATS.md §5.1) end to end:
# tests/report/waitprog.c built with vprof-cc --latency and run with
# VPROF_LATENCY=1 has one wait of each kind with a known waker; --waits
# must join every wait to that waker with the right call sites.
source "$(dirname "$0")/../lib.sh"
R=$VPROF_BIN/vprof-report CC=$VPROF_BIN/vprof-cc
[ -x "$CC" ] && [ -e "$VPROF_LIB/libvprof.so" ] && [ -e "$VPROF_LIB/vprof-latency.so" ] ||
    skip "vprof-cc, libvprof or the latency pass not built"
cd "$TMP"
"$CC" --latency -O1 -g -I"$VPROF_ROOT/libvprof/include" -I"$VPROF_ROOT/stack-scanner" \
    -o waitprog "$VPROF_ROOT/tests/report/waitprog.c" -pthread > cc.log 2>&1 ||
    { cat cc.log; echo "not ok - vprof-cc --latency builds waitprog"; exit 1; }
VPROF_OUT=run VPROF_LATENCY=1 ./waitprog "$TMP/w.dat" > out.txt
check "waitprog runs" grep -q "waitprog done" out.txt
"$R" -q --waits --json --waits-merge none --waits-min 0 run > w.json 2> err.txt
check "--waits exit 0" [ $? -eq 0 ]
py() { python3 -c "import json; d=json.load(open('w.json'))['waits'][0]
e={(x['from'],x['to']): x for x in d['edges']}
def what(a, b): return {s['what'] for s in e[(a, b)]['wait_sites']} if (a, b) in e else set()
def woken(a, b): return {s['function'] for s in e[(a, b)]['wake_sites']} if (a, b) in e else set()
th={t['name']: t for t in d['threads']}
$1"; }
check "threads named after their start routines, created by main" py '
assert th["holder_main"]["creator"] == th["main"]["tid"] and th["waiter_main"]["creator"] == th["main"]["tid"], th'
check "mutex: waiter_main waited for holder_main, woken at its unlock" py '
assert "mutex" in what("waiter_main", "holder_main"), e.keys()
assert "holder_main" in woken("waiter_main", "holder_main"), e[("waiter_main", "holder_main")]'
check "condition, semaphore, pipe read and annotated spin: woken by main" py '
w = what("waiter_main", "main")
assert {"condition", "semaphore", "read", "spin"} <= w, w
assert woken("waiter_main", "main") == {"main"}, e[("waiter_main", "main")]["wake_sites"]'
check "the waits are at waiter_main's call sites" py '
assert all(s["function"] == "waiter_main" for s in e[("waiter_main", "main")]["wait_sites"])'
check "join: main waited for waiter_main" py '
assert "join" in what("main", "waiter_main"), e.keys()'
check "fsync: main waited for the disk, the disk for main" py '
d1 = [k for k in e if k[0] == "main" and k[1].startswith("disk ")]
assert d1 and "fsync" in what(*d1[0]), e.keys()
assert (d1[0][1], "main") in e, e.keys()'
check "sleeps wait for [timer]" py '
assert "nanosleep" in what("main", "[timer]"), e.keys()'
"$R" -q --waits run > w.txt
check "text report names the vertices" eval 'grep -q "^holder_main" w.txt && grep -q "^waiter_main" w.txt'
finish
