#!/bin/bash
# Off-stack culprits in the verdict: a hot function decided by a global's
# anomalous value says which functions store into that global (the schema's
# @writes), with file:line, in text, JSON and HTML; a local's producer
# (@from); a changed call's predicate (@guard).
source "$(dirname "$0")/../lib.sh"
R=$VPROF_BIN/vprof-report CC=$VPROF_BIN/vprof-cc
[ -x "$CC" ] && [ -e "$VPROF_LIB/libvprof.so" ] || skip "vprof-cc or libvprof not built"
cd "$TMP"
"$CC" -O2 -g -o wv "$VPROF_ROOT/tests/report/writers_verdict.c" > cc.log 2>&1 ||
    { cat cc.log; echo "not ok - vprof-cc builds writers_verdict.c"; exit 1; }
VPROF_OUT=n ./wv 50 2000000 > /dev/null && VPROF_OUT=b ./wv 5000 20000 > /dev/null ||
    { echo "not ok - runs"; exit 1; }
"$R" -q n b > t.txt
awk '/^\[[0-9]\] work/ {p=1; print; next} /^\[[0-9]\]|^Thin/ {p=0} p' t.txt > v.txt
check "work has a verdict, decided by the global limit's value" grep -q 'limit (long; cond|global), value' v.txt
check "the verdict names the writer with file:line" grep -q 'written by configure (writers_verdict.c:12)' v.txt
"$R" -q --json n b > r.json
check "json: written_by of work" python3 -c "
import json; f = [x for x in json.load(open('r.json'))['functions'] if x['name'] == 'work'][0]
assert f['evidence']['written_by'] == 'written by configure (writers_verdict.c:12)', f['evidence']"
check "json: functions not decided by a variable have no writers" python3 -c "
import json; fs = json.load(open('r.json'))['functions']
assert all(x['evidence']['written_by'] is None for x in fs if x['variable'] is None), fs"
"$R" -q --html r.html n b > /dev/null
check "html: the writer in the verdict" grep -q 'written by configure (writers_verdict.c:12)' r.html

# a local that takes a function's return value (the schema's @from): the
# verdict says which function returned it
"$CC" -O1 -g -o rv "$VPROF_ROOT/tests/report/returned_verdict.c" > cc2.log 2>&1 ||
    { cat cc2.log; echo "not ok - vprof-cc builds returned_verdict.c"; exit 1; }
VPROF_OUT=rn ./rv && VPROF_OUT=rb ./rv bug || { echo "not ok - runs"; exit 1; }
"$R" -q --json rn rb > rv.json
"$R" -q --verdicts 5 rn rb > rv.txt
check "json: insert, decided by level, says random_level returned it" python3 -c "
import json; f = {x['name']: x for x in json.load(open('rv.json'))['functions']}['insert']
assert f['variable'] == 'level' and f['evidence']['returned_by'] == 'returned by random_level (returned_verdict.c:15)', f['evidence']"
check "json: no returned_by for a global (random_level's cap)" python3 -c "
import json; f = {x['name']: x for x in json.load(open('rv.json'))['functions']}['random_level']
assert f['evidence']['returned_by'] is None, f['evidence']"
check "text: the verdict line" grep -q 'returned by random_level (returned_verdict.c:15)' rv.txt
"$R" -q --verbose rn rb > rvv.txt
check "--verbose: under insert's variable level" bash -c "grep -A1 '^ *[*]* *level (int' rvv.txt | grep -q 'returned by random_level (returned_verdict.c:15)'"

# a call made only when a predicate says so (the schema's @guard): append
# calls flush_block once per record in the buggy run because blk_full,
# inlined and never sampled, answers yes; the verdict names blk_full
"$CC" -O2 -g -o gv "$VPROF_ROOT/tests/report/guard_verdict.c" > cc3.log 2>&1 ||
    { cat cc3.log; echo "not ok - vprof-cc builds guard_verdict.c"; exit 1; }
