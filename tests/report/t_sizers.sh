#!/bin/bash
# Sizers of a table (--sizers, the schema's @sizes): tests/report/
# table_size.c's lookup() calls key_eq() 32 times as often per call in the
# buggy run - its table holds 32 times the entries in the same 64 buckets.
# The bucket count (struct table.nbuckets) its index is reduced by was
# written by table_init() and the table is filled by table_insert() without
# a resize: the filler ranks right above lookup (the missing load check:
# missing constraint; --deciders-above), the sizer right after it (the size
# it chose: wrong constraint); with --sizers 0 they rank by their own (no)
# cost. The C++
# shape (tests/report/table_size_ctor.cc): a constructor's caller sizes.
# Not when the size kept pace with the table (tests/report/table_walk.c).
# A size computed by a capped policy and passed to the resize that stores
# it (tests/report/table_cap.c): the policy ranks first (size-choice).
source "$(dirname "$0")/../lib.sh"
R=$VPROF_BIN/vprof-report CC=$VPROF_BIN/vprof-cc
[ -x "$CC" ] && [ -e "$VPROF_LIB/libvprof.so" ] || skip "vprof-cc or libvprof not built"
command -v python3 > /dev/null || skip "python3 not installed"
cd "$TMP"
"$CC" -O2 -g -o ts "$VPROF_ROOT/tests/report/table_size.c" > cc.log 2>&1 ||
    { cat cc.log; echo "not ok - vprof-cc builds table_size.c"; exit 1; }
VPROF_OUT=n ./ts 64 > /dev/null && VPROF_OUT=b ./ts 2048 > /dev/null || { echo "not ok - runs"; exit 1; }
"$R" -q --json --top 0 n b > on.json
"$R" -q --json --top 0 --sizers 0 n b > off.json
"$R" -q --top 5 --verdicts 5 n b > on.txt
py() {  # FILE CODE: F by name, r rank by name, tied(n): how many rank right below
        # n at exactly its cost (main, when it holds the same ticks as lookup)
    python3 -c "import json
d = json.load(open('$1')); F = {f['name']: f for f in d['functions']}
r = {f['name']: f['rank'] for f in d['functions']}
tied = lambda n: sum(1 for f in d['functions'] if f['rank'] > r[n] and f['size_of'] is None and
                     f['calibrated_cost'] == F[n]['calibrated_cost'])
$2"
}
check "lookup calls key_eq more often per call in the buggy run" py on.json '
c = F["lookup"]["calls"]
assert c and c["callee"] == "key_eq", c
assert c["buggy_callee_calls"] / c["buggy_calls"] > 8 * c["normal_callee_calls"] / c["normal_calls"], c'
check "the table's filler right above lookup, its sizer right after" py on.json '
t = tied("lookup")
assert r["table_insert"] == r["lookup"] - 1 and r["table_init"] == r["lookup"] + 1 + t, r
assert F["table_insert"]["placed_above"] and not F["table_init"]["placed_above"], F["table_init"]
for n, role in (("table_insert", "filler"), ("table_init", "sizer")):
    f = F[n]
    assert f["size_of"] == "lookup" and f["size"] == "struct table.nbuckets", f
    assert f["size_role"] == role, f
assert F["lookup"]["size_of"] is None and F["key_eq"]["size_of"] is None'
check "patterns: the filler lacks a load check, the sizer chose the size" py on.json '
assert F["table_insert"]["pattern"] == "missing-constraint", F["table_insert"]["pattern"]
assert F["table_init"]["pattern"] == "wrong-constraint", F["table_init"]["pattern"]
w = F["table_init"]["evidence"]["why"]
assert "it writes struct table.nbuckets, the size of the table lookup walks further in" in w, w'
check "--sizers 0: no one placed, they rank below key_eq" py off.json '
assert all(f["size_of"] is None for f in F.values())
assert r["table_init"] > r["key_eq"] and r["table_insert"] > r["key_eq"], r'
check "text: the sizer's verdict names the size and the lookup" \
    eval "tr -s ' \n' '  ' < on.txt | grep -q 'ranked right after lookup, which does more work per call in a table indexed by struct table.nbuckets, which this function writes'"

# a table sized for its content whose lookup walks the wrong link
# (tests/report/table_walk.c): the walk grows as in table_size.c, but the
# sampled bucket count grew too (16 -> 256) - the table kept pace, the
# lookup's own loop decided: no filler or sizer placed
"$CC" -O2 -g -o tw "$VPROF_ROOT/tests/report/table_walk.c" > cc.log 2>&1 ||
    { cat cc.log; echo "not ok - vprof-cc builds table_walk.c"; exit 1; }
