#!/bin/bash
# The ranking on synthetic runs whose right answer is known (see
# vprof-report/tools/vprof-gen-runs.c): a hot function whose variables look
# the same in both runs against a cheap caller whose loop variable differs.
# The caller is the paper's example, and every tick passes through it; it
# stays ranked by blend's rule because nothing else has a cost of its own
# to show (--whole-run, t_whole_run.sh). W: the checks that probe other
# options on "caller first" do not depend on that.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/common.sh"
cd "$TMP"
make_target "$TMP" || { echo "not ok - build target"; exit 1; }
B=555555554000
gen rank normal n ./target --bias $B --seed 1
gen rank buggy b ./target --bias $B --seed 2
# the paper's rule first (--rank paper, no call-count evidence, globals
# counted fully), then the default (blend) below
"$R" --rank paper --no-arcs --no-specificity --json n b > out.json 2>err.txt
check "rank: exit 0" [ $? -eq 0 ]
py() { /usr/bin/python3 -c "import json,sys; d=json.load(open('out.json')); $1"; }
check "rank: valid JSON with schema version 1" py 'assert d["vprof_report"] == 1'
check "rank: caller ranks first" py 'assert d["functions"][0]["name"] == "caller"'
check "rank: hot ranks second" py 'assert d["functions"][1]["name"] == "hot"'
check "rank: hot has the larger PC cost" py '
f = {x["name"]: x for x in d["functions"]}; assert f["hot"]["pc_cost"] > 5 * f["caller"]["pc_cost"]'
check "rank: caller raw cost comes from unwound value samples" py '
f = {x["name"]: x for x in d["functions"]}["caller"]; assert f["raw_cost"] == f["var_cost"] > f["pc_cost"]'
check "rank: hot discounted by DefaultDiscount" py '
f = {x["name"]: x for x in d["functions"]}["hot"]; assert abs(f["discount"] - 0.8) < 1e-12'
check "rank: caller's variable i, value dimension, scalability" py '
f = d["functions"][0]; assert (f["variable"], f["dimension"], f["pattern"]) == ("i", "value", "scalability")'
check "rank: calibrated = (1 - discount) x raw" py '
assert all(abs(f["calibrated_cost"] - (1 - f["discount"]) * f["raw_cost"]) < 1e-9 for f in d["functions"])'
W="--whole-run 0"
"$R" $W --json n b > blend.json
check "--rank blend: calibrated = (1 - discount) x (added + 0.2 x (raw - added))" /usr/bin/python3 -c "
import json; d = json.load(open('blend.json'))
for f in d['functions']:
    a, raw = f['added_cost'], f['raw_cost']
    assert 0 <= a <= raw + 1e-12, f
    assert abs(f['calibrated_cost'] - (1 - f['discount']) * (a + 0.2 * (raw - a))) < 1e-9, f
    assert f['whole_run'] is False, f
assert d['functions'][0]['name'] == 'caller', d['functions'][0]['name']"
"$R" --json --top 0 n b > roots.json
check "default: the caller every tick passes through keeps blend's cost (hot's own cost < 5% of it)" /usr/bin/python3 -c "
import json; d = json.load(open('roots.json')); b = json.load(open('blend.json'))
assert not any(f['whole_run'] for f in d['functions']), d['functions']
assert [f['name'] for f in d['functions']] == [f['name'] for f in b['functions']]
assert d['functions'][0]['name'] == 'caller', d['functions'][0]['name']"
check "rank: required fields present" py '
req = "name rank calibrated_cost raw_cost pc_cost discount dimension variable pattern locations".split()
assert all(k in f for f in d["functions"] for k in req)'
check "rank: anomalous samples located at target.c:3 (caller)" py '
l = d["functions"][0]["locations"]; assert l and l[0]["file"].endswith("target.c") and l[0]["line"] == 3'
check "rank: global g_count attributed to both functions" py '
assert all(any(v["name"] == "g_count" for v in f["variables"]) for f in d["functions"])'

