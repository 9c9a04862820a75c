"""The bug corpus as a library: reading case.conf, building a case with a
given compiler (buggy or fixed variant), running its normal/buggy workload,
and reading what binutils gprof and perf say about it. The bench driver
(run_bugs.py) and the CI check (check_corpus.py) both use this one module,
so they agree on how a case is built, run and ranked."""
import os
import re
import resource
import shlex
import shutil
import signal
import subprocess

BENCH = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(BENCH)
BUGS = os.path.join(BENCH, "bugs")

# Inlining and IPA cloning would make functions vanish or turn into
# "foo.constprop.0"; gprof and vprof can only rank what exists as a symbol.
# The optimisation level itself is a case key (opt, default O2).
GCC_FLAGS = ["-g", "-fno-inline", "-fno-ipa-cp", "-fno-ipa-sra",
             "-fno-ipa-icf", "-Wall", "-Wextra", "-pthread"]
CLANG_FLAGS = ["-g", "-fno-inline", "-Wall", "-Wextra", "-pthread"]
# COZ 0.2.2 (Debian bookworm) reads DWARF 4 only, and not the location-view
# attribute gcc 12 emits by default.
COZ_FLAGS = ["-gdwarf-4", "-gno-variable-location-views"]

PATTERNS = ("wrong_constraint", "missing_constraint", "scalability")
REQUIRED = ("name", "modelled_on", "pattern", "root_cause", "fix",
            "normal_args", "buggy_args", "cost_function", "min_call_ratio")
# What decides a ranking (case key "shape", comma-separated); see README.md.
SHAPES = ("offstack", "global-noise", "caller", "driver", "deep", "shallow",
          "threads", "processes", "offcpu")
OPTS = ("O0", "O1", "O2", "O3")
BUILDS = ("vprof-cc", "gcc-meta")
CXX_EXT = (".cc", ".cpp", ".cxx")
FIX_MACRO = "VPROF_CASE_FIX"


class CaseError(Exception):
    pass


def case_names():
    return sorted(d for d in os.listdir(BUGS)
                  if os.path.isfile(os.path.join(BUGS, d, "case.conf")))


