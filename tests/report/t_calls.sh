#!/bin/bash
# Call counts that survive inlining (vprof-cc --calls): the counters, the
# calls.<id> file (FORMATS.md §9), a fork child's own counts, and the
# report's use of them: a decision inlined into main (calls_inlined.c) is
# named by its calls, which gmon cannot see.
source "$(dirname "$0")/../lib.sh"
R=$VPROF_BIN/vprof-report CC=$VPROF_BIN/vprof-cc
[ -x "$CC" ] && [ -e "$VPROF_LIB/libvprof.so" ] || skip "vprof-cc or libvprof not built"
cd "$TMP"
"$CC" --calls -O2 -g -o ci "$VPROF_ROOT/tests/report/calls_inlined.c" > cc.log 2>&1 ||
    { cat cc.log; echo "not ok - build --calls"; exit 1; }
"$CC" --no-calls -O2 -g -o plain "$VPROF_ROOT/tests/report/calls_inlined.c" > cc2.log 2>&1 ||
    { cat cc2.log; echo "not ok - build"; exit 1; }
check "process_item and want_detail are inlined (no symbols)" \
    eval '! nm ci | grep -Eqw "process_item|want_detail"'
check "--no-calls: no counters in the program" eval '! nm plain | grep -q __vprof_calls_counts'
VPROF_OUT=p ./plain 1 20000 || { echo "not ok - plain run"; exit 1; }
check "--no-calls: no calls file" eval '! ls p/calls.* 2> /dev/null'

VPROF_OUT=n ./ci 1 200000 && VPROF_OUT=b ./ci 2 200000 || { echo "not ok - runs"; exit 1; }
check "calls file: header and one line per counted pair" eval '
    f=$(ls n/calls.*) && head -1 $f | grep -qx "vprof-calls 1" &&
    grep -qP "^200000\trun\tprocess_item$" $f && grep -qP "^200000\tprocess_item\twant_detail$" $f &&
    ! grep -qP "\tformat_item$" $f'
check "buggy run: process_item called format_item for every item" \
    eval 'grep -qP "^200000\tprocess_item\tformat_item$" b/calls.*'

"$R" -q --json --top 0 n b > out.json 2> err.txt
check "report: exit 0" [ $? -eq 0 ]
py() { python3 -c "import json; d = json.load(open('out.json')); f = {x['name']: x for x in d['functions']}; $1"; }
check "report: process_item (inlined) is named by its calls of format_item" py '
c = f["process_item"]["calls"]
assert f["process_item"]["inlined_only"] and c and c["callee"] == "format_item", c
assert c["normal_callee_calls"] == 0 and c["buggy_callee_calls"] == 200000 and c["normal_calls"] == 200000, c'
check "report: process_item ranks in the top 3" py '
r = [x["name"] for x in d["functions"]]; assert "process_item" in r[:3], r[:6]'
check "report: without the calls files the decision has no call evidence" eval '
    mkdir -p n2 b2 && cp n/[!c]* n2/ && cp b/[!c]* b2/ &&
    "$R" -q --json --top 0 n2 b2 > out2.json &&
    python3 -c "import json; d = json.load(open(\"out2.json\")); f = {x[\"name\"]: x for x in d[\"functions\"]}
