#!/usr/bin/env python3
"""The corpus's regression guard: compares the median vprof rank of every
case in a results JSON of run_bugs.py (LATEST) with a committed baseline
(BASELINE) and fails when any case lost more than --max-loss places, so a
ranking change cannot quietly trade one case for another. Gains are
printed too. A root cause the tool does not rank (NR) counts as one place
below the last function ranked in that run; a case that failed ("err") in
LATEST counts as lost; cases present on one side only are listed, not
judged.

Usage: compare_results.py [--max-loss N] [--tool vprof] BASELINE LATEST
Exit status: 0 no case lost more than N places, 1 some did, 2 bad input."""
import argparse
import json
import sys


def load(path):
    try:
        with open(path) as f:
            doc = json.load(f)
        cases = doc["cases"]
        if not isinstance(cases, list):
            raise ValueError("'cases' is not a list")
        return doc, {c["case"]: c for c in cases}
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise SystemExit("compare_results.py: %s: not a run_bugs.py results file (%s)" % (path, e))


def effective_rank(case, tool):
    """(rank used for the comparison, text shown); None when unusable."""
    t = (case.get("tools") or {}).get(tool)
    if t is None:
        return None, "n/a"
    if "error" in t:
        return None, "err"
    if t.get("rank"):
        return t["rank"], str(t["rank"])
    return (t.get("ranked") or 0) + 1, "NR"


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--max-loss", type=int, default=2)
    ap.add_argument("--tool", default="vprof")
    ap.add_argument("baseline")
    ap.add_argument("latest")
    a = ap.parse_args(argv)
    bdoc, base = load(a.baseline)
    ldoc, latest = load(a.latest)
    print("baseline: %s (vprof %s); latest: %s (vprof %s)" % (
        bdoc.get("generated"), bdoc.get("vprof_commit"), ldoc.get("generated"),
        ldoc.get("vprof_commit")))
    lost, gained, same = [], [], 0
    for name in sorted(set(base) & set(latest)):
        r0, s0 = effective_rank(base[name], a.tool)
        r1, s1 = effective_rank(latest[name], a.tool)
        if r0 is None:
            print("  %-30s baseline %s, latest %s: not compared" % (name, s0, s1))
            continue
        if r1 is None:
            lost.append((name, s0, s1, None))
            continue
        d = r1 - r0
        if d > 0:
            lost.append((name, s0, s1, d))
        elif d < 0:
            gained.append((name, s0, s1, -d))
        else:
            same += 1
    for name, s0, s1, d in gained:
        print("  gain  %-30s %s -> %s (+%d)" % (name, s0, s1, d))
    failing = 0
    for name, s0, s1, d in lost:
        bad = d is None or d > a.max_loss
        failing += bad
        print("  %s  %-30s %s -> %s (%s)" % ("LOSS" if bad else "loss", name, s0, s1,
                                             "failed" if d is None else "-%d" % d))
    for name in sorted(set(latest) - set(base)):
        print("  new   %-30s %s (not in the baseline)" % (name, effective_rank(latest[name], a.tool)[1]))
    for name in sorted(set(base) - set(latest)):
        print("  gone  %-30s (in the baseline only)" % name)
    print("%d cases compared: %d gained, %d lost (%d by more than %d places), %d unchanged"
          % (len(set(base) & set(latest)), len(gained), len(lost), failing, a.max_loss, same))
    return 1 if failing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