# determinism, text width, options
"$R" $W n b > t1.txt; "$R" $W n b > t2.txt
check "rank: deterministic text output" cmp -s t1.txt t2.txt
check "rank: text fits 80 columns" awk 'length($0) > 80 { exit 1 }' t1.txt
check "rank: text table names caller first" awk '$1 == "1" { exit !($NF == "caller") }' t1.txt
"$R" --top 1 --json n b > top1.json
check "--top 1 shows one function" /usr/bin/python3 -c "import json; assert len(json.load(open('top1.json'))['functions']) == 1"
"$R" --default-discount 0.0 --json n b > dd0.json
check "--default-discount 0: hot keeps its raw cost and ranks by raw" /usr/bin/python3 -c "
import json; f = {x['name']: x for x in json.load(open('dd0.json'))['functions']}
assert f['hot']['discount'] == 0 and f['hot']['calibrated_cost'] == f['hot']['raw_cost']"
"$R" $W --valid-discount 0.5 --json n b > vd.json
check "--valid-discount 0.5: caller's ratio below it becomes 0" /usr/bin/python3 -c "
import json; f = json.load(open('vd.json'))['functions'][0]; assert f['name'] == 'caller' and f['discount'] == 0"
"$R" --pvalue 0.0001 --json n b > pv.json
check "--pvalue 0.0001: nothing rejected (p floors at 0.001), all DefaultDiscount" /usr/bin/python3 -c "
import json; assert all(f['discount'] == 0.8 for f in json.load(open('pv.json'))['functions'])"
"$R" --normal n --buggy b --json > expl.json; "$R" --json n b > pos.json
check "--normal/--buggy equals positional form" cmp -s expl.json pos.json

# an exact tie (caller's cost is all hot's call of it) decided in both by the
# argument now they share: hot's anomalous loop variable breaks it, not the
# names (caller < hot)
gen tie normal tn ./target --seed 1
gen tie buggy tb ./target --seed 2
"$R" --json tn tb > tie.json
check "tie: equal costs, both decided by now; hot, whose loop variable differs, first" /usr/bin/python3 -c "
import json; fs = json.load(open('tie.json'))['functions']
assert fs[0]['calibrated_cost'] == fs[1]['calibrated_cost'] and fs[0]['variable'] == fs[1]['variable'] == 'now', fs
assert [f['name'] for f in fs[:2]] == ['hot', 'caller'], [f['name'] for f in fs]"

# missing constraint: a loop/cond variable that stays the same for long
gen stuck normal sn ./target --seed 1
gen stuck buggy sb ./target --seed 2
"$R" --json sn sb > stuck.json
check "stuck: worker, processing-cost, missing-constraint" /usr/bin/python3 -c "
import json; f = json.load(open('stuck.json'))['functions'][0]
assert (f['name'], f['dimension'], f['pattern'], f['discount']) == ('worker', 'processing-cost', 'missing-constraint', 0)"

# --min-samples (8): six buggy stretches of 50 ticks are 300 ticks of
# evidence, not six observations - the processing-cost dimension still decides
gen stuck normal sn2 ./target --seed 1 --ticks 300
gen stuck buggy sb2 ./target --seed 2 --ticks 300
"$R" --json sn2 sb2 > stuck2.json
check "--min-samples: a few long stretches count by the ticks they cover" /usr/bin/python3 -c "
import json; f = json.load(open('stuck2.json'))['functions'][0]
d = {x['dimension']: x for x in f['variables'][0]['dimensions']}['processing-cost']
assert d['buggy_samples'] < 8 and d['state'] == 'differs', d
assert (f['name'], f['dimension'], f['pattern'], f['discount']) == ('worker', 'processing-cost', 'missing-constraint', 0), f"

