#!/bin/bash
# Memory does not grow with the number of samples: the peak RSS for a
# 160 MiB values file stays within a few MiB of that for a 16 MiB one
# (bounded reservoirs, pages dropped every 4 MiB while streaming).
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/common.sh"
cd "$TMP"
make_target "$TMP" || { echo "not ok - build target"; exit 1; }
gen bench normal n ./target --bytes $((16 << 20)) --seed 1
gen bench buggy small ./target --bytes $((16 << 20)) --seed 2
gen bench buggy big ./target --bytes $((160 << 20)) --seed 2
# The plain build's RSS: an ASan build's includes the shadow of every page
# it reads, an eighth of the file (and with transparent huge pages on, more).
RP=${VPROF_PLAIN_BIN:-$VPROF_BIN}/vprof-report
rss() {   # peak RSS in KiB of vprof-report on normal vs $1
    /usr/bin/python3 - "$RP" "$1" <<'PY'
import resource, subprocess, sys
subprocess.run([sys.argv[1], "--no-progress", "--json", "n", sys.argv[2]],
               stdout=subprocess.DEVNULL, check=True)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
PY
}
a=$(rss small) && b=$(rss big)
echo "# peak RSS: 16 MiB file ${a} KiB, 160 MiB file ${b} KiB"
check "analysis of both sizes succeeds" [ -n "$a" ] && [ -n "$b" ]
check "peak RSS grows by less than 12 MiB for 10x the samples" [ $((b - a)) -lt $((12 << 10)) ]
"$R" --json n big > big.json
check "all 160 MiB of samples were read" /usr/bin/python3 -c "
import json; n = json.load(open('big.json'))['buggy']['value_samples']; assert (160 << 20) // 40 - 64 <= n <= (160 << 20) // 40, n"
finish
