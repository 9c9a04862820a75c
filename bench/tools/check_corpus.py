#!/usr/bin/env python3
"""CI check of the bug corpus with plain gcc -pg and binutils gprof (no vprof
needed). For each case it prints TAP-style lines:
  - the case.conf is complete and its fix line carries the FIX marker (and
    the file has the #ifdef VPROF_CASE_FIX variant),
  - the program builds warning-free with gcc -Wall -Wextra, buggy and fixed,
  - root-cause and cost functions are in the symbol table (nm),
  - both workloads run and exit 0,
  - gprof does NOT rank the root cause first on the buggy run (the corpus's
    defining property),
  - the cost function's call count grows by at least min_call_ratio from the
    normal to the buggy run (call counts, not wall time, so it is stable),
  - the fix is real: the fixed build on the buggy workload calls the cost
    function at most fix_max_ratio times as often as the normal run, and
    prints the same as the buggy build.
Cases run in parallel (-j, default 2); output is printed per case, in order.

With --verified FILE (bench/bugs/VERIFIED, as CI runs it), a case whose files
(and bench/bugs/common/) hash to the digest FILE records for it gets only the
case.conf and FIX-marker checks: its builds, runs and gprof checks passed
when the digest was recorded, on the same sources, and CI time goes to the
cases that are new or changed. --record FILE runs every check and writes
FILE with the digests of the cases that passed all of them.
Usage: check_corpus.py [-j N] [--verified FILE | --record FILE] WORKDIR [CASE...]"""
import argparse
import concurrent.futures
import hashlib
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus  # noqa: E402


def case_digest(name):
    """sha256 over the case directory's files and bench/bugs/common/ (names
    and contents, sorted): what a verified check depends on."""
    h = hashlib.sha256()
    for top in (os.path.join(corpus.BUGS, name), os.path.join(corpus.BUGS, "common")):
        for d, subdirs, files in sorted(os.walk(top)):
            subdirs.sort()
            for f in sorted(files):
                path = os.path.join(d, f)
                h.update(os.path.relpath(path, corpus.BUGS).encode() + b"\0")
                with open(path, "rb") as fh:
                    h.update(fh.read())
                h.update(b"\0")
    return h.hexdigest()


