#!/bin/bash
# A C++17 program end to end (issue 18's proof): tests/report/router/ built
# with vprof-c++ -O2 -g and no -std=, run with a normal and a buggy
# configuration. The planted root cause is the class method Router::match,
# whose member this->max_scan_ (read through `this`, in a unit that does not
# emit Router's constructor) is the anomalous variable. The report must name
# it readably in the text table (abbreviated), the details, the JSON (name
# and linkage symbol) and the HTML page (rendered by headless Chromium);
# --no-demangle must give the linkage names back. A small C++ server built
# with --latency checks the names in the latency section, --timeline and
# --trace.
source "$(dirname "$0")/../lib.sh"
R=$VPROF_BIN/vprof-report CXX=$VPROF_BIN/vprof-c++
[ -x "$CXX" ] && [ -e "$VPROF_LIB/libvprof.so" ] || skip "vprof-c++ or libvprof not built"
unset LD_PRELOAD LD_LIBRARY_PATH VPROF_CC_CXX_STD
export XDG_CACHE_HOME=$TMP/cache
SRC=$VPROF_ROOT/tests/report/router
cd "$TMP"
"$CXX" -O2 -g -o app "$SRC/main.cc" "$SRC/router.cc" "$SRC/route.cc" > cc.log 2>&1 ||
    { cat cc.log; echo "not ok - vprof-c++ -O2 -g builds the C++17 router without -std="; exit 1; }
ok "vprof-c++ -O2 -g builds the C++17 router without -std="
VPROF_OUT=normal ./app normal > normal.out && VPROF_OUT=buggy ./app buggy > buggy.out ||
    { echo "not ok - normal and buggy runs"; exit 1; }
check "both runs serve the same requests (same output)" cmp -s normal.out buggy.out

# text: the table names Router::match(...) in its top 2 (main's loop counter
# can come close: its iterations slow down with every call of the method),
# its variable the member
"$R" -q -v normal buggy > r.txt
rk=$(awk '$1 ~ /^[0-9]+$/ && NF >= 7 && $NF == "Router::match(...)" { print $1; exit }' r.txt)
check "text: Router::match(...) ranks in the top 2 (abbreviated to its column; rank ${rk:-none})" \
    test "${rk:-9}" -le 2
check "text: its most anomalous variable is the member this->max_scan_" \
    bash -c "awk -v r='${rk:-0}' '\$1 == r && NF >= 7 { getline; print; exit }' r.txt | grep -q 'var this->max_scan_ *router.cc:'"
check "text: details give the whole name" grep -q "^\[${rk:-0}\] Router::match(std::basic_string_view<char, std::char_traits<char> >) const: variable discount 0.00" r.txt
check "text: no mangled function names" bash -c "! grep -q '_Z' r.txt"
check "text: the table fits 80 columns (characters)" python3 -c "
import sys
lines = open('r.txt', encoding='utf-8').read().split('\n')
table = lines[:lines.index('', 6)] if '' in lines[6:] else lines
bad = [l for l in table if len(l) > 80]
assert not bad, bad"
check "text: long template names abbreviated with <…> in the table" \
    bash -c "grep -q '<…>' r.txt || ! grep -q '^ *[0-9].*std::' r.txt"

# JSON: readable name, linkage symbol, the member sampled in the method
# --top 0: main, a root of the run with nothing added (--whole-run), may
# rank below the first ten
"$R" -q --json --top 0 normal buggy > r.json
py() { python3 -c "import json; d = json.load(open('r.json')); f = d['functions']; m = [x for x in f if x['symbol'] == '_ZNK6Router5matchESt17basic_string_viewIcSt11char_traitsIcEE'][0]; assert m['rank'] <= 2, m['rank']; $1"; }
check "json: the method's name is Router::match(std::basic_string_view<char, std::char_traits<char> >) const" py '
assert m["name"] == "Router::match(std::basic_string_view<char, std::char_traits<char> >) const", m["name"]'
check "json: its symbol is the linkage name" py '
assert m["symbol"] == "_ZNK6Router5matchESt17basic_string_viewIcSt11char_traitsIcEE", m["symbol"]'
check "json: variable this->max_scan_, wrong-constraint" py '
assert m["variable"] == "this->max_scan_" and m["pattern"] == "wrong-constraint", (m["variable"], m["pattern"])'
check "json: the member was sampled in the method: 64 normal, 1000000 buggy" py '
v = [x for x in m["variables"] if x["name"] == "this->max_scan_"][0]
dv = [x for x in v["dimensions"] if x["dimension"] == "value"][0]
assert dv["normal_range"] == [64, 64] and dv["buggy_range"] == [1000000, 1000000], dv
assert dv["normal_samples"] >= 5 and dv["buggy_samples"] >= 50, dv
assert v["function"] == m["name"] and v["function_symbol"] == m["symbol"] and v["tags"] == "cond", v'
check "json: C++ types as written: std::size_t, const Router *" py '
t = {x["name"]: x["type"] for x in m["variables"]}
assert t["this->max_scan_"] == "std::size_t" and t.get("this", "const Router *") == "const Router *", t'
check "json: a C function keeps its name as symbol" py '
mn = [x for x in f if x["name"] == "main"]
assert mn and mn[0]["symbol"] == "main", [x["name"] for x in f]'

