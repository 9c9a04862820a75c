#!/bin/bash
# Values that look like addresses (stack garbage of an uninitialized
# variable, a pointer kept in an integer) change with ASLR from run to run:
# the value and delta dimensions leave them out (--address-filter, the
# default), count them per side (JSON address_like, the verbose text), and
# --no-address-filter compares them like any other value.
. "$(dirname "$0")/../lib.sh"
R=$VPROF_BIN/vprof-report
LIBVPROF=$VPROF_LIB/libvprof.so
[ -x "$R" ] && [ -f "$LIBVPROF" ] || skip "tools not built"
[ "$(cat /proc/sys/kernel/randomize_va_space 2>/dev/null)" = 0 ] && skip "ASLR is off here"
cd "$TMP" || exit 1
gcc -O0 -pg -g -o av "$VPROF_ROOT/tests/report/addrvals.c" || { echo "not ok - build"; exit 1; }
"$VPROF_BIN/vprof-meta" --all --files '*addrvals.c' -o av.vmeta ./av 2> meta.err || { cat meta.err; echo "not ok - vprof-meta"; exit 1; }
export VPROF_META=$PWD/av.vmeta
VPROF_OUT=normal LD_PRELOAD=$LIBVPROF ./av 1000000 || echo "not ok - normal run"
VPROF_OUT=buggy LD_PRELOAD=$LIBVPROF ./av 4000000 || echo "not ok - buggy run"
"$R" -q --json --top 0 normal buggy > on.json
"$R" -q --json --top 0 --no-address-filter normal buggy > off.json
"$R" -q --verbose --top 0 normal buggy > on.txt
tag() { python3 -c "
import json, sys
d = json.load(open('$1'))
F = {f['name']: f for f in d['functions']}
t = [v for v in F['stamp']['variables'] if v['name'] == 'tag'][0]
D = {x['dimension']: x for x in t['dimensions']}
$2"; }
check "the address in tag is counted on both sides" tag on.json '
assert t["address_like"][0] > 10 and t["address_like"][1] > 10, t["address_like"]'
# a tick in stamp's prologue (-O0) may read tag before it is set: a 0 is no
# address and stays, alone ("undefined": too few samples to say anything;
# once in a CI clone under load)
check "and left out of its value and delta dimensions (no address left)" tag on.json '
for k in ("value", "delta"):
    x = D.get(k)
    if x is None: continue
    rs = [r for r in (x["normal_range"], x["buggy_range"]) if r]
    assert x["state"] == "undefined" and all(abs(v) < 4096 for r in rs for v in r), D'
check "--no-address-filter: the same samples make tag's value 'differs'" tag off.json '
assert t["address_like"] == [0, 0] and D["value"]["state"] == "differs", (t["address_like"], D["value"]["state"])'
# (stamp's own discount with the filter is its loop's: i's pace per tick,
# which a loaded machine can shift between the runs - once in a CI clone)
check "stamp, the same work in both runs, is decided by tag only without the filter" python3 -c "
import json
on = {f['name']: f for f in json.load(open('on.json'))['functions']}
off = {f['name']: f for f in json.load(open('off.json'))['functions']}
assert off['stamp']['discount'] < 0.1 and off['stamp']['variable'] == 'tag', off['stamp']['variable']
assert on['stamp']['variable'] != 'tag', on['stamp']['variable']"
check "the verbose text says why tag's values were left out" grep -q 'values left out: they look like' on.txt
finish
