#!/bin/bash
# An event loop keeps many requests open on one thread at once: --trace
# and --timeline see every one of them. The report kept 64 open requests
# per thread and silently dropped the rest (latency.c, vpr_lat_requests).
source "$(dirname "$0")/../lib.sh"
R=$VPROF_BIN/vprof-report CC=$VPROF_BIN/vprof-cc
[ -x "$CC" ] && [ -e "$VPROF_LIB/libvprof.so" ] || skip "vprof-cc or libvprof not built"
unset LD_PRELOAD LD_LIBRARY_PATH
export XDG_CACHE_HOME=$TMP/cache
cd "$TMP"
cat > loop.c <<'C'
#include <stdlib.h>
#include <time.h>
#include "vprof.h"
/* one thread accepts 100 requests, then works on and answers all of them */
int main(void)
{
    for (unsigned long id = 1; id <= 100; id++) vprof_req_start(id);
    struct timespec ms = {0, 1000000};
    for (unsigned long id = 1; id <= 100; id++) {
        nanosleep(&ms, NULL);
        vprof_req_end(id);
    }
    return 0;
}
C
"$CC" --latency -O0 -g -I"$VPROF_ROOT/libvprof/include" -I"$VPROF_ROOT/stack-scanner" -o loop loop.c > cc.log 2>&1 ||
    { cat cc.log; echo "not ok - vprof-cc --latency"; exit 1; }
VPROF_OUT=n VPROF_LATENCY=1 ./loop && VPROF_OUT=b VPROF_LATENCY=1 ./loop ||
    { echo "not ok - runs"; exit 1; }
"$R" -q --trace tr.json n b > /dev/null
check "--trace: all 100 requests open at once on one thread, in both runs" python3 -c "
import json
ev = json.load(open('tr.json'))['traceEvents']
r = [e for e in ev if e.get('ph') == 'X' and e.get('cat') == 'request']
assert len(r) == 200, len(r)"
"$R" -q --timeline 100 n b > tl.txt
check "--timeline: the 100th open request has a timeline" test -s tl.txt
finish
