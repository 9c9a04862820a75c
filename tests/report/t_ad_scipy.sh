#!/bin/bash
# --ad-test against scipy.stats.anderson_ksamp (midrank) on 150
# random and tied sample pairs (150, 30 of each kind; 300 took 24-30 s of
# CI): statistic to 1e-9 relative, p-value to 1e-6.
source "$(dirname "$0")/../lib.sh"
R=$VPROF_BIN/vprof-report
PY=/usr/bin/python3
[ -x "$R" ] || { echo "not ok - vprof-report not built"; exit 1; }
$PY -c 'import scipy.stats' 2>/dev/null || skip "python3-scipy not installed"

# cases: continuous, heavy ties (small integer ranges), different sizes,
# shifted/scaled, capped (p = 0.25) and floored (p = 0.001) regions
$PY - "$TMP" <<'PYEOF'
import sys, warnings, numpy as np
from scipy.stats import anderson_ksamp
warnings.simplefilter("ignore")
d = sys.argv[1]
rng = np.random.default_rng(20231)
out = open(f"{d}/expected", "w")
for i in range(150):
    na, nb = rng.integers(5, 400, size=2)
    kind = i % 5
    if kind == 0:
        a, b = rng.normal(size=na), rng.normal(rng.uniform(0, 0.6), 1, size=nb)
    elif kind == 1:
        a, b = rng.integers(0, 5, size=na), rng.integers(0, rng.integers(2, 7), size=nb)
    elif kind == 2:
        a, b = rng.exponential(size=na), rng.exponential(rng.uniform(0.8, 2), size=nb)
    elif kind == 3:
        a = np.round(rng.normal(size=na), 1); b = np.round(rng.normal(0.2, 1.3, size=nb), 1)
    else:
        a, b = rng.uniform(size=na), rng.uniform(0, 1.2, size=nb)
    a = np.asarray(a, float); b = np.asarray(b, float)
    if len(np.unique(np.concatenate([a, b]))) < 2:
        continue
    np.savetxt(f"{d}/a{i}", a, fmt="%.17g"); np.savetxt(f"{d}/b{i}", b, fmt="%.17g")
    r = anderson_ksamp([a, b])
    out.write(f"{i} {r.statistic!r} {r.pvalue!r}\n")
PYEOF

n=0 bad=0
while read -r i stat p; do
    got=$("$R" --ad-test "$TMP/a$i" "$TMP/b$i") || { bad=$((bad+1)); echo "case $i: exit $?"; continue; }
    gs=$(echo "$got" | awk '$1=="statistic"{print $2}')
    gp=$(echo "$got" | awk '$1=="pvalue"{print $2}')
    if ! awk -v a="$gs" -v b="$stat" -v pa="$gp" -v pb="$p" 'BEGIN {
            d = a - b; if (d < 0) d = -d; s = b < 0 ? -b : b; if (s < 1e-300) s = 1
            e = pa - pb; if (e < 0) e = -e
            exit !(d / s <= 1e-9 && e <= 1e-6) }'; then
        bad=$((bad+1)); echo "case $i: got $gs $gp, scipy $stat $p"
    fi
    n=$((n+1))
done < "$TMP/expected"
check "ad-test matches scipy on $n sample pairs ($bad mismatches)" [ "$n" -ge 125 -a "$bad" -eq 0 ]

# undefined cases are errors with a reason, not numbers
printf '1\n1\n1\n' > "$TMP/c1"; printf '1\n1\n' > "$TMP/c2"
out=$("$R" --ad-test "$TMP/c1" "$TMP/c2" 2>&1); rc=$?
check "identical observations: error, exit 2" [ $rc -eq 2 ]
check "identical observations: says why" grep -q "distinct" <<<"$out"
printf '1\nx\n' > "$TMP/c3"
out=$("$R" --ad-test "$TMP/c1" "$TMP/c3" 2>&1); rc=$?
check "non-number input: error names file:line" grep -q "c3:2: not a number" <<<"$out"
finish
