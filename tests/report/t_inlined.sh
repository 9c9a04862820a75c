#!/bin/bash
# Code the compiler inlined (-O2): a location of anomalous samples names
# the function whose code it is (lines.c, DW_TAG_inlined_subroutine), in
# the JSON ("inlined"), the verdict text and --verbose; the function's own
# lines have none.
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
"$R" -q --top 1 n b > t.txt
check "the verdict says whose code the line is" grep -q '(code of spin_rows, inlined here)' t.txt
finish