# HTML: the page as Chromium renders it
"$R" -q --html r.html normal buggy > /dev/null
check "html: section heading with the whole name" \
    grep -Eq '<h2 id="f[12]">[12]. Router::match\(std::basic_string_view&lt;char, std::char_traits&lt;char&gt; &gt;\) const</h2>' r.html
check "html: the linkage name in the section" grep -q '<code class="symbol">_ZNK6Router5matchESt17basic_string_viewIcSt11char_traitsIcEE</code>' r.html
CHROME=$(command -v chromium || command -v chromium-browser)
if [ -n "$CHROME" ]; then
    chrome() { timeout 60 "$CHROME" --headless --no-sandbox --disable-gpu \
        --disable-background-networking --disable-component-update --disable-sync \
        --no-first-run --user-data-dir="$(mktemp -d "$TMP/prof.XXXX")" "$@" 2>chrome.err; }
    chrome --dump-dom "file://$TMP/r.html" > dom.html
    check "chromium: the ranked table's entry is Router::match(...), whole in its title" \
        grep -Eq '<td><a href="#f[12]" title="Router::match\(std::basic_string_view&lt;char, std::char_traits&lt;char&gt; &gt;\) const">Router::match\(\.\.\.\)</a>' dom.html
    check "chromium: no mangled name in the rendered table" \
        bash -c "! sed -n '/<table id=\"ranking\"/,/<\/table>/p' dom.html | grep -q '>_Z'"
    chrome --screenshot="$TMP/shot.png" --window-size=1200,900 "file://$TMP/r.html" >/dev/null
    check "chromium: screenshot rendered" [ -s shot.png ]
    [ -n "${KEEP_SHOT:-}" ] && cp shot.png "$KEEP_SHOT"
else
    not_ok "chromium not installed (install-deps.sh)"
fi

# --no-demangle: linkage names everywhere, as gprof --no-demangle
"$R" -q -v --no-demangle normal buggy > m.txt
check "--no-demangle: the table shows the linkage name (cut to its column)" \
    bash -c "awk '\$1 ~ /^[12]$/ && NF >= 7 { print \$NF }' m.txt | grep -q '^_ZNK6Router5match~$'"
check "--no-demangle: details too" grep -q '^\[[12]\] _ZNK6Router5matchESt17basic_string_viewIcSt11char_traitsIcEE:' m.txt
"$R" -q --no-demangle --json normal buggy > m.json
check "--no-demangle: JSON name = symbol = linkage name" python3 -c "
import json; fs = json.load(open('m.json'))['functions']
m = [x for x in fs[:2] if x['symbol'].startswith('_ZNK6Router5match')][0]
assert m['name'] == m['symbol'] == '_ZNK6Router5matchESt17basic_string_viewIcSt11char_traitsIcEE', m['name']"

# --contexts on runs with stack samples: paths of readable names, the JSON's
# name and symbol as in the ranking
VPROF_STACKS=8 VPROF_OUT=sn ./app normal > /dev/null && VPROF_STACKS=8 VPROF_OUT=sb ./app buggy > /dev/null ||
    not_ok "runs with VPROF_STACKS=8"
"$R" --contexts sn sb > c.txt 2> c.err
check "--contexts: the hot path names Router::match(...) then Route::accepts(...), no mangled name" \
    bash -c "tr -s ' \n' ' ' < c.txt | grep -q 'Router::match(...) ([0-9.]*) > Route::accepts(...)' && ! grep -q '_Z' c.txt"
