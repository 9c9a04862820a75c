#!/bin/bash
# The real-application defects (bench/apps) without downloading anything:
# every defect's defect.conf, README and 1-3 line one-file patch are valid;
# the set covers the issue's minimum (8 defects, 4 applications, 2 off the
# hot stack, 1 on it as a control, 1 C++ application); the patch reader rejects a
# 4-line and a two-file patch; apps_result.py prints the median and range of
# a run set, the slowdown, and rejects a broken results file.
source "$(dirname "$0")/../lib.sh"
command -v python3 >/dev/null || skip "python3 not installed"
A=$VPROF_ROOT/bench/apps
check "every defect loads and is valid; the set covers the minimum" python3 - "$A" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import defects
apps = [defects.load_app(n) for n in defects.app_names()]
ds = [defects.load_defect(a, d) for a in apps for d in a["defects"]]
assert len(ds) >= 8, len(ds)
assert len({d["app"] for d in ds}) >= 4
assert sum(d["shape"] == "off_stack" for d in ds) >= 2
assert sum(d["shape"] == "on_stack" for d in ds) >= 1
assert any(a["language"] == "c++" and a["defects"] for a in apps)
for d in ds:
    assert 1 <= d["changed_lines"] <= 3 and d["fix_line"] > 0, d["name"]
    assert d["normal"] != d["buggy"], d["name"]
PY
printf -- '--- a/x.c\n+++ b/x.c\n@@ -1,4 +1,4 @@\n-a\n-b\n-c\n-d\n+A\n+B\n+C\n+D\n' > "$TMP/four.patch"
printf -- '--- a/x.c\n+++ b/x.c\n@@ -1 +1 @@\n-a\n+A\n--- a/y.c\n+++ b/y.c\n@@ -1 +1 @@\n-a\n+A\n' > "$TMP/two.patch"
printf -- '--- a/x.c\n+++ b/x.c\n@@ -10,3 +10,3 @@\n ctx\n-old\n+new\n ctx\n' > "$TMP/one.patch"
check "patch reader: 4 lines and 2 files rejected, fix line of a 1-line patch" python3 - "$A" "$TMP" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import defects
for bad in ("four", "two"):
    try:
        defects.parse_patch("%s/%s.patch" % (sys.argv[2], bad))
        raise SystemExit("%s.patch accepted" % bad)
    except defects.DefectError:
        pass
assert defects.parse_patch(sys.argv[2] + "/one.patch") == ("x.c", 11, 1)
PY
cat > "$TMP/apps-x.json" <<'EOF2'
{"generated": "g", "commit": "c", "repeat": 3, "cases": [
 {"case": "x/d", "shape": "off_stack", "pattern": "scalability", "root_cause": "f",
  "output_identical": {"normal": true, "buggy": true},
  "slowdown": {"cpu_ratio": 2.5, "wall_ratio": 3.0},
  "tools": {"vprof": {"rank": 3, "ranked": 40, "ranks": [3, null, 1], "top5": []},
            "gprof": {"rank": 7, "ranked": 50, "ranks": [7, 7, 7]}, "perf": null}},
 {"case": "x/e", "shape": "off_cpu", "pattern": "wrong_constraint", "root_cause": "g",
  "output_identical": {"normal": true, "buggy": false}, "root_cause_absent": ["vprof"],
  "slowdown": {"cpu_ratio": 1.0, "wall_ratio": 1.5},
  "tools": {"vprof": {"rank": null, "ranked": 30, "ranks": [null, null, null], "top5": []},
            "gprof": {"rank": 2, "ranked": 9, "ranks": [2, 3, 2]}, "perf": null}}]}
EOF2
python3 "$VPROF_ROOT/bench/tools/apps_result.py" --markdown "$TMP/apps-x.json" > "$TMP/table.md"
check "apps_result.py: median, range with NR, slowdown, n/a and missing tools" \
    grep -q '^| x/d | off-stack | scalability | f | yes | 2.50 | 3.00 | 3 (1-NR) of 40 | 7 of 50 | n/a | none |$' "$TMP/table.md"
check "apps_result.py: a root cause the compiler folded away is 'absent', outputs that differ are flagged" \
    grep -q '^| x/e | off-cpu | wrong constraint | g | NO (normal True, buggy False) | 1.00 | 1.50 | absent | 2 (2-3) of 9 | n/a | - |$' "$TMP/table.md"
check "apps_result.py: summary line" grep -q 'vprof  *first in 0/2, top-5 in 1/2' "$TMP/table.md"
echo '{"cases": [' > "$TMP/apps-bad.json"
python3 "$VPROF_ROOT/bench/tools/apps_result.py" "$TMP/apps-bad.json" > /dev/null 2> "$TMP/err.txt"
[ $? -ne 0 ] && grep -q "apps-bad.json" "$TMP/err.txt" && ok "apps_result.py names a broken file" \
    || not_ok "apps_result.py accepted a broken file"
for s in "$A"/*/app.sh; do
    "$s" bogus > /dev/null 2>&1
    [ $? -eq 2 ] || not_ok "$s: unknown subcommand not rejected with 2"
done
ok "app.sh scripts reject an unknown subcommand"
finish
