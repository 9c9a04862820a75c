#!/bin/bash
# --library-last (default): functions defined in the system's headers -
# libstdc++'s sort internals here (tests/report/library_last.cc) - rank
# after the program's own ranked functions; their callers in the program
# inherit their cost. --no-library-last ranks them by calibrated cost.
source "$(dirname "$0")/../lib.sh"
R=$VPROF_BIN/vprof-report CXX=$VPROF_BIN/vprof-c++
[ -x "$CXX" ] && [ -e "$VPROF_LIB/libvprof.so" ] || skip "vprof-c++ or libvprof not built"
command -v python3 > /dev/null || skip "python3 not installed"
cd "$TMP"
"$CXX" -O2 -g -o ll "$VPROF_ROOT/tests/report/library_last.cc" > cc.log 2>&1 ||
    { cat cc.log; echo "not ok - vprof-c++ builds library_last.cc"; exit 1; }
VPROF_OUT=n ./ll 20 > /dev/null && VPROF_OUT=b ./ll 400 > /dev/null || { echo "not ok - runs"; exit 1; }
"$R" -q --json --top 0 n b > on.json && "$R" -q --json --top 0 --no-library-last n b > off.json ||
    { echo "not ok - vprof-report"; exit 1; }
# the ranked functions (calibrated cost > 0), each with "is it the library's"
ranked() {
    python3 -c "import json, sys
F = [f for f in json.load(open('$1'))['functions'] if (f['calibrated_cost'] or 0) > 0]
print(' '.join('L' if (f['file'] or '').startswith('/usr/') else 'P' for f in F))"
}
on=$(ranked on.json) off=$(ranked off.json)
echo "# ranked, P program, L library: default '$on', --no-library-last '$off'"
check "both kinds are ranked" bash -c "[[ '$on' == *P* && '$on' == *L* ]]"
check "default: every program function before every library one" bash -c "[[ '$on' != *L*P* ]]"
check "--no-library-last: the ranked functions by calibrated cost alone" python3 -c "
import json
c = [f['calibrated_cost'] for f in json.load(open('off.json'))['functions'] if (f['calibrated_cost'] or 0) > 0]
assert c == sorted(c, reverse=True), c"
check "the same functions are ranked either way" python3 -c "
import json
k = lambda p: sorted(f['name'] for f in json.load(open(p))['functions'] if (f['calibrated_cost'] or 0) > 0)
assert k('on.json') == k('off.json')"
check "default: a program function (query or main) ranks first" python3 -c "
import json; n = json.load(open('on.json'))['functions'][0]['name']
assert n.startswith('query') or n == 'main', n"
finish
