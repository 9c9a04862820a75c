#!/usr/bin/env python3
"""Real applications from Debian source with injected performance defects
(bench/apps/APP/DEFECT/): builds each application once per tool from its
Debian bookworm source package, applies each defect's 1-3 line patch to a
copy of those builds (only the patched file and, for vprof's component
build, the component's files are recompiled), checks that the defect
changes only time (the patched program's output equals the unpatched
program's on the normal and the buggy workload), measures the slowdown
(CPU time of the buggy workload, patched / unpatched, median of REPEAT
runs) and ranks the root-cause function with

  vprof      vprof-cc build with VPROF_COMPONENT = the defect's component
             files (the paper's Table 2 setting), 1 normal + 1 buggy run
  vprof_all  the same with the schema of every file of the program
  gprof      gcc -pg build, buggy run, binutils gprof flat profile
  perf       plain gcc build, buggy run, perf record -e cpu-clock -g, self
             time (perf) and self + callees (perf_children)

REPEAT times each (median and range). Writes bench/results/apps-APP.json,
one record per defect; bench/tools/apps_result.py prints the table.

usage: run.py [--apps a,b] [--defects x,y] [--repeat N]
              [--tools vprof,vprof_all,gprof,perf] [--work DIR]
Builds and downloads live in --work ($VPROF_APPS_DIR, /tmp/vprof-apps),
never in the repository; they are reused on the next run (a build is redone
when its flags, its patch or vprof's schema pass changed)."""
import argparse
import hashlib
import json
import os
import shlex
import shutil
import socket
import statistics
import subprocess
import sys
import time
import zlib

APPS = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.dirname(APPS)
ROOT = os.path.dirname(BENCH)
sys.path.insert(0, APPS)
sys.path.insert(0, os.path.join(BENCH, "tools"))
import defects  # noqa: E402
import corpus  # noqa: E402  (gprof/perf ranking rules shared with run_bugs.py)
import run_bugs  # noqa: E402  (vprof-report invocation, bb distance)

VPROF_BIN = os.environ.get("VPROF_BIN", os.path.join(ROOT, "build", "bin"))
VPROF_CC = os.path.join(VPROF_BIN, "vprof-cc")
VPROF_CXX = os.path.join(VPROF_BIN, "vprof-c++")
SCHEMA_PASS = os.path.join(os.path.dirname(VPROF_BIN), "lib", "vprof-schema.so")
TOOLS = ("vprof", "vprof_all", "gprof", "perf")

# Inline only what the source asks to inline (`inline`, class bodies): the
# applications keep their hot helpers inlined as their authors meant, while
# ordinary functions -- every root cause here -- stay symbols that every
# tool can name (gcc would otherwise inline a static function called once,
# or clone it as foo.constprop.0). gcc and clang get the same policy.
GCC_FLAGS = ("-O2 -g -fno-inline-functions -fno-inline-small-functions "
             "-fno-inline-functions-called-once -fno-ipa-cp -fno-ipa-sra -fno-ipa-icf")
CLANG_FLAGS = "-O2 -g -finline-hint-functions"
NO_UNIT = "vprof-apps-no-unit-selected"      # a VPROF_COMPONENT glob matching no file
VARIANTS = {
    "plain": {"cc": "gcc", "cxx": "g++", "flags": GCC_FLAGS, "ldflags": ""},
    "gprof": {"cc": "gcc", "cxx": "g++", "flags": GCC_FLAGS + " -pg", "ldflags": "-pg"},
    "vcomp": {"cc": VPROF_CC, "cxx": VPROF_CXX, "flags": CLANG_FLAGS, "ldflags": "",
              "vprof": True, "component": True},
    "vall": {"cc": VPROF_CC, "cxx": VPROF_CXX, "flags": CLANG_FLAGS, "ldflags": "",
             "vprof": True},
}
MARK = ".vprof-apps-build"


def log(msg):
    print(msg, file=sys.stderr, flush=True)


class RunError(Exception):
    pass


