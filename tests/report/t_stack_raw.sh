#!/bin/bash
# --stack-raw branch (the default): a function whose branch calls a program
# callee more often (at most once per call in the normal run) owns what
# the callee's subtree costs, counted from the whole stacks - the value
# samples' unwinding (VPROF_UNWIND=2 here) stops two frames above the
# leaf, four calls below the branch. tests/report/branch_refresh.c:
# handle() calls refresh() once in 1,000 calls normally, once in 20 in the
# buggy run; refresh's time is in leaf(), under d1 > d2 > d3.
source "$(dirname "$0")/../lib.sh"
R=$VPROF_BIN/vprof-report CC=$VPROF_BIN/vprof-cc
[ -x "$CC" ] && [ -e "$VPROF_LIB/libvprof.so" ] || skip "vprof-cc or libvprof not built"
command -v python3 > /dev/null || skip "python3 not installed"
cd "$TMP"
"$CC" -O1 -g -o br "$VPROF_ROOT/tests/report/branch_refresh.c" > cc.log 2>&1 ||
    { cat cc.log; echo "not ok - vprof-cc builds branch_refresh.c"; exit 1; }
export VPROF_UNWIND=2
VPROF_OUT=n ./br 1000 && VPROF_OUT=b ./br 20 || { echo "not ok - runs"; exit 1; }
"$R" -q --json --top 0 n b > branch.json
"$R" -q --json --top 0 --stack-raw off n b > off.json
"$R" -q --json --top 0 --stack-raw all n b > all.json
py() {  # FILE CODE: F by name, r rank by name
    python3 -c "import json
d = json.load(open('$1')); F = {f['name']: f for f in d['functions']}
r = {f['name']: f['rank'] for f in d['functions']}
$2"
}
check "handle calls refresh more often per call, at most once per call normally" py branch.json '
c = F["handle"]["calls"]
assert F["handle"]["discounter"] == "calls" and c["callee"] == "refresh", F["handle"]
assert c["normal_callee_calls"] <= c["normal_calls"], c
assert c["buggy_callee_calls"] / c["buggy_calls"] >= 10 * c["normal_callee_calls"] / c["normal_calls"], c'
check "default (branch): handle's raw cost is its subtree's (as leaf's), and it ranks first after its pure predicate stale" py branch.json '
assert F["handle"]["raw_cost"] >= 0.9 * F["leaf"]["raw_cost"] > 0, (F["handle"]["raw_cost"], F["leaf"]["raw_cost"])
assert r["stale"] == 1 and F["stale"]["guard_above"] and r["handle"] == 2, r'
check "--stack-raw off: handle keeps what the unwinding reached (a fraction) and ranks below leaf" py off.json '
assert F["handle"]["raw_cost"] < 0.5 * F["leaf"]["raw_cost"], (F["handle"]["raw_cost"], F["leaf"]["raw_cost"])
assert r["handle"] > r["leaf"], r'
check "--stack-raw all: every caller's raw cost is its subtree's (refresh, d1 too)" py all.json '
for n in ("refresh", "d1"):
    assert F[n]["raw_cost"] >= 0.9 * F["leaf"]["raw_cost"], (n, F[n]["raw_cost"], F["leaf"]["raw_cost"])'
check "--stack-raw: a bad value is refused" bash -c "! '$R' --stack-raw some n b 2> err.txt && grep -q stack-raw err.txt"
finish
