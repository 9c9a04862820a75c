#!/usr/bin/env python3
"""Runs the bug corpus through every diagnosis tool and prints the paper's
Table 3: for each case, the rank of the root-cause function according to
vprof (variable discounter, 1 normal + 1 buggy run), binutils gprof (flat
profile of the buggy run), perf (cpu-clock samples of the buggy run, when
the machine allows perf), and vprof's hist-discounter alone (the program
run without variable metadata, 5 normal + 5 buggy runs), plus vprof's
basic-block and line distance between its reported locations and the fix,
and whether its bug pattern matches. Writes the same as JSON.

A tool that is not built or not usable shows "n/a" with the reason in the
JSON; a run that fails shows "err". Nothing is estimated or filled in.

Usage: run_bugs.py [--cases A,B] [--tools vprof,gprof,perf,hist]
                   [--reps N] [--work DIR] [--out FILE]"""
import argparse
import json
import shlex
import os
import platform
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus  # noqa: E402

VPROF_BIN = os.environ.get("VPROF_BIN", os.path.join(corpus.ROOT, "build", "bin"))
VPROF_CC = os.path.join(VPROF_BIN, "vprof-cc")
VPROF_REPORT = os.path.join(VPROF_BIN, "vprof-report")
TOOLS = ("vprof", "gprof", "perf", "hist")


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
            if len(parts) >= 7 and parts[2] == function:
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
    information from the schema, all locations in the fix's file count."""
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


# ------------------------------------------------------------------- tools
def run_gprof(case, work):
    exe = os.path.join(work, "gprof", "prog")
    corpus.build(case, ["gcc", "-pg"], exe)
    out = os.path.join(work, "gprof", "buggy")
    shutil.rmtree(out, ignore_errors=True)
    corpus.run(case, exe, "buggy", out)
    rows = corpus.gprof_flat(exe, out)
    return {"rank": corpus.rank_of(rows, case["root_cause"]), "ranked": len(rows),
            "top": rows[0]["name"] if rows else None}


def run_perf(case, work):
    exe = os.path.join(work, "perf", "prog")
    corpus.build(case, ["gcc"], exe)
    out = os.path.join(work, "perf", "buggy")
    shutil.rmtree(out, ignore_errors=True)
    corpus.run(case, exe, "buggy", out,
               wrapper=["perf", "record", "-q", "-e", "cpu-clock", "-F", "1000",
                        "-o", os.path.join(out, "perf.data"), "--"])
    rows = corpus.perf_ranking(out)
    return {"rank": corpus.rank_of(rows, case["root_cause"]), "ranked": len(rows),
            "top": rows[0]["name"] if rows else None}


_built = set()


def vprof_build(case, work):
    """Builds once per invocation (vprof and hist share the binary); never
    reuses a binary of an earlier invocation, whose schema or metadata may
    come from older tools."""
    exe = os.path.join(work, "vprof", "prog")
    if exe not in _built:
        for stale in (exe, exe + ".vmeta", exe + ".schema"):
            if os.path.exists(stale):
                os.remove(stale)
        # case.conf may ask for vprof-cc's own flags (e.g. --latency)
        corpus.build(case, [VPROF_CC] + shlex.split(case.get("vprof_cc_flags", "")), exe)
        _built.add(exe)
    return exe


def vprof_report(dirs_normal, dirs_buggy, out_json):
    cmd = [VPROF_REPORT, "--json", "--top", "0", "-q"]
    for d in dirs_normal:
        cmd += ["--normal", d]
    for d in dirs_buggy:
        cmd += ["--buggy", d]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        raise corpus.CaseError("vprof-report failed (%d): %s" % (p.returncode, p.stderr[-800:]))
    with open(out_json, "w") as f:
        f.write(p.stdout)
    doc = json.loads(p.stdout)
    return doc.get("functions", doc) if isinstance(doc, dict) else doc


def find_fn(funcs, name):
    for f in funcs:
        if corpus.base_name(f.get("name", "")) == name:
            return f
    return None


def run_vprof(case, work):
    exe = vprof_build(case, work)
    dirs = {}
    for which in ("normal", "buggy"):
        d = os.path.join(work, "vprof", which)
        shutil.rmtree(d, ignore_errors=True)
        env = {"VPROF_OUT": d, "VPROF_QUIET": "1"}
        env.update(kv.split("=", 1) for kv in shlex.split(case.get("vprof_env", "")))
        corpus.run(case, exe, which, d, env_extra=env)
        dirs[which] = d
    funcs = vprof_report([dirs["normal"]], [dirs["buggy"]],
                         os.path.join(work, "vprof", "report.json"))
    fn = find_fn(funcs, case["root_cause"])
    res = {"rank": fn.get("rank") if fn else None, "ranked": len(funcs),
           "top": funcs[0].get("name") if funcs else None}
    if fn:
        bb_mean, bb_min, line_min = distances(case, fn, read_blocks(exe, case["root_cause"]))
        pat = norm_pattern(fn.get("pattern"))
        res.update({"bb_dist_mean": bb_mean, "bb_dist_min": bb_min, "line_dist_min": line_min,
                    "pattern": pat, "pattern_ok": (None if pat == "none" else pat == case["pattern"]),
                    "discount": fn.get("discount"), "variable": fn.get("variable"),
                    "dimension": fn.get("dimension")})
    return res


