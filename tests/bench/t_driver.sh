#!/bin/bash
# The Table-3 driver (bench/tools/run_bugs.py) on one case with gprof only:
# it writes JSON and Markdown with the case's rank, marks tools that were
# not requested with "-", and rejects an unknown tool.
source "$(dirname "$0")/../lib.sh"
command -v gprof >/dev/null || skip "binutils gprof not installed"
T=$VPROF_ROOT/bench/tools
python3 "$T/run_bugs.py" --cases mdev21826_recovery --tools gprof --repeat 2 \
    --work "$TMP/w" --out "$TMP/r.json" > "$TMP/out.txt" 2> "$TMP/err.txt"
check "run_bugs.py exits 0" test $? -eq 0
check "JSON has the case with a numeric gprof rank and both runs" python3 -c '
import json, sys
d = json.load(open(sys.argv[1])); c = d["cases"][0]; g = c["tools"]["gprof"]
assert c["case"] == "mdev21826_recovery" and c["root_cause"] == "recv_group_scan_log_recs"
assert isinstance(g["rank"], int) and g["rank"] > 1 and len(g["ranks"]) == 2, g
assert "vprof" not in c["tools"] and d["repeat"] == 2 and d["machine"]["nproc"]' "$TMP/r.json"
check "Markdown table row present" grep -q '^| mdev21826_recovery | MDEV-21826 | wrong constraint | - |' "$TMP/r.md"
check "text table printed" grep -q '^mdev21826_recovery ' "$TMP/out.txt"
python3 "$T/run_bugs.py" --tools bogus --out "$TMP/x.json" > /dev/null 2> "$TMP/err2.txt"
rc=$?
[ $rc -ne 0 ] && grep -q "unknown tool 'bogus'" "$TMP/err2.txt" && ok "unknown tool rejected" \
    || not_ok "unknown tool: rc=$rc $(cat "$TMP/err2.txt")"
finish
