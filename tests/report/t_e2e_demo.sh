#!/bin/bash
# End to end with the real toolchain: examples/demo built by vprof-cc, run
# normal and buggy under the runtime (VPROF_OUT), analysed by vprof-report.
# The planted bug is in ingest_all (its local `budget`); gprof blames
# merge_buffer_into_index.
source "$(dirname "$0")/../lib.sh"
R=$VPROF_BIN/vprof-report CC=$VPROF_BIN/vprof-cc
[ -x "$CC" ] && [ -e "$VPROF_LIB/libvprof.so" ] || skip "vprof-cc or libvprof not built"
D=$VPROF_ROOT/examples/demo
cd "$TMP"
"$CC" -O2 -g -o demo "$D/demo.c" > cc.log 2>&1 || { cat cc.log; echo "not ok - vprof-cc builds the demo"; exit 1; }
VPROF_OUT=normal ./demo "$D/normal.in" > /dev/null || { echo "not ok - normal run"; exit 1; }
VPROF_OUT=buggy ./demo "$D/buggy.in" > /dev/null || { echo "not ok - buggy run"; exit 1; }
# the default counters leave out a call a state decides inside its holder's
# loop (merge's `i < n_index && !posting_less(...)`: a data bound, 700
# million calls) - counting it cost the demo 1.23x CPU time
check "demo: no counter for the merge loop's comparator (a state-decided call in a loop)" \
    eval '[ -s "$(ls buggy/calls.* | head -1)" ] && ! grep -q "posting_less" buggy/calls.*'
"$R" --json normal buggy > out.json 2> err.txt
check "demo: vprof-report exit 0" [ $? -eq 0 ]
py() { /usr/bin/python3 -c "import json; d = json.load(open('out.json')); f = {x['name']: x for x in d['functions']}; r = [x['name'] for x in d['functions']]; $1"; }
check "demo: value samples on both sides" py 'assert d["normal"]["value_samples"] > 0 and d["buggy"]["value_samples"] > 0'
check "demo: merge_buffer_into_index has the largest PC cost" py '
assert max(d["functions"], key=lambda x: x["pc_cost"])["name"] == "merge_buffer_into_index"'
check "demo: ingest_all ranked first" py 'assert r[0] == "ingest_all", r[:5]'
check "demo: ingest_all, called once, decided by how often it merges (--arc-rare)" py '
c = f["ingest_all"]["calls"]
assert c and c["callee"] == "merge_buffer_into_index" and c["buggy_callee_calls"] > 20 * c["normal_callee_calls"], c
assert c["rare_caller"] is True, c
assert f["ingest_all"]["added_cost"] > 0.5 * f["merge_buffer_into_index"]["raw_cost"], f["ingest_all"]'
"$R" --json --no-arc-rare normal buggy > rare.json 2> /dev/null
check "demo: --no-arc-rare: a caller called once is not tested" python3 -c "
import json; f = {x['name']: x for x in json.load(open('rare.json'))['functions']}
assert f['ingest_all']['calls'] is None, f['ingest_all']['calls']"
"$R" --json --top 0 normal buggy > all.json 2> /dev/null
check "demo: in the unranked tail, functions without a source line (the C runtime's) come after the program's" python3 -c '
import json
d = json.load(open("all.json"))
tail = [x for x in d["functions"] if not x["calibrated_cost"] > 0 and not x["name"].endswith("@plt")]
seen_nofile = False
for x in tail:
    if not x.get("file"): seen_nofile = True
    else: assert not seen_nofile, [(y["name"], y.get("file")) for y in tail]
assert any(not x.get("file") for x in tail), [y["name"] for y in tail]'
check "demo: ingest_all's most anomalous variable is budget" py 'assert f["ingest_all"]["variable"] == "budget", f["ingest_all"]["variable"]'
check "demo: anomalous budget samples located in demo.c" py '
assert any(l["file"].endswith("demo.c") for l in f["ingest_all"]["locations"])'
check "demo: their basic block comes from the embedded schema" py '
assert f["ingest_all"]["locations"][0]["block"] is not None and f["ingest_all"]["locations"][0]["block_kind"]'
check "demo: locations lie inside the function (globals too)" py '
assert all(100 <= l["line"] < 154 for l in f["merge_buffer_into_index"]["locations"]), f["merge_buffer_into_index"]["locations"]'
"$R" -q normal buggy > t.txt
check "demo: no disagreement with the calling contexts (ingest_all lies on their top path)" \
    bash -c "grep -q '^Calling contexts' t.txt && ! grep -q 'The rankings disagree: vprof ranks ingest_all' t.txt"
"$R" --gprof ./demo buggy/gmon.*.out > g.txt
check "demo: --gprof flat profile lists merge_buffer_into_index" grep -q merge_buffer_into_index g.txt
finish
