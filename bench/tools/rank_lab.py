#!/usr/bin/env python3
"""Ranking lab: record the corpus once, re-rank it many times.

The ranks of `make -C bench bugs` mix two sources of noise: the samples of
one run, and the analysis. To compare analysis variants (an ablation table)
the samples must be held fixed. `record` builds each case with vprof-cc and
stores N independent normal and buggy runs; `eval` runs vprof-report (with
any options) on the pairs (normal.i, buggy.i), i < N, and prints per case the
median rank of the root cause, its range, the pattern and gprof's rank on the
same buggy run (binutils gprof on the run's own gmon files), plus a summary:
root cause first / top 5 / pattern right (share of all runs), cases whose
rank spread is at most 2, and cases where vprof's median is worse than
gprof's.

  rank_lab.py record --work DIR [--cases a,b] [--reps 5] [--jobs 2]
  rank_lab.py eval   --work DIR [--cases a,b] [--label NAME] [--json OUT]
                     [--report PATH] [--hist-extra K] [--side-runs K]
                     [-- vprof-report options...]
  rank_lab.py table  EVAL.json...      (Markdown ablation table)
  rank_lab.py rebuild --work DIR --exe-dir OUT [--cases a,b]
  rank_lab.py eval   --work DIR --exe-dir OUT ...

A change to the schema pass alone (new `@` lines, no new code) needs no
new recordings: `rebuild` builds each recorded case again with the current
vprof-cc into OUT and checks that its code is the recorded binary's (same
.text, .data, .rodata and symbol addresses: only the schema differs), and
`eval --exe-dir OUT` re-ranks the same samples with the rebuilt binaries'
schemas (vprof-report --exe ... --force; a case whose code differs is
refused, its samples would be mapped to the wrong code).

Runs that failed to record are skipped with a message; nothing is filled in."""
import argparse
import concurrent.futures
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus  # noqa: E402
import run_bugs  # noqa: E402

BIN = os.environ.get("VPROF_BIN", os.path.join(corpus.ROOT, "build", "bin"))


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def norm_pattern(p):
    return (p or "none").strip().lower().replace(" ", "_").replace("-", "_")


def record_case(name, work, reps):
    """Builds the case as the Table 3 runner builds vprof's variant
    (vprof-cc/vprof-c++ with the schema pass, or gcc -pg + vprof-meta --all
    for build=gcc-meta) and records REPS normal and buggy runs."""
    case = corpus.load_case(name)
    d = os.path.join(work, name)
    os.makedirs(d, exist_ok=True)
    exe, benv = run_bugs.Builds(case, d).get("vprof")
    done = 0
    for i in range(reps):
        for which in ("normal", "buggy"):
            out = os.path.join(d, "%s.%d" % (which, i))
            try:
                corpus.run(case, exe, which, out,
                           env_extra=run_bugs.vprof_env(case, out, benv), timeout=300)
            except (corpus.CaseError, subprocess.TimeoutExpired) as ex:
                log("%s: %s.%d: %s" % (name, which, i, str(ex)[-300:]))
                shutil.rmtree(out, ignore_errors=True)
                continue
            done += 1
    with open(os.path.join(d, "case.json"), "w") as f:
        json.dump({"name": name, "root_cause": case["root_cause"],
                   "pattern": case["pattern"], "shapes": case["shapes"], "reps": reps,
                   "exe": exe,
                   "recorded": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())}, f)
    return name, done


def cmd_record(a):
    names = [n for n in a.cases.split(",") if n] or corpus.case_names()
    os.makedirs(a.work, exist_ok=True)
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as ex:
        futs = [ex.submit(record_case, n, a.work, a.reps) for n in names]
        for fu in concurrent.futures.as_completed(futs):
            try:
                n, done = fu.result()
                log("%s: %d runs recorded" % (n, done))
            except corpus.CaseError as e:
                log(str(e)[-500:])
    return 0


def code_signature(exe):
    """What must not change for recorded samples to stay valid: the bytes
    of the code and data sections and the symbols' addresses."""
    import hashlib
    h = hashlib.sha1()
    for sec in (".text", ".data", ".rodata", ".init_array"):
        p = subprocess.run(["objcopy", "-O", "binary", "-j", sec, exe, "/dev/stdout"],
                           capture_output=True)
        h.update(p.stdout)
    h.update(subprocess.run(["nm", "-n", exe], capture_output=True).stdout)
    return h.hexdigest()


def same_code_file(out, name):
    return os.path.join(out, name, "same-code")


