#!/bin/bash
# The report a person reads first: the table, then a verdict for each of the
# top functions (the deciding variable, its values on both sides, where it
# is declared and where its anomalous samples fell, with the code, and the
# pattern in words), a note naming thin evidence, details only with
# --verbose; the HTML page shows the same with the source lines highlighted.
source "$(dirname "$0")/../lib.sh"
R=$VPROF_BIN/vprof-report CC=$VPROF_BIN/vprof-cc
[ -x "$CC" ] && [ -e "$VPROF_LIB/libvprof.so" ] || skip "vprof-cc or libvprof not built"
D=$VPROF_ROOT/examples/demo
cd "$TMP"
"$CC" -O2 -g -o demo "$D/demo.c" > cc.log 2>&1 || { cat cc.log; echo "not ok - vprof-cc builds the demo"; exit 1; }
VPROF_OUT=normal ./demo "$D/normal.in" > /dev/null || { echo "not ok - normal run"; exit 1; }
VPROF_OUT=buggy ./demo "$D/buggy.in" > /dev/null || { echo "not ok - buggy run"; exit 1; }
"$R" normal buggy > t.txt 2> err.txt
check "verdict: exit 0" [ $? -eq 0 ]
# the verdict of ingest_all, wherever it ranks in the top 3
awk '/^\[[0-9]\] ingest_all/ {p=1; print; next} /^\[[0-9]\]|^Thin|^Calling contexts|^\(--verbose/ {p=0} p' t.txt > v.txt
check "verdict: ingest_all has a verdict among the top 3" test -s v.txt
check "verdict: names budget, its type and tags, and the dimension" grep -q 'budget (long; cond), value' v.txt
check "verdict: normal and buggy values in one line" \
    bash -c "tr '\n' ' ' < v.txt | tr -s ' ' | grep -q 'normal: always 49152 ([0-9]* samples); buggy: always 0 ([0-9]* samples, all outside the normal range)'"
check "verdict: declaration with its code" grep -q 'declared demo.c:158: long budget = c->mem_limit' v.txt
check "verdict: anomalous line with its code" grep -Eq 'demo.c:163 \([0-9]+\) +merge_buffer_into_index\(\);' v.txt
check "verdict: pattern in words" bash -c "tr '\n' ' ' < v.txt | tr -s ' ' | grep -q 'why: budget, a condition variable, takes other values than in the normal run'"
check "verdict: evidence with observation counts" \
    bash -c "tr '\n' ' ' < v.txt | tr -s ' ' | grep -Eq 'evidence (thin|moderate|strong) \([0-9]+ normal, [0-9]+ buggy observations\)'"
check "verdict: exactly 3 verdicts by default" test "$(grep -c '^\[[0-9]*\] ' t.txt)" -eq 3
check "verdict: text fits 80 columns" awk 'length($0) > 80 { exit 1 }' t.txt
check "verdict: no per-dimension detail without --verbose" bash -c "! grep -q 'processing-cost  *undefined' t.txt"
"$R" --verbose normal buggy > tv.txt
check "--verbose: per-dimension detail" grep -q 'processing-cost  *\(undefined\|same\|differs\)' tv.txt
"$R" --verdicts 0 normal buggy > t0.txt
check "--verdicts 0: table only" bash -c "! grep -q '^\[[0-9]*\] .*demo.c' t0.txt"
# the normal run is short: the decisive variables have few normal samples
check "thin evidence is named, with the way out" \
    bash -c "tr '\n' ' ' < t.txt | tr -s ' ' | grep -q 'Thin evidence: .* raise VPROF_HZ'"
"$R" --min-evidence 1 normal buggy > t1.txt
# the thin-evidence note is one paragraph (other sections follow it)
check "--min-evidence 1: ingest_all is not thin" \
    bash -c "! awk '/^Thin evidence/ {p=1} /^\$/ {p=0} p' t1.txt | tr '\\n' ' ' | grep -q 'ingest_all'"
check "--min-evidence bad: refused" bash -c "! '$R' --min-evidence zero normal buggy 2>/dev/null"
"$R" --json normal buggy > r.json
check "json: evidence with strength, counts, values, why and declaration" python3 -c "
import json; d = json.load(open('r.json'))
f = [x for x in d['functions'] if x['name'] == 'ingest_all'][0]; e = f['evidence']
assert e['strength'] in ('thin', 'moderate', 'strong') and e['normal'] > 0 and e['buggy'] > 0
assert 'always 0' in e['values'] and e['why'].startswith('budget')
assert e['declared']['line'] == 158 and e['declared']['file'].endswith('demo.c')"
# HTML: the same verdict, the code with the anomalous and declaration lines marked
"$R" --html r.html normal buggy > /dev/null
check "html: verdict text" grep -q 'budget (long; cond), value' r.html
check "html: anomalous source line highlighted" \
    grep -Eq '<span class="hot" title="[0-9]+ anomalous samples"> *163  +merge_buffer_into_index\(\);' r.html
check "html: declaration line marked" grep -Eq '<span class="decl" title="declaration"> *158  +long budget' r.html
finish
