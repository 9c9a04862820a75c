#!/bin/bash
# Never worse than gprof at naming a function: what the buggy run called but
# never sampled follows the ranked functions in gprof's order (self time, then
# calls), with no cost and no evidence (a decision made once, off the hot
# stack, is still listed), as do functions discounted to nothing.
source "$(dirname "$0")/../lib.sh"
R=$VPROF_BIN/vprof-report CC=$VPROF_BIN/vprof-cc
[ -x "$CC" ] && [ -e "$VPROF_LIB/libvprof.so" ] || skip "vprof-cc or libvprof not built"
cd "$TMP"
"$CC" -O1 -g -o u "$VPROF_ROOT/tests/report/uncosted.c" > cc.log 2>&1 || { cat cc.log; echo "not ok - build"; exit 1; }
VPROF_OUT=n ./u 20000000 > /dev/null && VPROF_OUT=b ./u 60000000 > /dev/null || { echo "not ok - runs"; exit 1; }
"$R" -q --json --top 0 n b > r.json
py() { python3 -c "import json; fs = json.load(open('r.json'))['functions']; r = {f['name']: f for f in fs}; $1"; }
check "work is ranked with its cost" py 'assert r["work"]["raw_cost"] > 0 and r["work"]["rank"] <= 3, r["work"]'
check "pick_size and tiny are listed although never sampled" py '
assert r["pick_size"]["raw_cost"] == 0 and r["tiny"]["raw_cost"] == 0, (r["pick_size"], r["tiny"])'
check "they follow every function with a calibrated cost" py '
last = max(f["rank"] for f in fs if f["calibrated_cost"] > 0 or f["calls"])
assert min(r["pick_size"]["rank"], r["tiny"]["rank"]) > last, [(f["name"], f["rank"]) for f in fs]'
check "by calls: tiny (3) before pick_size (1)" py 'assert r["tiny"]["rank"] < r["pick_size"]["rank"]'
check "a function discounted to nothing (_start) is in the tail, by self time and calls" py '
s = r.get("_start")
assert s is None or s["calibrated_cost"] > 0 or s["rank"] > r["tiny"]["rank"], (s, r["tiny"]["rank"])'
check "an inlined function known only by its counted calls (often: 50) follows the symbols" py '
o = r["often"]
assert o["inlined_only"] and o["raw_cost"] == 0 and o["rank"] > r["pick_size"]["rank"], (o, r["pick_size"]["rank"])'
check "ranks stay 1..N without gaps" py 'assert [f["rank"] for f in fs] == list(range(1, len(fs) + 1))'
finish
