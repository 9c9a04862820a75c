#!/usr/bin/env python3
"""Prints the table of the real-application defects from the JSON files that
bench/apps/run.py writes (results/apps-APP.json): per defect the slowdown,
whether the outputs are identical, the median rank (range) of the root
cause per tool and the pattern vprof reports for it, plus a summary line
per tool.

usage: apps_result.py [--markdown] [--why] results/apps-*.json

--why adds, for every defect where vprof does not rank the root cause first,
the functions ranked above it in the median run, with their calibrated and
raw cost, discount, discounter and deciding variable -- the evidence for
explaining the rank."""
import argparse
import json
import sys

TOOLS = (("vprof", "vprof"), ("vprof_all", "vprof all"), ("gprof", "gprof"), ("perf", "perf self"),
         ("perf_children", "perf children"))


def rank_cell(t):
    """'3 (2-5) of 40', 'NR of 12', '640 of 972, cost 0' (vprof: the root
    cause has no cost in the median run), 'err', 'n/a' (None), '-' (missing)."""
    if t is None:
        return "n/a"
    if "error" in t:
        return "err"
    cell = str(t["rank"]) if t.get("rank") else "NR"
    ranks = [r for r in t.get("ranks") or [] if r != "err"]
    if len(set(ranks)) > 1:
        nums = [r for r in ranks if r]
        lo = min(nums) if nums else "NR"
        hi = "NR" if None in ranks else max(nums)
        cell += " (%s-%s)" % (lo, hi)
    cell = "%s of %d" % (cell, t.get("ranked", 0))
    if t.get("rank") and t.get("calibrated_cost") == 0:
        cell += ", cost 0"        # not sampled: its place among zero-cost functions is arbitrary
    return cell


def absent_tools(c):
    """Tools whose build has no symbol of the root cause (the compiler folded
    it away): 'absent' in the table, not a rank."""
    return c.get("root_cause_absent") or []


def rows(cases, tools):
    out = []
    for c in cases:
        if "error" in c:
            out.append((c["case"], "err", "", "", "", "", "") + ("err",) * len(tools) + ("",))
            continue
        s = c["slowdown"]
        same = c["output_identical"]
        out.append((c["case"], c["shape"].replace("_", "-"), c["pattern"].replace("_", " "),
                    c["root_cause"], "yes" if same["normal"] and same["buggy"] else
                    "NO (normal %s, buggy %s)" % (same["normal"], same["buggy"]),
                    "%.2f" % s["cpu_ratio"], "%.2f" % s["wall_ratio"])
                   + tuple(("absent" if {"perf_children": "perf"}.get(k, k) in absent_tools(c) else
                            rank_cell(c["tools"].get(k))) if k in c["tools"] else "-"
                           for k, _ in tools)
                   + (vprof_pattern(c["tools"].get("vprof")),))
    return out


def header(tools):
    return (("defect", "shape", "pattern", "root cause", "output same", "CPU x", "wall x")
            + tuple(h for _, h in tools) + ("vprof pattern",))


def tools_run(cases):
    """The tools of TOOLS that some case was run with (a column per tool)."""
    return [t for t in TOOLS if any(t[0] in c.get("tools", {}) for c in cases)]


def vprof_pattern(t):
    """The pattern vprof reports for the root cause in the median run, with
    a mark when it is not the defect's ('-': not ranked or not run)."""
    if not t or "error" in t or not t.get("rank"):
        return "-"
    p = str(t.get("pattern") or "none").replace("_", " ")
    return p + ("" if t.get("pattern_ok") in (True, None) else " (wrong)")


def summary(cases):
    lines = []
    for key, name in TOOLS:
        ranks = [c["tools"][key].get("rank") for c in cases
                 if "error" not in c and c["tools"].get(key) and "error" not in c["tools"][key]]
        if ranks:
            lines.append("%-9s first in %d/%d, top-5 in %d/%d, top-10 in %d/%d" % (
                name, sum(r == 1 for r in ranks), len(ranks),
                sum(1 for r in ranks if r and r <= 5), len(ranks),
                sum(1 for r in ranks if r and r <= 10), len(ranks)))
    return lines


def why(cases):
    out = []
    for c in cases:
        for key in ("vprof", "vprof_all"):
            v = c.get("tools", {}).get(key)
            if not v or "error" in v or v.get("rank") == 1:
                continue
            out.append("%s, %s: root cause %s rank %s of %s (runs %s); value samples %s"
                       % (c["case"], key, c["root_cause"], v.get("rank") or "NR",
                          v.get("ranked"), v.get("ranks"), v.get("samples")))
            if v.get("rank"):
                out.append("    root cause: calibrated %s raw %s (pc %s, var %s, normal %s) "
                           "discount %s by %s on %s (%s), pattern %s" % (
                               v.get("calibrated_cost"), v.get("raw_cost"), v.get("pc_cost"),
                               v.get("var_cost"), v.get("normal_raw_cost"), v.get("discount"),
                               v.get("discounter"), v.get("variable"), v.get("dimension"),
                               v.get("pattern")))
            for f in v.get("top5") or []:
                if v.get("rank") and f["rank"] >= v["rank"]:
                    break
                out.append("    %2d %-40s calibrated %-7s raw %-7s (pc %s, var %s, normal %s) "
                           "discount %s by %s on %s (%s)" % (
                               f["rank"], f["name"][:40], f.get("calibrated_cost"),
                               f.get("raw_cost"), f.get("pc_cost"), f.get("var_cost"),
                               f.get("normal_raw_cost"), f.get("discount"), f.get("discounter"),
                               f.get("variable"), f.get("dimension")))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--why", action="store_true")
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    cases, meta = [], []
    for path in a.files:
        try:
            with open(path) as f:
                doc = json.load(f)
            cases += doc["cases"]
            meta.append("%s: %s, commit %s, repeat %s" % (path, doc["generated"], doc["commit"],
                                                         doc["repeat"]))
        except (OSError, ValueError, KeyError) as e:
            print("apps_result.py: %s: %s" % (path, e), file=sys.stderr)
            return 1
    tools = tools_run(cases)
    table = rows(cases, tools)
    HDR = header(tools)
    if a.markdown:
        print("| " + " | ".join(HDR) + " |\n|" + "---|" * len(HDR))
        for r in table:
            print("| " + " | ".join(str(x) for x in r) + " |")
    else:
        widths = [max(len(str(x[i])) for x in table + [HDR]) for i in range(len(HDR))]
        for r in [HDR, tuple("-" * w for w in widths)] + table:
            print("  ".join(str(x).ljust(w) for x, w in zip(r, widths)).rstrip())
    print()
    for line in summary(cases):
        print(("    " if a.markdown else "") + line)
    print()
    for line in meta:
        print(("    " if a.markdown else "") + line)
    if a.why:
        print()
        for line in why(cases):
            print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
