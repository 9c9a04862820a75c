#!/bin/bash
# --whole-run: a function every tick of both runs passes through (main, a
# thread's start routine, a driver loop) keeps only the time the buggy runs
# added in it. The "driver" scenario (vprof-gen-runs.c): caller's loop
# counter differs (the workload's), worker's share grows 20% -> 30% and its
# condition variable differs (the root cause), hot's values are the same.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/common.sh"
cd "$TMP"
make_target "$TMP" || { echo "not ok - build target"; exit 1; }
gen driver normal n ./target --seed 1
gen driver buggy b ./target --seed 2
"$R" --json --top 0 n b > on.json
check "whole-run: exit 0" [ $? -eq 0 ]
py() { /usr/bin/python3 -c "import json; d = json.load(open('$1')); f = {x['name']: x for x in d['functions']}; $2"; }
check "whole-run: worker, whose share the buggy run grew, ranks first" \
    py on.json 'assert d["functions"][0]["name"] == "worker", d["functions"][0]["name"]'
check "whole-run: only caller is a root of the run" \
    py on.json 'assert [x["name"] for x in d["functions"] if x["whole_run"]] == ["caller"]'
check "whole-run: caller's loop counter differs (discount < 0.5) but it ranks last" \
    py on.json 'assert f["caller"]["discount"] < 0.5 and f["caller"]["rank"] == 3, f["caller"]'
check "whole-run: a root's calibrated cost is (1 - r) x added, added its own code's (~0 here)" \
    py on.json 'c = f["caller"]; assert abs(c["calibrated_cost"] - (1 - c["discount"]) * c["added_cost"]) < 1e-12 and c["added_cost"] < 0.1, c'
check "whole-run: the others keep blend's rule" py on.json '
for x in d["functions"]:
    if x["whole_run"]: continue
    a, raw = x["added_cost"], x["raw_cost"]
    assert abs(x["calibrated_cost"] - (1 - x["discount"]) * (a + 0.2 * (raw - a))) < 1e-9, x'
"$R" --json --top 0 --whole-run 0 n b > off.json
check "--whole-run 0: caller first by its inherited cost (0.2 x 20 s)" \
    py off.json 'assert d["functions"][0]["name"] == "caller" and not any(x["whole_run"] for x in d["functions"])'
"$R" --json --top 0 --whole-run 0.5 n b > half.json
check "--whole-run 0.5: hot (75% and 65% of the largest) is a root too, worker (20%, 30%) not" \
    py half.json 'assert sorted(x["name"] for x in d["functions"] if x["whole_run"]) == ["caller", "hot"]'
"$R" --json --top 0 --rank paper n b > paper.json
check "--rank paper: no roots (the paper's rule is kept as it is)" \
    py paper.json 'assert not any(x["whole_run"] for x in d["functions"]) and d["functions"][0]["name"] == "caller"'
check "--whole-run 2: refused (a share is at most 1)" bash -c "! '$R' --whole-run 2 n b 2> err.txt && grep -q whole-run err.txt"
# a cheap decision beside the roots: worker 2% of both runs (0.2% of the
# largest cost once discounted), its condition variable strongly anomalous
# on hundreds of samples: its evidence, not its cost, is what the roots
# are weighed against
gen driver normal cn ./target --seed 1 --worker-pct 2
gen driver buggy cb ./target --seed 2 --worker-pct 2
"$R" --json --top 0 cn cb > cheap.json
check "cheap decision: caller is still a root and not first; worker above caller" py cheap.json '
assert f["caller"]["whole_run"] and d["functions"][0]["name"] != "caller", d["functions"][0]
assert f["worker"]["calibrated_cost"] < 0.05 * f["caller"]["raw_cost"] and f["worker"]["rank"] < f["caller"]["rank"], f["worker"]'
"$R" --json --top 0 --min-evidence 100000 cn cb > thin.json
check "cheap decision on thin evidence (--min-evidence 100000): no roots, caller first" py thin.json '
assert not any(x["whole_run"] for x in d["functions"]) and d["functions"][0]["name"] == "caller", d["functions"][0]'
# a caller above it that is no root (main: no ticks, its frame never
# reached): caller is the largest function only because the unwinding
# stopped there, and keeps blend's cost
gen driver normal mn ./target --seed 1 --func main="$(addr ./target main)"
gen driver buggy mb ./target --seed 2 --func main="$(addr ./target main)"
"$R" --json --top 0 mn mb > called.json
check "called from a non-root (main -> caller): no roots, caller first by blend" py called.json '
assert not any(x["whole_run"] for x in d["functions"]) and d["functions"][0]["name"] == "caller", d["functions"][0]'
# caller's share of the run grows from 95% to 100% (--main-pct 5: in the
# normal run 5% of the ticks are main's own, outside it): what its callees
# added, not its own code; it keeps only its own, below worker (12% of both
# runs, its condition anomalous). Keeping its inherited 1 s put it first.
gen driver normal gn ./target --seed 1 --worker-pct 12 --func main="$(addr ./target main)" --main-pct 5
gen driver buggy gb ./target --seed 2 --worker-pct 12 --func main="$(addr ./target main)" --main-pct 5
"$R" --json --top 0 gn gb > grown.json
check "a root whose share grew by its callees keeps its own code's added cost only, below worker" py grown.json '
c = f["caller"]; assert c["whole_run"] and c["added_cost"] < 0.2 and c["raw_cost"] - 0.95 * c["normal_raw_cost"] > 0.5, c
assert f["worker"]["rank"] < c["rank"], (f["worker"]["rank"], c["rank"])'
# the process's entry point (_start, the ELF entry) holds main and so the
# whole run; the unwinding reaches it on one tick in ten: a root whenever
# the run has one, not ranked by what the ticks that reached it inherit
gen driver normal en ./target --seed 1 --func entry="$(addr ./target _start)"
gen driver buggy eb ./target --seed 2 --func entry="$(addr ./target _start)"
"$R" --json --top 0 en eb > entry.json
check "the ELF entry point (_start) is a root of the run, with nothing added" py entry.json '
s = f["_start"]; assert s["whole_run"] and s["calibrated_cost"] == 0 and s["raw_cost"] > 1, s
assert d["functions"][0]["name"] == "worker", d["functions"][0]["name"]'
# main holds the whole run on both sides, but the normal run's unwinding
# reached it on 60% of the ticks (the buggy one's on all): its workload
# parameter (clients 8 vs 40) differs. A root by --main-root, not first.
gen driver normal rn ./target --seed 1 --func main="$(addr ./target main)" --main-reach 60,100
gen driver buggy rb ./target --seed 2 --func main="$(addr ./target main)" --main-reach 60,100
"$R" --json --top 0 rn rb > reach.json
check "--main-root: main, reached on 60% of the normal ticks, is a root with caller; worker first" py reach.json '
m = f["main"]; assert m["whole_run"] and f["caller"]["whole_run"] and m["normal_raw_cost"] < 0.9 * m["raw_cost"], m
assert d["functions"][0]["name"] == "worker", d["functions"][0]["name"]'
"$R" --json --top 0 --no-main-root rn rb > noreach.json
check "--no-main-root: main is no root (60% < 0.9 of the normal side) and ranks first on clients" py noreach.json '
assert not f["main"]["whole_run"] and d["functions"][0]["name"] == "main", d["functions"][0]["name"]'
"$R" n b > t.txt
check "whole-run: text table names worker first" awk '$1 == "1" { exit !($NF == "worker") }' t.txt
finish
