#!/usr/bin/env python3
"""Runs the bug corpus through every diagnosis tool and prints the paper's
Table 3: for each case, the rank of the root-cause function according to
vprof (variable discounter, 1 normal + 1 buggy run), binutils gprof (flat
profile of the buggy run), perf (cpu-clock samples of the buggy run, by
self time and by self+children time), vprof's hist-discounter alone (the
program run without variable metadata, N normal + N buggy runs) and COZ
(causal profiling of the buggy run: progress points where the case defines
them, else end-to-end mode), plus vprof's basic-block and line distance
between its reported locations and the fix, and whether its bug pattern
matches. Each case's fix is verified too (corpus.fix_check). Every tool
except hist and COZ runs --repeat times per case; the table shows the
median rank and the range. Writes the same as JSON and Markdown.

A tool that is not built or not usable shows "n/a" with the reason in the
JSON; a run that fails shows "err". Nothing is estimated or filled in.

Usage: run_bugs.py [--cases A,B] [--tools vprof,gprof,perf,hist,coz]
                   [--reps N] [--repeat N] [--coz-runs N] [--jobs N]
                   [--work DIR] [--out FILE]"""
import argparse
import concurrent.futures
import json
import os
import platform
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus  # noqa: E402

VPROF_BIN = os.environ.get("VPROF_BIN", os.path.join(corpus.ROOT, "build", "bin"))
VPROF_LIB = os.environ.get("VPROF_LIB", os.path.join(corpus.ROOT, "build", "lib"))
VPROF_REPORT = os.path.join(VPROF_BIN, "vprof-report")
VPROF_META = os.path.join(VPROF_BIN, "vprof-meta")
LIBVPROF = os.path.join(VPROF_LIB, "libvprof.so")
TOOLS = ("vprof", "gprof", "perf", "hist", "coz", "contexts")
# Table columns per tool (perf gives two: self and self+children).
# ctx-vprof: --contexts on the vprof tool's own runs (their stacks.<id>).
COLUMNS = (("vprof", "vprof"), ("gprof", "gprof"), ("perf", "perf"),
           ("perf_children", "perf-ch"), ("hist", "hist-disc"), ("coz", "coz"),
           ("contexts", "contexts"), ("contexts_vprof", "ctx-vprof"))
COZ_TIMEOUT = 60        # seconds per COZ run (the workloads take about 1 s)
COZ_MIN_POINTS = 3       # a line needs the baseline and 2 other speedups (viewer default: 10)


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def norm_pattern(p):
    return (p or "none").strip().lower().replace(" ", "_").replace("-", "_")


# ------------------------------------------------------------------ schema
def read_blocks(exe, function):
    """Basic blocks of FUNCTION from the .vprof_schema section of EXE:
    list of (block_id, line_start, line_end)."""
    out = exe + ".schema"
    p = subprocess.run(["objcopy", "--dump-section", ".vprof_schema=" + out, exe, "/dev/null"],
                       capture_output=True, text=True)
    if p.returncode != 0 or not os.path.exists(out):
        return []
    blocks = []
    with open(out, errors="replace") as f:
        for line in f:
            if not line.startswith("@block"):
                continue
            parts = [x.strip() for x in line.split(",")]
            # @block, file, function, block_id, line_start, line_end, kind
            if len(parts) >= 7 and corpus.same_function(parts[2], function):
                try:
                    blocks.append((int(parts[3]), int(parts[4]), int(parts[5])))
                except ValueError:
                    pass
    return blocks


def block_of_line(blocks, line):
    """Smallest block whose line range holds LINE (ties: lowest id)."""
    best = None
    for bid, a, b in blocks:
        if a <= line <= b and (best is None or (b - a, bid) < best[0]):
            best = ((b - a, bid), bid)
    return best[1] if best else None


def distances(case, fn_entry, blocks):
    """(bb mean, bb min, line min) between the reported locations of the
    root-cause function and the fix line; None where not computable. Only
    locations inside the function's own lines count (the report may also
    list caller/callee lines reached by unwinding); without block
    information from the schema (gcc + vprof-meta builds), all locations in
    the fix's file count for the line distance."""
    same_file = os.path.basename(case["fix_file"])
    lo = min((a for _, a, _ in blocks if a > 0), default=None)   # line 0: no line info
    hi = max((b for _, _, b in blocks if b > 0), default=None)
    locs = [l for l in fn_entry.get("locations") or []
            if os.path.basename(l.get("file") or "") == same_file and l.get("line")
            and (lo is None or lo <= int(l["line"]) <= hi)]
    if not locs:
        return None, None, None
    line_d = [abs(int(l["line"]) - case["fix_line"]) for l in locs if l.get("line")]
    fix_block = block_of_line(blocks, case["fix_line"])
    bb_d = []
    if fix_block is not None:
        for l in locs:
            b = l.get("block")
            if b is None and l.get("line"):
                b = block_of_line(blocks, int(l["line"]))
            if b is not None:
                bb_d.append(abs(int(b) - fix_block))
    bb_mean = round(sum(bb_d) / len(bb_d), 1) if bb_d else None
    return bb_mean, (min(bb_d) if bb_d else None), (min(line_d) if line_d else None)


