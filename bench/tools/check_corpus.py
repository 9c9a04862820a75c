#!/usr/bin/env python3
"""CI check of the bug corpus with plain gcc -pg and binutils gprof (no vprof
needed). For each case it prints TAP-style lines:
  - the case.conf is complete and its fix line carries the FIX marker,
  - the program builds warning-free with gcc -Wall -Wextra,
  - root-cause and cost functions are in the symbol table (nm),
  - both workloads run and exit 0,
  - gprof does NOT rank the root cause first on the buggy run (the corpus's
    defining property),
  - the cost function's call count grows by at least min_call_ratio from the
    normal to the buggy run (call counts, not wall time, so it is stable).
Usage: check_corpus.py WORKDIR [CASE...]"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus  # noqa: E402

failures = 0


def report(ok, name, why=""):
    global failures
    if ok:
        print("ok - %s" % name)
    else:
        failures += 1
        print("not ok - %s%s" % (name, (": " + why) if why else ""))
    sys.stdout.flush()


def check_case(name, work):
    try:
        c = corpus.load_case(name)
    except corpus.CaseError as e:
        report(False, "%s: case.conf" % name, str(e))
        return
    fix_src = os.path.join(c["dir"], c["fix_file"])
    try:
        with open(fix_src) as f:
            lines = f.read().splitlines()
        fix_ok = 0 < c["fix_line"] <= len(lines) and "FIX" in lines[c["fix_line"] - 1]
    except OSError:
        fix_ok = False
    report(fix_ok, "%s: fix %s points at the FIX-marked line" % (name, c["fix"]))

    exe = os.path.join(work, name, "prog")
    try:
        warnings = corpus.build(c, ["gcc", "-pg"], exe)
    except corpus.CaseError as e:
        report(False, "%s: builds with gcc -pg" % name, str(e))
        return
    report(warnings.strip() == "", "%s: builds warning-free with gcc -Wall -Wextra" % name,
           warnings.strip()[:500])

    nm = subprocess.run(["nm", exe], capture_output=True, text=True).stdout
    syms = {corpus.base_name(l.split()[2]) for l in nm.splitlines()
            if len(l.split()) == 3 and l.split()[1] in "Tt"}
    for key in ("root_cause", "cost_function"):
        report(c[key] in syms, "%s: %s %s is in the symbol table" % (name, key, c[key]))

    flats = {}
    for which in ("normal", "buggy"):
        out = os.path.join(work, name, which)
        try:
            corpus.run(c, exe, which, out)
            flats[which] = corpus.gprof_flat(exe, out)
            report(True, "%s: %s workload runs and exits 0" % (name, which))
        except (corpus.CaseError, subprocess.TimeoutExpired) as e:
            report(False, "%s: %s workload runs and exits 0" % (name, which), str(e))
    if len(flats) < 2:
        return
    buggy = flats["buggy"]
    rank = corpus.rank_of(buggy, c["root_cause"])
    report(rank != 1 and bool(buggy),
           "%s: gprof does not rank root cause %s first (rank %s of %d, top %s)"
           % (name, c["root_cause"], rank or "NR", len(buggy),
              buggy[0]["name"] if buggy else "-"))
    calls = {w: next((r["calls"] for r in flats[w] if r["name"] == c["cost_function"]), 0)
             for w in flats}
    ratio = calls["buggy"] / calls["normal"] if calls["normal"] else 0.0
    report(calls["normal"] > 0 and ratio >= c["min_call_ratio"],
           "%s: buggy run calls %s %.1fx as often as normal (%d vs %d, need >= %.1fx)"
           % (name, c["cost_function"], ratio, calls["buggy"], calls["normal"],
              c["min_call_ratio"]))


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    work = sys.argv[1]
    names = sys.argv[2:] or corpus.case_names()
    for n in names:
        check_case(n, work)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
