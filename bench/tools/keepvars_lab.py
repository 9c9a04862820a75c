#!/usr/bin/env python3
"""What `vprof-cc --keep-vars` buys and costs on the bench corpus.

Builds every vprof-cc case twice, identical but for --keep-vars (use
BENCH_INLINE=1 for the builds users make), then

  placed:   vprof-meta's summary of each build: variables placed, not placed,
            and how many of those were optimized out;
  overhead: the buggy workload of each case, run REPS times a side with the
            profiler on, the two builds interleaved (off, on, off, on, ...) so
            that drifts of a shared machine hit both alike; per case the median
            CPU time of each side and their ratio, then the median and range
            of the ratios over the cases.

  keepvars_lab.py --work DIR [--cases a,b] [--reps 5] [--jobs 2] [--json OUT]

Cases built with gcc (build=gcc-meta) are left out: the option is the
clang pass's. A case that fails to build or run is reported and skipped."""
import argparse
import concurrent.futures
import json
import os
import re
import shlex
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus  # noqa: E402
import run_bugs  # noqa: E402

META = os.path.join(os.environ.get("VPROF_BIN", os.path.join(corpus.ROOT, "build", "bin")),
                    "vprof-meta")
SIDES = (("off", "--no-keep-vars"), ("on", "--keep-vars"))
SUMMARY = re.compile(r"(\d+) variables placed, (\d+) entries; (\d+) not placed \(([^)]*)\)")


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def meta_summary(exe):
    """{placed, entries, not_placed, optimized_out} from vprof-meta's summary."""
    p = subprocess.run([META, "-o", os.devnull, exe], capture_output=True, text=True)
    if p.returncode != 0:
        raise corpus.CaseError("vprof-meta failed on %s: %s" % (exe, p.stderr[-500:]))
    out = {"placed": 0, "entries": 0, "not_placed": 0, "optimized_out": 0}
    m = SUMMARY.search(p.stderr)
    if m:
        out.update(placed=int(m.group(1)), entries=int(m.group(2)), not_placed=int(m.group(3)))
        o = re.search(r"(\d+) optimized out", m.group(4))
        out["optimized_out"] = int(o.group(1)) if o else 0
    else:
        o = re.search(r"(\d+) variables placed, (\d+) entries", p.stderr)
        if not o:
            raise corpus.CaseError("no summary from vprof-meta on %s:\n%s" % (exe, p.stderr))
        out.update(placed=int(o.group(1)), entries=int(o.group(2)))
    return out


def build_case(name, work):
    case = corpus.load_case(name)
    exes = {}
    for side, flag in SIDES:
        exe = os.path.join(work, name, side, "prog")
        cc = corpus.compiler(case, "vprof") + shlex.split(case.get("vprof_cc_flags", ""))
        corpus.build(case, cc, exe, extra=[flag])
        exes[side] = exe
    return case, exes


def time_case(case, exes, work, reps):
    cpu = {"off": [], "on": []}
    outputs = {}
    for i in range(reps):
        for side, _ in SIDES:
            out = os.path.join(work, case["name"], side, "run")
            p = corpus.run(case, exes[side], "buggy", out,
                           env_extra=run_bugs.vprof_env(case, out, {}), timeout=300)
            cpu[side].append(p.cpu_s)
            outputs.setdefault(side, p.stdout)
    med = {s: statistics.median(v) for s, v in cpu.items()}
    return {"cpu_off": cpu["off"], "cpu_on": cpu["on"],
            "ratio": med["on"] / med["off"] if med["off"] > 0 else None,
            "same_stdout": outputs["off"] == outputs["on"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--work", required=True)
    ap.add_argument("--cases", default="")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--jobs", type=int, default=2, help="parallel builds (runs are serial)")
    ap.add_argument("--json")
    a = ap.parse_args()
    if a.reps < 1 or a.jobs < 1:
        ap.error("--reps and --jobs must be at least 1")
    names = [n for n in a.cases.split(",") if n] or corpus.case_names()
    cases = [corpus.load_case(n) for n in names]
    names = [c["name"] for c in cases if c["build"] != "gcc-meta"]
    built = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as ex:
        futs = {ex.submit(build_case, n, a.work): n for n in names}
        for fu in concurrent.futures.as_completed(futs):
            try:
                case, exes = fu.result()
                built[case["name"]] = (case, exes)
            except corpus.CaseError as e:
                log("%s: %s" % (futs[fu], str(e)[-500:]))
    res = {}
    tot = {s: {"placed": 0, "not_placed": 0, "optimized_out": 0, "entries": 0} for s, _ in SIDES}
    for name in sorted(built):
        case, exes = built[name]
        r = {s: meta_summary(exes[s]) for s, _ in SIDES}
        for s, _ in SIDES:
            for k in tot[s]:
                tot[s][k] += r[s][k]
        try:
            r["time"] = time_case(case, exes, a.work, a.reps)
        except corpus.CaseError as e:
            log("%s: %s" % (name, str(e)[-500:]))
            r["time"] = None
        res[name] = r
        t = r["time"]
        print("%-28s placed %3d -> %3d  optimized out %3d -> %3d  cpu ratio %s%s" % (
            name, r["off"]["placed"], r["on"]["placed"], r["off"]["optimized_out"],
            r["on"]["optimized_out"],
            "%.3f" % t["ratio"] if t and t["ratio"] else "-",
            "" if not t or t["same_stdout"] else "  STDOUT DIFFERS"), flush=True)
    ratios = sorted(r["time"]["ratio"] for r in res.values() if r["time"] and r["time"]["ratio"])
    print("\n%d cases; placed %d -> %d, not placed %d -> %d (optimized out %d -> %d)" % (
        len(res), tot["off"]["placed"], tot["on"]["placed"], tot["off"]["not_placed"],
        tot["on"]["not_placed"], tot["off"]["optimized_out"], tot["on"]["optimized_out"]))
    if ratios:
        print("CPU time on/off: median %.3f, range %.3f .. %.3f over %d cases" % (
            statistics.median(ratios), ratios[0], ratios[-1], len(ratios)))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"cases": res, "totals": tot, "ratios": ratios}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