def sha(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        h.update(f.read())
    return h.hexdigest()[:16]


# ------------------------------------------------------------------ source
def fetch_source(app, work):
    p = subprocess.run(["bash", "-c", 'source "$1" && debsrc_fetch "$2" "$3"', "_",
                        os.path.join(APPS, "lib", "debsrc.sh"), app["package"],
                        os.path.join(work, "src")], capture_output=True, text=True)
    if p.returncode != 0:
        raise RunError("fetching %s: %s" % (app["package"], p.stderr.strip()[-1500:]))
    return p.stdout.strip().splitlines()[-1]


# ------------------------------------------------------------------ builds
def relocate(tree, old, new):
    """A copied build tree still names its original directory in generated
    text files (Makefiles, libtool scripts, CMake caches): point them at the
    copy, so make rebuilds the copy's patched file and nothing else."""
    old_b, new_b = old.encode(), new.encode()
    for d, _, files in os.walk(tree):
        for f in files:
            p = os.path.join(d, f)
            if os.path.islink(p) or os.path.getsize(p) > (8 << 20):
                continue
            with open(p, "rb") as fh:
                data = fh.read()
            if old_b not in data or b"\0" in data[:8192]:
                continue
            st = os.stat(p)
            with open(p, "wb") as fh:
                fh.write(data.replace(old_b, new_b))
            os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))


def build_key(app, variant, defect):
    v = VARIANTS[variant]
    key = {"variant": variant, "flags": v["flags"], "ldflags": v["ldflags"],
           "script": sha(app["script"]), "patch": sha(defect["patch"]) if defect else None}
    if v.get("vprof"):
        key["schema_pass"] = sha(SCHEMA_PASS)
        key["vprof_cc"] = sha(VPROF_CC)     # its flags and link line are part of the build
        key["vprof_cc_env"] = app.get("vprof_cc_env", "")
        if v.get("component") and defect:
            key["component"] = defect["component"]
    return key


def run_build(app, variant, tree, component, logf):
    v = VARIANTS[variant]
    env = dict(os.environ, CC=v["cc"], CXX=v["cxx"], CFLAGS=v["flags"], CXXFLAGS=v["flags"],
               LDFLAGS=v["ldflags"], JOBS=str(JOBS))
    if v.get("vprof"):
        env.update(kv.split("=", 1) for kv in shlex.split(app.get("vprof_cc_env", "")))
        if v.get("component"):
            env["VPROF_COMPONENT"] = component
        else:
            env.pop("VPROF_COMPONENT", None)
    with open(logf, "a") as f:
        p = subprocess.run([app["script"], "build", tree], env=env, stdout=f,
                           stderr=subprocess.STDOUT)
    if p.returncode != 0:
        with open(logf, errors="replace") as f:
            tail = f.read()[-2500:]
        raise RunError("%s build of %s failed (exit %d), log %s:\n%s"
                       % (variant, tree, p.returncode, logf, tail))


def build(app, variant, src, work, defect=None):
    """The tree of VARIANT for DEFECT (None: the unpatched base), built or
    reused; returns its path."""
    bdir = os.path.join(work, app["name"], "builds", variant)
    tree = os.path.join(bdir, defect["name"] if defect else "base")
    key = build_key(app, variant, defect)
    mark = os.path.join(tree, MARK)
    if os.path.exists(mark):
        with open(mark) as f:
            if json.load(f) == key:
                return tree
    base = None if defect is None else build(app, variant, src, work)
    logf = tree + ".log"
    log("   build %s/%s %s" % (app["name"], variant, defect["name"] if defect else "base"))
    t0 = time.time()
    shutil.rmtree(tree, ignore_errors=True)
    os.makedirs(bdir, exist_ok=True)
    if os.path.exists(logf):
        os.remove(logf)
    shutil.copytree(base or src, tree, symlinks=True)
    if os.path.exists(os.path.join(tree, MARK)):
        os.remove(os.path.join(tree, MARK))
    if base:
        relocate(tree, base, tree)
        with open(defect["patch"]) as f:
            p = subprocess.run(["patch", "-p1", "-s", "-d", tree], stdin=f,
                               capture_output=True, text=True)
        if p.returncode != 0:
            raise RunError("%s does not apply to %s: %s" % (defect["patch"], tree,
                                                            p.stdout + p.stderr))
        if VARIANTS[variant].get("component"):
            now = time.time()
            for c in defect["components"]:
                os.utime(os.path.join(tree, c), (now, now))
    # a unit is named by its path as compiled (relative or absolute): match both
    component = (",".join(c + ",*/" + c for c in defect["components"]) if defect
                 else NO_UNIT)
    run_build(app, variant, tree, component, logf)
    exe = os.path.join(tree, app["exe"])
    if not os.access(exe, os.X_OK):
        raise RunError("%s build of %s left no %s" % (variant, tree, exe))
    with open(mark, "w") as f:
        json.dump(key, f)
    log("   built in %.0f s" % (time.time() - t0))
    return tree