def read_verified(path):
    """{case: digest} from a manifest written by --record ('#' comments)."""
    out = {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.split("#", 1)[0].split()
            if not line:
                continue
            if len(line) != 2 or len(line[1]) != 64:
                raise SystemExit("%s:%d: expected 'CASE SHA256'" % (path, n))
            out[line[0]] = line[1]
    return out


def check_case(name, work, verified=None):
    """Returns the TAP lines of one case as (ok, text) pairs; with verified
    (the recorded digest matches), only the checks that read no build."""
    out = []

    def report(ok, what, why=""):
        out.append((ok, "%s: %s%s" % (name, what, (": " + why) if (why and not ok) else "")))

    try:
        c = corpus.load_case(name)
    except corpus.CaseError as e:
        report(False, "case.conf", str(e))
        return out
    ok, why = corpus.fix_marker_ok(c)
    report(ok, "fix %s points at the FIX-marked line of a %s variant" % (c["fix"], corpus.FIX_MACRO), why)
    if verified:
        report(True, "builds, runs, gprof rank, call ratio and fix verified on these "
               "sources (digest %s... in the manifest)" % verified[:12])
        return out

    work = os.path.join(work, name)
    exe = os.path.join(work, "gprof", "prog")
    cc = corpus.compiler(c, "gcc") + ["-pg"]
    try:
        warnings = corpus.build(c, cc, exe)
        fwarnings = corpus.build(c, cc, os.path.join(work, "fixed", "prog"), fix=True)
    except corpus.CaseError as e:
        report(False, "builds with %s -pg (buggy and fixed)" % cc[0], str(e))
        return out
    w = (warnings + fwarnings).strip()
    report(w == "", "builds warning-free with %s -Wall -Wextra (buggy and fixed)" % cc[0], w[:500])

    nm = subprocess.run(["nm", exe], capture_output=True, text=True).stdout
    syms = [l.split()[2] for l in nm.splitlines()
            if len(l.split()) == 3 and l.split()[1] in "TtWw"]
    corpus.demangle(syms)
    for key in ("root_cause", "cost_function"):
        report(any(corpus.same_function(s, c[key]) for s in syms),
               "%s %s is in the symbol table" % (key, c[key]))

    flats, procs = {}, {}
    for which in ("normal", "buggy"):
        d = os.path.join(work, "gprof", which)
        try:
            procs[which] = corpus.run(c, exe, which, d)
            flats[which] = corpus.gprof_flat(exe, d)
            report(True, "%s workload runs and exits 0" % which)
        except (corpus.CaseError, subprocess.TimeoutExpired) as e:
            report(False, "%s workload runs and exits 0" % which, str(e))
    if len(flats) < 2:
        return out
    buggy = flats["buggy"]
    rank = corpus.rank_of(buggy, c["root_cause"])
    report(rank != 1 and bool(buggy),
           "gprof does not rank root cause %s first (rank %s of %d, top %s)"
           % (c["root_cause"], rank or "NR", len(buggy), buggy[0]["name"] if buggy else "-"))
    calls = {w: corpus.calls_of(flats[w], c["cost_function"]) for w in flats}
    ratio = calls["buggy"] / calls["normal"] if calls["normal"] else 0.0
    report(calls["normal"] > 0 and ratio >= c["min_call_ratio"],
           "buggy run calls %s %.1fx as often as normal (%d vs %d, need >= %.1fx)"
           % (c["cost_function"], ratio, calls["buggy"], calls["normal"], c["min_call_ratio"]))
    try:
        f = corpus.fix_check(c, work, (flats["normal"], procs["normal"]),
                             (flats["buggy"], procs["buggy"]))
        report(f["ok"], "fix verified: %s on the buggy workload: fixed build %d "
               "(normal %d, buggy %d, allowed %.1fx normal), same output: %s"
               % (f["measure"], f["fixed"], f["normal"], f["buggy"],
                  f["fix_max_ratio"], "yes" if f["same_output"] else "no"), f["why"])
    except (corpus.CaseError, subprocess.TimeoutExpired) as e:
        report(False, "fix verified", str(e))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-j", "--jobs", type=int, default=2, help="cases in parallel (2)")
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--verified", metavar="FILE",
                   help="skip builds and runs of cases whose digest FILE records")
    g.add_argument("--record", metavar="FILE",
                   help="check every case fully; write the digests of those that pass to FILE")
    ap.add_argument("work")
    ap.add_argument("cases", nargs="*")
    a = ap.parse_args()
    names = a.cases or corpus.case_names()
    known = read_verified(a.verified) if a.verified else {}
    if a.verified:
        stale = sorted(set(known) - set(corpus.case_names()))
        print("%s - the manifest %s names only corpus cases%s"
              % ("not ok" if stale else "ok", a.verified,
                 (": not a case: " + ", ".join(stale)) if stale else ""))
    digests = {n: case_digest(n) for n in names}
    skip = [digests[n] if known.get(n) == digests[n] else None for n in names]
    failures, passed = 1 if a.verified and stale else 0, []
    with concurrent.futures.ProcessPoolExecutor(max_workers=max(1, a.jobs)) as ex:
        for name, lines in zip(names, ex.map(check_case, names, [a.work] * len(names), skip)):
            for ok, text in lines:
                print("%s - %s" % ("ok" if ok else "not ok", text))
                failures += not ok
            if all(ok for ok, _ in lines):
                passed.append(name)
            sys.stdout.flush()
    if a.record:
        with open(a.record, "w") as f:
            f.write("# Cases whose full check (tools/check_corpus.py: builds, runs, gprof rank,\n"
                    "# call ratio, fix) passed on these sources: CI checks the others fully.\n"
                    "# Written by `make -C bench corpus-verify`; not edited by hand.\n")
            for n in sorted(passed):
                f.write("%s %s\n" % (n, digests[n]))
        print("# %d of %d cases recorded in %s" % (len(passed), len(names), a.record))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