def parse_conf(path):
    """Shell-style KEY=VALUE lines ('#' comments) -> dict of strings."""
    conf = {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            if "=" not in line:
                raise CaseError("%s:%d: expected KEY=VALUE" % (path, n))
            k, v = line.split("=", 1)
            try:
                words = shlex.split(v)
            except ValueError as e:
                raise CaseError("%s:%d: %s" % (path, n, e))
            conf[k.strip()] = " ".join(words) if len(words) != 1 else words[0]
    return conf


def _float_key(conf, path, key, default):
    try:
        return float(conf.get(key, default))
    except ValueError:
        raise CaseError("%s: %s must be a number, got '%s'" % (path, key, conf[key]))


def load_case(name):
    """Parses bugs/NAME/case.conf; optional keys get their defaults."""
    path = os.path.join(BUGS, name, "case.conf")
    if not os.path.isfile(path):
        raise CaseError("%s: no such case" % path)
    conf = parse_conf(path)
    for k in REQUIRED:
        if k not in conf:
            raise CaseError("%s: missing key '%s'" % (path, k))
    if conf["pattern"] not in PATTERNS:
        raise CaseError("%s: pattern '%s' is not one of %s"
                        % (path, conf["pattern"], ", ".join(PATTERNS)))
    m = re.fullmatch(r"([^:]+):(\d+)", conf["fix"])
    if not m:
        raise CaseError("%s: fix must be FILE:LINE, got '%s'" % (path, conf["fix"]))
    conf["fix_file"], conf["fix_line"] = m.group(1), int(m.group(2))
    conf["min_call_ratio"] = _float_key(conf, path, "min_call_ratio", 0)
    conf["fix_max_ratio"] = _float_key(conf, path, "fix_max_ratio", 2.0)
    shapes = [s.strip() for s in conf.get("shape", "").split(",") if s.strip()]
    for s in shapes:
        if s not in SHAPES:
            raise CaseError("%s: shape '%s' is not one of %s" % (path, s, ", ".join(SHAPES)))
    conf["shapes"] = shapes
    conf["opt"] = conf.get("opt", "O2")
    if conf["opt"] not in OPTS:
        raise CaseError("%s: opt '%s' is not one of %s" % (path, conf["opt"], ", ".join(OPTS)))
    conf["build"] = conf.get("build", "vprof-cc")
    if conf["build"] not in BUILDS:
        raise CaseError("%s: build '%s' is not one of %s"
                        % (path, conf["build"], ", ".join(BUILDS)))
    if conf["build"] == "gcc-meta" and "--latency" in conf.get("vprof_cc_flags", ""):
        raise CaseError("%s: latency events need build=vprof-cc (the clang pass)" % path)
    conf["dir"] = os.path.dirname(path)
    conf["sources"] = sorted(os.path.join(conf["dir"], s) for s in os.listdir(conf["dir"])
                             if s.endswith(".c") or s.endswith(CXX_EXT))
    if not conf["sources"]:
        raise CaseError("%s: no .c/.cc sources" % conf["dir"])
    conf["lang"] = "c++" if any(s.endswith(CXX_EXT) for s in conf["sources"]) else "c"
    conf["cflags"] = shlex.split(conf.get("cflags", ""))
    conf["inline"] = conf.get("inline", "no")
    if conf["inline"] not in ("yes", "no"):
        raise CaseError("%s: inline must be yes or no, got '%s'" % (path, conf["inline"]))
    conf["coz_progress"] = [p for p in conf.get("coz_progress", "").split(",") if p]
    conf["fix_metric"] = conf.get("fix_metric", "")
    if conf["fix_metric"] and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", conf["fix_metric"]):
        raise CaseError("%s: fix_metric must be a name, got '%s'" % (path, conf["fix_metric"]))
    conf["tags"] = case_tags(conf)
    return conf


def case_tags(case):
    """The case's shapes plus what its build keys make it (for the
    per-shape summary): c++, -O0 ..., gcc+vprof-meta."""
    tags = list(case["shapes"])
    if case["lang"] == "c++":
        tags.append("c++")
    if case["opt"] != "O2":
        tags.append("-" + case["opt"])
    if case["inline"] == "yes":
        tags.append("inlining")
    if case["build"] == "gcc-meta":
        tags.append("gcc+vprof-meta")
    return tags


def compiler(case, family):
    """Command for FAMILY: 'gcc' (gcc/g++), 'vprof' (vprof-cc/vprof-c++ from
    VPROF_BIN or build/bin)."""
    cxx = case["lang"] == "c++"
    if family == "gcc":
        return ["g++" if cxx else "gcc"]
    if family == "vprof":
        vbin = os.environ.get("VPROF_BIN", os.path.join(ROOT, "build", "bin"))
        return [os.path.join(vbin, "vprof-c++" if cxx else "vprof-cc")]
    raise ValueError(family)


def build(case, cc, out, extra=(), fix=False):
    """Compiles the case into OUT (with -DVPROF_CASE_FIX when FIX); returns
    the compiler's stderr (warnings)."""
    base = os.path.basename(cc[0])
    flags = CLANG_FLAGS if ("clang" in base or "vprof-c" in base) else GCC_FLAGS
    # the case wants the compiler's inlining, or the whole corpus is built
    # as users build (BENCH_INLINE=1: what -O2 inlining does to a ranking)
    if case["inline"] == "yes":
        flags = [f for f in flags if f != "-fno-inline"]
    if os.environ.get("BENCH_INLINE") == "1":      # and gcc's clones, as users get them
        flags = [f for f in flags if f not in ("-fno-inline", "-fno-ipa-cp", "-fno-ipa-sra",
                                               "-fno-ipa-icf")]
    # BENCH_KEEPVARS=1: vprof-cc keeps the schema's locals live (--keep-vars;
    # gcc builds are left as they are)
    if os.environ.get("BENCH_KEEPVARS") == "1" and "vprof-c" in base:
        flags = flags + ["--keep-vars"]
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    cmd = (list(cc) + ["-" + case["opt"]] + flags + case["cflags"] + list(extra)
           + (["-D" + FIX_MACRO] if fix else []) + ["-o", out] + case["sources"])
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise CaseError("build of %s failed:\n$ %s\n%s"
                        % (case["name"], " ".join(cmd), p.stderr))
    return p.stderr


def workload(case, which):
    """(argv, env additions) of the 'normal' or 'buggy' workload."""
    argv = shlex.split(case[which + "_args"])
    env = {}
    for kv in shlex.split(case.get(which + "_env", "")):
        k, _, v = kv.partition("=")
        env[k] = v
    return argv, env


def _children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run(case, exe, which, outdir, env_extra=None, wrapper=(), timeout=300):
    """Runs one workload in a fresh OUTDIR (emptied first: profiles of an
    earlier run must not be summed with this one's) as working directory.
    gmon files go to OUTDIR/gmon.<pid> (GMON_OUT_PREFIX), so forked
    children keep theirs. Returns the CompletedProcess with .cpu_s, the CPU
    seconds of the run and its reaped children (informative only: this
    module runs workloads one at a time per process)."""
    shutil.rmtree(outdir, ignore_errors=True)
    os.makedirs(outdir)
    argv, env_case = workload(case, which)
    env = dict(os.environ)
    env.update(env_case)
    env["GMON_OUT_PREFIX"] = os.path.join(outdir, "gmon")
    env.update(env_extra or {})
    cmd = list(wrapper) + [exe] + argv
    cpu0 = _children_cpu()
    # Own process group: a run that times out is killed with everything it
    # started (COZ's wrapper spawns the program; servers fork).
    proc = subprocess.Popen(cmd, cwd=outdir, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.communicate()
        raise CaseError("%s %s run timed out after %d s: %s"
                        % (case["name"], which, timeout, " ".join(cmd)))
    p = subprocess.CompletedProcess(cmd, proc.returncode, out, err)
    p.cpu_s = round(_children_cpu() - cpu0, 3)
    with open(os.path.join(outdir, "stdout"), "w") as f:
        f.write(p.stdout)
    with open(os.path.join(outdir, "stderr"), "w") as f:
        f.write(p.stderr)
    if p.returncode != 0:
        raise CaseError("%s %s run failed (exit %d): %s\n%s"
                        % (case["name"], which, p.returncode, " ".join(cmd),
                           p.stderr[-2000:]))
    return p


# ------------------------------------------------------------------ names
_demangled = {}


def demangle(names):
    """Demangles C++ symbols (c++filt, batched and cached); others as is."""
    todo = [n for n in names if n.startswith("_Z") and n not in _demangled]
    if todo:
        try:
            p = subprocess.run(["c++filt"], input="\n".join(todo) + "\n",
                               capture_output=True, text=True, timeout=60)
            out = p.stdout.splitlines()
        except (OSError, subprocess.TimeoutExpired):
            out = []
        for i, n in enumerate(todo):
            _demangled[n] = out[i] if i < len(out) and p.returncode == 0 else n
    return [_demangled.get(n, n) for n in names]


def _cut_params(name):
    """'ns::f<int>(char const*) const' -> 'ns::f<int>'; keeps
    '(anonymous namespace)' parts."""
    depth, i = 0, 0
    while i < len(name):
        c = name[i]
        if c == "<":
            depth += 1
        elif c == ">":
            depth = max(0, depth - 1)
        elif c == "(" and depth == 0:
            if name.startswith("(anonymous namespace)", i):
                i += len("(anonymous namespace)")
                continue
            return name[:i]
        i += 1
    return name


def _strip_templates(name):
    out, depth = [], 0
    for c in name:
        if c == "<":
            depth += 1
        elif c == ">":
            depth = max(0, depth - 1)
        elif depth == 0:
            out.append(c)
    return "".join(out)


def base_name(sym):
    """The function a symbol belongs to, as case.conf names it: gcc clones
    (foo.part.0, foo.cold, _Z...constprop.0) count as foo; C++ names are
    demangled and lose their parameter list ('Cls::f', 'ns::g<T>')."""
    if not sym:
        return sym
    if "(" not in sym and " " not in sym:
        sym = sym.split(".", 1)[0]            # clone suffixes never hold a '.' before
        sym = demangle([sym])[0]
    sym = re.sub(r" \[clone [^\]]*\]", "", sym)
    return _cut_params(sym).strip()


def same_function(sym, name):
    """Does symbol SYM (any spelling) belong to function NAME of case.conf?"""
    b = base_name(sym)
    return b == name or _strip_templates(b) == name


def merged_rank(funcs, name, key=lambda f: f.get("symbol") or f.get("name", "")):
    """1-based rank of NAME in vprof-report's ordered functions, counting
    each base_name once, as gprof_flat and perf_ranking merge their rows
    (gcc clones, C++ overloads and template instances sharing a name): the
    same rule for every tool. None if absent."""
    seen = set()
    for f in funcs:
        b = base_name(key(f))
        if b not in seen:
            seen.add(b)
        if same_function(key(f), name):
            return len(seen)
    return None


def rank_of(rows, name):
    """1-based position of NAME in a ranked list of dicts, or None."""
    for i, r in enumerate(rows, 1):
        if same_function(r["name"], name):
            return i
    return None


def gprof_flat(exe, outdir):
    """Flat profile of all gmon files in OUTDIR, in gprof's own order (self
    time, then calls, then name): list of dicts name/self_s/calls."""
    gmons = sorted(os.path.join(outdir, f) for f in os.listdir(outdir)
                   if f.startswith("gmon"))
    if not gmons:
        raise CaseError("%s: no gmon files written" % outdir)
    p = subprocess.run(["gprof", "-b", "-p", "--no-demangle", exe] + gmons,
                       capture_output=True, text=True)
    if p.returncode != 0:
        raise CaseError("gprof failed on %s: %s" % (outdir, p.stderr))
    raw = []
    for line in p.stdout.splitlines():
        f = line.split()
        if len(f) < 4 or not re.fullmatch(r"[\d.]+", f[0]):
            continue
        calls = int(f[3]) if len(f) >= 7 and f[3].isdigit() else 0
        raw.append((f[-1], float(f[2]), calls))
    demangle([r[0] for r in raw])
    rows, index = [], {}
    for sym, self_s, calls in raw:
        name = base_name(sym)
        if name in index:                      # merge a clone into its function
            index[name]["self_s"] += self_s
            index[name]["calls"] += calls
            continue
        index[name] = {"name": name, "self_s": self_s, "calls": calls}
        rows.append(index[name])
    return rows


def calls_of(rows, name):
    """Call count of NAME in a gprof flat profile (0 when absent)."""
    return sum(r["calls"] for r in rows if same_function(r["name"], name))


def perf_ranking(outdir, children=False):
    """Symbols from OUTDIR/perf.data (all processes): by self overhead, or
    with CHILDREN by self+callees (needs a call-graph recording)."""
    cmd = ["perf", "report", "-i", os.path.join(outdir, "perf.data"), "--stdio", "-q",
           "--no-demangle", "--sort", "symbol", "-g", "none",
           "--children" if children else "--no-children"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise CaseError("perf report failed: %s" % p.stderr[-500:])
    pat = (r"\s*([\d.]+)%\s+[\d.]+%\s+\[[.k]\]\s+(\S+)" if children
           else r"\s*([\d.]+)%\s+\[[.k]\]\s+(\S+)")
    raw = [(m.group(2), float(m.group(1))) for m in
           (re.match(pat, l) for l in p.stdout.splitlines()) if m]
    demangle([r[0] for r in raw])
    rows, seen = [], set()
    for sym, pct in raw:
        name = base_name(sym)
        if name not in seen:
            seen.add(name)
            rows.append({"name": name, "pct": pct})
    return rows


def perf_usable():
    try:
        p = subprocess.run(["perf", "record", "-q", "-e", "cpu-clock", "-o",
                            "/dev/null", "true"], capture_output=True, timeout=30)
        return p.returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


# ------------------------------------------------------------ fix check
def fix_marker_ok(case):
    """The fix line carries the FIX marker and the file has the
    VPROF_CASE_FIX variant. Returns (ok, why)."""
    src = os.path.join(case["dir"], case["fix_file"])
    try:
        with open(src) as f:
            lines = f.read().splitlines()
    except OSError as e:
        return False, str(e)
    if not 0 < case["fix_line"] <= len(lines):
        return False, "%s has %d lines" % (case["fix_file"], len(lines))
    if "FIX" not in lines[case["fix_line"] - 1]:
        return False, "line %d has no FIX marker" % case["fix_line"]
    if not any(FIX_MACRO in l for l in lines):
        return False, "%s has no #ifdef %s variant" % (case["fix_file"], FIX_MACRO)
    return True, ""


def stderr_metric(text, name):
    """The integer a program reported on stderr as NAME=N (last one wins)."""
    vals = re.findall(r"(?m)^%s=(\d+)\s*$" % re.escape(name), text or "")
    if not vals:
        raise CaseError("no '%s=N' line on stderr" % name)
    return int(vals[-1])


def fix_measure(case, flat, proc):
    """What the fix check compares: the cost function's call count (gprof),
    or the case's fix_metric from stderr."""
    if case["fix_metric"]:
        return stderr_metric(proc.stderr, case["fix_metric"])
    return calls_of(flat, case["cost_function"])


def fix_check(case, work, normal=None, buggy=None):
    """Builds the fixed variant (gcc -pg -DVPROF_CASE_FIX), runs the buggy
    workload with it, and compares the cost function's call count (gprof,
    not time; or the case's fix_metric, a count the program prints) with the
    normal run of the buggy build, and its stdout with the buggy run's.
    NORMAL and BUGGY are (flat profile, CompletedProcess) of runs already
    made with the gprof build; missing ones are run here. Returns a dict
    (counts, CPU seconds, ok, why); raises CaseError when a build or run
    fails."""
    exe = os.path.join(work, "gprof", "prog")
    given = {"normal": normal, "buggy": buggy}
    for which in ("normal", "buggy"):
        if given[which] is None:
            if not os.path.exists(exe):
                build(case, compiler(case, "gcc") + ["-pg"], exe)
            d = os.path.join(work, "fixcheck", which)
            p = run(case, exe, which, d)
            given[which] = (gprof_flat(exe, d), p)
    fexe = os.path.join(work, "fixed", "prog")
    if not os.path.exists(fexe):
        build(case, compiler(case, "gcc") + ["-pg"], fexe, fix=True)
    d = os.path.join(work, "fixed", "buggy")
    fp = run(case, fexe, "buggy", d)
    fixed = (gprof_flat(fexe, d), fp)
    what = case["fix_metric"] or ("calls of %s" % case["cost_function"])
    m = {w: fix_measure(case, *v) for w, v in (("normal", given["normal"]),
                                               ("buggy", given["buggy"]), ("fixed", fixed))}
    res = {"measure": what, "normal": m["normal"], "buggy": m["buggy"], "fixed": m["fixed"],
           "normal_cpu_s": given["normal"][1].cpu_s, "buggy_cpu_s": given["buggy"][1].cpu_s,
           "fixed_cpu_s": fp.cpu_s, "same_output": fp.stdout == given["buggy"][1].stdout,
           "fix_max_ratio": case["fix_max_ratio"]}
    why = []
    if not m["normal"]:
        why.append("normal run: %s is 0" % what)
    elif m["fixed"] > case["fix_max_ratio"] * m["normal"]:
        why.append("fixed build: %s is %d, more than %.1fx the normal run's %d"
                   % (what, m["fixed"], case["fix_max_ratio"], m["normal"]))
    if not res["same_output"]:
        why.append("fixed build prints something else than the buggy build")
    res["ok"] = not why
    res["why"] = "; ".join(why)
    return res
