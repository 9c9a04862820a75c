#!/bin/bash
# A range widened for nothing (--ranges, the schema's @bounds):
# tests/report/damage_range.c's repaint() renders each row's damaged span
# (dmg[r].lo .. hi); put_char() widens it through damage_cell() for every
# cell it writes, changed or not. Redrawing the whole screen every frame,
# repaint calls render_cell 250 times as often per call: damage_cell (the
# span's writer, its calls grown far more than repaint's) and then
# put_char (the caller that called it far more often: the missing
# unchanged-cell check) rank right above repaint (missing constraint;
# --deciders-above).
# With --ranges 0 neither is placed.
source "$(dirname "$0")/../lib.sh"
R=$VPROF_BIN/vprof-report CC=$VPROF_BIN/vprof-cc
[ -x "$CC" ] && [ -e "$VPROF_LIB/libvprof.so" ] || skip "vprof-cc or libvprof not built"
command -v python3 > /dev/null || skip "python3 not installed"
cd "$TMP"
"$CC" -O2 -g -o dr "$VPROF_ROOT/tests/report/damage_range.c" > cc.log 2>&1 ||
    { cat cc.log; echo "not ok - vprof-cc builds damage_range.c"; exit 1; }
VPROF_OUT=n ./dr 500 > /dev/null && VPROF_OUT=b ./dr 1 > /dev/null || { echo "not ok - runs"; exit 1; }
"$R" -q --json --top 0 n b > on.json
"$R" -q --json --top 0 --ranges 0 n b > off.json
"$R" -q --top 3 --verdicts 3 n b > on.txt
check "repaint calls render_cell far more often per call" pyrank on.json "
c = F['repaint']['calls']
assert c and c['callee'] == 'render_cell' and c['buggy_callee_calls'] > 50 * c['normal_callee_calls'], c"
check "damage_cell, then put_char, rank right above repaint" pyrank on.json "
assert r['damage_cell'] + 1 == r['put_char'] == r['repaint'] - 1, r
for n in ('damage_cell', 'put_char'):
    f = F[n]
    assert f['size_of'] == 'repaint' and f['size'] == 'struct span.hi' and f['size_role'] == 'range', f
assert F['put_char']['pattern'] == 'missing-constraint', F['put_char']['pattern']"
check "--ranges 0: neither is placed" pyrank off.json "
assert all(f['size_role'] != 'range' and f.get('size_of') != 'repaint' for f in F.values()), F"
check "text: the verdict names the range and the walk" \
    eval "tr -s ' \n' '  ' < on.txt | grep -q 'which walks further per call over a range ending at struct span.hi'"
finish