VPROF_OUT=wn ./tw 64 > /dev/null && VPROF_OUT=wb ./tw 1024 > /dev/null || { echo "not ok - table_walk runs"; exit 1; }
"$R" -q --json --top 0 wn wb > walk.json
check "a table that grew with its content: lookup in the top 2 (main holds the same loop), no filler or sizer placed" py walk.json '
assert r["lookup"] <= 2, r
v = [x for x in F["lookup"]["variables"] if x["name"] == "tab.nbuckets"]
assert v and [x for x in v[0]["dimensions"] if x["dimension"] == "value"][0]["buggy_range"][1] > \
    [x for x in v[0]["dimensions"] if x["dimension"] == "value"][0]["normal_range"][1], v
assert all(f["size_of"] is None for f in F.values()), [(f["name"], f["size_of"]) for f in F.values() if f["size_of"]]'

# a table whose growth is capped too low (tests/report/table_cap.c): the
# bucket count is stored by table_rehash as its caller passes it, the
# answer of next_buckets (the schema's @setfrom through a parameter): that
# function, which computed the size, ranks right before that writer, after
# the filler table_insert (size-choice, wrong constraint); table_rehash,
# which stores into the slots too, is a sizer (it resizes), not a filler
"$CC" -O2 -g -o tc "$VPROF_ROOT/tests/report/table_cap.c" > cc.log 2>&1 ||
    { cat cc.log; echo "not ok - vprof-cc builds table_cap.c"; exit 1; }
VPROF_OUT=pn ./tc 64 > /dev/null && VPROF_OUT=pb ./tc 2048 > /dev/null || { echo "not ok - table_cap runs"; exit 1; }
"$R" -q --json --top 0 pn pb > cap.json
"$R" -q --json --top 0 --sizers 0 pn pb > cap0.json
"$R" -q --verdicts 6 pn pb > cap.txt
check "a capped growth: table_insert (filler), next_buckets (which computed the size) right above lookup, table_rehash (sizer) right after" py cap.json '
t = tied("lookup")
assert r["table_insert"] + 1 == r["next_buckets"] == r["lookup"] - 1, r
assert r["table_rehash"] == r["lookup"] + 1 + t, r
assert F["table_insert"]["size_role"] == "filler" and F["table_rehash"]["size_role"] == "sizer"
f = F["next_buckets"]
assert f["size_of"] == "lookup" and f["size"] == "struct table.nbuckets" and f["size_role"] == "size-choice", f
assert f["pattern"] == "wrong-constraint", f["pattern"]'
check "--sizers 0: next_buckets not placed" py cap0.json '
assert all(f["size_of"] is None for f in F.values())
assert r.get("next_buckets", 10**6) > r["key_eq"], r'
check "text: next_buckets' verdict says the size is computed there" \
    eval "tr -s ' \n' '  ' < cap.txt | grep -q 'whose writer stores this function.s answer: the table.s size is computed here'"

# C++: the bucket count is a constructor's member initializer and the
# element an operator[] call (std::vector); the function that constructs
# the table with its size (make_table) is the sizer, not the constructor
CXX=$VPROF_BIN/vprof-c++
"$CXX" -O2 -g -o tsc "$VPROF_ROOT/tests/report/table_size_ctor.cc" > cc.log 2>&1 ||
    { cat cc.log; echo "not ok - vprof-c++ builds table_size_ctor.cc"; exit 1; }
VPROF_OUT=cn ./tsc 64 > /dev/null && VPROF_OUT=cb ./tsc 2048 > /dev/null || { echo "not ok - C++ runs"; exit 1; }
"$R" -q --json --top 0 cn cb > cxx.json
"$R" -q --json --top 0 --no-demangle cn cb > cxx_mangled.json
check "C++: insert (filler) right above lookup, make_table (the constructor's caller) right after" py cxx.json '
L = "Table::lookup(unsigned int) const"
t = tied(L)
assert r["Table::insert(Ent*)"] == r[L] - 1 and r["make_table()"] == r[L] + 1 + t, r
assert F["make_table()"]["size_role"] == "sizer" and F["make_table()"]["size"] == "class Table.nbuckets_"
assert F["Table::Table(unsigned int)"]["size_of"] is None'
check "C++: the same with --no-demangle (the constructor is read from the mangled name)" py cxx_mangled.json '
assert F["_Z10make_tablev"]["size_role"] == "sizer", F["_Z10make_tablev"]'
finish
