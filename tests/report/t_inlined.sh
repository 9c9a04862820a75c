#!/bin/bash
# Code the compiler inlined (-O2): a location of anomalous samples names
# the function whose code it is (lines.c, DW_TAG_inlined_subroutine), in
# the JSON ("inlined"), the verdict text and --verbose; the function's own
# lines have none. And the inlined function is ranked as a function of its
# own (--inline-functions, the default).
. "$(dirname "$0")/../lib.sh"
R=$VPROF_BIN/vprof-report
LIBVPROF=$VPROF_LIB/libvprof.so
[ -x "$R" ] && [ -f "$LIBVPROF" ] || skip "tools not built"
cd "$TMP" || exit 1
gcc -O2 -g -pg -o inl "$VPROF_ROOT/tests/report/inlined.c" || { echo "not ok - build"; exit 1; }
check "spin_rows is inlined: no symbol of its own" bash -c "! nm inl | grep -q spin_rows"
"$VPROF_BIN/vprof-meta" --all --files '*inlined.c' -o inl.vmeta ./inl 2> meta.err ||
    { cat meta.err; echo "not ok - vprof-meta"; exit 1; }
export VPROF_META=$PWD/inl.vmeta
VPROF_OUT=n LD_PRELOAD=$LIBVPROF ./inl 100000 || echo "not ok - normal run"
VPROF_OUT=b LD_PRELOAD=$LIBVPROF ./inl 1000000 || echo "not ok - buggy run"
"$R" -q --json --top 0 n b > r.json
check "main's anomalous samples in the loop's line are spin_rows's inlined code" python3 -c "
import json
F = {f['name']: f for f in json.load(open('r.json'))['functions']}
L = F['main']['locations']
inl = [l for l in L if l['line'] == 12]
assert inl and all(l['inlined'] == 'spin_rows' for l in inl), L
assert all(l['inlined'] is None for l in L if l['line'] >= 17), L"
"$R" -q --top 1 --no-inline-functions n b > t.txt
check "the verdict says whose code the line is" grep -q '(code of spin_rows, inlined here)' t.txt
# by default the inlined function is a function of its own (model.c,
# add_inlined_funcs): its loop's PC time and its variable s are its own
"$R" -q --top 1 n b > t1.txt
check "spin_rows ranked first, said to have no symbol, and where gprof counts it" \
    grep -q '^\[1\] spin_rows  inlined.c:[0-9]*  (inlined into main: no symbol of its own)' t1.txt
check "JSON: spin_rows inlined_only, with PC time and its own line" python3 -c "
import json
F = {f['name']: f for f in json.load(open('r.json'))['functions']}
s = F['spin_rows']
assert s['inlined_only'] is True and not F['main']['inlined_only'], s
assert s['inlined_into'] == 'main' and F['main']['inlined_into'] is None, (s['inlined_into'], F['main']['inlined_into'])
assert s['pc_cost'] > 0.5 * F['main']['raw_cost'], (s, F['main'])
assert s['variable'] in ('i', 's') and all(l['line'] == 12 for l in s['locations']), s"
"$R" -q --json --top 0 --no-inline-functions n b > r0.json
check "--no-inline-functions: gprof's view, no spin_rows" python3 -c "
import json
F = {f['name']: f for f in json.load(open('r0.json'))['functions']}
assert 'spin_rows' not in F and F['main']['pc_cost'] > 0, sorted(F)"
"$R" --contexts n b > c.txt
check "--contexts: spin_rows is a frame of its own below main" grep -q 'main ([0-9.]*) > spin_rows' c.txt
"$R" --contexts --no-inline-functions n b > c0.txt
check "--contexts --no-inline-functions: main is the leaf" bash -c "! grep -q spin_rows c0.txt"
"$R" --gprof ./inl b/gmon.*.out > g.txt
check "--gprof unchanged: no spin_rows" bash -c "! grep -q spin_rows g.txt && grep -q main g.txt"
# a chain deeper than the lookups' old limit of 8 (model.c, lines.c): the
# loop is the innermost function's code, not the 8th wrapper's
gcc -O2 -g -pg -o deep "$VPROF_ROOT/tests/report/deep_inlined.c" || { echo "not ok - build deep"; exit 1; }
"$VPROF_BIN/vprof-meta" --all --files '*deep_inlined.c' -o deep.vmeta ./deep 2> meta.err ||
    { cat meta.err; echo "not ok - vprof-meta deep"; exit 1; }
VPROF_META=$PWD/deep.vmeta VPROF_OUT=dn LD_PRELOAD=$LIBVPROF ./deep 100000 || echo "not ok - deep normal"
VPROF_META=$PWD/deep.vmeta VPROF_OUT=db LD_PRELOAD=$LIBVPROF ./deep 1000000 || echo "not ok - deep buggy"
"$R" -q --json --top 0 dn db > d.json
check "13-deep inline chain: the loop's PC time is deep_spin's, each wrapper inherits it" python3 -c "
import json
F = {f['name']: f for f in json.load(open('d.json'))['functions']}
s, m = F['deep_spin'], F['main']
assert s['pc_cost'] > 0.5 * m['raw_cost'], (s, m)
for k in range(1, 13):
    w = F['layer%d' % k]
    assert w['pc_cost'] < 0.1 * s['pc_cost'] and w['raw_cost'] > 0.5 * m['raw_cost'], w"
"$R" --contexts dn db > dc.txt
check "--contexts: deep_spin is the leaf under its wrappers" grep -q 'layer12 ([0-9.]*) > deep_spin' dc.txt
finish
