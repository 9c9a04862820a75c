#!/bin/bash
# vprof-report --variance on generated events (vprof-gen-runs scenario
# "variance": hand-offs between threads, a queueing delay behind the
# consumer's housekeeping, a rare lock wait held by another thread in the
# buggy run, a condition wait ended by a request wake, work that makes
# parse grow). Checks that the decomposition sums exactly (integer
# numerators) to the variance of the request latencies the generator wrote,
# and that the walk and the factor selection find what was planted.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/common.sh"
command -v python3 > /dev/null || skip "python3 not installed"
# the report runs under ASan/UBSan when that build is there and up to date
S=${VPROF_SAN_BIN:-}/vprof-report
if [ -x "$S" ] && ! [ "$S" -ot "$R" ]; then R=$S; echo "# using $S"; fi
cd "$TMP"
cat > vtarget.c <<'C'
volatile long sink;
void parse(int n) { for (int k = 0; k < n; k++) sink += k; }
void lookup(int n) { for (int k = 0; k < n; k++) sink ^= k; }
void handle(int n) { lookup(n); sink++; }
void crawl(int n) { while (n-- > 0) sink += n; }
void housekeep(int n) { while (n-- > 0) sink -= n; }
void flush(int n) { while (n-- > 0) sink *= 3; }
int main(void) { parse(1); handle(2); crawl(3); housekeep(4); flush(5); return 0; }
C
gcc -g -O0 -o vtarget vtarget.c || { echo "not ok - target builds"; exit 1; }
F=()
for f in handle parse lookup crawl housekeep flush; do F+=(--func "$f=$(addr vtarget $f)"); done
"$GEN" variance normal n "$PWD/vtarget" "${F[@]}" --seed 1 &&
"$GEN" variance buggy b "$PWD/vtarget" "${F[@]}" --seed 2 &&
"$GEN" variance buggy lim "$PWD/vtarget" "${F[@]}" --seed 2 --limited 1 ||
    { echo "not ok - vprof-gen-runs variance"; exit 1; }

"$R" --variance --json n b > two.json 2> err.txt
check "variance: two sides, exit 0" [ $? -eq 0 ]
"$R" --variance --json b > one.json 2> err1.txt
check "variance: one run directory, exit 0" [ $? -eq 0 ]

cat > chk.py <<'PY'
import json, sys
def load_truth(path):
    return [int(l.split()[2]) for l in open(path)]
def numer(xs):
    n = len(xs)
    return n * sum(x * x for x in xs) - sum(xs) ** 2
def identity(d):
    """every node's exact numerator = its children's + 2 x its sibling pairs'"""
    nodes = {x['id']: x for x in d['nodes']}
    kids, pairs = {}, {}
    for x in d['nodes']: kids.setdefault(x['parent'], []).append(x['id'])
    for c in d['covariances']: pairs.setdefault(c['parent'], []).append(c)
    sides = [s['name'] for s in d['sides']]
    checked = 0
    for s in sides:
        for i, x in nodes.items():
            ch = kids.get(i, [])
            if not ch: continue
            tot = sum(int(nodes[c][s]['num']) for c in ch) + \
                  2 * sum(int(p[s]['num']) for p in pairs.get(i, []))
            assert tot == int(x[s]['num']), (s, i, x['name'], tot, x[s]['num'])
            checked += 1
    return checked
PY
py() { python3 -c "import json; exec(open('chk.py').read()); $1"; }
check "variance: decomposition is exact at every node (both sides, one side)" py '
n = identity(json.load(open("two.json"))) + identity(json.load(open("one.json")))
assert n >= 10, n'
check "variance: root variance = variance of the generated latencies, exactly" py '
d = json.load(open("two.json")); root = d["nodes"][0]
for side, f in (("normal", "n/truth.1000"), ("buggy", "b/truth.1000")):
    xs = load_truth(f)
    assert int(root[side]["num"]) == numer(xs), side
    sd = [s for s in d["sides"] if s["name"] == side][0]
    assert sd["intervals"] == len(xs) and int(sd["denominator"]) == len(xs) * (len(xs) - 1)
    v = numer(xs) / (len(xs) * (len(xs) - 1)) / 1e6
    assert abs(sd["latency"]["var_us2"] - v) <= 1e-9 * v, (sd["latency"], v)'
