#!/bin/bash
# Bad input: clear error naming the file (and offset), non-zero exit, no
# crash. Uses the ASan/UBSan build when present (make SAN=1 BUILD=build/san).
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/common.sh"
# error paths exit without freeing everything: leaks there are not bugs.
# The sanitizer build is used only when it is not older than the normal one.
S=${VPROF_SAN_BIN:-}/vprof-report
if [ -x "$S" ] && ! [ "$S" -ot "$R" ]; then R=$S; echo "# using $S"; fi
export ASAN_OPTIONS=detect_leaks=0
cd "$TMP"
make_target "$TMP" || { echo "not ok - build target"; exit 1; }
gen rank normal n ./target --seed 1
gen rank buggy b ./target --seed 2

run() { out=$("$R" "$@" 2>&1); rc=$?; }
nocrash() { [ $rc -ne 0 ] && [ $rc -lt 128 ] && ! grep -q "Sanitizer" <<<"$out"; }

run missing b;            check "missing dir: error exit" nocrash
check "missing dir: names it" grep -q "missing: cannot open run directory" <<<"$out"
mkdir empty; run empty b; check "empty dir: error exit" nocrash
check "empty dir: says no profiles" grep -q "empty: no profiles" <<<"$out"
run n;                    check "one directory: usage error" [ $rc -eq 2 ]
run --pvalue 2 n b;       check "--pvalue out of range: usage error" [ $rc -eq 2 ]

# truncated values file: header claims more than the file holds
cp -r b bt; truncate -s 100 bt/values.1000
run n bt;                 check "truncated values: error exit" nocrash
check "truncated values: names file and offset" grep -q "bt/values.1000.*offset" <<<"$out"
# corrupt magic
cp -r b bm; printf 'XXXXXXXX' | dd of=bm/values.1000 conv=notrunc 2>/dev/null
run n bm;                 check "bad magic: error exit" nocrash
check "bad magic: names file and offset 0" grep -q "bm/values.1000: offset 0" <<<"$out"
# corrupt gmon
cp -r b bg; head -c 25 b/gmon.1000.out > bg/gmon.1000.out
run n bg;                 check "truncated gmon: error exit" nocrash
check "truncated gmon: names file" grep -q "bg/gmon.1000.out" <<<"$out"
# corrupt layout
cp -r b bl; printf 'vprof-layout 1\npid\tx\n' > bl/layout.1000
run n bl;                 check "bad layout: error exit" nocrash
check "bad layout: names file" grep -q "bl/layout.1000" <<<"$out"

# mismatched executables: error unless --force (then a warning)
cp target target2
gen rank buggy bx ./target2 --seed 2
run n bx;                 check "different exe: error exit" nocrash
check "different exe: suggests --force" grep -q -- "--force" <<<"$out"
run --force n bx;         check "different exe --force: exit 0" [ $rc -eq 0 ]
check "different exe --force: warns" grep -q "warning: executables differ" <<<"$out"
gen rank normal nb1 ./target --seed 1 --build-id aaaa
gen rank buggy bb1 ./target --seed 2 --build-id bbbb
run nb1 bb1;              check "different build-id: error exit" nocrash
check "different build-id: says build-id" grep -q "build-id differs" <<<"$out"

# normal side without value samples: every buggy variable is anomalous
mkdir nv; cp n/layout.1000 n/gmon.1000.out nv/
run --json nv b;          check "normal without samples: exit 0" [ $rc -eq 0 ]
check "normal without samples: warns" grep -q "normal runs have no value samples" <<<"$out"
"$R" -q --json nv b > nv.json
check "normal without samples: discounts are 0 (anomalous)" /usr/bin/python3 -c "
import json; fs = json.load(open('nv.json'))['functions']
assert fs and all(f['discount'] == 0 for f in fs if f['discounter'] == 'variable')"

# uncommitted records are skipped, not counted
cp -r b bu
/usr/bin/python3 - bu/values.1000 <<'PY'
import sys
p = sys.argv[1]; d = bytearray(open(p, 'rb').read())
for i in range(10): d[64 + 40 * i + 33] = 0      # clear the committed bit
open(p, 'wb').write(d)
PY
"$R" --json n bu > bu.json; "$R" --json n b > b.json
check "uncommitted records skipped" /usr/bin/python3 -c "
import json; a = json.load(open('bu.json'))['buggy']['value_samples']; b = json.load(open('b.json'))['buggy']['value_samples']
assert a == b - 10, (a, b)"
# samples of a variable id the layout does not describe: an error (the
# missing variable may be the anomalous one); --force: skipped, counted
cp -r b bv; sed -i '/^var\t2\t/d' bv/layout.1000
run --json n bv;          check "unknown variable id: error exit" nocrash
check "unknown variable id: first line names the values file and the layout" \
    grep -q "bv/values.1000: .* value samples name variable ids (e.g. 2) that bv/layout.1000 does not describe" <<<"$(head -1 <<<"$out")"
run --force --json n bv;  check "unknown variable id, --force: exit 0" [ $rc -eq 0 ]
check "unknown variable id, --force: warns with the count" grep -q "value samples name a variable id missing" <<<"$out"
"$R" -q --force --json n bv > bv.json
check "unknown variable id: counted in JSON" /usr/bin/python3 -c "
import json; assert json.load(open('bv.json'))['buggy']['unknown_variable'] > 0"
finish
