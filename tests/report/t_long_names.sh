#!/bin/bash
# C++ names longer than a line (a template instantiated with nested
# containers: 600 characters demangled) in every rendering: the verdict's
# header line is cut, not written past its buffer. Run with the ASan/UBSan
# build of vprof-report, (re)built here as t_fuzz.sh builds vprof-meta's.
source "$(dirname "$0")/../lib.sh"
CXX=$VPROF_BIN/vprof-c++
[ -x "$CXX" ] && [ -e "$VPROF_LIB/libvprof.so" ] || skip "vprof-c++ or libvprof not built"
make -s -C "$VPROF_ROOT" -j2 SAN=1 BUILD=build/san build/san/bin/vprof-report \
    >"$TMP/make.log" 2>&1 || { cat "$TMP/make.log"; skip "ASan build failed"; }
R=$VPROF_ROOT/build/san/bin/vprof-report
export ASAN_OPTIONS=detect_leaks=0
cd "$TMP"
"$CXX" -O1 -g -o ln "$VPROF_ROOT/tests/report/long_names.cc" > cc.log 2>&1 ||
    { cat cc.log; echo "not ok - build long_names.cc"; exit 1; }
VPROF_OUT=n ./ln 200000 > /dev/null && VPROF_OUT=b ./ln 2000000 > /dev/null ||
    { echo "not ok - runs"; exit 1; }
"$R" -q --verbose --top 3 n b > out.txt 2> err.txt
rc=$?
check "text report of a 600-character name: exit 0, no sanitizer report" \
    eval '[ $rc -eq 0 ] && ! grep -q "Sanitizer\|runtime error" err.txt'
check "its verdict header names it in the short form, as the table does" eval '
    grep -q "^\[[0-9]\] walk<…>(...)  long_names.cc:" out.txt'
check "calling contexts: the hottest function in the short form too" eval '
    grep -q "hottest walk<…>(...)" out.txt && ! grep -q "hottest long walk" out.txt'
"$R" -q --json --top 3 n b > out.json 2> err2.txt && "$R" -q --html out.html --top 3 n b > /dev/null 2>> err2.txt
rc=$?
check "JSON and HTML: exit 0, no sanitizer report, the whole name in the JSON" eval '
    [ $rc -eq 0 ] && ! grep -q "Sanitizer\|runtime error" err2.txt &&
    python3 -c "import json; d = json.load(open(\"out.json\")); assert any(len(f[\"name\"]) > 300 and f[\"name\"].startswith(\"long walk<\") for f in d[\"functions\"])"'
check "HTML: the heading has the short form, the whole name follows in small type" eval '
    grep -q "<h2 id=\"f[0-9]\">[0-9]. walk&lt;…&gt;(...)</h2>" out.html &&
    grep -q "<br>name <code class=\"symbol\">long walk&lt;std::map" out.html'
finish