"$R" --contexts --json sn sb > c.json 2>> c.err
check "--contexts --json: functions carry name and linkage symbol" python3 -c "
import json; fs = [f for p in json.load(open('c.json'))['paths'] for f in p['functions']]
m = [f for f in fs if f.get('symbol') == '_ZNK6Router5matchESt17basic_string_viewIcSt11char_traitsIcEE']
assert m and m[0]['name'] == 'Router::match(std::basic_string_view<char, std::char_traits<char> >) const', m[:1]
assert not any(f['name'].startswith('_Z') for f in fs)"
"$R" --contexts --no-demangle sn sb > cm.txt 2>> c.err
check "--contexts --no-demangle: linkage names" \
    bash -c "grep -q '_ZNK6Router5match' cm.txt && ! grep -q 'Router::match' cm.txt"

# latency: a class method in the latency section, --timeline and --trace
if [ -e "$VPROF_LIB/vprof-latency.so" ]; then
    cat > server.cc <<'CXX'
#include <cstdlib>
#include <time.h>
#include "vprof_latency.h"
namespace net {
class Server {
public:
    explicit Server(long work) : work_(work) {}
    long handle(int id);
private:
    long work_;
};
volatile long sink;
long Server::handle(int id)
{
    struct timespec ts = {0, 300000};
    nanosleep(&ts, nullptr);                    // a blocking call
    for (long i = 0; i < work_; i++) sink += i ^ id;
    return sink;
}
}
int main(int argc, char **argv)
{
    net::Server s(argc > 1 ? std::atol(argv[1]) : 100000);
    for (int id = 1; id <= 30; id++) {
        vprof_req_start(id);
        s.handle(id);
        vprof_req_end(id);
    }
    return 0;
}
CXX
    "$CXX" --latency -O0 -g -I"$VPROF_ROOT/stack-scanner" -o server server.cc > lcc.log 2>&1 ||
        { cat lcc.log; not_ok "vprof-c++ --latency builds the server"; finish; }
    VPROF_OUT=ln VPROF_LATENCY=1 ./server 200000 && VPROF_OUT=lb VPROF_LATENCY=1 ./server 2000000 ||
        { not_ok "latency runs"; finish; }
    "$R" -q ln lb > l.txt
    check "latency section: the method named, abbreviated to its column" \
        bash -c "sed -n '/^Latency/,\$p' l.txt | grep -Eq '^ *[0-9]+ (net::Server::handle|…::Server::handle) '"
    "$R" -q --timeline 7 ln lb > tl.txt
    check "--timeline: the call is named net::Server::handle(int)" grep -q 'net::Server::handle(int)' tl.txt
    check "--timeline: the blocking call's function too" grep -q 'syscall [0-9]* in net::Server::handle(int)' tl.txt
    "$R" -q --trace tr.json ln lb > /dev/null
    check "--trace: events named net::Server::handle(int)" python3 -c "
import json; t = json.load(open('tr.json'))['traceEvents']
assert any(e.get('name') == 'net::Server::handle(int)' for e in t)
assert not any(e.get('name', '').startswith('_Z') for e in t)"
    "$R" --variance lb > v.txt 2> v.err
    check "--variance: the tree names net::Server::handle(int), no mangled name" \
        bash -c "grep -Eq '%.*  net::Server::handle\(int\)( |\$)' v.txt && ! grep -q '_Z' v.txt"
    "$R" --variance --no-demangle lb > vm.txt 2>> v.err
    check "--variance --no-demangle: linkage names" \
        bash -c "grep -q '_ZN3net6Server6handleEi' vm.txt && ! grep -q 'net::Server' vm.txt"
    "$R" --waits --no-demangle lb > wm.txt 2>> v.err
    check "--waits accepts --no-demangle" test $? -eq 0
    "$R" -q --json ln lb > l.json
    check "json latency: call sites name the caller and its symbol" python3 -c "
import json; f = json.load(open('l.json'))['functions']
h = [x for x in f if x['symbol'] == '_ZN3net6Server6handleEi'][0]
s = h['latency']['sites'][0]
assert h['name'] == 'net::Server::handle(int)' and s['caller'] == 'main' and s['caller_symbol'] == 'main', s"
else
    not_ok "vprof-latency.so not built"
fi
# the runner shows a failing script's last 15 lines: make them the ranking
[ "$_n_fail" -gt 0 ] && { echo "# r.txt, top of the table:"; sed -n 5,15p r.txt; grep -m1 -A2 'this->max_scan_ (std' r.txt; }
finish