# ------------------------------------------------------------------ builds
class Builds:
    """The variants of one case, each built once per invocation (never
    reused from an earlier invocation, whose tools may differ)."""

    def __init__(self, case, work):
        self.case, self.work, self.done = case, work, {}

    def get(self, kind):
        if kind not in self.done:
            self.done[kind] = getattr(self, "_" + kind)()
        return self.done[kind]

    def _path(self, kind):
        exe = os.path.join(self.work, kind, "prog")
        os.makedirs(os.path.dirname(exe), exist_ok=True)
        for stale in (exe, exe + ".vmeta", exe + ".schema"):
            if os.path.exists(stale):
                os.remove(stale)
        return exe

    def _gprof(self):
        exe = self._path("gprof")
        corpus.build(self.case, corpus.compiler(self.case, "gcc") + ["-pg"], exe)
        return exe

    def _perf(self):
        exe = self._path("perf")
        # Frame pointers for perf's call graphs (the children column).
        corpus.build(self.case, corpus.compiler(self.case, "gcc"), exe,
                     extra=["-fno-omit-frame-pointer"])
        return exe

    def _coz(self):
        exe = self._path("coz")
        extra = list(corpus.COZ_FLAGS) + (["-DVPROF_CASE_COZ"] if self.case["coz_progress"] else [])
        corpus.build(self.case, corpus.compiler(self.case, "gcc"), exe, extra=extra)
        return exe

    def _vprof(self):
        """(exe, env): vprof-cc/vprof-c++ (the schema pass), or plain gcc -pg
        plus vprof-meta --all and libvprof.so preloaded (build=gcc-meta)."""
        exe = self._path("vprof")
        c = self.case
        if c["build"] == "gcc-meta":
            corpus.build(c, corpus.compiler(c, "gcc") + ["-pg"], exe)
            globs = c.get("meta_files") or "*%s/*" % c["name"]
            p = subprocess.run([VPROF_META, "--all", "--files", globs, "-q", "-o",
                                exe + ".vmeta", exe], capture_output=True, text=True)
            if p.returncode != 0:
                raise corpus.CaseError("vprof-meta failed: %s" % p.stderr[-800:])
            return exe, {"LD_PRELOAD": LIBVPROF}
        corpus.build(c, corpus.compiler(c, "vprof") + shlex.split(c.get("vprof_cc_flags", "")), exe)
        return exe, {}

    def _hist(self):
        """The vprof binary copied away from its .vmeta: PC samples only."""
        exe, env = self.get("vprof")
        bare = self._path("hist")
        shutil.copy2(exe, bare)
        return bare, env


# ------------------------------------------------------------------- tools
def vprof_env(case, outdir, base_env):
    env = {"VPROF_OUT": outdir, "VPROF_QUIET": "1"}
    env.update(base_env)
    env.update(kv.split("=", 1) for kv in shlex.split(case.get("vprof_env", "")))
    return env


def vprof_report(dirs_normal, dirs_buggy, out_json):
    cmd = [VPROF_REPORT, "--json", "--top", "0", "-q"]
    for d in dirs_normal:
        cmd += ["--normal", d]
    for d in dirs_buggy:
        cmd += ["--buggy", d]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    if p.returncode != 0:
        raise corpus.CaseError("vprof-report failed (%d): %s" % (p.returncode, p.stderr[-800:]))
    with open(out_json, "w") as f:
        f.write(p.stdout)
    doc = json.loads(p.stdout)
    return doc.get("functions", doc) if isinstance(doc, dict) else doc


def find_fn(funcs, name):
    for f in funcs:
        if corpus.same_function(f.get("name", ""), name):
            return f
    return None


