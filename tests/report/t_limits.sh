#!/bin/bash
# A limit that did not keep pace (--limits, the schema's @guardstate,
# @writes and @setfrom lines): tests/report/paced_limit.c compacts a store
# when the bytes written since the last compaction reach s->limit; the
# limit comes from compaction_limit(), which sizes it by the segment count
# (the same in both runs) while each compaction walks 15 times the keys.
# compaction_limit ranks right after compact (wrong constraint); the count
# it is held against (since_compact, bumped by append at every write) is
# not a limit, and main, which set the first limit, is not placed when
# compact sets it again each time. With the limit sized by the live bytes
# (mode 1) it keeps pace - compaction runs 100 times less often - and
# nothing is placed. And a limit too low for the same keys (by segments
# where the normal run sized it by the live bytes): compact runs far more
# often per call of maybe_compact, and compaction_limit ranks after that.
source "$(dirname "$0")/../lib.sh"
R=$VPROF_BIN/vprof-report CC=$VPROF_BIN/vprof-cc
[ -x "$CC" ] && [ -e "$VPROF_LIB/libvprof.so" ] || skip "vprof-cc or libvprof not built"
command -v python3 > /dev/null || skip "python3 not installed"
cd "$TMP"
"$CC" -O2 -g -o pl "$VPROF_ROOT/tests/report/paced_limit.c" > cc.log 2>&1 ||
    { cat cc.log; echo "not ok - vprof-cc builds paced_limit.c"; exit 1; }
VPROF_OUT=n ./pl 2000 0 > /dev/null && VPROF_OUT=b ./pl 30000 0 > /dev/null &&
    VPROF_OUT=k ./pl 30000 1 > /dev/null && VPROF_OUT=low ./pl 30000 0 > /dev/null ||
    { echo "not ok - runs"; exit 1; }
"$R" -q --json --top 0 n b > on.json
"$R" -q --json --top 0 --limits 0 n b > off.json
"$R" -q --json --top 0 n k > kept.json
"$R" -q --json --top 0 k low > low.json
"$R" -q --top 3 --verdicts 3 n b > on.txt
check "compaction_limit, which decides the limit, ranks right after compact" pyrank on.json "
f = F['compaction_limit']
assert r['compaction_limit'] == r['compact'] + 1, r
assert f['size_of'] == 'compact' and f['size'] == 'struct store.limit' and f['size_role'] == 'limit', f
assert f['pattern'] == 'wrong-constraint', f['pattern']"
check "the count's writer (append) and the first limit's (main) are not placed" pyrank on.json "
assert F['append']['size_of'] is None and F['main']['size_of'] is None, (F['append'], F['main'])"
check "--limits 0: nothing is placed for the limit" pyrank off.json "
assert all(f['size_role'] != 'limit' for f in F.values())
assert r['compaction_limit'] > r['compact'] + 1, r"
check "a limit that kept pace (sized by the live bytes): nothing is placed" pyrank kept.json "
assert all(f['size_role'] != 'limit' for f in F.values()), [f['name'] for f in F.values() if f['size_role']]"
# The same keys, the limit by segments against the limit by live bytes:
# too low, compact runs 100 times as often per call of maybe_compact
check "a limit too low: compaction_limit ranks right after maybe_compact, whose calls of compact grew" pyrank low.json "
c = F['maybe_compact']['calls']
assert c and c['callee'] == 'compact', c
f = F['compaction_limit']
assert r['compaction_limit'] == r['maybe_compact'] + 1, r
assert f['size_of'] == 'maybe_compact' and f['size'] == 'struct store.limit' and f['size_role'] == 'limit', f
assert f['pattern'] == 'wrong-constraint', f['pattern']"
check "text: the verdict names the limit and the paced calls" \
    eval "tr -s ' \n' '  ' < on.txt | grep -q 'the limit struct store.limit that paces its calls, which this function decides, did not keep pace'"
finish
