#!/usr/bin/env python3
"""compare.py GDB_OBS TRACE_OBS [--label L] [--miss-ok N | --min-coverage F]
                  [--names A,B] [--unsupported VAR]...

Compares what gdb printed (gdb_oracle.py) with what the vprof reader read
from vprof-meta's entries (oracle_trace) at the same first-hit PCs, keyed by
(pc, function, variable, declaration line). Prints one summary line and the
first few disagreements; exit 1 when
  - a value differs where both read one,
  - an entry claims a PC where gdb says <optimized out>, or
  - more than N variables gdb shows with a value have no entry (--miss-ok),
    or, with --min-coverage F, fewer than F of them agree;
    --names a,b,c restricts the check to those variable names (schema mode);
    variables named with --unsupported (e.g. thread-locals, which vprof
    reports as unsupported by design) are not counted as missing.
"""
import math
import sys


def load(path):
    d = {}
    with open(path) as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) != 5:
                continue
            pc, fn, name, ln, val = parts
            d[(int(pc, 16), fn, name, int(ln))] = val
    return d


def same(a, b):
    if a == b:
        return True
    if a.startswith("ERR") and b.startswith("ERR"):
        return True
    try:
        x, y = float(a), float(b)
    except ValueError:
        return False
    if math.isnan(x) and math.isnan(y):
        return True
    return x == y or abs(x - y) <= 1e-9 * max(abs(x), abs(y))


def main():
    args = sys.argv[1:]
    label, miss_ok = "", 0
    if "--label" in args:
        i = args.index("--label")
        label = args[i + 1]
        del args[i:i + 2]
    names = None
    if "--names" in args:
        i = args.index("--names")
        names = set(args[i + 1].split(","))
        del args[i:i + 2]
    unsupported = set()
    while "--unsupported" in args:
        i = args.index("--unsupported")
        unsupported.add(args[i + 1])
        del args[i:i + 2]
    min_cov = None
    if "--min-coverage" in args:
        i = args.index("--min-coverage")
        min_cov = float(args[i + 1])
        del args[i:i + 2]
    if "--miss-ok" in args:
        i = args.index("--miss-ok")
        miss_ok = int(args[i + 1])
        del args[i:i + 2]
    g, t = load(args[0]), load(args[1])
    agree, mism, miss, false_claim, gdb_err, optout = [], [], [], [], [], 0
    for k, gv in g.items():
        if names is not None and k[2] not in names:
            continue
        if gv == "<optimized out>":
            optout += 1
            if k in t:
                false_claim.append((k, t[k]))
            continue
        if k not in t:
            if gv != "ERR" and k[2] not in unsupported:
                miss.append((k, gv))
            continue
        if gv == "ERR" and not t[k].startswith("ERR"):
            gdb_err.append(k)   # gdb could not read it either way
            continue
        (agree if same(gv, t[k]) else mism).append((k, gv, t[k]))
    valued = len(agree) + len(mism) + len(miss)
    print("%s: %d/%d agree, %d value mismatches, %d missing entries, "
          "%d false claims (of %d <optimized out>), %d gdb read errors"
          % (label, len(agree), valued, len(mism), len(miss),
             len(false_claim), optout, len(gdb_err)))
    for k, gv, tv in mism[:10]:
        print("  mismatch pc=%x %s %s line %d: gdb %s vprof %s"
              % (k[0], k[1], k[2], k[3], gv, tv))
    for k, tv in false_claim[:10]:
        print("  false claim pc=%x %s %s line %d: vprof %s"
              % (k[0], k[1], k[2], k[3], tv))
    for k, gv in miss[:10]:
        print("  missing pc=%x %s %s line %d: gdb %s"
              % (k[0], k[1], k[2], k[3], gv))
    if min_cov is not None:
        cov = len(agree) / valued if valued else 1.0
        bad = mism or false_claim or cov < min_cov or valued == 0
    else:
        bad = mism or false_claim or len(miss) > miss_ok
    return 1 if bad else 0


sys.exit(main())