c = f[\"process_item\"][\"calls\"]; assert c is None or c[\"callee\"] != \"format_item\", c"'

"$R" -q n2 b2 > t2.txt; "$R" -q n b > t1.txt
check "text: without calls files the report suggests --calls for its inlined functions" \
    eval 'grep -q "^Inlined: .* Build with$" t2.txt || grep -q "vprof-cc --calls" t2.txt'
check "text: with every call counted no such note" eval '! grep -q "^Inlined: " t1.txt'

# counts from one side only would read as calls that stopped: not used
mkdir -p b4 && cp b/[!c]* b4/
"$R" --json --top 0 n b4 > out4.json 2> err4.txt
check "calls files on one side only: warned, and not used" eval '
    grep -q "call counts (calls.<id>) are missing for 0 of 1 normal and 1 of 1 buggy" err4.txt &&
    python3 -c "import json; d = json.load(open(\"out4.json\")); f = {x[\"name\"]: x for x in d[\"functions\"]}
c = f[\"process_item\"][\"calls\"]; assert c is None or c[\"callee\"] != \"format_item\", c"'

# the default (--calls=guarded): only the call a predicate decides and the
# calls of the function holding it; the report names the decision the same way
"$CC" -O2 -g -o cg "$VPROF_ROOT/tests/report/calls_inlined.c" > cc5.log 2>&1 ||
    { cat cc5.log; echo "not ok - build"; exit 1; }
"$CC" --calls=guarded -O2 -g -o cg2 "$VPROF_ROOT/tests/report/calls_inlined.c" > cc8.log 2>&1 ||
    { cat cc8.log; echo "not ok - build --calls=guarded"; exit 1; }
check "--calls=guarded is the default (the same counters)" eval '
    nm cg | grep -q __vprof_calls_counts && [ "$(strings -a cg | grep -P "^[a-z_]+\t[a-z_]+$")" = "$(strings -a cg2 | grep -P "^[a-z_]+\t[a-z_]+$")" ]'
VPROF_CC_CALLS=0 "$CC" -O2 -g -o cz "$VPROF_ROOT/tests/report/calls_inlined.c" > cc9.log 2>&1 ||
    { cat cc9.log; echo "not ok - build VPROF_CC_CALLS=0"; exit 1; }
check "VPROF_CC_CALLS=0: no counters" eval '! nm cz | grep -q __vprof_calls_counts'
VPROF_OUT=gn ./cg 1 200000 && VPROF_OUT=gb ./cg 2 200000 || { echo "not ok - guarded runs"; exit 1; }
check "guarded counters: the guarded call and its holder's calls, nothing else" eval '
    f=$(ls gb/calls.*) && [ $(grep -c . $f) -eq 3 ] &&
    grep -qP "^200000\trun\tprocess_item$" $f && grep -qP "^200000\tprocess_item\tformat_item$" $f'
"$R" -q --json --top 0 gn gb > outg.json 2> errg.txt
check "guarded counters: process_item is named by its calls of format_item" eval '
    python3 -c "import json; d = json.load(open(\"outg.json\")); f = {x[\"name\"]: x for x in d[\"functions\"]}
c = f[\"process_item\"][\"calls\"]; assert c and c[\"callee\"] == \"format_item\" and c[\"buggy_callee_calls\"] == 200000, c"'
"$CC" --calls=some -O2 -g -o cx "$VPROF_ROOT/tests/report/calls_inlined.c" > cc6.log 2>&1
rc6=$?
check "--calls=MODE: an unknown mode is an error naming it" eval '
    [ $rc6 -ne 0 ] && grep -q "calls=some: expected" cc6.log && [ ! -e cx ]'
VPROF_CC_CALLS=yes "$CC" -O2 -g -o cx "$VPROF_ROOT/tests/report/calls_inlined.c" > cc7.log 2>&1
rc7=$?
check "VPROF_CC_CALLS: an unknown value is an error naming it" eval '
    [ $rc7 -ne 0 ] && grep -q "VPROF_CC_CALLS=.yes.: expected" cc7.log && [ ! -e cx ]'

# guarded counts in C++: the program's guarded call, none of libstdc++'s own
CXX=$VPROF_BIN/vprof-c++
"$CXX" -O2 -g -o stl "$VPROF_ROOT/tests/report/calls_stl.cc" > cc11.log 2>&1 ||
    { cat cc11.log; echo "not ok - build calls_stl"; exit 1; }
VPROF_OUT=st ./stl || { echo "not ok - calls_stl run"; exit 1; }
check "C++: main's guarded call of keep() counted, no pair of the system headers' functions" eval '
    f=$(ls st/calls.*) && grep -qP "^334\tmain\t_ZL4keep" $f && ! grep -qP "\t_ZN[KS]*St|\t_ZNKSt|_M_check_len" $f'

# more translation units than the runtime's table: the rest not counted, and said
"$CC" --no-calls -O1 -g -o many "$VPROF_ROOT/tests/report/calls_many.c" > cc10.log 2>&1 ||
    { cat cc10.log; echo "not ok - build calls_many"; exit 1; }
VPROF_OUT=mu ./many 2> many.err || { cat many.err; echo "not ok - calls_many run"; exit 1; }
check "16,390 units registered: the first 16,384 written, the 6 others warned about" eval '
    f=$(ls mu/calls.*) && [ $(grep -c . $f) -eq 16385 ] && grep -qP "^16384\tu16383\tf$" $f &&
    ! grep -qP "\tu16384\t" $f && grep -q "call counters: 6 translation units beyond the table.s 16384 not counted" many.err'

# SIGTERM (default action): written by vprof's handler like gmon.out
VPROF_OUT=t ./ci 1 500000000 & pid=$!
sleep 0.5; kill -TERM $pid; wait $pid
check "SIGTERM: the calls file is written, with the counts so far" eval '
    f=$(ls t/calls.*) && head -1 $f | grep -qx "vprof-calls 1" && grep -qP "^1\tmain\trun$" $f'

# a fork child counts its own calls
VPROF_OUT=f ./ci 1 20000 fork || { echo "not ok - fork run"; exit 1; }
check "fork: parent and child each wrote calls with their own counts" eval '
    [ $(ls f/calls.* | wc -l) -eq 2 ] && grep -qP "^20000\trun\tprocess_item$" f/calls.* &&
    grep -qP "^10000\trun\tprocess_item$" f/calls.*'

# bad input: a damaged calls file is an error naming the file and line
printf 'vprof-calls 1\n12\tmain\n' > bad_line && cp -r n n3 && cp bad_line n3/$(cd n && ls calls.*)
"$R" -q n3 b > /dev/null 2> bad.txt
check "damaged calls file: non-zero exit, the file and line named" eval '
    [ $? -ne 0 ] || true; grep -q "calls\..*:2: expected" bad.txt'
"$R" -q n3 b > /dev/null 2>&1
check "damaged calls file: non-zero exit" [ $? -ne 0 ]
# an inlined copy's gmon arc is per call of the copy when the counters
# counted those (tests/report/inlined_rate.c: refill, inlined into main,
# calls fetch once per call on both sides; main "runs once")
"$CC" -O2 -g -o ir "$VPROF_ROOT/tests/report/inlined_rate.c" > cc10.log 2>&1 ||
    { cat cc10.log; echo "not ok - build inlined_rate.c"; exit 1; }
VPROF_OUT=irn ./ir 2000000 1000 > /dev/null && VPROF_OUT=irb ./ir 2000000 100000 > /dev/null ||
    { echo "not ok - inlined_rate runs"; exit 1; }
"$R" -q --json --top 0 irn irb > ir.json
check "inlined copy: fetch per counted call of refill (1 on both sides) is no change" python3 -c "
import json; f = {x['name']: x for x in json.load(open('ir.json'))['functions']}
assert f['refill']['inlined_only'], f['refill']
c = f['refill']['calls']; assert c is None or c['callee'] != 'fetch', c
assert f['lookup']['calls']['callee'] == 'refill', f['lookup']['calls']"

finish