check "variance: buggy top factor is the lock holder's crawl, the increase's too" py '
d = json.load(open("two.json"))
top = [f for f in d["factors"] if f["top"]]
assert top[0]["name"] == "crawl" and top[0]["inherent"] is False, top
assert 0.5 < top[0]["contribution"] < 0.8, top[0]
assert d["changed"][0]["name"] == "crawl" and d["changed"][0]["top"] == 1, d["changed"][:2]'
check "variance: crawl hangs under the mutex wait in lookup (edge to the holder)" py '
d = json.load(open("two.json")); nd = {x["id"]: x for x in d["nodes"]}
c = [x for x in d["nodes"] if x["name"] == "crawl"]
assert len(c) == 1 and nd[c[0]["parent"]]["type"] == "mutex", c
assert nd[nd[c[0]["parent"]]["parent"]]["name"] == "lookup"
assert c[0]["buggy"]["present"] == 20 and c[0]["normal"]["present"] == 0, c[0]'
check "variance: the queueing behind housekeep is under [queued] (hand-off edge)" py '
d = json.load(open("two.json")); nd = {x["id"]: x for x in d["nodes"]}
h = [x for x in d["nodes"] if x["name"] == "housekeep"]
assert len(h) == 1 and nd[h[0]["parent"]]["type"] == "queued", h
q = nd[h[0]["parent"]]
assert abs(q["buggy"]["mean_us"] * 2000 - (1960 * 3 + 40 * 401)) < 2000 * 1.01, q'
check "variance: flush under the condition wait (request wake edge)" py '
d = json.load(open("two.json")); nd = {x["id"]: x for x in d["nodes"]}
f = [x for x in d["nodes"] if x["name"] == "flush"]
assert len(f) == 1 and nd[f[0]["parent"]]["type"] == "cond", f
assert f[0]["buggy"]["present"] == 40'
"$GEN" variance buggy bw "$PWD/vtarget" "${F[@]}" --seed 2 --wake-event 1 ||
    echo "not ok - vprof-gen-runs variance --wake-event 1"
"$R" --variance --json bw > wake.json 2> errw.txt
check "variance: flush under the condition wait (wake event 9 from its thread)" py '
d = json.load(open("wake.json")); nd = {x["id"]: x for x in d["nodes"]}
f = [x for x in d["nodes"] if x["name"] == "flush"]
assert len(f) == 1 and nd[f[0]["parent"]]["type"] == "cond", f
assert f[0]["run"]["present"] == 40, f[0]'
check "variance: parse grows with the work: inherent (R² ~ 1), the others are not" py '
d = json.load(open("two.json"))
p = [x for x in d["nodes"] if x["name"] == "parse"][0]
assert p["buggy"]["r2"] > 0.99, p
fs = {f["name"]: f for f in d["factors"]}
assert fs["parse"]["inherent"] is True and fs["crawl"]["inherent"] is False, fs["parse"]'
check "variance: one run: no comparison, same tree" py '
d = json.load(open("one.json")); t = json.load(open("two.json"))
assert d["changed"] is None and [s["name"] for s in d["sides"]] == ["run"]
assert d["nodes"][0]["run"]["num"] == t["nodes"][0]["buggy"]["num"]'

"$R" --variance --json --factors 6 lim > lim.json
check "variance: limited run names lookup (callee of handle, gmon arc) to open next" py '
d = json.load(open("lim.json"))
assert d["next"]["limited"] and "lookup" in d["next"]["open"].split(","), d["next"]
assert "handle" in d["next"]["env"].split(","), d["next"]'
"$R" --variance lim > lim.txt
check "variance: text says how to open the next level" grep -q "VPROF_LATENCY_FUNCS=.*lookup" lim.txt
"$R" --variance b > one.txt
check "variance: text tree shows the top factor" grep -Eq "crawl +<== top 1" one.txt

