#!/bin/bash
# vprof-report --contexts --html: the heat map of the top calling contexts
# (paper 002 Figure 7: rows in rank order, a column per function along the
# path, colour = own latency, the hottest cell numbered 0 and the others by
# their distance) and the differential flame graph (widths from the buggy
# runs, red where a frame's own time grew, neutral where it did not),
# checked by text on generated perf script input and, when chromium is
# installed, on the DOM it renders.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/common.sh"
cd "$TMP"
ev() { perf_ev "$@"; }
# normal: main > X > Y for 50 ms; buggy: the same, then main > X > Z for 49 ms
{ for i in $(seq 1 50); do ev "2.$(printf %06d $((i * 1000)))" main X Y; done; } > n.perf
{ for i in $(seq 1 50); do ev "2.$(printf %06d $((i * 1000)))" main X Y; done
  for i in $(seq 51 99); do ev "2.$(printf %06d $((i * 1000)))" main X Z; done; } > b.perf
"$R" --contexts --html ctx.html n.perf b.perf > out.txt 2> err.txt
check "--html: exit 0, page and the text report written" \
    bash -c "[ $? -eq 0 ] && [ -s ctx.html ] && grep -q '^\[1\]' out.txt"
check "--html: self-contained (no script, no external reference)" \
    bash -c "! grep -Eiq '(src|href)=\"(https?:)?//|<script|<link ' ctx.html"
cat > parse.py <<'PY'
import sys, re
from html.parser import HTMLParser
class P(HTMLParser):
    def __init__(s):
        super().__init__(); s.rows = []; s.cell = None; s.in_row = False; s.rects = []
        s.title = None; s.in_title = False; s.in_fn = False; s.in_sub = False
    def handle_starttag(s, tag, a):
        a = dict(a)
        if tag == 'tr' and a.get('class') == 'path': s.rows.append([]); s.in_row = True
        elif tag == 'td' and s.in_row and 'c' in (a.get('class') or '').split():
            s.cell = {'hot': 'hot' in a['class'].split(), 'style': a['style'], 'title': a['title'], 'fn': '', 'd': ''}
            s.rows[-1].append(s.cell)
        elif tag == 'span' and s.cell is not None and a.get('class') == 'fn': s.in_fn = True
        elif tag == 'sub' and s.cell is not None: s.in_sub = True
        elif tag == 'title': s.in_title = True; s.title = ''
        elif tag == 'rect' and s.title is not None: s.rects.append((s.title, a)); s.title = None
    def handle_endtag(s, tag):
        if tag == 'tr': s.in_row = False
        if tag == 'td': s.cell = None
        if tag == 'span': s.in_fn = False
        if tag == 'sub': s.in_sub = False
        if tag == 'title': s.in_title = False
    def handle_data(s, d):
        if s.in_fn: s.cell['fn'] += d
        elif s.in_sub: s.cell['d'] += d
        elif s.in_title: s.title += d
p = P(); p.feed(open(sys.argv[1]).read())
rows, rects = p.rows, p.rects
def rect(name):
    r = [a for t, a in rects if t.startswith(name + ' - ')]
    assert len(r) == 1, (name, r); return r[0]
exec(sys.argv[2])
PY
py() { python3 parse.py ctx.html "$1"; }
check "heat map: one row per path, the new path main > X > Z first" py '
assert len(rows) == 2, rows
assert [c["fn"] for c in rows[0]] == ["main", "X", "Z"], rows[0]
assert [c["fn"] for c in rows[1]] == ["main", "X", "Y"], rows[1]'
check "heat map: the hottest function (Z) framed and numbered 0, the others by distance" py '
assert [c["d"] for c in rows[0]] == ["2", "1", "0"] and [c["hot"] for c in rows[0]] == [False, False, True], rows[0]'
check "heat map: colour by latency - the hottest cell dark, a function without own time grey" py '
assert "#eeeeee" in rows[0][0]["style"] and "#eeeeee" not in rows[0][2]["style"], rows[0]
assert "color:#fff" in rows[0][2]["style"], rows[0][2]'
check "heat map: each cell says its own time, buggy and normal" py '
t = rows[0][2]["title"]; assert re.match(r"Z: own 4[89]\.\d+ ms/run \(normal runs 0\.000\)", t), t
t = rows[1][2]["title"]; assert re.match(r"Y: own 49\.\d+ ms/run \(normal runs 49\.\d+\)", t), t'
check "flame graph: Z red (its own time grew), Y neutral (unchanged)" py '
z, y = rect("Z"), rect("Y")
assert z["fill"].startswith("#ff") and z["fill"] != "#ffffff" and float(z["data-delta-ms"]) > 45, z
assert y["fill"] == "#f2f2f2" and abs(float(y["data-delta-ms"])) < 1, y'
check "flame graph: widths are the buggy time with callees (X = its own 1 ms + Y + Z, Z about half)" py '
x, y, z = (float(rect(n)["width"]) for n in "XYZ")
assert y + z < x < (y + z) * 1.03 and 0.4 < z / x < 0.6, (x, y, z)'
check "flame graph: callees stacked above their caller, side by side" py '
x, y, z = rect("X"), rect("Y"), rect("Z")
assert float(y["y"]) < float(x["y"]) and y["y"] == z["y"], (x, y, z)
assert abs(float(y["x"]) + float(y["width"]) - float(z["x"])) < 1.5, (y, z)'
check "flame graph: a context only the buggy runs had is said so" \
    grep -q 'Z - .*a context only the buggy runs had' ctx.html
# the normal side's paths the buggy runs lost are counted, not drawn
"$R" --contexts --html rev.html b.perf n.perf > /dev/null
check "flame graph (reversed sides): the vanished context counted, not drawn" \
    bash -c "grep -q 'Not drawn: 1 context(s) only the normal runs had' rev.html && ! grep -q '>Z - ' rev.html"
"$R" --contexts --html /nonexistent/dir/x.html n.perf b.perf > /dev/null 2> e.txt
check "--html into a missing directory: exit 1 naming the file" \
    bash -c "[ $? -eq 1 ] && grep -q '/nonexistent/dir/x.html: cannot write' e.txt"
CHROME=$(command -v chromium || command -v chromium-browser) || { finish; }
timeout 60 "$CHROME" --headless --no-sandbox --disable-gpu --disable-background-networking \
    --disable-component-update --disable-sync --no-first-run \
    --user-data-dir="$TMP/prof" --dump-dom "file://$TMP/ctx.html" > dom.html 2> chrome.err
check "chromium: the page renders with the heat map and the flame graph" \
    bash -c "grep -q '<table class=\"heat\">' dom.html && grep -q '<svg class=\"flame\"' dom.html && grep -c '<g class=\"f\">' dom.html | grep -qx 5"
finish