check "stuck: run lengths in ticks are 5 (normal) and 50 (buggy)" /usr/bin/python3 -c "
import json; v = json.load(open('stuck.json'))['functions'][0]['variables'][0]
d = {x['dimension']: x for x in v['dimensions']}['processing-cost']
assert d['normal_range'] == [5, 5] and d['buggy_range'] == [50, 50], d"
check "stuck: deltas of adjacent samples are in [-3, 1] on both sides" /usr/bin/python3 -c "
import json; v = json.load(open('stuck.json'))['functions'][0]['variables'][0]
d = {x['dimension']: x for x in v['dimensions']}['delta']
assert d['normal_range'] == [-3, 1] and d['buggy_range'] == [-3, 1] and d['normal_samples'] == 19999, d"
check "stuck: one value sample per tick, 20000 ticks -> 20 s at 1000 Hz" /usr/bin/python3 -c "
import json; f = json.load(open('stuck.json'))['functions'][0]; assert abs(f['var_cost'] - 20.0) < 1e-9, f['var_cost']"

# several runs per side and the hist-discounter: hot has no variables when
# the runs carry none for it; two runs per side, per-run ranks compared
gen rank normal n2 ./target --bias $B --seed 3
gen rank buggy b2 ./target --bias $B --seed 4
"$R" $W --json n n2 b b2 > multi.json
check "two runs per side: caller still first" /usr/bin/python3 -c "
import json; d = json.load(open('multi.json')); assert d['normal']['runs'] == 2 and d['functions'][0]['name'] == 'caller'"
check "two runs per side: main (no variables, no samples) not ranked" /usr/bin/python3 -c "
import json; assert all(f['name'] != 'main' for f in json.load(open('multi.json'))['functions'])"
# --exe naming a copy of the program at another path
cp target target.copy
"$R" $W --exe ./target.copy --json n b > exe.json 2> exe.err
check "--exe copy: same ranking, symbols from the copy" /usr/bin/python3 -c "
import json; d = json.load(open('exe.json')); assert d['exe'] == './target.copy' and d['functions'][0]['name'] == 'caller'"
check "--exe copy: notes where the symbols come from" grep -q "reading its symbols from --exe ./target.copy" exe.err

# hist-discounter: worker has PC samples but no variables
gen hist normal hn ./target --seed 1
gen hist buggy hb ./target --seed 2
"$R" --json --top 0 hn hb > hist.json
check "hist-discounter: worker gets r = h/c = 1/1, calibrated 0" /usr/bin/python3 -c "
import json; f = {x['name']: x for x in json.load(open('hist.json'))['functions']}['worker']
assert (f['discounter'], f['hist_h'], f['hist_c'], f['discount'], f['calibrated_cost']) == ('hist', 1, 1, 1, 0), f"
check "hist-discounter: variable-discounted functions keep their discounter" /usr/bin/python3 -c "
import json; f = {x['name']: x for x in json.load(open('hist.json'))['functions']}
assert f['caller']['discounter'] == f['hot']['discounter'] == 'variable'"

# --hist-rule share (the default): worker goes from 10% of the run to 60%,
# 3rd to 1st by raw cost - two places, "the same rank" for the rank window
gen hist normal hs_n ./target --seed 1 --worker-pct 60
gen hist buggy hs_b ./target --seed 2 --worker-pct 60
"$R" --json --top 0 hs_n hs_b > share.json
"$R" --json --top 0 --hist-rule rank hs_n hs_b > share_rank.json
"$R" --top 3 --verdicts 3 hs_n hs_b > share.txt
check "hist share: a grown share keeps the part the normal share does not explain (r ~ 1/6)" \
    /usr/bin/python3 -c "