"$R" --variance --json --root handle b > root.json
check "variance: --root handle: intervals are handle's calls, exact" py '
d = json.load(open("root.json"))
assert d["intervals"] == "calls" and d["root"] == "handle" and d["nodes"][0]["name"] == "handle"
assert d["sides"][0]["intervals"] == 2000
identity(d)
top = [f for f in d["factors"] if f["top"]]
assert top[0]["name"] == "crawl", top'

"$R" --variance --export ex.txt --json n b > /dev/null
check "variance: --export matches the JSON (node times per request)" py '
d = json.load(open("two.json")); rows = {}
for l in open("ex.txt"):
    w = l.split()
    if w[0] == "req": rows.setdefault(w[1], []).append({int(k): int(v) for k, v in (x.split("=") for x in w[6:])})
for side, rs in rows.items():
    for node in d["nodes"]:
        xs = [r.get(node["id"], 0) for r in rs]
        assert numer(xs) == int(node[side]["num"]), (side, node["name"])'

"$R" --variance --html v.html n b > /dev/null
check "variance: HTML icicle with the top factor highlighted, no script" python3 -c "
s = open('v.html').read()
assert s.count('<svg class=\"icicle\"') == 2 and 'class=\"node top\"' in s and '<script' not in s
assert '#1 crawl' in s and 'http://' not in s.replace('http://www.w3.org/2000/svg', '')"
"$R" --variance --html v1.html b > /dev/null
check "variance: HTML of one run: one icicle, headed without a side ('run runs' before)" python3 -c "
s = open('v1.html').read()
assert s.count('<svg class=\"icicle\"') == 1 and '<h2>Variance tree</h2>' in s and 'run runs' not in s"
# times as the text prints them (15.2 ms), not as 1.523e+04 µs
check "variance: HTML summary and hover times in readable units" python3 -c "
import re
s = open('v.html').read()
head = re.findall(r'<br>(?:normal|buggy): [^<]*', s)
assert len(head) == 2 and all(re.search(r'mean [0-9.]+ (ns|µs|ms|s), sd ', h) for h in head), head
assert not re.search(r'[0-9]e[+-][0-9]', s), re.search(r'.{40}[0-9]e[+-][0-9].{20}', s).group(0)"

# bad input: clear messages, exit status
"$R" --variance --root nosuch b > /dev/null 2> e1.txt; rc=$?
check "variance: --root of an unknown function: exit 1, message" eval '[ $rc -eq 1 ] && grep -q "nosuch is not a function" e1.txt'
"$R" --variance --factors 0 b > /dev/null 2> e2.txt
check "variance: --factors 0: usage error (2)" [ $? -eq 2 ]
mkdir nolat && cp b/layout.1000 nolat/
"$R" --variance nolat > /dev/null 2> e3.txt; rc=$?
check "variance: no latency files: exit 1, says how to get them" eval '[ $rc -eq 1 ] && grep -q "VPROF_LATENCY=1" e3.txt'
"$R" --variance n b b > /dev/null 2> e4.txt
check "variance: odd number of directories: exit 2" [ $? -eq 2 ]
cp -r b bt && truncate -s 1000 bt/latency.1000
"$R" --variance bt > /dev/null 2> e5.txt; rc=$?
check "variance: truncated latency file: exit 1, names the file" \
    eval '[ $rc -eq 1 ] && grep -q "bt/latency.1000" e5.txt && ! grep -q Sanitizer e5.txt'
cp -r b bz && printf 'XXXXXXXX' | dd of=bz/latency.1000 conv=notrunc 2> /dev/null
"$R" --variance bz > /dev/null 2> e6.txt; rc=$?
check "variance: bad magic: exit 1, names the file and offset" \
    eval '[ $rc -eq 1 ] && grep -q "bz/latency.1000: offset 0" e6.txt'
"$R" --variance --export b/layout.1000/x.txt b > /dev/null 2> e7.txt; rc=$?
check "variance: --export to an unwritable path: exit 1" eval '[ $rc -eq 1 ] && grep -q "cannot write" e7.txt'
finish
