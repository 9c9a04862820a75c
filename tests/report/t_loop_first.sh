#!/bin/bash
# The paper's rule 2 before rule 3 (--loop-first, pattern.c): in
# tests/report/loop_bound.c the deciding variable of add_unique() is a
# condition (rule 3 alone: wrong constraint), while its loop variable i
# reaches values the normal run never did (0..6 -> 0..62): the loop runs
# over more data, scalability - and the verdict names both variables.
source "$(dirname "$0")/../lib.sh"
R=$VPROF_BIN/vprof-report CC=$VPROF_BIN/vprof-cc
[ -x "$CC" ] && [ -e "$VPROF_LIB/libvprof.so" ] || skip "vprof-cc or libvprof not built"
command -v python3 > /dev/null || skip "python3 not installed"
cd "$TMP"
"$CC" -O2 -g -o lb "$VPROF_ROOT/tests/report/loop_bound.c" > cc.log 2>&1 ||
    { cat cc.log; echo "not ok - vprof-cc builds loop_bound.c"; exit 1; }
VPROF_OUT=n ./lb 8 > /dev/null && VPROF_OUT=b ./lb 64 > /dev/null || { echo "not ok - runs"; exit 1; }
"$R" -q --json --top 0 n b > on.json
"$R" -q --json --top 0 --no-loop-first n b > off.json
"$R" -q --top 2 n b > on.txt
py() {  # FILE CODE: f is add_unique
    python3 -c "import json
f = {x['name']: x for x in json.load(open('$1'))['functions']}['add_unique']
$2"
}
check "without it: a condition decides, rule 3, wrong constraint" py off.json '
v = {x["name"]: x for x in f["variables"]}[f["variable"]]
assert "cond" in v["tags"] and "loop" not in v["tags"] and f["pattern"] == "wrong-constraint", (v["tags"], f["pattern"])
i = {x["name"]: x for x in f["variables"]}["i"]
assert "loop" in i["tags"] and i["discount"] < 0.8, i'
check "with it (the default): the loop variable grew, scalability" py on.json '
assert f["pattern"] == "scalability", f["pattern"]'
check "the verdict names the condition and the loop variable" \
    eval "tr -s ' \n' '  ' < on.txt | grep -q 'a condition variable, takes other values than in the normal run, and i, a loop variable of it, reaches larger values than the normal run.s: the loop runs over more data (scalability: rule 2 before rule 3)'"
finish