import json; f = {x['name']: x for x in json.load(open('share.json'))['functions']}['worker']
assert f['discounter'] == 'hist' and (f['hist_h'], f['hist_c']) == (0, 1), f
assert abs(f['discount'] - 1 / 6) < 0.05 and f['calibrated_cost'] > 0, f"
check "hist share: --hist-rule rank calls the same rise 'similar' (discount 1)" /usr/bin/python3 -c "
import json; f = {x['name']: x for x in json.load(open('share_rank.json'))['functions']}['worker']
assert (f['discounter'], f['discount'], f['calibrated_cost']) == ('hist', 1, 0), f"
check "hist share: the verdict gives both shares and the ticks" bash -c "
tr '\n' ' ' < share.txt | sed 's/  */ /g' | grep -q 'its share of the run, normal vs buggy runs normal: 1[0-9.]*% of the run; buggy: [56][0-9.]*%' &&
grep -q 'evidence [a-z]* ([0-9]* normal, [0-9]* buggy ticks)' share.txt"

# the hist-discounter's own runs: 2 + 2 runs compared, the variables and
# costs still from the main pair
gen hist normal hn2 ./target --seed 3
gen hist buggy hb2 ./target --seed 4
"$R" --json --top 0 --hist-normal hn2 --hist-buggy hb2 hn hb > hist2.json
check "--hist-normal/--hist-buggy: worker's h/c over 2 x 2 runs" /usr/bin/python3 -c "
import json; f = {x['name']: x for x in json.load(open('hist2.json'))['functions']}['worker']
assert f['discounter'] == 'hist' and f['hist_c'] == 4, f"
check "--hist-normal/--hist-buggy: value samples and costs from the main runs only" /usr/bin/python3 -c "
import json; a = json.load(open('hist.json')); b = json.load(open('hist2.json'))
assert a['normal'] == b['normal'] and a['buggy'] == b['buggy']
fa = {x['name']: x for x in a['functions']}; fb = {x['name']: x for x in b['functions']}
assert fa['caller']['raw_cost'] == fb['caller']['raw_cost'], (fa['caller'], fb['caller'])"
cp target target2 && mkdir -p other && gen hist buggy other ./target2 --seed 2 > /dev/null
check "--hist-buggy of another executable: refused, naming it" bash -c "
! '$R' --hist-buggy other hn hb 2> other.err && grep -q 'another executable' other.err"

# multi-process directory: a helper process without samples (another exe)
# and two processes of the program: one profile of two processes
mkdir -p mp
gen rank buggy mp ./target --bias $B --seed 2 --id 1000
gen rank buggy mp ./target --bias $B --seed 5 --id 1001
printf 'vprof-layout 1\npid\t999\nppid\t1\nexe\t/bin/sh\nbuild_id\t\nload_bias\t0x0\nhz\t1000\n' > mp/layout.999
"$R" --json n mp > mp.json 2> mp.err
check "multi-process: the program is chosen over the helper" /usr/bin/python3 -c "
import json; d = json.load(open('mp.json')); assert d['exe'].endswith('/target') and d['buggy']['processes'] == 2 and d['buggy']['runs'] == 1"
check "multi-process: the helper is noted as ignored" grep -q "1 process(es) of other executables ignored" mp.err
"$R" --per-pid --json n mp > mpp.json
check "--per-pid: two runs on the buggy side" /usr/bin/python3 -c "
import json; assert json.load(open('mpp.json'))['buggy']['runs'] == 2"
"$R" $W --per-pid --json n b > pp.json
check "--per-pid: one run per process" /usr/bin/python3 -c "
import json; d = json.load(open('pp.json')); assert d['buggy']['runs'] == 1 and d['functions'][0]['name'] == 'caller'"

# A function decided by its call counts (vprof-gen-runs arcvar: caller calls
# hot 100 times as often per call; its i, about 20 samples a side, is
# anomalous but thin) takes its pattern from that variable's tags, the
# arc's direction only when it has no loop or condition tag.
for tg in loop cond args; do
    gen arcvar normal av_n_$tg ./target --bias $B --seed 3 --func main="$(addr ./target main)" --var-tags $tg
    gen arcvar buggy av_b_$tg ./target --bias $B --seed 3 --func main="$(addr ./target main)" --var-tags $tg
    "$R" --json --top 0 av_n_$tg av_b_$tg > av_$tg.json 2>/dev/null
