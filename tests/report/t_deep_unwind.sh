#!/bin/bash
# VPROF_UNWIND beyond 7 callers: a tick's cost is counted once per frame,
# however many variables the frame has. The report remembered 8 PCs per
# tick, and each variable sample in a 9th or deeper frame counted the tick
# again: with VPROF_UNWIND=14 over a 13-deep chain, main had three times
# the program's run time (scan.c, count_tick).
. "$(dirname "$0")/../lib.sh"
R=$VPROF_BIN/vprof-report
LIBVPROF=$VPROF_LIB/libvprof.so
[ -x "$R" ] && [ -f "$LIBVPROF" ] || skip "tools not built"
cd "$TMP" || exit 1
python3 - > deep.c <<'PY'
print("#include <stdlib.h>\nvolatile long sink;")
print("__attribute__((noinline)) long leaf(long n) "
      "{ long s = 0; for (long i = 0; i < n; i++) s += i ^ sink; return s; }")
prev = "leaf"
for k in range(1, 13):      # each frame has several variables to sample
    print(f"__attribute__((noinline)) long f{k}(long n) {{ long a = n + {k}, b = n * {k}; "
          f"long r = {prev}(n); sink += a + b; return r; }}")
    prev = f"f{k}"
print("int main(int argc, char **argv) { long n = argc > 1 ? atol(argv[1]) : 1000, t = 0; "
      f"for (int r = 0; r < 2000; r++) t += {prev}(n); sink = t; return 0; }}")
PY
gcc -O1 -g -pg -fno-inline deep.c -o deep || { echo "not ok - build"; exit 1; }
"$VPROF_BIN/vprof-meta" --all --files '*deep.c' -o deep.vmeta ./deep 2> meta.err ||
    { cat meta.err; echo "not ok - vprof-meta"; exit 1; }
export VPROF_META=$PWD/deep.vmeta VPROF_UNWIND=14
VPROF_OUT=n LD_PRELOAD=$LIBVPROF ./deep 100000 || echo "not ok - normal run"
VPROF_OUT=b LD_PRELOAD=$LIBVPROF ./deep 200000 || echo "not ok - buggy run"
"$R" -q --json --top 0 n b > r.json
check "every frame of the 14-deep ticks was sampled" python3 -c "
import json
F = {f['name']: f for f in json.load(open('r.json'))['functions']}
assert all(F.get(n, {}).get('var_cost', 0) > 0 for n in ['main'] + ['f%d' % k for k in range(1, 13)]), sorted(F)"
check "no function costs more than the whole run" python3 -c "
import json
fs = json.load(open('r.json'))['functions']
total = sum(f['pc_cost'] for f in fs)
over = [(f['name'], f['var_cost']) for f in fs if f['var_cost'] > 1.02 * total]
assert total > 0 and not over, (total, over)"
# --stack-raw all: with VPROF_UNWIND=2 the value samples reach f1 and f2 only
# (main's loop gets none); the stack samples hold the whole chain, so f9's
# raw cost becomes its inclusive cost (nearly the run's), and without the
# option it stays the few ticks its own code took
VPROF_UNWIND=2 VPROF_OUT=n2 LD_PRELOAD=$LIBVPROF ./deep 100000 || echo "not ok - normal run (2)"
VPROF_UNWIND=2 VPROF_OUT=b2 LD_PRELOAD=$LIBVPROF ./deep 200000 || echo "not ok - buggy run (2)"
"$R" -q --json --top 0 --stack-raw all n2 b2 > sr.json
"$R" -q --json --top 0 --stack-raw off n2 b2 > nosr.json
check "--stack-raw all: f9 (7 frames above the leaf's unwinding) costs nearly the run, not without it" python3 -c "
import json
S = {f['name']: f for f in json.load(open('sr.json'))['functions']}
N = {f['name']: f for f in json.load(open('nosr.json'))['functions']}
total = sum(f['pc_cost'] for f in S.values())
assert S['f9']['raw_cost'] > 0.8 * total and S['f9']['raw_cost'] <= 1.02 * total, (S['f9']['raw_cost'], total)
assert N.get('f9', {}).get('raw_cost', 0) < 0.5 * total, (N.get('f9'), total)"
finish