def cmd_rebuild(a):
    names = [n for n in a.cases.split(",") if n] or sorted(
        d for d in os.listdir(a.work) if os.path.isfile(os.path.join(a.work, d, "case.json")))
    bad = 0
    for name in names:
        meta = json.load(open(os.path.join(a.work, name, "case.json")))
        d = os.path.join(a.exe_dir, name)
        os.makedirs(d, exist_ok=True)
        try:
            exe, _ = run_bugs.Builds(corpus.load_case(name), d).get("vprof")
        except corpus.CaseError as e:
            log("%s: %s" % (name, str(e)[-300:]))
            bad += 1
            continue
        same = code_signature(exe) == code_signature(meta["exe"])
        marker = same_code_file(a.exe_dir, name)
        if same:
            open(marker, "w").write(exe + "\n")
        elif os.path.exists(marker):
            os.unlink(marker)
        bad += not same
        log("%s: %s" % (name, "same code" if same else "CODE DIFFERS: its samples cannot be re-ranked"))
    return 1 if bad else 0


def gprof_rank(exe, run_dir, root):
    try:
        rows = corpus.gprof_flat(exe, run_dir)
    except corpus.CaseError:
        return None
    return corpus.rank_of(rows, root)


def eval_pair(report, opts, case_dir, i, root, exe, hist_extra=0, reps=1, side_runs=1):
    n = os.path.join(case_dir, "normal.%d" % i)
    b = os.path.join(case_dir, "buggy.%d" % i)
    if not (os.path.isdir(n) and os.path.isdir(b)):
        return None
    sides = [[], []]                            # --side-runs: runs i..i+K-1, cyclically
    for j in range(side_runs):
        for k, side in enumerate(("normal", "buggy")):
            d = os.path.join(case_dir, "%s.%d" % (side, (i + j) % reps))
            if os.path.isdir(d) and d not in sides[k]:
                sides[k].append(d)
    extra = []
    for j in range(1, hist_extra + 1):          # the next runs, cyclically
        for side, flag in (("normal", "--hist-normal"), ("buggy", "--hist-buggy")):
            d = os.path.join(case_dir, "%s.%d" % (side, (i + j) % reps))
            if os.path.isdir(d) and d not in (n, b):
                extra += [flag, d]
    main_runs = [n, b] if side_runs <= 1 else \
        [x for d in sides[0] for x in ("--normal", d)] + [x for d in sides[1] for x in ("--buggy", d)]
    cmd = [report, "--json", "--top", "0", "-q"] + opts + extra + main_runs
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        return {"error": p.stderr.strip()[-300:]}
    doc = json.loads(p.stdout)
    funcs = doc.get("functions", [])
    rank, pat, top = None, "none", funcs[0]["name"] if funcs else None
    for f in funcs:
        if corpus.same_function(f.get("symbol") or f.get("name", ""), root):
            rank, pat = corpus.merged_rank(funcs, root), norm_pattern(f.get("pattern"))
            break
    return {"rank": rank, "pattern": pat, "top": top, "gprof": gprof_rank(exe, b, root)}


def median_rank(ranks):
    vals = [r if r else 10 ** 6 for r in ranks]
    m = statistics.median(vals)
    return m


def cmd_eval(a, extra):
    report = a.report or os.path.join(BIN, "vprof-report")
    names = [n for n in a.cases.split(",") if n] or sorted(
        d for d in os.listdir(a.work) if os.path.isfile(os.path.join(a.work, d, "case.json")))
    rows, started = [], time.time()
    jobs = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as ex:
        for name in names:
            cdir = os.path.join(a.work, name)
            meta = json.load(open(os.path.join(cdir, "case.json")))
            exe = meta.get("exe") or os.path.join(cdir, "prog")
            opts = extra
            if a.exe_dir:
                marker = same_code_file(a.exe_dir, name)
                if not os.path.exists(marker):
                    log("%s: no rebuilt binary with the same code in %s: skipped" % (name, a.exe_dir))
                    continue
                opts = ["--exe", open(marker).read().strip(), "--force"] + extra
            futs = [ex.submit(eval_pair, report, opts, cdir, i, meta["root_cause"], exe,
                              min(a.hist_extra, meta["reps"] - 1), meta["reps"],
                              min(a.side_runs, meta["reps"]))
                    for i in range(meta["reps"])]
            jobs.append((name, meta, futs))
        for name, meta, futs in jobs:
            runs = [r for r in (fu.result() for fu in futs) if r is not None]
            errs = [r["error"] for r in runs if "error" in r]
            runs = [r for r in runs if "error" not in r]
            if errs:
                log("%s: %d failed: %s" % (name, len(errs), errs[0]))
            if not runs:
                continue
            ranks = [r["rank"] for r in runs]
            gr = [r["gprof"] for r in runs]
            rows.append({"case": name, "pattern": meta["pattern"], "ranks": ranks,
                         "median": median_rank(ranks), "gprof": gr,
                         "gprof_median": median_rank(gr),
                         "patterns": [r["pattern"] for r in runs],
                         "pattern_ok": sum(1 for r in runs if r["pattern"] == meta["pattern"]),
                         "tops": [r["top"] for r in runs]})
    fmt = "%-28s %-8s %-22s %-14s %-4s %s"
    print(fmt % ("case", "median", "ranks", "gprof", "pat", "top (first run)"))
    for r in rows:
        show = lambda xs: ",".join(str(x) if x else "NR" for x in xs)  # noqa: E731
        med = r["median"]
        print(fmt % (r["case"], "NR" if med >= 10 ** 6 else ("%g" % med), show(r["ranks"]),
                     show(r["gprof"]), "%d/%d" % (r["pattern_ok"], len(r["ranks"])),
                     r["tops"][0]))
    allr = [x for r in rows for x in r["ranks"]]
    n = len(allr) or 1
    first = sum(1 for x in allr if x == 1)
    top5 = sum(1 for x in allr if x and x <= 5)
    pat = sum(r["pattern_ok"] for r in rows)

    def spread(r):
        xs = [x if x else 999 for x in r["ranks"]]
        return max(xs) - min(xs)
    stable = sum(1 for r in rows if spread(r) <= 2)
    worse = [r["case"] for r in rows if r["median"] > r["gprof_median"]]
    summ = {"label": a.label, "options": extra, "runs": len(allr), "cases": len(rows),
            "first": first, "top5": top5, "pattern_ok": pat, "stable_cases": stable,
            "worse_than_gprof": worse,
            "median_of_medians": statistics.median([r["median"] for r in rows]) if rows else None,
            "seconds": round(time.time() - started, 1)}
    print("\n%s: first %d/%d (%.0f%%), top-5 %d/%d (%.0f%%), pattern %d/%d (%.0f%%), "
          "spread<=2 in %d/%d cases, worse than gprof: %s"
          % (a.label or "eval", first, len(allr), 100.0 * first / n, top5, len(allr),
             100.0 * top5 / n, pat, len(allr), 100.0 * pat / n, stable, len(rows),
             ", ".join(worse) or "none"))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"summary": summ, "cases": rows}, f, indent=1)
    return 0


