#!/bin/bash
# Writers of a guard's state (--state-writers, the schema's @guardstate):
# tests/report/state_guard.c's query() calls rebuild() far more often per
# call in the buggy run because a member (c->valid) it branches on was
# cleared more often - by on_update(), a writer off the stack of the cost.
# The report names the state and its writers on query's calls line, and
# ranks right after query the writers whose calls grew more than query's
# (on_update; not set_item, called in step with query, nor rebuild, which
# writes it as its effect).
source "$(dirname "$0")/../lib.sh"
R=$VPROF_BIN/vprof-report CC=$VPROF_BIN/vprof-cc
[ -x "$CC" ] && [ -e "$VPROF_LIB/libvprof.so" ] || skip "vprof-cc or libvprof not built"
command -v python3 > /dev/null || skip "python3 not installed"
cd "$TMP"
"$CC" -O2 -g -o sg "$VPROF_ROOT/tests/report/state_guard.c" > cc.log 2>&1 ||
    { cat cc.log; echo "not ok - vprof-cc builds state_guard.c"; exit 1; }
VPROF_OUT=n ./sg 0 > /dev/null && VPROF_OUT=b ./sg 50 > /dev/null || { echo "not ok - runs"; exit 1; }
"$R" -q --json --top 0 n b > on.json
"$R" -q --json --top 0 --state-writers 0 n b > off.json
"$R" -q --json --top 0 --state-writers 2 n b > two.json
"$R" -q --top 3 n b > on.txt
py() {  # FILE CODE: F by name, r rank by name
    python3 -c "import json
d = json.load(open('$1')); F = {f['name']: f for f in d['functions']}
r = {f['name']: f['rank'] for f in d['functions']}
$2"
}
check "query's changed calls of rebuild are decided by the state struct cache.valid" py on.json '
c = F["query"]["calls"]
assert c and c["callee"] == "rebuild" and c["guarded_by_state"] == "struct cache.valid", c'
check "its writer whose calls grew ranks right after query: on_update, not set_item (in step with query)" py on.json '
assert r["on_update"] == r["query"] + 1, r
assert r["rebuild"] > r["on_update"], r
assert F["on_update"]["state_of"] == "query" and F["set_item"]["state_of"] is None
assert F["rebuild"]["state_of"] is None and F["query"]["state_of"] is None'
check "query's branch (rebuild at most once per call) is a wrong constraint, its writer's writes lack a check" py on.json '
assert F["query"]["pattern"] == "wrong-constraint", F["query"]["pattern"]
assert F["on_update"]["pattern"] == "missing-constraint", F["on_update"]["pattern"]
w = F["on_update"]["evidence"]["why"]
assert "its calls grew faster than those" in w and "(missing constraint)" in w, w'
check "--state-writers 0: writers rank by their own (no) cost, below rebuild" py off.json '
assert all(f["state_of"] is None for f in F.values())
assert r["on_update"] > r["rebuild"] and r["set_item"] > r["rebuild"], r'
check "--state-writers 2: a state three functions write places no one" py two.json '
assert all(f["state_of"] is None for f in F.values())'
check "text: the calls line names the state and its writers" \
    eval "tr -s ' \n' '  ' < on.txt | grep -q 'when struct cache.valid says so: written by rebuild (state_guard.c:[0-9]*), on_update (state_guard.c:[0-9]*), set_item'"
check "text: the writer's verdict says why it is there" \
    eval "tr -s ' \n' '  ' < on.txt | grep -q 'ranked right after query, whose calls of rebuild changed on a branch on struct cache.valid, which this function writes'"
finish
