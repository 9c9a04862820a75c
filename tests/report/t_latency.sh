#!/bin/bash
# Latency events in the report, on synthetic runs with exact durations
# (vprof-gen-runs scenario "latency", see vprof-report/tools/vprof-gen-runs.c):
# percentiles, the latency discount dimension and its raw cost, call sites,
# lock waits with their holder, --timeline, --trace, bad input.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/common.sh"
cd "$TMP"
make_target "$TMP" || { echo "not ok - build target"; exit 1; }
B=555555554000
gen latency normal n ./target --bias $B --seed 1
gen latency buggy b ./target --bias $B --seed 2
"$R" --json n b > out.json 2>err.txt
check "latency: exit 0" [ $? -eq 0 ]
py() { /usr/bin/python3 -c "import json,sys; d=json.load(open('out.json')); f={x['name']: x for x in d['functions']}; $1"; }
check "latency: hot's percentiles exact (1..1000 µs: 500/990/999/1000), both sides" py '
for s in ("normal", "buggy"):
    l = f["hot"]["latency"][s]
    assert (l["count"], l["p50_us"], l["p99_us"], l["p999_us"], l["max_us"]) == (1000, 500, 990, 999, 1000), l'
check "latency: hot's latency is the same: DefaultDiscount, variable keeps the decision" py '
l = f["hot"]["latency"]; assert l["state"] == "same" and abs(l["discount"] - 0.8) < 1e-12, l
assert f["hot"]["discounter"] == "variable"'
check "latency: worker (no CPU, waits) is not discounted: discounter latency, ratio 0" py '
w = f["worker"]; assert w["discounter"] == "latency" and w["dimension"] == "latency" and w["discount"] == 0, w
assert w["latency"]["state"] == "differs" and w["pc_cost"] == 0'
check "latency: worker's raw cost is the latency the bug added (1.0 s buggy - 0.02 s normal)" py '
w = f["worker"]; l = w["latency"]
assert abs(l["buggy_cost"] - 1.0) < 1e-9 and abs(l["normal_cost"] - 0.02) < 1e-9, l
assert abs(w["raw_cost"] - 0.98) < 1e-9 and w["normal_raw_cost"] == 0, w
assert abs(w["calibrated_cost"] - 0.98) < 1e-9'
check "latency: worker ranked, with its call site in caller (target.c:3)" py '
s = f["worker"]["latency"]["sites"]; assert len(s) == 1 and s[0]["caller"] == "caller" and s[0]["line"] == 3, s
assert s[0]["buggy"]["p50_us"] == 5000 and s[0]["normal"]["p50_us"] == 100'
check "latency: lock wait site worker, 200 waits of 4000 µs, holder caller (800000 µs)" py '
w = d["latency"]["lock_waits"]; assert len(w) == 1 and w[0]["function"] == "worker", w
w = w[0]; assert w["buggy"]["count"] == 200 and w["buggy"]["p50_us"] == 4000 and w["normal"]["count"] == 0
assert w["holders"][0]["function"] == "caller" and abs(w["holders"][0]["overlap_us"] - 800000) < 1e-6, w["holders"]'
check "latency: event counts in the summary" py '
l = d["latency"]; assert (l["normal_events"], l["buggy_events"], l["scan_ns"]) == (1600, 2000, 20000), l'
"$R" n b > t.txt 2>/dev/null
check "latency: text has the latency section with hot's exact percentiles" \
    grep -Eq '^ +[0-9]+ hot +normal +1000 +500\.0 +990\.0 +999\.0 +1000\.0$' t.txt
check "latency: text names the holder of the lock" grep -q 'holder caller: 800000 µs overlap in 200 calls' t.txt
check "latency: text fits 80 columns" python3 -c "
import sys; sys.exit(max(len(l) for l in open('t.txt', encoding='utf-8').read().split('\n')) > 80)"

"$R" -q --html r.html n b > /dev/null
check "latency: HTML has hot's percentiles and the lock wait with its holder" python3 -c "
import re; h = open('r.html', encoding='utf-8').read()
assert re.search(r'<td>normal</td><td class=\"n\">1000</td><td class=\"n\">500.0</td><td class=\"n\">990.0</td><td class=\"n\">999.0</td><td class=\"n\">1000.0</td>', h)
assert 'id=\"lockwaits\"' in h and 'holder caller: 800000' in h"

