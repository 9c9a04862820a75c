#!/usr/bin/env python3
"""Rate lab: what a sampling rate costs and what it buys, on corpus cases.

For each case, builds glibc gprof's variant and vprof's (as the Table 3
runner does) once, then REPS rounds; each round runs the normal and the
buggy workload under gprof (glibc, 100 Hz) and under vprof at every rate of
--hz, in an order that rotates from round to round (the machine is shared:
interleaving keeps slow spells from favouring one configuration). Prints per
case and rate:

  cpu        CPU seconds (user + system, normal + buggy, median of REPS)
  x gprof    that over gprof's CPU seconds measured in the same rounds
  rc/var     value samples per variable of the root-cause function, on the
             side with fewer (median over its variables that were sampled)
  all/var    the same over every sampled variable of the program
  rc vars    root-cause variables sampled on both sides / in the metadata

and a summary line per rate: the median of the ratios over the cases.

  rate_lab.py --work DIR [--cases a,b] [--hz 1000,2000,4000] [--reps 3]
              [--json OUT]"""
import argparse
import collections
import glob
import json
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus  # noqa: E402
import run_bugs  # noqa: E402

VPCHECK = os.path.join(corpus.ROOT, "build", "test-bin", "vpcheck")
DEFAULT_CASES = ("httpd62318_healthcheck,mdev21826_recovery,pg14b1_vacuum_retry,"
                 "redis8145_cluster_nodes,linux_ext4_mballoc,mdev13498_cascade")


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def layout_vars(run_dir):
    """var id -> function name, from the run's layout logs."""
    out = {}
    for lay in glob.glob(os.path.join(run_dir, "layout.*")):
        with open(lay, errors="replace") as f:
            for line in f:
                p = line.rstrip("\n").split("\t")
                if p[0] == "var" and len(p) > 3:
                    out[int(p[1])] = p[3]
    return out


def samples_per_var(run_dir):
    """var id -> value samples, over every process of the run."""
    n = collections.Counter()
    for vf in glob.glob(os.path.join(run_dir, "values.*")):
        p = subprocess.run([VPCHECK, "values", vf], capture_output=True, text=True)
        for line in p.stdout.splitlines():
            if line and not line.startswith("#"):
                n[int(line.split()[0])] += 1
    return n


def evidence(case, dirs):
    """(rc/var, all/var, rc vars sampled on both sides, rc vars in metadata)
    for one vprof run pair."""
    funcs = layout_vars(dirs["normal"]) or layout_vars(dirs["buggy"])
    rc = [v for v, f in funcs.items() if corpus.same_function(f, case["root_cause"])]
    sides = {w: samples_per_var(d) for w, d in dirs.items()}

    def smaller(vs):
        both = [min(sides["normal"][v], sides["buggy"][v]) for v in vs
                if sides["normal"][v] and sides["buggy"][v]]
        return (statistics.median(both) if both else 0), len(both)
    rc_med, rc_n = smaller(rc)
    all_med, _ = smaller(set(sides["normal"]) | set(sides["buggy"]))
    return rc_med, all_med, rc_n, len(rc)


def run_config(case, exe, env, work, tag):
    cpu, dirs = 0.0, {}
    for which in ("normal", "buggy"):
        out = os.path.join(work, "%s.%s" % (tag, which))
        p = corpus.run(case, exe, which, out, env_extra=run_bugs.vprof_env(case, out, env)
                       if env is not None else None, timeout=600)
        cpu += p.cpu_s
        dirs[which] = out
    return cpu, dirs


def lab_case(name, hzs, reps, work):
    case = corpus.load_case(name)
    d = os.path.join(work, name)
    os.makedirs(d, exist_ok=True)
    b = run_bugs.Builds(case, d)
    gexe = b.get("gprof")
    vexe, venv = b.get("vprof")
    confs = [("gprof", None)] + [("hz%d" % h, h) for h in hzs]
    cpu = collections.defaultdict(list)
    ev = collections.defaultdict(list)
    for r in range(reps):
        order = confs[r % len(confs):] + confs[:r % len(confs)]
        for tag, hz in order:
            if hz is None:
                c, _ = run_config(case, gexe, None, d, tag)
            else:
                env = dict(venv)
                env["VPROF_HZ"] = str(hz)
                c, dirs = run_config(case, vexe, env, d, tag)
                ev[tag].append(evidence(case, dirs))
            cpu[tag].append(c)
    g = statistics.median(cpu["gprof"])
    rows = []
    for tag, hz in confs[1:]:
        c = statistics.median(cpu[tag])
        e = ev[tag]
        rows.append({"case": name, "hz": hz, "cpu": round(c, 3), "gprof_cpu": round(g, 3),
                     "ratio": round(c / g, 3) if g > 0 else None,
                     "rc_per_var": statistics.median(x[0] for x in e),
                     "all_per_var": statistics.median(x[1] for x in e),
                     "rc_vars_sampled": max(x[2] for x in e), "rc_vars": e[0][3],
                     "cpu_runs": cpu[tag], "gprof_runs": cpu["gprof"]})
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--work", required=True)
    ap.add_argument("--cases", default=DEFAULT_CASES)
    ap.add_argument("--hz", default="1000,2000,4000")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--json")
    a = ap.parse_args()
    hzs = [int(x) for x in a.hz.split(",") if x]
    rows = []
    for name in [n for n in a.cases.split(",") if n]:
        try:
            rows += lab_case(name, hzs, a.reps, a.work)
        except (corpus.CaseError, subprocess.TimeoutExpired) as ex:
            log("%s: %s" % (name, str(ex)[-400:]))
    fmt = "%-28s %6s %7s %8s %7s %8s %8s"
    print(fmt % ("case", "hz", "cpu", "x gprof", "rc/var", "all/var", "rc vars"))
    for r in rows:
        print(fmt % (r["case"], r["hz"], "%.2f" % r["cpu"], "%.3f" % (r["ratio"] or 0),
                     "%g" % r["rc_per_var"], "%g" % r["all_per_var"],
                     "%d/%d" % (r["rc_vars_sampled"], r["rc_vars"])))
    print()
    for hz in hzs:
        rs = [r for r in rows if r["hz"] == hz and r["ratio"]]
        if rs:
            print("%5d Hz: median x gprof %.3f (max %.3f), median rc/var %g, median all/var %g"
                  % (hz, statistics.median(r["ratio"] for r in rs),
                     max(r["ratio"] for r in rs), statistics.median(r["rc_per_var"] for r in rs),
                     statistics.median(r["all_per_var"] for r in rs)))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
