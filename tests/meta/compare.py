#!/usr/bin/env python3
"""compare.py GDB_OBS TRACE_OBS [--label L] [--miss-ok N | --min-coverage F]
                  [--names A,B] [--unsupported VAR]... [--same-address-ok]
                  [--min-expr N]

Compares what gdb printed (gdb_oracle.py) with what the vprof reader read
from vprof-meta's entries (oracle_trace) at the same first-hit PCs, keyed by
(pc, function, variable, declaration line). Prints one summary line and the
first few disagreements; exit 1 when
  - a value differs where both read one,
  - an entry claims a PC where gdb says <optimized out>,
  - an entry puts a variable at another address than gdb's &var, or
  - more than N variables gdb shows with a value have no entry (--miss-ok),
    or, with --min-coverage F, fewer than F of them agree;
    --same-address-ok: a value that differs where both put the variable at
    the same address is run state (two runs of a non-deterministic program,
    e.g. an uninitialised slot), counted apart, not as a mismatch;
    --names a,b,c restricts the check to those variable names (schema mode);
    variables named with --unsupported (e.g. thread-locals, which vprof
    reports as unsupported by design) are not counted as missing;
    --min-expr N: at least N of the agreeing values were computed by EXPR
    programs (the trace's 7th column, "expr").
"""
import math
import sys


def load(path, addrs, exprs=None):
    d = {}
    with open(path) as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) not in (5, 6, 7):
                continue
            pc, fn, name, ln, val = parts[:5]
            key = (int(pc, 16), fn, name, int(ln))
            d[key] = val
            if len(parts) >= 6 and parts[5] != "-":
                addrs[key] = int(parts[5], 16)
            if len(parts) == 7 and parts[6] == "expr" and exprs is not None:
                exprs.add(key)
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
    same_addr_ok = "--same-address-ok" in args
    if same_addr_ok:
        args.remove("--same-address-ok")
    min_cov = None
    if "--min-coverage" in args:
        i = args.index("--min-coverage")
        min_cov = float(args[i + 1])
        del args[i:i + 2]
    if "--miss-ok" in args:
        i = args.index("--miss-ok")
        miss_ok = int(args[i + 1])
        del args[i:i + 2]
    min_expr = None
    if "--min-expr" in args:
        i = args.index("--min-expr")
        min_expr = int(args[i + 1])
        del args[i:i + 2]
    g_addr, t_addr, t_expr = {}, {}, set()
    g, t = load(args[0], g_addr), load(args[1], t_addr, t_expr)
    agree, mism, miss, false_claim, gdb_err, optout = [], [], [], [], [], 0
    state = []
    # memory locations: gdb's &var must be the entry's address
    bad_addr = [(k, g_addr[k], t_addr[k]) for k in g_addr
                if k in t_addr and g_addr[k] != t_addr[k]]
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
        if same(gv, t[k]):
            agree.append((k, gv, t[k]))
        elif same_addr_ok and k in g_addr and g_addr.get(k) == t_addr.get(k):
            # same memory, different contents: the two runs' state differs
            # (an uninitialised slot, a counter); not a location error
            state.append((k, gv, t[k]))
        else:
            mism.append((k, gv, t[k]))
    valued = len(agree) + len(mism) + len(miss) + len(state)
    n_expr = sum(1 for a in agree if a[0] in t_expr)
    print("%s: %d/%d agree (%d computed by EXPR programs), %d value mismatches, "
          "%d missing entries, "
          "%d false claims (of %d <optimized out>), %d gdb read errors, "
          "%d/%d addresses equal%s"
          % (label, len(agree), valued, n_expr, len(mism), len(miss),
             len(false_claim), optout, len(gdb_err),
             sum(1 for k in g_addr if k in t_addr) - len(bad_addr),
             sum(1 for k in g_addr if k in t_addr),
             ", %d values differ at the same address (run state)"
             % len(state) if same_addr_ok else ""))
    for k, ga, ta in bad_addr[:10]:
        print("  address mismatch pc=%x %s %s line %d: gdb %x vprof %x"
              % (k[0], k[1], k[2], k[3], ga, ta))
    for k, gv, tv in state[:5]:
        print("  run state pc=%x %s %s line %d: gdb %s vprof %s"
              % (k[0], k[1], k[2], k[3], gv, tv))
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
        bad = mism or false_claim or bad_addr or cov < min_cov or valued == 0
    else:
        bad = mism or false_claim or bad_addr or len(miss) > miss_ok
    if min_expr is not None and n_expr < min_expr:
        print("  only %d computed (EXPR) values agree, want at least %d"
              % (n_expr, min_expr))
        bad = True
    return 1 if bad else 0


sys.exit(main())
