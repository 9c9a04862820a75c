#!/bin/bash
# VPROF_LATENCY_FUNCS (the scanner writes call events of the listed
# functions only) and the refinement it enables: a run of
# tests/report/lockscan.c limited to handle_request, then vprof-report
# --variance names the callees to open next (gmon arcs), and a run with
# that list has them in its tree. Also the list syntax: NAME*, @FILE,
# comments, and a warning for a name that matches nothing.
source "$(dirname "$0")/../lib.sh"
R=$VPROF_BIN/vprof-report CC=$VPROF_BIN/vprof-cc
PY=/usr/bin/python3
[ -x "$CC" ] && [ -e "$VPROF_LIB/libvprof.so" ] && [ -e "$VPROF_LIB/vprof-latency.so" ] ||
    skip "vprof-cc, libvprof or the latency pass not built"
[ -x "$PY" ] || skip "python3 not installed"
cd "$TMP"
"$CC" --latency -O2 -g -I"$VPROF_ROOT/libvprof/include" -I"$VPROF_ROOT/stack-scanner" \
    -o lockscan "$VPROF_ROOT/tests/report/lockscan.c" -pthread > cc.log 2>&1 ||
    { cat cc.log; echo "not ok - vprof-cc --latency builds lockscan"; exit 1; }

# functions with call events in a run directory, and the header's flags
calls() {
    "$PY" - "$1" <<'PY'
import glob, struct, subprocess, sys
d = sys.argv[1]
(path,) = glob.glob(d + "/latency.*")
b = open(path, "rb").read()
n_res, cap = struct.unpack_from("<QQ", b, 16)
flags = struct.unpack_from("<I", b, 52)[0]
lay = open(glob.glob(d + "/layout.*")[0]).read().split("\n")
bias = 0
for l in lay:
    w = l.split("\t")
    if w[0] == "load_bias": bias = int(w[1], 16)
syms = {}
for l in subprocess.run(["nm", "lockscan"], capture_output=True, text=True).stdout.splitlines():
    w = l.split()
    if len(w) == 3 and w[1] in "Tt": syms[int(w[0], 16)] = w[2]
seen = set()
for i in range(min(n_res, cap)):
    r = struct.unpack_from("<QQQQIIIBBH", b, 64 + 48 * i)
    if r[8] & 0x80 and r[7] == 1: seen.add(syms.get(r[2] - bias, hex(r[2])))
print("flags=%d" % flags, " ".join(sorted(seen)))
PY
}
VPROF_OUT=all VPROF_LATENCY=1 ./lockscan 3000000 > /dev/null 2>&1
VPROF_OUT=one VPROF_LATENCY=1 VPROF_LATENCY_FUNCS=handle_request ./lockscan 3000000 > /dev/null 2> one.err
check "funcs: unlimited run has several functions, header flag 1 (clean)" \
    eval '[[ "$(calls all)" == "flags=1 "*crawl_items*handle_request* ]]'
check "funcs: VPROF_LATENCY_FUNCS=handle_request: only it, header flag bit 1 set" \
    eval '[ "$(calls one)" = "flags=3 handle_request" ]'
check "funcs: no warning for a name that exists" eval '! grep -q "VPROF_LATENCY_FUNCS" one.err'

printf '# what to record\nhandle_*  lookup_item,\n  nosuch_function # not there\n' > list.txt
VPROF_OUT=file VPROF_LATENCY=1 VPROF_LATENCY_FUNCS=@list.txt ./lockscan 3000000 > /dev/null 2> file.err
check "funcs: @FILE with a prefix pattern and comments" \
    eval '[ "$(calls file)" = "flags=3 handle_request lookup_item" ]'
check "funcs: a name that matches nothing is named in a warning" \
    grep -q "VPROF_LATENCY_FUNCS: no function of the program matches (nosuch_function)" file.err

"$R" --variance --json one > one.json
check "funcs: the report knows the run was limited and names handle_request's callees to open" \
    "$PY" -c "
import json; d = json.load(open('one.json')); nx = d['next']
assert d['sides'][0]['limited'] and nx['limited'], nx
assert 'lookup_item' in nx['open'].split(','), nx
assert nx['env'].split(',')[0] == 'handle_request' and 'lookup_item' in nx['env'], nx"
env=$("$PY" -c "import json; print(json.load(open('one.json'))['next']['env'])")
VPROF_OUT=next VPROF_LATENCY=1 VPROF_LATENCY_FUNCS="$env" ./lockscan 3000000 > /dev/null 2>&1
"$R" --variance --json next > next.json
check "funcs: the next run's tree has lookup_item under handle_request" "$PY" -c "
import json; d = json.load(open('next.json')); nd = {n['id']: n for n in d['nodes']}
l = [n for n in d['nodes'] if n['name'] == 'lookup_item' and nd[n['parent']]['name'] == 'handle_request']
assert l, [n['name'] for n in d['nodes']]"
"$R" --variance one > one.txt
check "funcs: text says how to run next" grep -q "run again with" one.txt
"$R" --variance all > all.txt
check "funcs: an unlimited run says the tree is complete" grep -q "the tree above is complete" all.txt
finish
