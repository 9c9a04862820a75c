#!/bin/bash
# vprof-report --variance against a straightforward computation on a real
# run: tests/report/lockscan.c (requests that sometimes wait for a lock a
# crawler thread holds) built with vprof-cc --latency and run once. numpy
# (1) reads latency.<id> itself and computes every request's latency (its
# vprof_req_end minus its first vprof_req_start) and their variance, (2)
# takes the node times per request from --export and computes every node's
# variance and every sibling pair's covariance with numpy, and compares both
# with the report's JSON; (3) checks that each request's time is split
# exactly (a node's time is its children's sum, integers).
source "$(dirname "$0")/../lib.sh"
R=$VPROF_BIN/vprof-report CC=$VPROF_BIN/vprof-cc
PY=/usr/bin/python3
[ -x "$CC" ] && [ -e "$VPROF_LIB/libvprof.so" ] && [ -e "$VPROF_LIB/vprof-latency.so" ] ||
    skip "vprof-cc, libvprof or the latency pass not built"
"$PY" -c "import numpy" 2> /dev/null || skip "python3-numpy not installed (scripts/install-deps.sh)"
cd "$TMP"
"$CC" --latency -O2 -g -I"$VPROF_ROOT/libvprof/include" -I"$VPROF_ROOT/stack-scanner" \
    -o lockscan "$VPROF_ROOT/tests/report/lockscan.c" -pthread > cc.log 2>&1 ||
    { cat cc.log; echo "not ok - vprof-cc --latency builds lockscan"; exit 1; }
VPROF_OUT=b VPROF_LATENCY=1 ./lockscan 1000000 || { echo "not ok - run"; exit 1; }
"$R" --variance --json --export ex.txt b > v.json 2> err.txt
check "numpy: vprof-report --variance --export exit 0" [ $? -eq 0 ]

"$PY" - <<'PY'
import glob, json
import numpy as np

d = json.load(open("v.json"))
nodes = {n["id"]: n for n in d["nodes"]}
run = d["sides"][0]
def ok(cond, what):
    print(("ok - " if cond else "not ok - ") + "numpy: " + what)

# (1) request latencies straight from the latency file (FORMATS.md §5)
rec = np.dtype([("start", "<u8"), ("dur", "<u8"), ("func", "<u8"), ("site", "<u8"),
                ("tid", "<u4"), ("other", "<u4"), ("gen", "<u4"), ("kind", "u1"),
                ("flags", "u1"), ("unc", "<u2")])
(path,) = glob.glob("b/latency.*")
raw = np.fromfile(path, dtype=np.uint8)
hdr = raw[:64].view("<u8")
n = int(min(hdr[2], hdr[3]))
ev = raw[64:64 + 48 * n].view(rec)
ev = ev[(ev["flags"] & 0x80) != 0]
starts, ends = {}, {}
for e in ev[(ev["kind"] == 5) | (ev["kind"] == 7)]:
    i = int(e["func"])
    if e["kind"] == 5: starts[i] = min(starts.get(i, 1 << 64), int(e["start"]))
    else: ends[i] = int(e["start"])
lat = {i: ends[i] - starts[i] for i in ends if i in starts}
x = np.array(sorted(lat.values()), dtype=np.float64)
ok(len(x) == run["intervals"] and len(x) >= 250,
   "%d complete requests in the file, %d in the report" % (len(x), run["intervals"]))
v = np.var(x, ddof=1) / 1e6
ok(abs(v - run["latency"]["var_us2"]) <= 1e-9 * v,
   "latency variance %.6g µs² (numpy, from the file) = %.6g (report)" % (v, run["latency"]["var_us2"]))
ok(abs(np.mean(x) / 1e3 - run["latency"]["mean_us"]) <= 1e-9 * np.mean(x), "mean latency agrees")

# (2) node times per request from --export
rows, names = [], {}
for line in open("ex.txt"):
    w = line.split()
    if w[0] == "req":
        rows.append((int(w[3]), int(w[5]), {int(k): int(val) for k, val in (t.split("=") for t in w[6:])}))
    elif w[0] == "node":
        names[int(w[1])] = (int(w[2]), " ".join(w[5:]))
ok(len(rows) == len(x) and sorted(r[1] for r in rows) == sorted(lat.values()),
   "exported latencies are the file's, request by request")
ids = sorted(nodes)
M = np.array([[r[2].get(i, 0) for i in ids] for r in rows], dtype=np.int64)
col = {i: k for k, i in enumerate(ids)}
ok(all(M[:, col[0]] == [r[1] for r in rows]), "the root's time is the request's latency")
# (3) exact split: a node's time is the sum of its children's, in every request
kids = {}
for i, n in nodes.items():
    if n["parent"] >= 0: kids.setdefault(n["parent"], []).append(i)
exact = all((M[:, col[p]] == M[:, [col[c] for c in cs]].sum(axis=1)).all() for p, cs in kids.items())
ok(exact, "every request's time splits exactly over %d parents" % len(kids))
C = np.cov(M.astype(np.float64), rowvar=False, ddof=1) / 1e6
worst = max(abs(C[col[i], col[i]] - n["run"]["var_us2"]) / max(C[0, 0], 1e-30) for i, n in nodes.items())
ok(worst < 1e-9, "every node's variance = numpy's (worst error %.2g of the total)" % worst)
worst = max(abs(C[col[c["a"]], col[c["b"]]] - c["run"]["cov_us2"]) / max(C[0, 0], 1e-30)
            for c in d["covariances"])
ok(worst < 1e-9, "every sibling covariance = numpy's (%d pairs, worst %.2g)" % (len(d["covariances"]), worst))
# the decomposition: Var(parent) = Σ Var(child) + 2 Σ Cov, with numpy's numbers
worst = 0
for p, cs in kids.items():
    k = [col[c] for c in cs]
    sub = C[np.ix_(k, k)]
    worst = max(worst, abs(sub.sum() - C[col[p], col[p]]) / max(C[0, 0], 1e-30))
ok(worst < 1e-9, "Var(parent) = Σ Var(child) + 2 Σ Cov(child_i, child_j) at every node (numpy)")
PY
finish
