#!/bin/bash
# --gprof orders and numbers the call graph as gprof does.
# 1. Equal totals. gprof scales what it
# prints and sorts by each function's propagation fraction: the sum over
# its callers of calls-along-the-arc / all-calls, in double precision and in
# the order of its parent lists (newest arc first). For calls 1 + 2 + 7 that
# sum is 1.0 in one order and 0.9999999999999999 in another, and decides
# whether a function with one tick sorts before another one-tick function
# (redis-server's call graph had ~440 lines out of place). The histogram is
# rewritten to exactly one tick each, so the test does not depend on timing.
source "$(dirname "$0")/../lib.sh"
R=$VPROF_BIN/vprof-report
command -v gprof >/dev/null || skip "binutils gprof not installed"
cd "$TMP"
# one_tick_each GMON EXE F...: every histogram bin 0, then one tick in each F
cat > ticks.py <<'PY'
import struct, subprocess, sys
path, exe, funcs = sys.argv[1], sys.argv[2], sys.argv[3:]
addr = {}
for line in subprocess.run(["nm", exe], capture_output=True, text=True).stdout.split("\n"):
    p = line.split()
    if len(p) == 3: addr[p[2]] = int(p[0], 16)
b = bytearray(open(path, "rb").read())
assert b[:4] == b"gmon" and b[20] == 0, "a gmon file starting with its histogram"
lo, hi, n = struct.unpack_from("<QQI", b, 21)
data = 21 + 8 + 8 + 4 + 4 + 15 + 1
for i in range(n): struct.pack_into("<H", b, data + 2 * i, 0)
for f in funcs:
    i = (addr[f] + 8 - lo) * n // (hi - lo)
    struct.pack_into("<H", b, data + 2 * i, 1)
open(path, "wb").write(bytes(b))
PY
# build_run NAME: NAME.c built with -pg and run once (gmon.out)
build_run() {
    gcc -pg -O1 -no-pie "$1.c" -o "$1" || { echo "not ok - gcc -pg $1.c"; exit 1; }
    rm -f gmon.out; "./$1" || { echo "not ok - run $1"; exit 1; }
}
# same_as_gprof NAME WHAT: --gprof on gmon.out is gprof -b's, byte for byte
same_as_gprof() {
    gprof -b "./$1" gmon.out > theirs.txt 2>&1
    "$R" --gprof "./$1" gmon.out > ours.txt 2>&1
    check "$2: --gprof is gprof -b's output, byte for byte" cmp theirs.txt ours.txt
}
orders=""
for arrangement in "c1 c2 c7" "c7 c2 c1" "c1 c7 c2"; do
    {
        echo 'volatile long sink;'
        echo '__attribute__((noinline)) void target(void) { sink++; }'
        echo '__attribute__((noinline)) void peer(void) { sink++; }'
        for c in $arrangement; do        # callers in this address order
            k=${c#c}
            echo "__attribute__((noinline)) void $c(void) { for (int i = 0; i < $k; i++) target(); }"
        done
        echo 'int main(void) { c1(); c2(); c7(); peer(); return 0; }'
    } > p.c
    build_run p
    python3 ticks.py gmon.out ./p target peer || { echo "not ok - rewrite gmon"; exit 1; }
    same_as_gprof p "callers in order $arrangement"
    orders="$orders $(grep -E '^\[[0-9]+\] .* (target|peer) \[' theirs.txt | awk '{print $NF == "" ? "" : $(NF-1)}' | tr '\n' ,)"
done
# the test has teeth only if gprof's fraction flipped the order at least once
check "gprof orders the two one-tick functions both ways across the arrangements" \
    bash -c "echo '$orders' | tr ' ' '\n' | grep -v '^$' | sort -u | wc -l | grep -qx 2"
echo "# orders:$orders"

# 2. Cycles: gprof numbers them in the address order of the first function
# of each cycle's member list, not in the order a depth-first search finds
# them; two cycles, in both address orders.
for arrangement in "a b" "b a"; do
    {
        echo 'volatile long sink;'
        for l in $arrangement; do
            echo "void ${l}2(int n);"
            # ${l}1 also calls itself: gprof lists a recursive call before
            # the calls inside its cycle among the parents, after them
            # among the children
            echo "__attribute__((noinline)) void ${l}1(int n) { sink++; if (n > 0) { if (n % 3 == 0) ${l}1(n - 1); else ${l}2(n - 1); } }"
            echo "__attribute__((noinline)) void ${l}2(int n) { sink++; if (n > 0) ${l}1(n - 1); }"
            echo "__attribute__((noinline)) void ${l}0(int n) { for (int i = 0; i < n; i++) ${l}1(i); }"
        done
        echo 'int main(void) { a0(30); b0(20); return 0; }'
    } > c.c
    build_run c
    same_as_gprof c "two cycles, $arrangement first"
done
finish
