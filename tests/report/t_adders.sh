#!/bin/bash
# Adders of a walked container (--adders, the schema's @items):
# tests/report/subs_dedup.cc's publish() calls deliver() 20 times as often
# per call in the buggy run - it walks a topic's subscriber list, which
# subscribe() filled with a copy per reconnect. subscribe (push_back into
# struct Topic.subs, no check for an existing subscription) ranks right
# after publish (missing constraint); with --adders 0 it ranks by its own
# (no) cost. And an array appended to only when a predicate says so
# (sparse_index.c): its appender and the predicate rank after the seek that
# walks further because the index is sparse.
source "$(dirname "$0")/../lib.sh"
R=$VPROF_BIN/vprof-report CXX=$VPROF_BIN/vprof-c++
[ -x "$CXX" ] && [ -e "$VPROF_LIB/libvprof.so" ] || skip "vprof-c++ or libvprof not built"
command -v python3 > /dev/null || skip "python3 not installed"
cd "$TMP"
"$CXX" -O2 -g -o sd "$VPROF_ROOT/tests/report/subs_dedup.cc" > cc.log 2>&1 ||
    { cat cc.log; echo "not ok - vprof-c++ builds subs_dedup.cc"; exit 1; }
VPROF_OUT=n ./sd 1 > /dev/null && VPROF_OUT=b ./sd 20 > /dev/null || { echo "not ok - runs"; exit 1; }
"$R" -q --json --top 0 n b > on.json
"$R" -q --json --top 0 --adders 0 n b > off.json
"$R" -q --top 3 --verdicts 3 n b > on.txt
P="publish(Topic const*)" S="subscribe(Topic*, unsigned int)" D="deliver(unsigned int)"
check "publish calls deliver far more often per call in the buggy run" pyrank on.json "
c = F['$P']['calls']
assert c and c['callee'] == '_Z7deliverj', c
assert c['buggy_callee_calls'] / c['buggy_calls'] > 10 * c['normal_callee_calls'] / c['normal_calls'], c"
check "subscribe, the container's adder, ranks right after publish" pyrank on.json "
assert r['$S'] == r['$P'] + 1, r
f = F['$S']
assert f['size_of'] == '$P' and f['size'] == 'struct Topic.subs' and f['size_role'] == 'adder', f
assert f['pattern'] == 'missing-constraint', f['pattern']
assert F['$P']['size_of'] is None and F['$D']['size_of'] is None"
check "--adders 0: subscribe is not placed and ranks below deliver" pyrank off.json "
assert all(f['size_of'] is None for f in F.values())
assert r['$S'] > r['$D'], r"
check "text: the adder's verdict names the container and the walk" \
    eval "tr -s ' \n' '  ' < on.txt | grep -q 'which walks further per call through the container struct Topic.subs, which this function adds to'"

# An array appended to when a predicate says so (tests/report/sparse_index.c,
# the schema's `@items ... append` and `@addguard`): with a 16 times larger
# interval the index is sparse and seek() decodes 16 times as many records
# per call after its binary search (index_find, the array's scan, called by
# seek). append, the index's appender, and index_due, whose answer decides
# its appends, rank right after seek (wrong constraint: the condition).
CC=$VPROF_BIN/vprof-cc
"$CC" -O2 -g -o si "$VPROF_ROOT/tests/report/sparse_index.c" > cc2.log 2>&1 ||
    { cat cc2.log; echo "not ok - vprof-cc builds sparse_index.c"; exit 1; }
VPROF_OUT=sn ./si 4096 > /dev/null && VPROF_OUT=sb ./si 65536 > /dev/null ||
    { echo "not ok - runs (sparse_index)"; exit 1; }
"$R" -q --json --top 0 sn sb > si.json
"$R" -q --json --top 0 --adders 0 sn sb > si0.json
"$R" -q --top 3 --verdicts 3 sn sb > si.txt
check "sparse index: index_due right above seek (--deciders-above), append right after it" pyrank si.json "
assert F['seek']['calls'] and F['seek']['calls']['callee'] == 'decode', F['seek']['calls']
assert r['append'] == r['seek'] + 1 and r['index_due'] == r['seek'] - 1, r
assert F['index_due']['placed_above'] and not F['append']['placed_above'], F['index_due']
a, g = F['append'], F['index_due']
assert a['size_of'] == 'seek' and a['size'] == 'struct log.index' and a['size_role'] == 'adder', a
assert g['size_of'] == 'seek' and g['size'] == 'struct log.index' and g['size_role'] == 'add-guard', g
assert g['pattern'] == 'wrong-constraint', g['pattern']"
check "sparse index, --adders 0: neither is placed" pyrank si0.json "
assert F['append']['size_of'] is None and F['index_due']['size_of'] is None
assert r['index_due'] > r['seek'] + 2, r"
check "text: the predicate's verdict names the appender and the walk" \
    eval "tr -s ' \n' '  ' < si.txt | grep -q \"ranked right above seek, which walks further per call through the container struct log.index, to which its adder append adds only when\""
finish
