#!/usr/bin/env python3
"""vprof-report --gprof against binutils `gprof -b` on the bug corpus.

Every case of bench/bugs is built with gcc/g++ -pg in two ways -- the
corpus's own flags (corpus.build: -fno-inline and no IPA clones) and plain
`-pg -g -O<opt>` (the compiler's inlining and its clones, f.constprop.0,
f.isra.0, f.part.0, as a user's build has them) -- and run once on its buggy
workload (forked children write their own gmon files). Both outputs are
compared byte for byte on the same gmon files. Prints one line per case and
build, the first lines of a difference, and a summary; exits 1 when any
output differs.

usage: gprof_compat.py [--cases a,b] [--builds corpus,plain] [--work DIR]
"""
import argparse
import difflib
import glob
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus  # noqa: E402

BUILDS = ("corpus", "plain")


def build(case, how, exe):
    if how == "corpus":
        corpus.build(case, corpus.compiler(case, "gcc"), exe, extra=["-pg"])
        return
    cc = corpus.compiler(case, "gcc")
    cmd = cc + ["-pg", "-g", "-" + case["opt"], "-pthread"] + case["cflags"] + \
        ["-o", exe] + case["sources"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise corpus.CaseError("build of %s failed:\n$ %s\n%s"
                               % (case["name"], " ".join(cmd), p.stderr))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", help="comma-separated case names (default: all)")
    ap.add_argument("--builds", default=",".join(BUILDS),
                    help="comma-separated: corpus (the corpus's flags), plain (-pg -g -O<opt>)")
    ap.add_argument("--work", default=os.path.join(corpus.ROOT, "build", "bench", "gprof-compat"))
    ap.add_argument("--report", default=os.path.join(corpus.ROOT, "build", "bin", "vprof-report"))
    a = ap.parse_args()
    builds = a.builds.split(",")
    for b in builds:
        if b not in BUILDS:
            sys.exit("gprof_compat.py: unknown build '%s' (corpus or plain)" % b)
    names = a.cases.split(",") if a.cases else corpus.case_names()
    same = {b: 0 for b in builds}
    for name in names:
        case = corpus.load_case(name)
        for b in builds:
            d = os.path.join(a.work, b, name)
            exe = os.path.join(d, "prog")
            os.makedirs(d, exist_ok=True)
            build(case, b, exe)
            out = os.path.join(d, "buggy")
            corpus.run(case, exe, "buggy", out)
            gm = sorted(glob.glob(os.path.join(out, "gmon*")))
            theirs = subprocess.run(["gprof", "-b", exe] + gm, capture_output=True, text=True)
            ours = subprocess.run([a.report, "--gprof", exe] + gm, capture_output=True, text=True)
            ok = ours.returncode == 0 and ours.stdout == theirs.stdout
            same[b] += ok
            print("%-28s %-6s %s (%d gmon file%s)" % (name, b, "identical" if ok else "DIFFERS",
                                                     len(gm), "" if len(gm) == 1 else "s"),
                  flush=True)
            if not ok:
                if ours.returncode != 0:
                    print("    vprof-report exit %d: %s" % (ours.returncode, ours.stderr.strip()[:300]))
                diff = difflib.unified_diff(theirs.stdout.splitlines(), ours.stdout.splitlines(),
                                            "gprof -b", "vprof-report --gprof", lineterm="", n=0)
                for line in list(diff)[:12]:
                    print("    " + line[:160])
    for b in builds:
        print("%s build: %d of %d outputs identical to gprof -b" % (b, same[b], len(names)))
    return 0 if all(same[b] == len(names) for b in builds) else 1


if __name__ == "__main__":
    sys.exit(main())
