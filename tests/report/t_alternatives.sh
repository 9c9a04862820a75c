#!/bin/bash
# A planner's choice between two ways of one job (--alternatives):
# tests/report/plan_choice.c's run_query merges its lists linearly or with a
# heap on plan_uses_heap()'s answer, which compares the wrong quantity and
# keeps the linear pass when 96 short lists make it 32 times the work per
# call. The planner - cheap, never sampled, called as often in both runs -
# ranks right above merge_linear, naming merge_heap as the way not chosen
# (wrong constraint). query_ok() guards two calls made on the same answer
# (count_terms, whose work per call grows too, and the planner): no choice,
# not placed. Without --alternatives the planner is not placed.
source "$(dirname "$0")/../lib.sh"
R=$VPROF_BIN/vprof-report CC=$VPROF_BIN/vprof-cc
[ -x "$CC" ] && [ -e "$VPROF_LIB/libvprof.so" ] || skip "vprof-cc or libvprof not built"
command -v python3 > /dev/null || skip "python3 not installed"
cd "$TMP"
"$CC" -O2 -g -o pc "$VPROF_ROOT/tests/report/plan_choice.c" > cc.log 2>&1 ||
    { cat cc.log; echo "not ok - vprof-cc builds plan_choice.c"; exit 1; }
VPROF_OUT=n ./pc 3 2000 > n.out && VPROF_OUT=b ./pc 96 150 > b.out ||
    { echo "not ok - runs"; exit 1; }
check "the output is the program's own" eval "./pc 96 150 | cmp -s - b.out"
"$R" -q --json --top 0 n b > on.json
"$R" -q --json --top 0 --no-alternatives n b > off.json
"$R" -q --top 5 --verdicts 5 n b > on.txt
check "plan_uses_heap ranks right above merge_linear, the way it chose, naming merge_heap" pyrank on.json "
p = F['plan_uses_heap']
assert p['size_of'] == 'merge_linear' and p['size'] == 'merge_heap' and p['size_role'] == 'choice', p
assert p['pattern'] == 'wrong-constraint', p['pattern']
# right above it (--deciders-above), its callers that tie with it (main,
# run_query: their cost is its own) either side
between = [n for n in r if r['plan_uses_heap'] < r[n] < r['merge_linear']]
assert r['plan_uses_heap'] < r['merge_linear'] and set(between) <= {'main', 'run_query'}, r
assert p['placed_above'], p"
check "query_ok, guarding two calls made on the same answer, is no choice" pyrank on.json "
q = F['query_ok']
assert q['size_role'] != 'choice', q"
check "--no-alternatives: the planner is not placed" pyrank off.json "
assert F['plan_uses_heap']['size_of'] is None, F['plan_uses_heap']
assert r['plan_uses_heap'] > r['merge_linear'] + 1, r"
check "text: the verdict names the way not chosen" \
    eval "tr -s ' \n' '  ' < on.txt | grep -q 'ranked right above merge_linear, which its answer chose over merge_heap'"
finish