# -------------------------------------------------------------------- runs
def app_port(app):
    """The same loopback port for every run of APP (the first free one from
    a per-app base): a server's configuration -- its port is a global the
    schema sees -- must not differ between the normal and the buggy run
    merely because the harness chose another port."""
    base = 20000 + zlib.crc32(app["name"].encode()) % 20000
    for port in range(base, base + 200):
        with socket.socket() as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)   # as the servers do
            try:
                s.bind(("127.0.0.1", port))
                return port
            except OSError:
                continue
    raise RunError("no free loopback port in %d-%d" % (base, base + 199))


def run(app, tree, workload, rundir, env=None, wrap=(), timeout=1800):
    """One run of WORKLOAD with the program of TREE; the program's working
    directory and output directory is RUNDIR (emptied first). Returns the
    (wall, user+sys) seconds of the program as /usr/bin/time measured it."""
    shutil.rmtree(rundir, ignore_errors=True)
    os.makedirs(rundir)
    penv = {"GMON_OUT_PREFIX": os.path.join(rundir, "gmon")}
    penv.update(env or {})
    timef = os.path.join(rundir, "time.txt")
    wrap = ["/usr/bin/time", "-f", "%e %U %S", "-o", timef] + list(wrap)
    e = dict(os.environ, PROG_ENV=" ".join("%s=%s" % kv for kv in penv.items()),
             PROG_WRAP=shlex.join(wrap), PORT=str(app_port(app)),
             APP_WORK=os.path.join(WORK, app["name"]))
    with open(os.path.join(rundir, "driver.log"), "w") as f:
        try:
            p = subprocess.run([app["script"], "run", tree, workload, rundir], env=e,
                               stdout=f, stderr=subprocess.STDOUT, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise RunError("%s %s timed out after %d s (%s)" % (tree, workload, timeout, rundir))
    if p.returncode != 0:
        with open(os.path.join(rundir, "driver.log"), errors="replace") as f:
            tail = f.read()[-1500:]
        raise RunError("%s: workload %s failed (exit %d) in %s:\n%s"
                       % (tree, workload, p.returncode, rundir, tail))
    try:
        with open(timef) as f:
            wall, user, sys_ = (float(x) for x in f.read().split()[-3:])
    except (OSError, ValueError):
        raise RunError("%s: no time measurement in %s" % (tree, timef))
    return wall, user + sys_


def outputs_equal(a, b):
    fa, fb = os.path.join(a, "out.txt"), os.path.join(b, "out.txt")
    if not (os.path.exists(fa) and os.path.exists(fb)):
        raise RunError("workload wrote no out.txt in %s or %s" % (a, b))
    return sha(fa) == sha(fb) and os.path.getsize(fa) > 0


# ------------------------------------------------------------------- ranks
def position(rows, root):
    """1-based position of ROOT (as defect.conf names it) in a ranked list,
    with its row; any spelling of the symbol counts (gcc clones, mangled
    or demangled C++ with or without template arguments)."""
    for i, r in enumerate(rows, 1):
        if corpus.same_function(r["name"], root):
            return i, r
    return None, None


def evidence(f):
    keys = ("name", "rank", "calibrated_cost", "raw_cost", "pc_cost", "var_cost",
            "normal_raw_cost", "discount", "discounter", "dimension", "variable", "pattern")
    return {k: f.get(k) for k in keys}


def rank_vprof(defect, exe, ndir, bdir, out_json):
    funcs = run_bugs.vprof_report([ndir], [bdir], out_json)
    _, fn = position(funcs, defect["root_cause"])
    r = corpus.merged_rank(funcs, defect["root_cause"], key=lambda f: f["name"])
    # vprof-report lists every function of the schema; "costed" counts those
    # with a cost: below them the order of zero-cost functions means nothing
    res = {"rank": r, "ranked": len(funcs), "top": funcs[0]["name"] if funcs else None,
           "costed": sum(1 for f in funcs if (f.get("calibrated_cost") or 0) > 0),
           "top5": [evidence(f) for f in funcs[:5]]}
    with open(out_json) as f:
        doc = json.load(f)
    res["samples"] = {side: (doc.get(side) or {}).get("value_samples")
                      for side in ("normal", "buggy")}
    if fn:
        blocks = run_bugs.read_blocks(exe, fn["name"])
        bb_mean, bb_min, line_min = run_bugs.distances(defect, fn, blocks)
        pat = run_bugs.norm_pattern(fn.get("pattern"))
        res.update(evidence(fn))
        res.update({"rank": r, "bb_dist_mean": bb_mean, "bb_dist_min": bb_min,
                    "line_dist_min": line_min, "pattern": pat,
                    "pattern_ok": None if pat == "none" else pat == defect["pattern"],
                    "locations": fn.get("locations")})
    return res


def has_function(exe, root):
    """Is ROOT a function symbol of EXE? A compiler may fold a small function
    away (inlined everywhere, or its constant result propagated into its
    callers): no profiler can then name it, and its rank is not a ranking
    failure."""
    p = subprocess.run(["nm", "--defined-only", exe], capture_output=True, text=True)
    syms = [f[2] for f in (l.split() for l in p.stdout.splitlines())
            if len(f) == 3 and f[1] in "tTwW"]
    return any(corpus.same_function(s, root) for s in syms)


def rank_rows(rows, root):
    r, _ = position(rows, root)
    return {"rank": r, "ranked": len(rows), "top": rows[0]["name"] if rows else None,
            "top5": [x["name"] for x in rows[:5]]}


# ------------------------------------------------------------------ defect
def median_of(runs):
    ok = [r for r in runs if "error" not in r]
    if not ok:
        return runs[0] if runs else None
    med = run_bugs.median_run(ok)
    med["ranks"] = [r.get("rank") if "error" not in r else "err" for r in runs]
    return med


def do_defect(app, d, trees, tools, repeat, work):
    root = d["root_cause"]
    w = os.path.join(work, app["name"], "runs", d["name"])
    res = {"case": "%s/%s" % (app["name"], d["name"]), "app": app["name"],
           "package": app["package"], "version": app.get("version"),
           "language": app["language"], "modelled_on": d["modelled_on"],
           "pattern": d["pattern"], "shape": d["shape"], "root_cause": root,
           "fix": d["fix"], "changed_lines": d["changed_lines"],
           "component": d["component"], "normal_args": d["normal"],
           "buggy_args": d["buggy"], "tools": {}}
    t0 = time.time()
    # 1. the defect changes only time: outputs equal to the unpatched program's
    same = {}
    for wl in ("normal", "buggy"):
        a = os.path.join(w, "check", "base-" + wl)
        b = os.path.join(w, "check", "defect-" + wl)
        run(app, trees["plain"]["base"], d[wl], a)
        run(app, trees["plain"][d["name"]], d[wl], b)
        same[wl] = outputs_equal(a, b)
    res["output_identical"] = same
    # 2. slowdown: buggy workload, patched vs unpatched (interleaved runs)
    base_t, bug_t = [], []
    for i in range(repeat):
        base_t.append(run(app, trees["plain"]["base"], d["buggy"],
                          os.path.join(w, "time", "base.%d" % i)))
        bug_t.append(run(app, trees["plain"][d["name"]], d["buggy"],
                         os.path.join(w, "time", "defect.%d" % i)))
    nt = run(app, trees["plain"][d["name"]], d["normal"], os.path.join(w, "time", "normal"))
    med = lambda xs: statistics.median(xs)  # noqa: E731
    res["slowdown"] = {
        "cpu_ratio": round(med([c for _, c in bug_t]) / max(med([c for _, c in base_t]), 1e-3), 2),
        "wall_ratio": round(med([x for x, _ in bug_t]) / max(med([x for x, _ in base_t]), 1e-3), 2),
        "cpu_s": {"unpatched": [c for _, c in base_t], "patched": [c for _, c in bug_t]},
        "wall_s": {"unpatched": [x for x, _ in base_t], "patched": [x for x, _ in bug_t]},
        "normal_cpu_s": nt[1], "normal_wall_s": nt[0]}
    log("   %s: outputs identical normal %s, buggy %s; slowdown CPU x%.2f, wall x%.2f"
        % (d["name"], same["normal"], same["buggy"], res["slowdown"]["cpu_ratio"],
           res["slowdown"]["wall_ratio"]))
    # 3. ranks
    vprof_env = dict(kv.split("=", 1) for kv in shlex.split(app.get("vprof_env", "")))
    variant_of = {"vprof": "vcomp", "vprof_all": "vall", "gprof": "gprof", "perf": "plain"}
    absent = [t for t in tools
              if not has_function(os.path.join(trees[variant_of[t]][d["name"]], app["exe"]), root)]
    if absent:
        res["root_cause_absent"] = absent
        log("   %s: %s is not a function of the %s build(s): folded away by the compiler"
            % (d["name"], root, ", ".join(absent)))
    perf_ok = corpus.perf_usable()
    for tool in tools:
        if tool == "perf" and not perf_ok:
            res["tools"]["perf"] = None
            res.setdefault("unavailable", {})["perf"] = "perf record -e cpu-clock does not work here"
            continue
        runs = []
        for i in range(repeat):
            rd = os.path.join(w, tool, str(i))
            try:
                if tool in ("vprof", "vprof_all"):
                    tree = trees["vcomp" if tool == "vprof" else "vall"][d["name"]]
                    dirs = {}
                    for wl in ("normal", "buggy"):
                        dirs[wl] = os.path.join(rd, wl)
                        env = dict(vprof_env, VPROF_OUT=dirs[wl], VPROF_QUIET="1")
                        run(app, tree, d[wl], dirs[wl], env=env)
                    r = rank_vprof(d, os.path.join(tree, app["exe"]), dirs["normal"],
                                   dirs["buggy"], os.path.join(rd, "report.json"))
                elif tool == "gprof":
                    tree = trees["gprof"][d["name"]]
                    run(app, tree, d["buggy"], rd)
                    r = rank_rows(corpus.gprof_flat(os.path.join(tree, app["exe"]), rd), root)
                else:
                    tree = trees["plain"][d["name"]]
                    run(app, tree, d["buggy"], rd,
                        wrap=["perf", "record", "-q", "-e", "cpu-clock", "-F", "1000", "-g",
                              "-o", os.path.join(rd, "perf.data"), "--"])
                    r = rank_rows(corpus.perf_ranking(rd), root)
                    r["children"] = rank_rows(corpus.perf_ranking(rd, children=True), root)
                    os.remove(os.path.join(rd, "perf.data"))     # large; the ranks are kept
            except (RunError, corpus.CaseError, OSError, ValueError,
                    subprocess.TimeoutExpired) as e:
                r = {"error": str(e)[-1500:]}
                log("   %s %s run %d: %s" % (d["name"], tool, i, str(e)[-400:]))
            runs.append(r)
            log("   %s %s run %d: rank %s of %s" % (d["name"], tool, i, r.get("rank", "err"),
                                                  r.get("ranked", "-")))
        res["tools"][tool] = median_of(runs)
        if tool == "perf":
            # perf's children column: the same recordings ranked by self + callees
            res["tools"]["perf_children"] = median_of(
                [r.get("children", r) for r in runs])
            if res["tools"]["perf"]:
                res["tools"]["perf"].pop("children", None)
    res["seconds"] = round(time.time() - t0, 1)
    return res


def git_commit():
    p = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                       capture_output=True, text=True)
    dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True).stdout.strip()
    return p.stdout.strip() + ("+changes" if dirty else "")


