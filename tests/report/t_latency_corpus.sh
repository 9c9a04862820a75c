#!/bin/bash
# The corpus's lock-contention case (bench/bugs/memcached_lru_crawler) with
# latency events, as its README describes: built by vprof-cc --latency with
# the corpus's flags, run with its case.conf arguments and VPROF_LATENCY=1.
# vprof must rank the holder's function (the root cause lru_crawler_crawl)
# and the waiting path (item_get or process_get_command) in its top 5, name
# the holder of the lock waits at item_get, and show the holder in the
# timeline of a request that waited.
source "$(dirname "$0")/../lib.sh"
R=$VPROF_BIN/vprof-report CC=$VPROF_BIN/vprof-cc
CASE=$VPROF_ROOT/bench/bugs/memcached_lru_crawler
[ -x "$CC" ] && [ -e "$VPROF_LIB/libvprof.so" ] && [ -e "$VPROF_LIB/vprof-latency.so" ] ||
    skip "vprof-cc, libvprof or the latency pass not built"
[ -f "$CASE/case.conf" ] || skip "corpus case memcached_lru_crawler absent"
eval "$(grep -E '^(normal|buggy)_args=' "$CASE/case.conf")"
cd "$TMP"
"$CC" --latency -O2 -g -fno-inline -pthread -o prog "$CASE"/*.c > cc.log 2>&1 ||
    { cat cc.log; echo "not ok - vprof-cc --latency builds the case"; exit 1; }
VPROF_OUT=n VPROF_LATENCY=1 ./prog $normal_args > /dev/null || { echo "not ok - normal run"; exit 1; }
VPROF_OUT=b VPROF_LATENCY=1 ./prog $buggy_args > /dev/null || { echo "not ok - buggy run"; exit 1; }
"$R" -q --json --top 0 n b > out.json
check "corpus lock: vprof-report exit 0" [ $? -eq 0 ]
py() { /usr/bin/python3 -c "import json; d = json.load(open('out.json')); r = [x['name'] for x in d['functions']]; $1"; }
check "corpus lock: root cause (the holder) lru_crawler_crawl in the top 5" py '
assert "lru_crawler_crawl" in r[:5], r[:8]'
check "corpus lock: the waiting path (item_get or process_get_command) in the top 5" py '
assert {"item_get", "process_get_command"} & set(r[:5]), r[:8]'
check "corpus lock: long waits at item_get, holder lru_crawler_crawl or crawler_check_item" py '
w = [x for x in d["latency"]["lock_waits"] if x["function"] == "item_get"]
# how many short waits the normal run has depends on scheduling (0-6 seen);
# what the bug changes is their length
n, b = w[0]["normal"] if w else None, w[0]["buggy"] if w else None
assert w and b["count"] >= 10, w
assert not n or n["count"] == 0 or b["p50_us"] >= 10 * n["p50_us"], w
assert w[0]["holders"][0]["function"] in ("lru_crawler_crawl", "crawler_check_item"), w[0]["holders"]'
found=
for id in $(seq 1 60); do
    "$R" -q --timeline "$id" n b > tl.txt 2>/dev/null || continue
    if grep -q 'wait for mutex' tl.txt; then found=$id; break; fi
done
check "corpus lock: a request's timeline has a mutex wait" [ -n "$found" ]
check "corpus lock: ... with the holder in lru_crawler_crawl" grep -Eq 'holder .* lru_crawler_crawl$' tl.txt
finish
