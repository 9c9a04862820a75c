#!/bin/bash
# --html: one self-contained page that headless Chromium loads and renders
# with the ranked table and one plot per variable of each top function.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/common.sh"
CHROME=$(command -v chromium || command -v chromium-browser) || skip "chromium not installed"
cd "$TMP"
make_target "$TMP" || { echo "not ok - build target"; exit 1; }
gen rank normal n ./target --seed 1
gen rank buggy b ./target --seed 2
"$R" --html "$TMP/r.html" n b > /dev/null
check "--html: exit 0 and file written" [ -s r.html ]
check "--html: no external references (self-contained)" \
    bash -c "! grep -Eq '(src|href)=\"(https?:)?//|<script|<link ' r.html"
chrome() { timeout 60 "$CHROME" --headless --no-sandbox --disable-gpu \
    --disable-background-networking --disable-component-update --disable-sync \
    --no-first-run --user-data-dir="$(mktemp -d "$TMP/prof.XXXX")" "$@" 2>chrome.err; }
chrome --dump-dom "file://$TMP/r.html" > dom.html
check "chromium: page loads (DOM dumped)" grep -q '<table id="ranking"' dom.html
check "chromium: ranked table lists caller first" \
    bash -c "grep -o '<td><a href=\"#f1\">[a-z_]*' dom.html | grep -q caller"
nplots=$(grep -c '<svg class="plot"' dom.html)
check "chromium: one plot per variable of the top functions ($nplots)" [ "$nplots" -eq 4 ]
check "chromium: plots have normal and buggy bars" \
    bash -c "grep -q 'class=\"normal\"' dom.html && grep -q 'class=\"buggy\"' dom.html"
check "chromium: cost bars in both runs" [ "$(grep -c '<svg class="cost"' dom.html)" -eq 2 ]
chrome --screenshot="$TMP/shot.png" --window-size=1200,2000 "file://$TMP/r.html" >/dev/null
check "chromium: screenshot rendered" [ -s shot.png ]
# a rendered page is not blank: the PNG of a blank page compresses to little
check "chromium: screenshot is not blank" [ "$(stat -c %s shot.png)" -gt 20000 ]

# Plots of few distinct values (a setting constant in the run: --param)
# label each value under its bars; no axis shows the denormal just above 0
# that the last bin edge is when every value is 0.
gen rank normal pn ./target --seed 1 --param 0
gen rank buggy pb ./target --seed 2 --param 0
"$R" --html "$TMP/p.html" pn pb > /dev/null
check "--html: a plot's values labelled (fraction of samples per value)" \
    grep -q 'per value)</text>' p.html
check "--html: no denormal axis label" bash -c "! grep -Eq '>[-0-9.]+e-3[0-9]{2}</text>' p.html"
finish