def run_vprof(case, b, work, i):
    exe, env = b.get("vprof")
    dirs = {}
    for which in ("normal", "buggy"):
        d = os.path.join(work, "vprof", "%s.%d" % (which, i))
        corpus.run(case, exe, which, d, env_extra=vprof_env(case, d, env))
        dirs[which] = d
    funcs = vprof_report([dirs["normal"]], [dirs["buggy"]],
                         os.path.join(work, "vprof", "report.%d.json" % i))
    fn = find_fn(funcs, case["root_cause"])
    try:        # the same runs' stack samples (VPROF_STACKS), IntroPerf's metrics
        ctx = contexts_metrics(case, [dirs["normal"], dirs["buggy"]])
    except corpus.CaseError as e:
        ctx = {"error": str(e)[-1500:]}
    res = {"rank": corpus.merged_rank(funcs, case["root_cause"]) if fn else None,
           "ranked": len(funcs), "ctx": ctx,
           "top": corpus.base_name(funcs[0].get("name")) if funcs else None,
           "above": [corpus.base_name(f.get("name")) for f in funcs[:(fn.get("rank") or 1) - 1][:6]]
           if fn else [corpus.base_name(f.get("name")) for f in funcs[:6]]}
    if fn:
        bb_mean, bb_min, line_min = distances(case, fn, read_blocks(exe, case["root_cause"]))
        pat = norm_pattern(fn.get("pattern"))
        res.update({"bb_dist_mean": bb_mean, "bb_dist_min": bb_min, "line_dist_min": line_min,
                    "pattern": pat, "pattern_ok": (None if pat == "none" else pat == case["pattern"]),
                    "discount": fn.get("discount"), "variable": fn.get("variable"),
                    "dimension": fn.get("dimension")})
    return res


def run_hist(case, b, work, reps):
    bare, env = b.get("hist")
    dirs = {"normal": [], "buggy": []}
    for which in ("normal", "buggy"):
        for i in range(reps):
            d = os.path.join(work, "hist", "%s.%d" % (which, i))
            corpus.run(case, bare, which, d, env_extra=vprof_env(case, d, env))
            dirs[which].append(d)
    funcs = vprof_report(dirs["normal"], dirs["buggy"], os.path.join(work, "hist", "report.json"))
    fn = find_fn(funcs, case["root_cause"])
    return {"rank": corpus.merged_rank(funcs, case["root_cause"]) if fn else None,
            "ranked": len(funcs),
            "top": corpus.base_name(funcs[0].get("name")) if funcs else None}


def run_gprof(case, b, work, i):
    exe = b.get("gprof")
    d = os.path.join(work, "gprof", "buggy.%d" % i)
    p = corpus.run(case, exe, "buggy", d)
    rows = corpus.gprof_flat(exe, d)
    res = {"rank": corpus.rank_of(rows, case["root_cause"]), "ranked": len(rows),
           "top": rows[0]["name"] if rows else None}
    return res, (rows, p)


def run_perf(case, b, work, i):
    exe = b.get("perf")
    d = os.path.join(work, "perf", "buggy.%d" % i)
    os.makedirs(d, exist_ok=True)
    corpus.run(case, exe, "buggy", d,
               wrapper=["perf", "record", "-q", "-e", "cpu-clock", "-F", "1000", "-g",
                        "-o", os.path.join(d, "perf.data"), "--"])
    out = {}
    for col, children in (("perf", False), ("perf_children", True)):
        rows = corpus.perf_ranking(d, children=children)
        out[col] = {"rank": corpus.rank_of(rows, case["root_cause"]), "ranked": len(rows),
                    "top": rows[0]["name"] if rows else None}
    os.remove(os.path.join(d, "perf.data"))      # large; the ranks are kept
    return out