def run_hist(case, work, reps):
    """vprof with zero variables: the same binary copied away from its
    .vmeta, so the runtime records PC samples only."""
    exe = vprof_build(case, work)
    bare = os.path.join(work, "hist", "prog")
    os.makedirs(os.path.dirname(bare), exist_ok=True)
    shutil.copy2(exe, bare)
    if os.path.exists(bare + ".vmeta"):
        os.remove(bare + ".vmeta")
    dirs = {"normal": [], "buggy": []}
    for which in ("normal", "buggy"):
        for i in range(reps):
            d = os.path.join(work, "hist", "%s.%d" % (which, i))
            shutil.rmtree(d, ignore_errors=True)
            corpus.run(case, bare, which, d, env_extra={"VPROF_OUT": d, "VPROF_QUIET": "1"})
            dirs[which].append(d)
    funcs = vprof_report(dirs["normal"], dirs["buggy"], os.path.join(work, "hist", "report.json"))
    fn = find_fn(funcs, case["root_cause"])
    return {"rank": fn.get("rank") if fn else None, "ranked": len(funcs),
            "top": funcs[0].get("name") if funcs else None}


# ------------------------------------------------------------------- table
def median_run(runs):
    """The run whose rank is the median of all runs (not ranked = worst);
    all ranks are kept in "ranks". A failed run makes the result failed."""
    failed = [r for r in runs if "error" in r]
    if failed:
        return failed[0]
    key = lambda r: r["rank"] if r.get("rank") else float("inf")  # noqa: E731
    ordered = sorted(runs, key=key)
    med = dict(ordered[(len(ordered) - 1) // 2])
    med["ranks"] = [r.get("rank") for r in runs]
    return med


def cell_rank(tools, tool):
    """'-' not requested, 'n/a' not available here, 'err' failed, 'NR' the
    tool's output does not contain the root cause, else the rank."""
    if tool not in tools:
        return "-"
    r = tools[tool]
    if r is None:
        return "n/a"
    if "error" in r:
        return "err"
    cell = str(r["rank"]) if r.get("rank") else "NR"
    ranks = r.get("ranks") or []
    if len(set(ranks)) > 1:
        show = [x for x in ranks if x] or []
        lo = min(show) if show else None
        hi = "NR" if None in ranks else max(show)
        cell += " (%s-%s)" % (lo if lo is not None else "NR", hi)
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
        rows.append((res["case"], res["modelled_on"], res["pattern"].replace("_", " "),
                     cell_rank(res["tools"], "vprof"), bb, line, cls,
                     cell_rank(res["tools"], "gprof"), cell_rank(res["tools"], "perf"),
                     cell_rank(res["tools"], "hist")))
    return rows


HDR = ("case", "modelled on", "pattern", "vprof", "bb-dist", "line", "class",
       "gprof", "perf", "hist-disc")


def summary(results):
    out = []
    for tool in ("vprof", "gprof", "perf", "hist"):
        ranks = [r["tools"][tool].get("rank") for r in results
                 if r["tools"].get(tool) and "error" not in r["tools"][tool]]
        if ranks:
            out.append("%-6s first in %d/%d, top-5 in %d/%d" % (
                tool, sum(1 for x in ranks if x == 1), len(ranks),
                sum(1 for x in ranks if x and x <= 5), len(ranks)))
    return out


def write_markdown(results, doc, path):
    with open(path, "w") as f:
        m = doc["machine"]
        f.write("Run %s on %d CPUs (%s), kernel %s, %.0f s; command: `%s`.\n\n"
                % (doc["generated"], m["nproc"] or 0, m["cpu"], m["kernel"], doc["seconds"],
                   doc["command"]))
        f.write("| " + " | ".join(HDR) + " |\n|" + "---|" * len(HDR) + "\n")
        for r in table_rows(results):
            f.write("| " + " | ".join(str(x) for x in r) + " |\n")
        f.write("\nMedian rank over %d runs per tool, range in brackets when the runs disagree "
                "(hist-disc: one analysis of %d + %d runs). Summary (medians):\n\n"
                % (doc.get("repeat", 1), doc["hist_reps"], doc["hist_reps"]))
        f.write("\n".join("    " + l for l in summary(results)) + "\n")


def print_table(results):
    hdr = HDR
    rows = table_rows(results)
    widths = [max(len(str(x[i])) for x in rows + [hdr]) for i in range(len(hdr))]
    fmt = "  ".join("%%-%ds" % w for w in widths)
    print(fmt % hdr)
    print("  ".join("-" * w for w in widths))
    for r in rows:
        print(fmt % r)
    print()
    print("Median rank of the root-cause function over the repeated runs, with the range "
          "when the runs disagree (hist-disc: one 5+5 analysis). "
          "Ranks: 1 = first; NR = not in the tool's ranking; "
          "n/a = tool not available, err = run failed, see JSON; - = not requested). bb-dist: (mean, min) basic-block distance between vprof's "
          "reported locations and the fix; line: minimum line distance; class: vprof's bug "
          "pattern matches the case's.")
    for line in summary(results):
        print(line)


def machine():
    model = ""
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        model = next((l.split(":", 1)[1].strip() for l in out.splitlines()
                      if l.startswith("Model name")), "")
    except OSError:
        pass
    return {"nproc": os.cpu_count(), "cpu": model, "kernel": platform.release()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", default="", help="comma-separated case names (default: all)")
    ap.add_argument("--tools", default=",".join(TOOLS))
    ap.add_argument("--reps", type=int, default=5, help="runs per side for hist-disc (5)")
    ap.add_argument("--repeat", type=int, default=3,
                    help="independent runs of vprof, gprof and perf per case; the table "
                         "shows the median rank (3)")
    ap.add_argument("--work", default=os.path.join(corpus.ROOT, "build", "bench", "bugs"))
    ap.add_argument("--out", default=os.path.join(corpus.BENCH, "results", "bugs.json"))
    a = ap.parse_args()
    tools = [t for t in a.tools.split(",") if t]
    for t in tools:
        if t not in TOOLS:
            ap.error("unknown tool '%s' (known: %s)" % (t, ", ".join(TOOLS)))
    names = [n for n in a.cases.split(",") if n] or corpus.case_names()

    unavailable = {}
    if not (os.access(VPROF_CC, os.X_OK) and os.access(VPROF_REPORT, os.X_OK)):
        unavailable["vprof"] = unavailable["hist"] = \
            "vprof-cc or vprof-report not built in %s (run make)" % VPROF_BIN
    if "perf" in tools and not corpus.perf_usable():
        unavailable["perf"] = "perf record -e cpu-clock does not work on this machine"
    if not shutil.which("gprof"):
        unavailable["gprof"] = "binutils gprof not installed"

    results, started = [], time.time()
    for name in names:
        case = corpus.load_case(name)
        work = os.path.join(a.work, name)
        res = {"case": name, "modelled_on": case["modelled_on"], "pattern": case["pattern"],
               "root_cause": case["root_cause"], "fix": case["fix"],
               "normal_args": case["normal_args"], "buggy_args": case["buggy_args"],
               "tools": {}}
        for tool in tools:
            if tool in unavailable:
                res["tools"][tool] = None
                res.setdefault("unavailable", {})[tool] = unavailable[tool]
                continue
            t0 = time.time()
            runs = []
            for _ in range(1 if tool == "hist" else max(1, a.repeat)):
                try:
                    if tool == "gprof":
                        r = run_gprof(case, work)
                    elif tool == "perf":
                        r = run_perf(case, work)
                    elif tool == "vprof":
                        r = run_vprof(case, work)
                    else:
                        r = run_hist(case, work, a.reps)
                except (corpus.CaseError, subprocess.TimeoutExpired, ValueError, OSError) as e:
                    r = {"error": str(e)[-1500:]}
                    log("%s: %s: %s" % (name, tool, str(e)[-300:]))
                runs.append(r)
            r = median_run(runs)
            r["seconds"] = round(time.time() - t0, 2)
            res["tools"][tool] = r
        log("%s: %s" % (name, ", ".join("%s %s" % (t, cell_rank(res["tools"], t))
                                         for t in tools)))
        results.append(res)

    print_table(results)
    doc = {"generated": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
           "command": " ".join(sys.argv), "machine": machine(),
           "seconds": round(time.time() - started, 1), "hist_reps": a.reps,
           "repeat": a.repeat,
           "unavailable": unavailable, "cases": results}
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with open(a.out, "w") as f:
        json.dump(doc, f, indent=1)
    md = os.path.splitext(a.out)[0] + ".md"
    write_markdown(results, doc, md)
    print("\nwrote %s and %s" % (a.out, md))
    return 0


if __name__ == "__main__":
    sys.exit(main())
