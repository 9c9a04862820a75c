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

# An `||` chain (-DGEN_EPOCH): query rebuilds when the flag is clear or an
# older epoch built the cache; on_update bumps the epoch (struct
# epoch.gen of the global E: E.gen), the second test's state - the schema names both states, and
# the writer of the second one ranks right after query for it (its pattern
# is not checked: E.gen, a global it uses, is its own variable, and when
# enough ticks see it its delta decides by rule 3)
"$CC" -O2 -g -DGEN_EPOCH -o sge "$VPROF_ROOT/tests/report/state_guard.c" > cc.log 2>&1 ||
    { cat cc.log; echo "not ok - vprof-cc builds state_guard.c -DGEN_EPOCH"; exit 1; }
VPROF_OUT=ne ./sge 0 > /dev/null && VPROF_OUT=be ./sge 50 > /dev/null ||
    { echo "not ok - GEN_EPOCH runs"; exit 1; }
"$R" -q --json --top 0 ne be > gen.json
"$R" -q --top 3 ne be > gen.txt
check "|| chain: on_update, writer of the second test's state, ranks right after query" py gen.json '
assert r["on_update"] == r["query"] + 1, r
assert F["on_update"]["state_of"] == "query" and F["set_item"]["state_of"] is None
assert F["on_update"]["state"] == "E.gen", F["on_update"]["state"]
st = F["query"]["calls"]["guarded_by_states"]
assert sorted(st) == ["E.gen", "struct cache.gen", "struct cache.valid"], st'
# --thin-yields: its own variable (E.gen, when ticks saw it) gives the
# pattern only with --min-evidence observations a side; below that the
# placement's missing constraint stands. --min-evidence 1000000 makes any
# sample count thin: with the rule on_update is a missing constraint
# whatever its samples; without it, when E.gen is its deciding anomalous
# variable, rule 3 reads E.gen (a condition) as a wrong constraint.
"$R" -q --json --top 0 --min-evidence 1000000 ne be > thin.json
"$R" -q --json --top 0 --min-evidence 1000000 --no-thin-yields ne be > nothin.json
check "--thin-yields: a state writer whose own variable is thin takes the placement's missing constraint" py thin.json '
assert F["on_update"]["state_of"] == "query" and F["on_update"]["pattern"] == "missing-constraint", F["on_update"]'
check "--no-thin-yields: its own anomalous variable, however thin, decides (rule 3 on E.gen)" py nothin.json '
u = F["on_update"]
own = u["discounter"] == "variable" and u["variable"] == "E.gen" and u["discount"] < 0.8
assert u["pattern"] == ("wrong-constraint" if own else "missing-constraint"), u'
# rebuild inlined into query (-DINLINED_REBUILD): gmon has no query ->
# rebuild arc; vprof-cc's default counters (--calls=guarded) count the
# calls a member decides, so the rate survives and on_update is placed as
# before; without counters (--no-calls) nothing rates the calls
for c in calls no-calls; do
    flag=--calls=guarded; [ $c = no-calls ] && flag=--no-calls
    "$CC" $flag -O2 -g -DINLINED_REBUILD -o sgi_$c "$VPROF_ROOT/tests/report/state_guard.c" > cc.log 2>&1 ||
        { cat cc.log; echo "not ok - vprof-cc $flag builds state_guard.c -DINLINED_REBUILD"; exit 1; }
    VPROF_OUT=ni_$c ./sgi_$c 0 > /dev/null && VPROF_OUT=bi_$c ./sgi_$c 50 > /dev/null ||
        { echo "not ok - INLINED_REBUILD runs"; exit 1; }
    "$R" -q --json --top 0 ni_$c bi_$c > inl_$c.json
done
check "inlined: rebuild has no symbol; the counters count query's calls of it" eval '
    ! nm sgi_calls | grep -qw rebuild && grep -qP "^[0-9]+\tquery\trebuild$" bi_calls/calls.*'
check "inlined: on_update still ranks right after query, by the counted rate" py inl_calls.json '
c = F["query"]["calls"]
assert c and c["callee"] == "rebuild" and c["guarded_by_state"] == "struct cache.valid", c
assert r["on_update"] == r["query"] + 1 and F["on_update"]["state_of"] == "query", r'
check "inlined, --no-calls: no rate of rebuild, no writer placed" py inl_no-calls.json '
assert not (F["query"]["calls"] and F["query"]["calls"]["callee"] == "rebuild"), F["query"]["calls"]
assert all(f["state_of"] is None for f in F.values())'
check "|| chain: its verdict names the state it was placed for (E.gen)" \
    eval "tr -s ' \n' '  ' < gen.txt | grep -q 'ranked right after query, whose calls of rebuild changed on a branch on E.gen, which this function writes'"
check "|| chain: the calls line names every state and each one's writers" \
    eval "tr -s ' \n' '  ' < gen.txt > gen1.txt && grep -q 'it calls rebuild (state_guard.c:[0-9]*) when [^:]*E.gen[^:]* say so: ' gen1.txt && grep -q '[:;] E.gen by on_update (state_guard.c:[0-9]*)' gen1.txt && grep -q 'struct cache.valid [a-z ]*by rebuild (state_guard.c:[0-9]*), set_item' gen1.txt"
finish