def cmd_table(a):
    """Markdown ablation table from eval JSON files: one row per variant,
    then the per-case median ranks side by side."""
    docs = [json.load(open(p)) for p in a.files]
    print("| variant | options | first | top 5 | pattern | spread <= 2 | worse than gprof |")
    print("|---|---|---|---|---|---|---|")
    for d in docs:
        s = d["summary"]
        n = s["runs"] or 1
        print("| %s | `%s` | %d/%d (%.0f%%) | %d/%d (%.0f%%) | %d/%d (%.0f%%) | %d/%d | %s |" % (
            s["label"], " ".join(s["options"]) or "(defaults)", s["first"], s["runs"],
            100.0 * s["first"] / n, s["top5"], s["runs"], 100.0 * s["top5"] / n,
            s["pattern_ok"], s["runs"], 100.0 * s["pattern_ok"] / n, s["stable_cases"],
            s["cases"], ", ".join(s["worse_than_gprof"]) or "none"))
    cases = sorted({c["case"] for d in docs for c in d["cases"]})
    print()
    print("| case | gprof | " + " | ".join(d["summary"]["label"] for d in docs) + " |")
    print("|---|---|" + "---|" * len(docs))
    for name in cases:
        cells, gp = [], ""
        for d in docs:
            row = next((c for c in d["cases"] if c["case"] == name), None)
            if not row:
                cells.append("-")
                continue
            gp = gp or ("%g" % row["gprof_median"] if row["gprof_median"] < 10 ** 6 else "NR")
            xs = [x if x else 999 for x in row["ranks"]]
            med = "%g" % row["median"] if row["median"] < 10 ** 6 else "NR"
            cells.append(med + (" (%d-%s)" % (min(xs), max(xs) if max(xs) < 999 else "NR")
                                if min(xs) != max(xs) else ""))
        print("| %s | %s | %s |" % (name, gp, " | ".join(cells)))
    return 0


def main():
    argv = sys.argv[1:]
    extra = []
    if "--" in argv:
        k = argv.index("--")
        argv, extra = argv[:k], argv[k + 1:]
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("cmd", choices=("record", "eval", "table", "rebuild"))
    ap.add_argument("files", nargs="*", help="table: eval JSON files")
    ap.add_argument("--work", default="")
    ap.add_argument("--cases", default="")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--label", default="")
    ap.add_argument("--json", default="")
    ap.add_argument("--report", default="")
    ap.add_argument("--hist-extra", type=int, default=0,
                    help="eval: give the report this many other runs a side as "
                         "--hist-normal/--hist-buggy")
    ap.add_argument("--side-runs", type=int, default=1,
                    help="eval: K runs a side as the report's main runs (pair i: runs "
                         "i..i+K-1, cyclically), as a user gives several run directories")
    ap.add_argument("--exe-dir", default="",
                    help="rebuild: where to build; eval: rank with the binaries rebuilt "
                         "there (same code, new schema)")
    a = ap.parse_args(argv)
    if a.cmd == "table":
        return cmd_table(a)
    if not a.work:
        ap.error("--work is required")
    if a.cmd == "rebuild":
        if not a.exe_dir:
            ap.error("rebuild needs --exe-dir")
        return cmd_rebuild(a)
    return cmd_record(a) if a.cmd == "record" else cmd_eval(a, extra)


if __name__ == "__main__":
    sys.exit(main())
