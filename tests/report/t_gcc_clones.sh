#!/bin/bash
# gcc -O2 clones a function called with a constant argument into
# "f.constprop.0" (and splits cold paths into "f.cold", f.part.0, f.isra.0):
# the variables vprof-meta finds carry the source name f. They belong to
# every piece of f (model.c vpr_model_func_by_name, discount.c): before,
# such a function had no variable and was ranked by cost alone.
. "$(dirname "$0")/../lib.sh"
R=$VPROF_BIN/vprof-report
LIBVPROF=$VPROF_LIB/libvprof.so
[ -x "$R" ] && [ -f "$LIBVPROF" ] || skip "tools not built"
cd "$TMP" || exit 1
gcc -O2 -g -pg -o cl "$VPROF_ROOT/tests/report/clones.c" || { echo "not ok - build"; exit 1; }
nm cl | grep -q ' scan_table\.constprop\.0$' || skip "gcc made no scan_table.constprop.0 clone"
ok "gcc cloned scan_table (no plain symbol: $(nm cl | grep -c ' scan_table$'))"
"$VPROF_BIN/vprof-meta" --all --files '*clones.c' -o cl.vmeta ./cl 2> meta.err ||
    { cat meta.err; echo "not ok - vprof-meta"; exit 1; }
export VPROF_META=$PWD/cl.vmeta
VPROF_OUT=n LD_PRELOAD=$LIBVPROF ./cl 20000 > /dev/null || echo "not ok - normal run"
VPROF_OUT=b LD_PRELOAD=$LIBVPROF ./cl 200000 > /dev/null || echo "not ok - buggy run"
"$R" -q --json --top 0 n b > r.json
check "the clones are decided by their source function's variables" python3 -c "
import json
F = {f['symbol']: f for f in json.load(open('r.json'))['functions']}
for fn, src in (('scan_table.constprop.0', 'scan_table'), ('work.constprop.0', 'work')):
    f = F[fn]
    assert f['discounter'] == 'variable', f
    assert f['variables'] and all(v['function'] in (src, '#global') for v in f['variables']), f['variables']
assert F['work.constprop.0']['variable'] == 'n', F['work.constprop.0']['variable']"
check "the variables of the clone's source function are still named by it" grep -q '"function":"scan_table"' r.json
finish