def contexts_metrics(case, runs):
    """vprof-report --contexts on a normal and a buggy run (run directories
    or perf script files): the rank of the first path that contains the
    root cause, and f_min, the distance in frames between the root cause and
    that path's hottest function (IntroPerf §5's p_min and f_min)."""
    p = subprocess.run([VPROF_REPORT, "--contexts", "--json", "--top", "0", "-q"] + runs,
                       capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        raise corpus.CaseError("vprof-report --contexts failed: %s" % p.stderr[-500:])
    paths = json.loads(p.stdout)["paths"]
    for k, path in enumerate(paths, 1):
        names = [f.get("symbol") or f["name"] for f in path["functions"]]
        hit = [j for j, n in enumerate(names) if corpus.same_function(n, case["root_cause"])
               or corpus.same_function(path["functions"][j]["name"], case["root_cause"])]
        if hit:
            hot = max(range(len(names)), key=lambda j: path["functions"][j]["own_ms"])
            return {"rank": k, "ranked": len(paths), "f_min": min(abs(j - hot) for j in hit),
                    "top": path["functions"][-1]["name"] if names else None}
    return {"rank": None, "ranked": len(paths), "top": None}


def run_contexts(case, b, work, i):
    """vprof-report --contexts on perf record -g of a normal and a buggy run
    (the frame-pointer build): the rank of the first path that contains the
    root cause, and f_min, the distance in frames between the root cause and
    that path's hottest function (IntroPerf §5's metrics)."""
    exe = b.get("perf")
    files = []
    for which in ("normal", "buggy"):
        d = os.path.join(work, "contexts", "%s.%d" % (which, i))
        os.makedirs(d, exist_ok=True)
        data = os.path.join(d, "perf.data")
        corpus.run(case, exe, which, d,
                   wrapper=["perf", "record", "-q", "-e", "cpu-clock", "-F", "1000", "-g",
                            "-o", data, "--"])
        txt = os.path.join(d, "perf.txt")
        with open(txt, "w") as f:
            p = subprocess.run(["perf", "script", "-i", data], stdout=f,
                               stderr=subprocess.DEVNULL, timeout=300)
        os.remove(data)
        if p.returncode != 0:
            raise corpus.CaseError("perf script failed for %s" % data)
        files.append(txt)
    return contexts_metrics(case, files)


# --------------------------------------------------------------------- COZ
def coz_usable():
    return shutil.which("coz") is not None


def line_functions(exe):
    """{(source basename, line): {function}} from the line table and the
    symbol table of EXE."""
    p = subprocess.run(["nm", "-S", "--defined-only", exe], capture_output=True, text=True)
    funcs = []
    for l in p.stdout.splitlines():
        f = l.split()
        if len(f) == 4 and f[2] in "TtWw":
            funcs.append((int(f[0], 16), int(f[1], 16), f[3]))
    funcs.sort()
    corpus.demangle([f[2] for f in funcs])
    starts = [f[0] for f in funcs]
    p = subprocess.run(["objdump", "--dwarf=decodedline", exe], capture_output=True, text=True)
    out = {}
    import bisect
    for l in p.stdout.splitlines():
        f = l.split()
        if len(f) < 3 or not f[1].isdigit() or not f[2].startswith("0x"):
            continue
        addr = int(f[2], 16)
        k = bisect.bisect_right(starts, addr) - 1
        if k >= 0 and addr < funcs[k][0] + max(funcs[k][1], 1):
            out.setdefault((os.path.basename(f[0]), int(f[1])), set()).add(corpus.base_name(funcs[k][2]))
    return out


def coz_line_impacts(profile_text, min_points=COZ_MIN_POINTS):
    """Line -> impact, as COZ's viewer computes it (profile.js): per
    progress point, program speedup at each line speedup relative to the
    line's zero-speedup experiments; impact = the largest normalized area
    under that curve; only lines with MIN_POINTS speedups (baseline
    included) count."""
    data, exp = {}, None
    for line in profile_text.splitlines():
        parts = line.split("\t")
        kv = dict(p.split("=", 1) for p in parts[1:] if "=" in p)
        if parts[0] == "experiment":
            exp = kv
        elif parts[0] in ("throughput-point", "progress-point") and exp:
            try:
                key = (exp["selected"], kv["name"], float(exp["speedup"]))
                d = data.setdefault(key, [0, 0])
                d[0] += int(kv["delta"])
                d[1] += int(exp["duration"])
            except (KeyError, ValueError):
                pass
    by_line = {}
    for (sel, point, speedup), (delta, duration) in data.items():
        by_line.setdefault(sel, {}).setdefault(point, {})[speedup] = (delta, duration)
    impacts = {}
    for sel, points in by_line.items():
        best = None
        for point, m in points.items():
            if 0.0 not in m or m[0.0][0] <= 0:
                continue
            base = m[0.0][1] / m[0.0][0]
            meas = sorted((s, (base - d[1] / d[0]) / base) for s, d in m.items() if d[0] > 0)
            meas = [x for x in meas if -1 <= x[1] <= 2]
            if len(meas) < min_points:
                continue
            area, top = 0.0, 0.0
            for (s0, p0), (s1, p1) in zip(meas, meas[1:]):
                area += (p0 + p1) / 2 * (s1 - s0)
                if s1 > 0:
                    top = max(top, area / s1)
            best = top if best is None else max(best, top)
        if best is not None:
            impacts[sel] = best
    return impacts


def run_coz(case, b, work, runs):
    exe = b.get("coz")
    d = os.path.join(work, "coz-runs")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    profile = os.path.join(d, "profile.coz")
    mode = ["--end-to-end"] if not case["coz_progress"] else []
    for i in range(runs):
        # COZ does not follow fork()ed children (they hang): a run that
        # takes longer than COZ_TIMEOUT fails the tool for this case.
        corpus.run(case, exe, "buggy", os.path.join(d, "run.%d" % i),
                   wrapper=["coz", "run"] + mode + ["-o", profile, "---"], timeout=COZ_TIMEOUT)
    text = open(profile).read() if os.path.exists(profile) else ""
    n_exp = text.count("\nexperiment\t") + text.startswith("experiment\t")
    impacts = coz_line_impacts(text)
    lines = line_functions(exe)
    fn_impact = {}
    for sel, imp in impacts.items():
        path, _, ln = sel.rpartition(":")
        for fn in lines.get((os.path.basename(path), int(ln) if ln.isdigit() else -1), ()):
            fn_impact[fn] = max(fn_impact.get(fn, float("-inf")), imp)
    rows = [{"name": n, "impact": v} for n, v in sorted(fn_impact.items(), key=lambda x: -x[1])]
    return {"rank": corpus.rank_of(rows, case["root_cause"]), "ranked": len(rows),
            "top": rows[0]["name"] if rows else None, "experiments": n_exp,
            "lines_with_impact": len(impacts), "mode": "progress points" if not mode else "end-to-end",
            "runs": runs}


# ------------------------------------------------------------------- a case
def median_run(runs):
    """The run whose rank is the median of all runs (not ranked = worst);
    all ranks are kept in "ranks". A failed run makes the result failed."""
    failed = [r for r in runs if "error" in r]
    if failed:
        return dict(failed[0])
    key = lambda r: r["rank"] if r.get("rank") else float("inf")  # noqa: E731
    ordered = sorted(runs, key=key)
    med = dict(ordered[(len(ordered) - 1) // 2])
    med["ranks"] = [r.get("rank") for r in runs]
    return med


def run_case(name, opts):
    """All tools on one case (runs in a worker process). Returns the case's
    JSON record."""
    started = time.time()
    case = corpus.load_case(name)
    work = os.path.join(opts["work"], name)
    b = Builds(case, work)
    res = {"case": name, "modelled_on": case["modelled_on"], "pattern": case["pattern"],
           "root_cause": case["root_cause"], "fix": case["fix"], "shapes": case["shapes"],
           "tags": case["tags"], "build": case["build"], "opt": case["opt"], "lang": case["lang"],
           "normal_args": case["normal_args"], "buggy_args": case["buggy_args"], "tools": {}}
    tools, unavailable = opts["tools"], opts["unavailable"]
    gprof_buggy = None

    def attempt(fn, *args):
        try:
            return fn(*args)
        except (corpus.CaseError, subprocess.TimeoutExpired, ValueError, OSError) as e:
            log("%s: %s" % (name, str(e)[-300:]))
            return {"error": str(e)[-1500:]}

    for tool in tools:
        t0 = time.time()
        if tool in unavailable:
            cols = ("perf", "perf_children") if tool == "perf" else (tool,)
            for c in cols:
                res["tools"][c] = None
                res.setdefault("unavailable", {})[c] = unavailable[tool]
            continue
        if tool == "hist":
            res["tools"]["hist"] = attempt(run_hist, case, b, work, opts["reps"])
        elif tool == "coz":
            res["tools"]["coz"] = attempt(run_coz, case, b, work, opts["coz_runs"])
        elif tool == "contexts":
            res["tools"]["contexts"] = median_run(
                [attempt(run_contexts, case, b, work, i) for i in range(opts["repeat"])])
        elif tool == "perf":
            runs = [attempt(run_perf, case, b, work, i) for i in range(opts["repeat"])]
            for col in ("perf", "perf_children"):
                res["tools"][col] = median_run([r[col] if "error" not in r else r for r in runs])
        elif tool == "gprof":
            runs = []
            for i in range(opts["repeat"]):
                r = attempt(run_gprof, case, b, work, i)
                if isinstance(r, tuple):
                    r, extra = r
                    gprof_buggy = gprof_buggy or extra
                runs.append(r)
            res["tools"]["gprof"] = median_run(runs)
        else:
            runs = [attempt(run_vprof, case, b, work, i) for i in range(opts["repeat"])]
            res["tools"]["vprof"] = median_run(runs)
            res["tools"]["contexts_vprof"] = median_run(
                [r if "error" in r else r.get("ctx") or {"error": "no contexts"} for r in runs])
        res["tools"][tool if tool != "perf" else "perf"]["seconds"] = round(time.time() - t0, 1)
    if opts["fixcheck"]:
        try:
            b.get("gprof")
            res["fix_check"] = corpus.fix_check(case, work, buggy=gprof_buggy)
        except (corpus.CaseError, subprocess.TimeoutExpired, OSError) as e:
            res["fix_check"] = {"ok": False, "why": str(e)[-1500:]}
    res["seconds"] = round(time.time() - started, 1)
    return res


# ------------------------------------------------------------------- tables
def rank_key(r):
    return r if r else float("inf")


def cell_rank(tools, col):
    """'-' not requested, 'n/a' not available here, 'err' failed, 'NR' the
    tool's output does not contain the root cause, else the rank (with the
    range of the repetitions when they disagree)."""
    if col not in tools:
        return "-"
    r = tools[col]
    if r is None:
        return "n/a"
    if "error" in r:
        return "err"
    cell = str(r["rank"]) if r.get("rank") else "NR"
    ranks = r.get("ranks") or []
    if len(set(ranks)) > 1:
        show = [x for x in ranks if x]
        lo = min(show) if show else "NR"
        hi = "NR" if None in ranks else max(show)
        cell += " (%s-%s)" % (lo, hi)
    return cell


def table_rows(results):
    rows = []
    for res in results:
        v = res["tools"].get("vprof")
        bb = line = cls = "n/a"
        if v and "error" not in v and v.get("rank"):
            bb = ("%s, %s" % (v["bb_dist_mean"], v["bb_dist_min"])
                  if v.get("bb_dist_min") is not None else "n/a")
            line = str(v["line_dist_min"]) if v.get("line_dist_min") is not None else "n/a"
            cls = {True: "yes", False: "no (%s)" % v.get("pattern"), None: "NC"}[v.get("pattern_ok")]
        fc = res.get("fix_check")
        fix = "-" if fc is None else ("ok" if fc.get("ok") else "FAIL")
        rows.append((res["case"], res["pattern"].replace("_", " "), ",".join(res["tags"]),
                     cell_rank(res["tools"], "vprof"), bb, line, cls)
                    + tuple(cell_rank(res["tools"], c) for c, _ in COLUMNS[1:]) + (fix,))
    return rows


HDR = ("case", "pattern", "shape", "vprof", "bb-dist", "line", "class") + \
      tuple(h for _, h in COLUMNS[1:]) + ("fix",)


def tool_ranks(results, col):
    """Median ranks of COL over the cases where it ran (None = not ranked)."""
    return [r["tools"][col].get("rank") for r in results
            if r["tools"].get(col) and "error" not in r["tools"][col]]


def summary_lines(results):
    out = []
    for col, head in COLUMNS:
        ranks = tool_ranks(results, col)
        if not ranks:
            continue
        med = statistics.median_low(sorted(rank_key(x) for x in ranks))
        out.append("%-9s first in %2d/%d, top-5 in %2d/%d, median rank %s" % (
            head, sum(1 for x in ranks if x == 1), len(ranks),
            sum(1 for x in ranks if x and x <= 5), len(ranks),
            "NR" if med == float("inf") else med))
    return out


def shape_summary(results):
    """{tag: {column: (first, top5, n)}} over the cases carrying the tag."""
    tags = sorted({t for r in results for t in r["tags"]})
    out = {}
    for t in tags:
        sub = [r for r in results if t in r["tags"]]
        out[t] = {}
        for col, _ in COLUMNS:
            ranks = tool_ranks(sub, col)
            if ranks:
                out[t][col] = (sum(1 for x in ranks if x == 1),
                               sum(1 for x in ranks if x and x <= 5), len(ranks))
    return out


def shape_table(results):
    ss = shape_summary(results)
    cols = [c for c, _ in COLUMNS if any(c in v for v in ss.values())]
    hdr = ["shape", "cases"] + [h for c, h in COLUMNS if c in cols]
    rows = []
    for t, v in ss.items():
        n = max((x[2] for x in v.values()), default=0)
        rows.append([t, str(n)] + ["%d / %d" % v[c][:2] if c in v else "-" for c in cols])
    return hdr, rows


def fmt_text(hdr, rows):
    widths = [max(len(str(x[i])) for x in rows + [hdr]) for i in range(len(hdr))]
    fmt = "  ".join("%%-%ds" % w for w in widths)
    lines = [fmt % tuple(hdr), "  ".join("-" * w for w in widths)]
    lines += [fmt % tuple(r) for r in rows]
    return "\n".join(lines)


def fmt_md(hdr, rows):
    lines = ["| " + " | ".join(hdr) + " |", "|" + "---|" * len(hdr)]
    lines += ["| " + " | ".join(str(x) for x in r) + " |" for r in rows]
    return "\n".join(lines)


LEGEND = ("Median rank of the root-cause function over the repeated runs, the range in brackets "
          "when they disagree (hist-disc: one analysis of N normal + N buggy runs; coz: one "
          "profile of the buggy runs). 1 = first; NR = not in the tool's ranking; n/a = tool "
          "not available (reason in the JSON); err = a run failed (message in the JSON); - = not "
          "requested. bb-dist: (mean, min) basic-block distance between vprof's reported "
          "locations in the root cause and the fix; line: minimum line distance; class: vprof's "
          "bug pattern against the case's (NC: none reported). perf: self time; perf-ch: self + "
          "children. contexts: rank of the first calling context (path) of vprof-report "
          "--contexts on perf record -g of a normal and a buggy run that holds the root cause "
          "(the JSON adds f_min, its distance in frames from that path's hottest function); "
          "ctx-vprof: the same on the vprof column's own runs, from their stack samples "
          "(VPROF_STACKS; no perf, no other build). "
          "fix: the fixed build restores the normal run's call counts and prints the "
          "same (corpus.fix_check).")


CTX_COLS = (("contexts", "perf record -g"), ("contexts_vprof", "vprof's stacks"))


def contexts_table(results):
    """IntroPerf's Table 2 metrics per case for the context columns: p_min,
    the rank of the first path holding the root cause (median run), and
    f_min, the frames between it and that path's hottest function."""
    cols = [(c, h) for c, h in CTX_COLS if tool_ranks(results, c)]
    hdr = ["case"]
    for _, h in cols:
        hdr += ["p_min (%s)" % h, "f_min"]
    rows = []
    for res in results:
        row = [res["case"]]
        for c, _ in cols:
            r = res["tools"].get(c)
            row.append(cell_rank(res["tools"], c))
            row.append(str(r["f_min"]) if r and "error" not in r and r.get("f_min") is not None
                       else "-")
        rows.append(row)
    return hdr, rows


def contexts_summary(results):
    out = []
    for c, h in CTX_COLS:
        got = [res["tools"][c] for res in results
               if res["tools"].get(c) and "error" not in res["tools"][c]]
        if not got:
            continue
        f = sorted(r["f_min"] for r in got if r.get("f_min") is not None)
        out.append("%-15s p_min 1 in %d/%d, <= 5 in %d/%d; f_min 0 in %d of the %d found, "
                   "median %s" % (h, sum(1 for r in got if r.get("rank") == 1), len(got),
                                  sum(1 for r in got if r.get("rank") and r["rank"] <= 5),
                                  len(got), sum(1 for x in f if x == 0), len(f),
                                  statistics.median_low(f) if f else "-"))
    return out


def write_markdown(results, doc, path):
    m = doc["machine"]
    with open(path, "w") as f:
        f.write("Run %s on %d CPUs (%s), kernel %s, load average %s at start, %.0f s; vprof "
                "commit %s; command: `%s`.\n\n"
                % (doc["generated"], m["nproc"] or 0, m["cpu"], m["kernel"], m.get("loadavg"),
                   doc["seconds"], doc["vprof_commit"], doc["command"]))
        f.write(fmt_md(HDR, table_rows(results)) + "\n\n" + LEGEND + "\n\n")
        f.write("Per tool (medians of the cases):\n\n")
        f.write("\n".join("    " + l for l in summary_lines(results)) + "\n\n")
        f.write("Per shape (first / top 5 among the cases with that shape):\n\n")
        hdr, rows = shape_table(results)
        f.write(fmt_md(hdr, rows) + "\n")
        cs = contexts_summary(results)
        if cs:
            f.write("\nCalling contexts (IntroPerf's metrics: p_min, the rank of the first path "
                    "holding the root cause; f_min, its distance in frames from that path's "
                    "hottest function):\n\n")
            f.write("\n".join("    " + l for l in cs) + "\n\n")
            hdr, rows = contexts_table(results)
            f.write(fmt_md(hdr, rows) + "\n")


def machine():
    model = ""
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        model = next((l.split(":", 1)[1].strip() for l in out.splitlines()
                      if l.startswith("Model name")), "")
    except OSError:
        pass
    try:
        load = " ".join(open("/proc/loadavg").read().split()[:3])
    except OSError:
        load = None
    return {"nproc": os.cpu_count(), "cpu": model, "kernel": platform.release(), "loadavg": load}


def vprof_commit():
    try:
        h = subprocess.run(["git", "-C", corpus.ROOT, "rev-parse", "HEAD"], capture_output=True,
                           text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", corpus.ROOT, "status", "--porcelain", "--",
                                "libvprof", "vprof-report", "schema-gen", "dwarf-meta",
                                "stack-scanner"], capture_output=True, text=True).stdout.strip()
        return h + ("-dirty" if dirty else "") if h else "unknown"
    except OSError:
        return "unknown"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", default="", help="comma-separated case names (default: all)")
    ap.add_argument("--tools", default=",".join(TOOLS))
    ap.add_argument("--reps", type=int, default=5, help="runs per side for hist-disc (5)")
    ap.add_argument("--repeat", type=int, default=3,
                    help="independent runs of vprof, gprof and perf per case; the table "
                         "shows the median rank (3)")
    ap.add_argument("--coz-runs", type=int, default=5, help="buggy runs under COZ per case (5)")
    ap.add_argument("--jobs", type=int, default=2, help="cases run at the same time (2)")
    ap.add_argument("--no-fixcheck", action="store_true", help="skip the fix verification")
    ap.add_argument("--work", default=os.path.join(corpus.ROOT, "build", "bench", "bugs"))
    ap.add_argument("--out", default=os.path.join(corpus.BENCH, "results", "bugs.json"))
    a = ap.parse_args()
    tools = [t for t in a.tools.split(",") if t]
    for t in tools:
        if t not in TOOLS:
            ap.error("unknown tool '%s' (known: %s)" % (t, ", ".join(TOOLS)))
    if a.jobs < 1 or a.jobs > 2:
        ap.error("--jobs must be 1 or 2 (the machine's budget)")
    names = [n for n in a.cases.split(",") if n] or corpus.case_names()
    for n in names:
        corpus.load_case(n)              # bad case.conf: fail before running anything

    unavailable = {}
    if not all(os.access(p, os.X_OK) for p in (VPROF_REPORT, VPROF_META,
                                               os.path.join(VPROF_BIN, "vprof-cc"))):
        unavailable["vprof"] = unavailable["hist"] = \
            "vprof-cc, vprof-meta or vprof-report not built in %s (run make)" % VPROF_BIN
    if "perf" in tools and not corpus.perf_usable():
        unavailable["perf"] = "perf record -e cpu-clock does not work on this machine"
    if not shutil.which("gprof"):
        unavailable["gprof"] = "binutils gprof not installed"
    if "contexts" in tools and not corpus.perf_usable():
        unavailable["contexts"] = "perf record -g does not work on this machine"
    if "coz" in tools and not coz_usable():
        unavailable["coz"] = "coz not installed (Debian package coz-profiler)"

    opts = {"work": a.work, "tools": tools, "unavailable": unavailable, "reps": a.reps,
            "repeat": max(1, a.repeat), "coz_runs": a.coz_runs, "fixcheck": not a.no_fixcheck}
    m, started, commit = machine(), time.time(), vprof_commit()
    results = {}
    with concurrent.futures.ProcessPoolExecutor(max_workers=a.jobs) as ex:
        futs = {ex.submit(run_case, n, opts): n for n in names}
        for i, fut in enumerate(concurrent.futures.as_completed(futs), 1):
            n = futs[fut]
            try:
                res = fut.result()
            except Exception as e:             # a bug in this script: report, keep the rest
                res = {"case": n, "error": repr(e)}
                log("%s: %r" % (n, e))
                continue
            results[n] = res
            log("[%d/%d %4.0fs] %s: %s" % (i, len(names), time.time() - started, n, ", ".join(
                "%s %s" % (h, cell_rank(res["tools"], c)) for c, h in COLUMNS
                if c in res["tools"])))
    ordered = [results[n] for n in names if n in results]

    print(fmt_text(HDR, table_rows(ordered)))
    print()
    print(LEGEND)
    print()
    for line in summary_lines(ordered):
        print(line)
    print()
    hdr, rows = shape_table(ordered)
    print(fmt_text(hdr, rows))
    for line in contexts_summary(ordered):
        print(line)
    doc = {"generated": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
           "vprof_commit": commit, "command": " ".join([os.path.basename(sys.argv[0])] + sys.argv[1:]),
           "machine": m, "seconds": round(time.time() - started, 1), "hist_reps": a.reps,
           "repeat": opts["repeat"], "coz_runs": a.coz_runs, "coz_min_points": COZ_MIN_POINTS,
           "jobs": a.jobs, "unavailable": unavailable, "summary": summary_lines(ordered),
           "contexts_summary": contexts_summary(ordered),
           "shapes": {t: {c: list(v) for c, v in d.items()} for t, d in shape_summary(ordered).items()},
           "cases": ordered}
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with open(a.out, "w") as f:
        json.dump(doc, f, indent=1)
    md = os.path.splitext(a.out)[0] + ".md"
    write_markdown(ordered, doc, md)
    print("\nwrote %s and %s (%.0f s)" % (a.out, md, doc["seconds"]))
    bad = [r["case"] for r in ordered if r.get("fix_check") and not r["fix_check"].get("ok")]
    if bad:
        log("fix check failed: %s" % ", ".join(bad))
    return 1 if bad or len(ordered) < len(names) else 0


if __name__ == "__main__":
    sys.exit(main())
