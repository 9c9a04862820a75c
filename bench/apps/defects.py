"""The real-application defects (bench/apps/APP/DEFECT/) as a library:
reading app.conf and defect.conf, checking a defect's patch (1-3 changed
lines, one file), and finding the fix line. Used by the driver (run.py),
the table printer (bench/tools/apps_result.py) and the CI check
(tests/bench/t_apps.sh), so they agree on what a defect is.

app.conf keys (shell KEY=VALUE, # comments):
  package      Debian source package (apt-get source NAME)
  exe          the profiled program, relative to the build tree
  language     c or c++ (informative)
  vprof_env    optional: K=V ... for vprof's runs only (e.g. VPROF_LATENCY=1)
  vprof_cc_env optional: K=V ... for vprof's builds only (e.g. VPROF_CC_LATENCY=1)
defect.conf keys:
  modelled_on  the real bug (or bug shape) with a citation
  pattern      wrong_constraint, missing_constraint or scalability
  shape        where the deciding code sits: off_stack (cheap, returns before
               the cost accrues), on_stack (a caller of the costly code or the
               costly code itself), off_cpu (the cost is waiting)
  root_cause   the function the patch changes (as the tools name it)
  component    source files of the component (VPROF_COMPONENT), relative
               to the source tree, space separated
  normal       normal workload name (app.sh run ... NAME)
  buggy        buggy workload name"""
import os
import re
import shlex

APPS = os.path.dirname(os.path.abspath(__file__))
PATTERNS = ("wrong_constraint", "missing_constraint", "scalability")
SHAPES = ("off_stack", "on_stack", "off_cpu")
APP_KEYS = ("package", "exe", "language")
DEFECT_KEYS = ("modelled_on", "pattern", "shape", "root_cause", "component",
               "normal", "buggy")


class DefectError(Exception):
    pass


def read_conf(path, required):
    """KEY=VALUE lines (values shell-quoted) as a dict; DefectError naming
    the file and line on a bad line or a missing key."""
    conf = {}
    try:
        with open(path) as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise DefectError("%s: %s" % (path, e.strerror))
    for n, line in enumerate(lines, 1):
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        m = re.match(r"([A-Za-z_][A-Za-z0-9_]*)=(.*)$", s)
        if not m:
            raise DefectError("%s:%d: not KEY=VALUE: %s" % (path, n, s))
        try:
            val = shlex.split(m.group(2))
        except ValueError as e:
            raise DefectError("%s:%d: %s" % (path, n, e))
        conf[m.group(1)] = " ".join(val)
    missing = [k for k in required if not conf.get(k)]
    if missing:
        raise DefectError("%s: missing %s" % (path, ", ".join(missing)))
    return conf


def app_names():
    return sorted(d for d in os.listdir(APPS)
                  if os.path.isfile(os.path.join(APPS, d, "app.conf")))


def load_app(name):
    d = os.path.join(APPS, name)
    app = read_conf(os.path.join(d, "app.conf"), APP_KEYS)
    app.update(name=name, dir=d, script=os.path.join(d, "app.sh"))
    if not os.access(app["script"], os.X_OK):
        raise DefectError("%s: missing or not executable" % app["script"])
    app["defects"] = sorted(x for x in os.listdir(d)
                            if os.path.isfile(os.path.join(d, x, "defect.conf")))
    return app


def parse_patch(path):
    """(file, first changed line in the patched file, changed line count) of
    a unified diff touching one file; DefectError when it touches several
    files or none, or changes more than 3 lines. A removed line's position
    is the line that follows it in the patched file."""
    try:
        with open(path) as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise DefectError("%s: %s" % (path, e.strerror))
    files, added, removed, new_line, first = [], 0, 0, None, None
    for line in lines:
        if line.startswith("+++ "):
            name = line[4:].split("\t")[0].strip()
            files.append(name[2:] if name.startswith(("a/", "b/")) else name)
            new_line = None
        elif line.startswith("--- "):
            continue
        elif line.startswith("@@"):
            m = re.match(r"@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@", line)
            if not m:
                raise DefectError("%s: bad hunk header: %s" % (path, line))
            new_line = int(m.group(1))
        elif new_line is None:
            continue
        elif line.startswith("+"):
            first = first or new_line
            added += 1
            new_line += 1
        elif line.startswith("-"):
            first = first or new_line
            removed += 1
        else:
            new_line += 1
    if len(files) != 1:
        raise DefectError("%s: the patch must change exactly one file (it changes %d)"
                          % (path, len(files)))
    changed = max(added, removed)
    if not 1 <= changed <= 3:
        raise DefectError("%s: the patch changes %d lines (a defect is 1-3)" % (path, changed))
    return files[0], first, changed


def load_defect(app, name):
    d = os.path.join(app["dir"], name)
    c = read_conf(os.path.join(d, "defect.conf"), DEFECT_KEYS)
    if c["pattern"] not in PATTERNS:
        raise DefectError("%s/defect.conf: pattern '%s' is not one of %s"
                          % (d, c["pattern"], ", ".join(PATTERNS)))
    if c["shape"] not in SHAPES:
        raise DefectError("%s/defect.conf: shape '%s' is not one of %s"
                          % (d, c["shape"], ", ".join(SHAPES)))
    if not os.path.isfile(os.path.join(d, "README.md")):
        raise DefectError("%s: no README.md" % d)
    c["patch"] = os.path.join(d, "defect.patch")
    fix_file, fix_line, changed = parse_patch(c["patch"])
    c.update(name=name, app=app["name"], dir=d, fix_file=fix_file, fix_line=fix_line,
             changed_lines=changed, components=c["component"].split())
    c["fix"] = "%s:%d" % (fix_file, fix_line)
    return c