def main():
    global JOBS, WORK
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--apps", default="", help="comma-separated apps (default: all)")
    ap.add_argument("--defects", default="", help="comma-separated defect names (default: all)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--tools", default=",".join(TOOLS))
    ap.add_argument("--work", default=os.environ.get("VPROF_APPS_DIR", "/tmp/vprof-apps"))
    ap.add_argument("--jobs", type=int, default=int(os.environ.get("JOBS", "2")))
    ap.add_argument("--build-only", action="store_true", help="build, do not run")
    ap.add_argument("--results", default=os.path.join(BENCH, "results"))
    a = ap.parse_args()
    JOBS, WORK = max(1, min(a.jobs, 2)), os.path.abspath(a.work)
    tools = [t for t in a.tools.split(",") if t]
    for t in tools:
        if t not in TOOLS:
            ap.error("unknown tool '%s' (known: %s)" % (t, ", ".join(TOOLS)))
    for t in (VPROF_CC, os.path.join(VPROF_BIN, "vprof-report")):
        if not os.access(t, os.X_OK):
            log("run.py: %s missing: run make first" % t)
            return 1
    try:
        names = [n for n in a.apps.split(",") if n] or defects.app_names()
        apps = [defects.load_app(n) for n in names]
        want = set(x for x in a.defects.split(",") if x)
        todo = [(app, [defects.load_defect(app, d) for d in app["defects"]
                       if not want or d in want]) for app in apps]
    except defects.DefectError as e:
        log("run.py: %s" % e)
        return 1
    status = 0
    for app, ds in todo:
        if not ds:
            continue
        log("== %s (%s)" % (app["name"], ", ".join(d["name"] for d in ds)))
        t0 = time.time()
        try:
            src = fetch_source(app, WORK)
            app["version"] = os.path.basename(src)
            trees = {v: {"base": build(app, v, src, WORK)} for v in ("plain", "gprof")}
            for v in ("vcomp", "vall"):
                trees[v] = {}
            for d in ds:
                for v in VARIANTS:
                    if (v == "vcomp" and "vprof" not in tools) or \
                       (v == "vall" and "vprof_all" not in tools):
                        continue
                    trees[v][d["name"]] = build(app, v, src, WORK, d)
        except RunError as e:
            log("run.py: %s: %s" % (app["name"], e))
            status = 1
            continue
        if a.build_only:
            continue
        out = os.path.join(a.results, "apps-%s.json" % app["name"])
        doc = {"generated": None, "command": "bench/apps/run.py " + " ".join(sys.argv[1:]),
               "commit": git_commit(), "machine": run_bugs.machine(), "repeat": a.repeat,
               "flags": {"gcc": GCC_FLAGS, "clang": CLANG_FLAGS}, "cases": []}
        if os.path.exists(out):
            with open(out) as f:
                old = json.load(f)
            # keep the records of defects not rerun this time (and still defined)
            rerun = {"%s/%s" % (app["name"], d["name"]) for d in ds}
            defined = {"%s/%s" % (app["name"], n) for n in app["defects"]}
            doc["cases"] = [c for c in old.get("cases", [])
                            if c["case"] in defined and c["case"] not in rerun]
        for d in ds:
            log("-- %s/%s (root cause %s)" % (app["name"], d["name"], d["root_cause"]))
            try:
                doc["cases"].append(do_defect(app, d, trees, tools, a.repeat, WORK))
            except (RunError, OSError) as e:
                log("run.py: %s/%s: %s" % (app["name"], d["name"], e))
                doc["cases"].append({"case": "%s/%s" % (app["name"], d["name"]),
                                     "error": str(e)[-1500:]})
                status = 1
            # written after every defect: a long run interrupted keeps what it measured
            doc["cases"].sort(key=lambda c: c["case"])
            doc["generated"] = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
            doc["seconds"] = round(time.time() - t0, 1)
            os.makedirs(a.results, exist_ok=True)
            with open(out, "w") as f:
                json.dump(doc, f, indent=1)
        log("wrote %s" % out)
    return status


JOBS, WORK = 2, "/tmp/vprof-apps"
if __name__ == "__main__":
    sys.exit(main())