# --timeline: request 5 is worker's 5th call; buggy: it waits, holder thread 3 runs caller
"$R" --timeline 5 n b > tl.txt 2>tl.err
check "timeline: exit 0" [ $? -eq 0 ]
check "timeline: both runs, one stay each" [ "$(grep -c '^  thread 2: ' tl.txt)" = 2 ]
check "timeline: buggy stay 5020 µs with worker 5000 µs" grep -Eq '^ +\+10\.0 +5000\.0 µs +worker$' tl.txt
check "timeline: the wait names holder thread 3" grep -q 'wait for mutex 0x1234 in worker (target.c:4), holder thread 3' tl.txt
check "timeline: the holder's function caller during the wait" grep -Eq 'holder +\+400\.0 +4200\.0 µs +caller$' tl.txt
"$R" --timeline 999 n b > /dev/null 2> tl2.err
rc=$?
check "timeline: unknown request: exit 1 with a message" eval '[ $rc -eq 1 ] && grep -q "no run has request 999" tl2.err'
"$R" --timeline abc n b > /dev/null 2> tl3.err
rc=$?
check "timeline: bad id: exit 2 with a message" eval '[ $rc -eq 2 ] && grep -q "not a request id" tl3.err'

# --trace: Chrome trace-event JSON
"$R" --trace tr.json n b > /dev/null 2>&1
check "trace: exit 0" [ $? -eq 0 ]
check "trace: valid JSON; X events with ts/dur in µs, names = functions" python3 -c "
import json; d = json.load(open('tr.json')); ev = d['traceEvents']
x = [e for e in ev if e['ph'] == 'X']
assert all(isinstance(e['ts'], (int, float)) and e['dur'] >= 0 and 'pid' in e and 'tid' in e for e in x)
w = [e for e in x if e['name'] == 'worker']; assert len(w) == 400, len(w)
assert sorted({e['dur'] for e in w}) == [100, 5000]
r = [e for e in x if e['cat'] == 'request']; assert len(r) == 400 and {e['dur'] for e in r} == {120, 5020}
assert sum(1 for e in x if e['cat'] == 'wait') == 200
s = [e for e in ev if e['ph'] == 's']; f = {e['id']: e for e in ev if e['ph'] == 'f'}
assert len(s) == 200 and all(f[e['id']]['tid'] == 3 and e['tid'] == 2 for e in s)
assert sum(1 for e in ev if e['ph'] == 'M') == 2"

# runs without latency files: no section, JSON null, --timeline refused
gen rank normal rn ./target --bias $B --seed 1
gen rank buggy rb ./target --bias $B --seed 2
"$R" --json rn rb > out.json 2>/dev/null
check "no latency: JSON latency null" py 'assert d["latency"] is None and all(x["latency"] is None for x in d["functions"])'
"$R" rn rb 2>/dev/null | grep -q '^Latency'
check "no latency: no latency section in the text" [ $? -ne 0 ]
"$R" --timeline 1 rn rb > /dev/null 2> nl.err
rc=$?
check "no latency: --timeline exits 1 naming the missing files" eval '[ $rc -eq 1 ] && grep -q "no latency" nl.err'

# thread start routines (--thread-roots): one call a thread, lasting the
# thread's life. The buggy threads live 1 s longer, so their summed latency
# grows the most (8 x 1 s against worker's 0.98 s): functions as long-lived
# as their threads are the roots of the run, whose calls are not latency
# (as a thread-start event's routine), not a function that waits.
mkdir -p rt && cp target.c rt/ && echo 'void root(void) { worker(1); }' >> rt/target.c &&
    gcc -g -O0 -o rt/target rt/target.c
for side in normal buggy; do
    gen latency $side rt/$side rt/target --bias $B --seed 1 --func root="$(addr rt/target root)" --thread-roots 8
done
"$R" --json --top 0 rt/normal rt/buggy > out.json 2>/dev/null
check "thread roots: worker first; root, whose calls are its threads' lives, has no latency cost" py '
assert d["functions"][0]["name"] == "worker", [x["name"] for x in d["functions"]][:3]
r = f.get("root"); assert r is None or (r["calibrated_cost"] == 0 and r["raw_cost"] == 0), r'
"$R" --json --top 0 --whole-run 0 rt/normal rt/buggy > out.json 2>/dev/null
check "thread roots: --whole-run 0 ranks root first (its added latency, 24 - 16 s)" py '
assert d["functions"][0]["name"] == "root" and abs(f["root"]["raw_cost"] - 8) < 1e-9, f["root"]'

# bad input: a truncated latency file is rejected with its name
cp -r b bt && head -c 100 b/latency.1000 > bt/latency.1000
"$R" n bt > /dev/null 2> bad.err
rc=$?
check "bad latency file: exit 1, message names the file" eval '[ $rc -eq 1 ] && grep -q "bt/latency.1000" bad.err'
finish
