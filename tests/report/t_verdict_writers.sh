#!/bin/bash
# Off-stack culprits in the verdict: a hot function decided by a global's
# anomalous value says which functions store into that global (the schema's
# @writes), with file:line, in text, JSON and HTML.
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
finish