done
avp() { /usr/bin/python3 -c "
import json; f = {x['name']: x for x in json.load(open('av_$1.json'))['functions']}['caller']
assert f['discounter'] == 'calls' and f['variable'] == 'i' and f['pattern'] == '$2', f"; }
check "arcvar: calls decide, i a loop variable with other values: scalability" avp loop scalability
check "arcvar: calls decide, i a condition with other values: wrong constraint" avp cond wrong-constraint
check "arcvar: calls decide, i an argument: more calls, missing constraint" avp args missing-constraint
# The same with hot called exactly once per call in the normal run (100 in
# 100 calls, --arc-normal) and 1000 times in the buggy one: a loop that ran
# once runs again (a retry), a wrong constraint whatever i's tags say
# (--branch-calls); without the rule the tags decide again. A rare call in
# the normal run (50 in 100) that the buggy run makes 1000 times per call is
# a call in a loop over more data: the tags decide (loop: scalability).
for o in branch-calls no-branch-calls; do
    gen arcvar normal ab_n ./target --bias $B --seed 3 --func main="$(addr ./target main)" --arc-normal 100
    gen arcvar buggy ab_b ./target --bias $B --seed 3 --func main="$(addr ./target main)"
    "$R" --json --top 0 --$o ab_n ab_b > av_$o.json 2>/dev/null
done
gen arcvar normal ar_n ./target --bias $B --seed 3 --func main="$(addr ./target main)" --arc-normal 50
"$R" --json --top 0 ar_n ab_b > av_rare.json 2>/dev/null
check "arcvar, once per call in the normal run, repeated: wrong constraint" avp branch-calls wrong-constraint
check "arcvar, the same with --no-branch-calls: i's loop tag, scalability" avp no-branch-calls scalability
check "arcvar, a rare call (0.5 per call) repeated 1000 times: i's loop tag, scalability" avp rare scalability
check "the verdict says why: a branch's rate" /usr/bin/python3 -c "
import json; f = {x['name']: x for x in json.load(open('av_branch-calls.json'))['functions']}['caller']
assert 'at most once per call in the normal runs (1)' in f['evidence']['why'], f['evidence']['why']"

# A setting constant in every run (hot's param, 7 on both sides) over three
# runs a side three times as long in the buggy workload: its only stretch is
# the run's length. Counted (--run-constants) it makes hot, the same work in
# both, "stuck" and first; by default it gives no processing-cost sample.
for k in 1 2 3; do
    gen rank normal pn$k ./target --bias $B --seed $k --param 7 --ticks 10000
    gen rank buggy pb$k ./target --bias $B --seed $((k + 10)) --param 7 --ticks 30000
done
for o in run-constants no-run-constants; do
    "$R" --json --top 0 --$o --normal pn1 --normal pn2 --normal pn3 \
        --buggy pb1 --buggy pb2 --buggy pb3 > rc_$o.json 2>/dev/null
done
rcp() { /usr/bin/python3 -c "
import json; d = json.load(open('rc_$1.json')); f = {x['name']: x for x in d['functions']}
p = [v for v in f['hot']['variables'] if v['name'] == 'param'][0]
D = {x['dimension']: x for x in p['dimensions']}
$2"; }
check "--run-constants: param's stretches as long as the runs decide hot, first" rcp run-constants '
assert D["processing-cost"]["state"] == "differs" and f["hot"]["variable"] == "param", D
assert d["functions"][0]["name"] == "hot", [x["name"] for x in d["functions"]]'
check "default: no processing-cost sample from param, caller first" rcp no-run-constants '
assert "processing-cost" not in D, D
assert d["functions"][0]["name"] == "caller", [x["name"] for x in d["functions"]]'
check "pattern: hot, decided by a condition whose values look normal, is scalability" rcp no-run-constants '
h = f["hot"]; assert h["variable"] == "param" and h["discount"] >= 0.8 and h["dimension"] != "processing-cost", h
assert h["pattern"] == "scalability", h["pattern"]'
finish
