#!/bin/bash
# The Table-3 driver (bench/tools/run_bugs.py) on one case with gprof only:
# it writes JSON and Markdown with the case's rank, the fix check and the
# summaries, marks tools that were not requested with "-", and rejects an
# unknown tool; COZ's impact computation on a known profile; the regression
# guard (compare_results.py) passes small losses, fails large ones, counts
# NR and failed runs.
source "$(dirname "$0")/../lib.sh"
command -v gprof >/dev/null || skip "binutils gprof not installed"
T=$VPROF_ROOT/bench/tools
python3 "$T/run_bugs.py" --cases mdev21826_recovery --tools gprof --repeat 2 --jobs 1 \
    --work "$TMP/w" --out "$TMP/r.json" > "$TMP/out.txt" 2> "$TMP/err.txt"
check "run_bugs.py exits 0" test $? -eq 0
check "JSON has the case with a numeric gprof rank, both runs, the fix check" python3 -c '
import json, sys
d = json.load(open(sys.argv[1])); c = d["cases"][0]; g = c["tools"]["gprof"]
assert c["case"] == "mdev21826_recovery" and c["root_cause"] == "recv_group_scan_log_recs"
assert isinstance(g["rank"], int) and g["rank"] > 1 and len(g["ranks"]) == 2, g
assert "vprof" not in c["tools"] and d["repeat"] == 2 and d["machine"]["nproc"]
f = c["fix_check"]
assert f["ok"] and f["fixed"] <= 2 * f["normal"] and f["buggy"] > 100 * f["normal"], f
assert d["vprof_commit"] and d["summary"][0].startswith("gprof") and "caller" in d["shapes"]' "$TMP/r.json"
check "Markdown table row present" grep -q '^| mdev21826_recovery | wrong constraint | caller | - |' "$TMP/r.md"
check "Markdown per-shape table present" grep -q '^| caller | 1 |' "$TMP/r.md"
check "text table printed" grep -q '^mdev21826_recovery ' "$TMP/out.txt"
python3 "$T/run_bugs.py" --tools bogus --out "$TMP/x.json" > /dev/null 2> "$TMP/err2.txt"
rc=$?
[ $rc -ne 0 ] && grep -q "unknown tool 'bogus'" "$TMP/err2.txt" && ok "unknown tool rejected" \
    || not_ok "unknown tool: rc=$rc $(cat "$TMP/err2.txt")"

check "COZ impacts: a line whose speedup speeds the program up ranks, one with too few points does not" python3 -c '
import sys; sys.path.insert(0, sys.argv[1]); import run_bugs
p = "\n".join([
  "experiment\tselected=/a/m.c:10\tspeedup=0.00\tduration=1000\tselected-samples=5",
  "throughput-point\tname=q\tdelta=100",
  "experiment\tselected=/a/m.c:10\tspeedup=0.50\tduration=1000\tselected-samples=5",
  "throughput-point\tname=q\tdelta=150",
  "experiment\tselected=/a/m.c:10\tspeedup=1.00\tduration=1000\tselected-samples=5",
  "throughput-point\tname=q\tdelta=200",
  "experiment\tselected=/a/m.c:20\tspeedup=0.00\tduration=1000\tselected-samples=5",
  "throughput-point\tname=q\tdelta=100"])
imp = run_bugs.coz_line_impacts(p)
assert set(imp) == {"/a/m.c:10"} and 0.2 < imp["/a/m.c:10"] < 0.5, imp' "$T"

check "contexts columns: p_min and f_min per case, summaries of both sources" python3 -c '
import sys; sys.path.insert(0, sys.argv[1]); import run_bugs
res = [{"case": "a", "tools": {"contexts": {"rank": 1, "f_min": 0, "ranks": [1, 1]},
                               "contexts_vprof": {"rank": 3, "f_min": 2, "ranks": [2, 3, 4]}}},
       {"case": "b", "tools": {"contexts": {"rank": None, "ranks": [None]},
                               "contexts_vprof": {"error": "x"}}}]
hdr, rows = run_bugs.contexts_table(res)
assert hdr == ["case", "p_min (perf record -g)", "f_min", "p_min (vprof\x27s stacks)", "f_min"], hdr
assert rows == [["a", "1", "0", "3 (2-4)", "2"], ["b", "NR", "-", "err", "-"]], rows
s = run_bugs.contexts_summary(res)
assert s[0].startswith("perf record -g  p_min 1 in 1/2") and "f_min 0 in 1 of the 1 found" in s[0], s
assert s[1].startswith("vprof\x27s stacks  p_min 1 in 0/1, <= 5 in 1/1"), s' "$T"

mk() {  # mk FILE CASE:RANK[:RANKED] ...  (RANK NR or err)
    python3 - "$@" <<'PY'
import json, sys
cases = []
for spec in sys.argv[2:]:
    name, rank, *ranked = spec.split(":")
    t = {"error": "x"} if rank == "err" else {"rank": None if rank == "NR" else int(rank),
                                              "ranked": int(ranked[0]) if ranked else 20}
    cases.append({"case": name, "tools": {"vprof": t}})
json.dump({"generated": "now", "vprof_commit": "abc", "cases": cases}, open(sys.argv[1], "w"))
PY
}
mk "$TMP/b.json" a:3 b:5 c:1 d:2:10 e:4
mk "$TMP/l.json" a:5 b:2 c:1 d:NR:10 f:1
python3 "$T/compare_results.py" "$TMP/b.json" "$TMP/l.json" > "$TMP/cmp1.txt"
rc=$?
[ $rc -eq 1 ] && grep -q "loss  a .*3 -> 5 (-2)" "$TMP/cmp1.txt" && grep -q "gain  b .*5 -> 2 (+3)" "$TMP/cmp1.txt" \
    && grep -q "LOSS  d .*2 -> NR (-9)" "$TMP/cmp1.txt" && grep -q "new   f" "$TMP/cmp1.txt" \
    && grep -q "gone  e" "$TMP/cmp1.txt" \
    && ok "guard: a 2-place loss passes, NR after 10 ranked is 9 places lost and fails, gains/new/gone listed" \
    || not_ok "guard output (rc=$rc): $(cat "$TMP/cmp1.txt")"
mk "$TMP/l2.json" a:5 b:2 c:1 d:3:10
python3 "$T/compare_results.py" "$TMP/b.json" "$TMP/l2.json" > "$TMP/cmp2.txt"
check "guard: losses of at most 2 places exit 0" test $? -eq 0
mk "$TMP/l3.json" a:3 b:5 c:err d:2
python3 "$T/compare_results.py" "$TMP/b.json" "$TMP/l3.json" > "$TMP/cmp3.txt"
[ $? -eq 1 ] && grep -q "LOSS  c .*1 -> err (failed)" "$TMP/cmp3.txt" \
    && ok "guard: a failed run counts as lost" || not_ok "guard on err: $(cat "$TMP/cmp3.txt")"
echo '{"cases": 3}' > "$TMP/bad.json"
python3 "$T/compare_results.py" "$TMP/b.json" "$TMP/bad.json" > /dev/null 2> "$TMP/cmp4.txt"
[ $? -ne 0 ] && grep -q "bad.json: not a run_bugs.py results file" "$TMP/cmp4.txt" \
    && ok "guard rejects a malformed results file, naming it" || not_ok "guard on bad input: $(cat "$TMP/cmp4.txt")"

finish
