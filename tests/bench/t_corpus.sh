#!/bin/bash
# The bug corpus (bench/bugs): every case builds warning-free with gcc -pg
# (buggy and fixed), both workloads run, the root cause exists in the
# binary, plain gprof does not rank it first, the buggy workload inflates
# the cost function's call count, and the fix is verified (the fixed build
# on the buggy workload calls the cost function about as often as the
# normal run and prints the same). Plus the corpus's size and coverage:
# cases per pattern and per shape (bench/README.md). Needs only gcc, g++,
# binutils (gprof, nm) and python3. Cases whose sources match the digest
# in bench/bugs/VERIFIED (written by `make -C bench corpus-verify` after a
# full check) get only the case.conf and FIX-marker checks; new and changed
# cases get all of them.
source "$(dirname "$0")/../lib.sh"
command -v gprof >/dev/null || skip "binutils gprof not installed"
command -v python3 >/dev/null || skip "python3 not installed"
command -v g++ >/dev/null || skip "g++ not installed"
python3 "$VPROF_ROOT/bench/tools/check_corpus.py" -j 2 --verified "$VPROF_ROOT/bench/bugs/VERIFIED" "$TMP"
rc=$?
python3 - "$VPROF_ROOT/bench/tools" <<'PY'
import collections, sys
sys.path.insert(0, sys.argv[1])
import corpus
cases = [corpus.load_case(n) for n in corpus.case_names()]
def check(ok, what):
    print("%s - %s" % ("ok" if ok else "not ok", what))
check(len(cases) >= 30, "corpus has %d cases (>= 30)" % len(cases))
by_pattern = collections.Counter(c["pattern"] for c in cases)
for p in corpus.PATTERNS:
    check(by_pattern[p] >= 5, "%d cases of pattern %s (>= 5)" % (by_pattern[p], p))
by_tag = collections.Counter(t for c in cases for t in c["tags"])
need = {s: 3 for s in corpus.SHAPES}
need.update({"c++": 3, "-O0": 3, "gcc+vprof-meta": 3})
for t, n in sorted(need.items()):
    check(by_tag[t] >= n, "%d cases with shape %s (>= %d)" % (by_tag[t], t, n))
no_readme = [c["name"] for c in cases
             if not all(k in open(c["dir"] + "/README.md").read()
                        for k in ("Real issue", "Root cause", "Pattern", "gprof", "Fix"))]
check(not no_readme, "every README has the real issue, root cause, pattern, gprof and fix"
      + (": missing in %s" % ", ".join(no_readme) if no_readme else ""))
PY
[ $rc -eq 0 ] || _n_fail=$((_n_fail + 1))
finish