VPROF_OUT=gn ./gv 1 > /dev/null && VPROF_OUT=gb ./gv 128 > /dev/null || { echo "not ok - runs"; exit 1; }
"$R" -q --json gn gb > gv.json
"$R" -q --verdicts 2 gn gb > gv.txt
check "json: append's changed calls of flush_block are guarded by blk_full" python3 -c "
import json; f = {x['name']: x for x in json.load(open('gv.json'))['functions']}['append']
assert f['calls']['callee'] == 'flush_block' and f['calls']['guarded_by'] == 'blk_full', f['calls']"
check "text: the verdict names the predicate and the call's line" bash -c "
tr '\n' ' ' < gv.txt | sed 's/  */ /g' | grep -q 'it calls flush_block (guard_verdict.c:30) when blk_full.s answer says so'"
"$R" -q --json --top 0 --no-guards gn gb > gv0.json
"$R" -q --json --top 0 --no-pure-guards gn gb > gvp.json
check "--guards (default): blk_full, a pure predicate, ranks right above append, guard_of says why; a predicate's pattern is wrong-constraint" python3 -c "
import json; fs = json.load(open('gv.json'))['functions']; r = {x['name']: x['rank'] for x in fs}
F = {x['name']: x for x in fs}
assert r['blk_full'] == r['append'] - 1 and F['blk_full']['guard_of'] == 'append', (r, F['blk_full'])
assert F['blk_full']['guard_above'] is True and F['append']['guard_above'] is False
assert F['blk_full']['calibrated_cost'] > 0 and F['append']['guard_of'] is None
assert F['blk_full']['pattern'] == 'wrong-constraint', F['blk_full']['pattern']"
check "--no-pure-guards: blk_full ranks right after append" python3 -c "
import json; fs = json.load(open('gvp.json'))['functions']; r = {x['name']: x['rank'] for x in fs}
F = {x['name']: x for x in fs}
assert r['blk_full'] == r['append'] + 1 and F['blk_full']['guard_of'] == 'append', (r, F['blk_full'])
assert F['blk_full']['guard_above'] is False"
check "--no-guards: blk_full by its own (tiny or no) cost, below flush_block" python3 -c "
import json; fs = json.load(open('gv0.json'))['functions']; r = {x['name']: x['rank'] for x in fs}
assert r.get('blk_full', 10**6) > r['flush_block'] > r['append'], r
assert all(x['guard_of'] is None for x in fs), [x['name'] for x in fs if x['guard_of']]"
check "text: blk_full's verdict says whom it precedes and why" bash -c "
tr '\n' ' ' < gv.txt | sed 's/  */ /g' | grep -q 'ranked right above append, whose calls of flush_block changed and wait for its answer - a truth value it computes from state, changing nothing'"
check "text table: blk_full's row says above append" bash -c "'$R' -q --verdicts 0 gn gb | grep -A1 ' blk_full\$' | grep -q '^ *above append'"
check "json: no guard for an arc without one (main's calls)" python3 -c "
import json; fs = json.load(open('gv.json'))['functions']
assert all(x['calls'] is None or x['name'] == 'append' or x['calls']['guarded_by'] is None for x in fs)"

# a local whose anomalous values are another function's answer, chosen
# against a constant (`budget = q->pending ? spin_budget(q) : 0`, the
# schema's @from through a choice): the producer, inlined and never
# sampled, ranks right after the reader (--producers, default)
"$CC" -O2 -g -o pv "$VPROF_ROOT/tests/report/producer_verdict.c" > cc4.log 2>&1 ||
    { cat cc4.log; echo "not ok - vprof-cc builds producer_verdict.c"; exit 1; }
VPROF_OUT=pn ./pv 3 3000000 > /dev/null && VPROF_OUT=pb ./pv 3000 20000 > /dev/null ||
    { echo "not ok - runs"; exit 1; }
