"""The bug corpus as a library: reading case.conf, building a case with a
given compiler, running its normal/buggy workload, and reading what binutils
gprof and perf say about it. The bench driver (run_bugs.py) and the CI check
(check_corpus.py) both use this one module, so they agree on how a case is
built and ranked."""
import os
import re
import shlex
import shutil
import subprocess

BENCH = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(BENCH)
BUGS = os.path.join(BENCH, "bugs")

# Inlining and IPA cloning would make functions vanish or turn into
# "foo.constprop.0"; gprof and vprof can only rank what exists as a symbol.
# -O2 keeps the cost structure of a release build otherwise.
GCC_FLAGS = ["-O2", "-g", "-fno-inline", "-fno-ipa-cp", "-fno-ipa-sra",
             "-fno-ipa-icf", "-Wall", "-Wextra", "-pthread"]
CLANG_FLAGS = ["-O2", "-g", "-fno-inline", "-Wall", "-Wextra", "-pthread"]

PATTERNS = ("wrong_constraint", "missing_constraint", "scalability")
REQUIRED = ("name", "modelled_on", "pattern", "root_cause", "fix",
            "normal_args", "buggy_args", "cost_function", "min_call_ratio")


class CaseError(Exception):
    pass


def case_names():
    return sorted(d for d in os.listdir(BUGS)
                  if os.path.isfile(os.path.join(BUGS, d, "case.conf")))


def load_case(name):
    """Parses bugs/NAME/case.conf (shell-style KEY=VALUE lines, '#' comments)."""
    path = os.path.join(BUGS, name, "case.conf")
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
    conf["min_call_ratio"] = float(conf["min_call_ratio"])
    conf["dir"] = os.path.dirname(path)
    conf["sources"] = sorted(os.path.join(conf["dir"], s)
                             for s in os.listdir(conf["dir"]) if s.endswith(".c"))
    return conf


def build(case, cc, out, extra=()):
    """Compiles the case into OUT; returns the compiler's stderr (warnings)."""
    flags = CLANG_FLAGS if "clang" in os.path.basename(cc[0]) or \
        "vprof-cc" in os.path.basename(cc[0]) else GCC_FLAGS
    os.makedirs(os.path.dirname(out), exist_ok=True)
    cmd = list(cc) + flags + list(extra) + ["-o", out] + case["sources"]
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


def run(case, exe, which, outdir, env_extra=None, wrapper=(), timeout=120):
    """Runs one workload in a fresh OUTDIR (emptied first: profiles of an
    earlier run must not be summed with this one's) as working directory.
    gmon files go to OUTDIR/gmon.<pid> (GMON_OUT_PREFIX), so forked
    children keep theirs."""
    shutil.rmtree(outdir, ignore_errors=True)
    os.makedirs(outdir)
    argv, env_case = workload(case, which)
    env = dict(os.environ)
    env.update(env_case)
    env["GMON_OUT_PREFIX"] = os.path.join(outdir, "gmon")
    env.update(env_extra or {})
    cmd = list(wrapper) + [exe] + argv
    p = subprocess.run(cmd, cwd=outdir, env=env, capture_output=True,
                       text=True, timeout=timeout)
    with open(os.path.join(outdir, "stdout"), "w") as f:
        f.write(p.stdout)
    with open(os.path.join(outdir, "stderr"), "w") as f:
        f.write(p.stderr)
    if p.returncode != 0:
        raise CaseError("%s %s run failed (exit %d): %s\n%s"
                        % (case["name"], which, p.returncode, " ".join(cmd),
                           p.stderr[-2000:]))
    return p


def base_name(sym):
    """gcc clones (foo.part.0, foo.cold) count as foo."""
    return sym.split(".", 1)[0]


def gprof_flat(exe, outdir):
    """Flat profile of all gmon files in OUTDIR, in gprof's own order (self
    time, then calls, then name): list of dicts name/self_s/calls."""
    gmons = sorted(os.path.join(outdir, f) for f in os.listdir(outdir)
                   if f.startswith("gmon"))
    if not gmons:
        raise CaseError("%s: no gmon files written" % outdir)
    p = subprocess.run(["gprof", "-b", "-p", exe] + gmons,
                       capture_output=True, text=True)
    if p.returncode != 0:
        raise CaseError("gprof failed on %s: %s" % (outdir, p.stderr))
    rows, seen = [], set()
    for line in p.stdout.splitlines():
        f = line.split()
        if len(f) < 4 or not re.fullmatch(r"[\d.]+", f[0]):
            continue
        name = base_name(f[-1])
        calls = int(f[3]) if len(f) >= 7 and f[3].isdigit() else 0
        if name in seen:          # merge a clone into its function
            for r in rows:
                if r["name"] == name:
                    r["self_s"] += float(f[2])
                    r["calls"] += calls
            continue
        seen.add(name)
        rows.append({"name": name, "self_s": float(f[2]), "calls": calls})
    return rows


def rank_of(rows, name):
    """1-based position of NAME in a ranked list of dicts, or None."""
    for i, r in enumerate(rows, 1):
        if r["name"] == name:
            return i
    return None


def perf_ranking(outdir):
    """Symbols by self overhead from OUTDIR/perf.data (all processes)."""
    p = subprocess.run(["perf", "report", "-i", os.path.join(outdir, "perf.data"),
                        "--stdio", "-q", "--no-children", "--sort", "symbol"],
                       capture_output=True, text=True)
    if p.returncode != 0:
        raise CaseError("perf report failed: %s" % p.stderr[-500:])
    rows = []
    for line in p.stdout.splitlines():
        m = re.match(r"\s*([\d.]+)%\s+\[[.k]\]\s+(\S+)", line)
        if m and not any(r["name"] == base_name(m.group(2)) for r in rows):
            rows.append({"name": base_name(m.group(2)), "pct": float(m.group(1))})
    return rows


def perf_usable():
    try:
        p = subprocess.run(["perf", "record", "-q", "-e", "cpu-clock", "-o",
                            "/dev/null", "true"], capture_output=True, timeout=30)
        return p.returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False
