#!/bin/bash
# --waits on generated latency files (vprof-gen-runs waits-fig2/-fig3): the
# paper's Figure 1/2 example (a thread that syncs to disk: the knot is the
# thread and the disk) and Figure 3's nested waits one level deeper, with
# their exact cascaded weights; text, JSON, --waits-timeline, the HTML page
# in headless Chromium, and bad input.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/common.sh"
# the ASan/UBSan build when present and not older than the normal one
S=${VPROF_SAN_BIN:-}/vprof-report
if [ -x "$S" ] && ! [ "$S" -ot "$R" ]; then R=$S; echo "# using $S"; fi
export ASAN_OPTIONS=detect_leaks=0
cd "$TMP"
make_target "$TMP" || { echo "not ok - build target"; exit 1; }
gen waits-fig2 buggy f2 ./target --bias 0x555555554000
gen waits-fig3 buggy f3 ./target
"$R" --waits --json f2 > f2.json 2> err.txt
check "fig2: --waits --json exit 0" [ $? -eq 0 ]
py() { python3 -c "import json,sys; d=json.load(open('$1'))['waits'][0]
e={(x['from'],x['to']): x for x in d['edges']}
r=d['results']
$2"; }
check "fig2: caller -> worker 0.8 s (A waits 8 of every 10 ms)" py f2.json '
assert abs(e[("caller","worker")]["weight_s"] - 0.8) < 1e-9, e'
check "fig2: worker -> disk 8:1 1.0 s (5 ms own + 5 ms cascaded per request)" py f2.json '
assert abs(e[("worker","disk 8:1")]["weight_s"] - 1.0) < 1e-9, e'
check "fig2: disk 8:1 -> worker 0.5 s (idle, woken by the fsync)" py f2.json '
x = e[("disk 8:1","worker")]
assert abs(x["weight_s"] - 0.5) < 1e-9 and x["wake_sites"][0]["what"] == "fsync", x'
check "fig2: one knot, worker <-> disk 8:1, nothing else" py f2.json '
k = [x for x in r if x["type"] == "knot"]
assert len(k) == 1 and sorted(k[0]["vertices"]) == ["disk 8:1", "worker"] and d["knots"] == 1, r'
check "fig2: the fsync wait site is named with its line" py f2.json '
s = e[("worker","disk 8:1")]["wait_sites"][0]
assert s["what"] == "fsync" and s["site"].startswith("worker (target.c:"), s'

"$R" --waits --json --waits-merge none f3 > f3.json
check "fig3: 1 -> 2 0.6 s, 2 -> 3 0.8 s, 3 -> 4 0.6 s (cascaded, recursively)" py f3.json '
w = {k: round(v["weight_s"], 9) for k, v in e.items()}
assert w == {("hot#1","caller"): 0.6, ("caller","worker"): 0.8, ("worker","hot#2"): 0.6}, w'
check "fig3: no knot; the last thread is the sink" py f3.json '
assert d["knots"] == 0 and [x["vertices"] for x in r if x["type"] == "sink"] == [["hot#2"]], r
assert d["verdict"].startswith("no knot"), d["verdict"]'

"$R" --waits f2 > f2.txt
check "text: the knot with its edges and the verdict" eval \
    'grep -q "^Knot 1: worker <-> disk 8:1" f2.txt && grep -q "waits at  worker (target.c:[0-9]*): fsync" f2.txt &&
     grep -q "^Verdict: throughput is limited by waiting" f2.txt'
"$R" --waits --waits-timeline f2 > tl.tsv
check "--waits-timeline: 300 segments, caller's end at its wake" eval \
    '[ "$(grep -vc "^#" tl.tsv)" -eq 300 ] && grep -q "^caller	1	2000000	10000000	10000000	condition	worker	2	" tl.tsv'

"$R" --waits --html w.html f2 > /dev/null
check "html: written, self-contained, graph drawn" eval \
    '[ -s w.html ] && ! grep -Eq "(src|href)=\"(https?:)?//|<script|<link " w.html && grep -q "<svg" w.html'
check "html: the knot's vertices and edges in red" eval \
    '[ "$(grep -c "stroke=\"#c00\" stroke-width=\"3\"" w.html)" -eq 2 ] && grep -q "marker-end=\"url(#ark)\"" w.html'
CHROME=$(command -v chromium || command -v chromium-browser)
if [ -n "$CHROME" ]; then
    chrome() { timeout 60 "$CHROME" --headless --no-sandbox --disable-gpu \
        --disable-background-networking --disable-component-update --disable-sync \
        --no-first-run --user-data-dir="$(mktemp -d "$TMP/prof.XXXX")" "$@" 2>chrome.err; }
    chrome --dump-dom "file://$TMP/w.html" > dom.html
    check "chromium: the page loads with its graph" grep -q '<svg xmlns' dom.html
    chrome --screenshot="$TMP/shot.png" --window-size=1000,900 "file://$TMP/w.html" > /dev/null
    check "chromium: screenshot is not blank" [ "$(stat -c %s shot.png 2>/dev/null || echo 0)" -gt 20000 ]
fi

# bad input
mkdir empty && cp f2/layout.1000 empty/
"$R" --waits empty > /dev/null 2> e1.txt; rc=$?
check "no latency files: exit 1, says how to record them" eval \
    '[ $rc -eq 1 ] && grep -q "no latency.<id> files" e1.txt'
head -c 100 f2/latency.1000 > f2/lat.cut && mv f2/lat.cut f2/latency.1000
"$R" --waits f2 > /dev/null 2> e2.txt; rc=$?
check "truncated latency file: exit 1, names the file" eval \
    '[ $rc -eq 1 ] && grep -q "latency.1000" e2.txt'
"$R" --waits --waits-keep x f3 > /dev/null 2>&1; rc=$?
check "bad --waits-keep: usage error (2)" [ $rc -eq 2 ]
finish