"$R" -q --json --top 0 pn pb > pv.json
"$R" -q --json --top 0 --no-producers pn pb > pv0.json
"$R" -q --verdicts 4 pn pb > pv.txt
check "json: wait_round decided by budget, returned by spin_budget" python3 -c "
import json; f = {x['name']: x for x in json.load(open('pv.json'))['functions']}['wait_round']
assert f['variable'] == 'budget' and f['dimension'] == 'value', (f['variable'], f['dimension'])
assert f['evidence']['returned_by'] == 'returned by spin_budget (producer_verdict.c:36)', f['evidence']"
check "--producers (default): spin_budget right above wait_round, with its pattern" python3 -c "
import json; fs = json.load(open('pv.json'))['functions']; F = {x['name']: x for x in fs}
assert F['spin_budget']['rank'] == F['wait_round']['rank'] - 1, [(x['rank'], x['name']) for x in fs]
assert F['spin_budget']['placed_above'], F['spin_budget']
assert F['spin_budget']['producer_of'] == 'wait_round' and F['spin_budget']['calibrated_cost'] > 0
assert F['spin_budget']['pattern'] == F['wait_round']['pattern'], F['spin_budget']['pattern']
assert all(x['producer_of'] is None for x in fs if x['name'] != 'spin_budget')"
check "--no-producers: spin_budget by its own (no) cost, after checksum" python3 -c "
import json; fs = json.load(open('pv0.json'))['functions']; r = {x['name']: x['rank'] for x in fs}
assert r.get('spin_budget', 10**6) > r['checksum'] > r['wait_round'], r
assert all(x['producer_of'] is None for x in fs)"
"$R" -q --verdicts 0 pn pb > pvt.txt
check "text table: spin_budget's row says whom it precedes" bash -c "grep -A1 ' spin_budget\$' pvt.txt | grep -q '^ *above wait_round'"
check "text: spin_budget's verdict says whom it precedes" bash -c "
tr '\n' ' ' < pv.txt | sed 's/  */ /g' | grep -q 'ranked right above wait_round, whose budget takes this function.s answer'"

# a guarded call in an entry function's loop (main, a thread's start
# routine: no recorded call, so no rate per call): with --entry-guards
# (default) it is tested as a rare caller's, once a run
"$CC" -O2 -g -o eg "$VPROF_ROOT/tests/report/entry_guard.c" > cc5.log 2>&1 ||
    { cat cc5.log; echo "not ok - vprof-cc builds entry_guard.c"; exit 1; }
VPROF_OUT=en ./eg 65536 > /dev/null && VPROF_OUT=eb ./eg 64 > /dev/null || { echo "not ok - runs"; exit 1; }
"$R" -q --json --top 0 en eb > eg.json
"$R" -q --json --top 0 --no-entry-guards en eb > eg0.json
check "--entry-guards (default): main's guarded calls of flush changed; needs_flush, a pure predicate, right above main" python3 -c "
import json; fs = json.load(open('eg.json'))['functions']; F = {x['name']: x for x in fs}
c = F['main']['calls']
assert c and c['callee'] == 'flush' and c['guarded_by'] == 'needs_flush' and c['rare_caller'], c
assert F['needs_flush']['rank'] == F['main']['rank'] - 1 and F['needs_flush']['guard_of'] == 'main', F['needs_flush']
assert F['needs_flush']['guard_above'], F['needs_flush']"
check "--no-entry-guards: main's calls untested, needs_flush not placed" python3 -c "
import json; F = {x['name']: x for x in json.load(open('eg0.json'))['functions']}
assert F['main']['calls'] is None and F.get('needs_flush', {}).get('guard_of') is None, F['main']['calls']"

# a function with no values and no code time of its own (a stage that
# only calls the validator, run in the buggy run only): its share "grew"
# from 0, but its cost is its callee's, whose values look normal; with
# --dispatch-cap (default) it ranks just below that callee
"$CC" -O2 -g -o dc "$VPROF_ROOT/tests/report/dispatch_cap.c" > cc6.log 2>&1 ||
    { cat cc6.log; echo "not ok - vprof-cc builds dispatch_cap.c"; exit 1; }
VPROF_OUT=dn ./dc > /dev/null && VPROF_OUT=db ./dc extra > /dev/null || { echo "not ok - runs"; exit 1; }
"$R" -q --json --top 0 dn db > dc.json
"$R" -q --json --top 0 --no-dispatch-cap dn db > dc0.json
check "--dispatch-cap (default): stage_extra right below validate" python3 -c "
import json; F = {x['name']: x for x in json.load(open('dc.json'))['functions']}
assert F['stage_extra']['discounter'] == 'hist' and F['stage_extra']['pc_cost'] < 0.1 * F['stage_extra']['raw_cost'], F['stage_extra']
assert F['stage_extra']['rank'] == F['validate']['rank'] + 1, (F['stage_extra']['rank'], F['validate']['rank'])"
check "--no-dispatch-cap: stage_extra by its inherited cost, above validate" python3 -c "
import json; F = {x['name']: x for x in json.load(open('dc0.json'))['functions']}
assert F['stage_extra']['rank'] < F['validate']['rank'], (F['stage_extra']['rank'], F['validate']['rank'])"
finish
