#!/usr/bin/env python3
"""Collects the per-run ranks of a real-application case (bench/apps/*/run.sh)
into bench/results/apps-NAME.json and prints the median rank per tool.

usage: apps_result.py OUT.json --app TEXT --root-cause FN --fix TEXT
           --pattern P --vprof "RANK N TOP"... --gprof ... --perf ...
Each run is the output of rank_tool.py ("RANK N TOP", RANK may be NR)."""
import argparse
import json
import os
import sys
import time


def parse_run(s):
    p = s.split()
    if len(p) != 3:
        raise ValueError("bad run result '%s' (want 'RANK N TOP')" % s)
    return {"rank": None if p[0] == "NR" else int(p[0]), "ranked": int(p[1]), "top": p[2]}


def summarize(runs):
    if not runs:
        return None
    key = lambda r: r["rank"] if r["rank"] else float("inf")  # noqa: E731
    med = dict(sorted(runs, key=key)[(len(runs) - 1) // 2])
    med["ranks"] = [r["rank"] for r in runs]
    return med


def cell(t):
    if t is None:
        return "n/a"
    c = str(t["rank"]) if t["rank"] else "NR"
    if len(set(t["ranks"])) > 1:
        c += " (runs: %s)" % ", ".join(str(x) if x else "NR" for x in t["ranks"])
    return "%s of %d; first %s" % (c, t["ranked"], t["top"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    for k in ("app", "root-cause", "fix", "pattern"):
        ap.add_argument("--" + k, required=True)
    for t in ("vprof", "gprof", "perf"):
        ap.add_argument("--" + t, nargs="*", default=[])
    a = ap.parse_args()
    try:
        tools = {t: summarize([parse_run(s) for s in getattr(a, t)])
                 for t in ("vprof", "gprof", "perf")}
    except ValueError as e:
        print("apps_result.py: %s" % e, file=sys.stderr)
        return 1
    print("\n%-6s median rank of %s" % ("tool", a.root_cause))
    for t, v in tools.items():
        print("%-6s %s" % (t, cell(v)))
    doc = {"app": a.app, "root_cause": a.root_cause, "fix": a.fix, "pattern": a.pattern,
           "generated": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
           "nproc": os.cpu_count(), "runs": max(len(getattr(a, t)) for t in tools)}
    doc.update(tools)
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with open(a.out, "w") as f:
        json.dump(doc, f, indent=1)
    print("wrote " + a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
