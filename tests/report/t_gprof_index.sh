#!/bin/bash
# --gprof on a program with more than 999 call-graph entries: gprof's
# "Index by function name" puts a 5-character "[1234]" at once, where the
# padding to column 6 would be negative (it underflowed and printed spaces
# until the disk was full, on redis-server's 4,261 entries). The output must
# end, and be gprof -b's, byte for byte.
source "$(dirname "$0")/../lib.sh"
R=$VPROF_BIN/vprof-report
command -v gprof >/dev/null || skip "binutils gprof not installed"
cd "$TMP"
# names with a leading underscore come after the others in the call graph
# (gprof's cmp_total) but first in the index: column 0 gets "[1001]" and up
python3 - > many.c <<'PY'
names = ["f%04d" % i for i in range(1000)] + ["_g%04d" % i for i in range(1000)]
print("volatile long sink;")
for i, f in enumerate(names):
    print(f"__attribute__((noinline)) void {f}(long k) {{ sink += k + {i}; }}")
print("int main(void)\n{")
for i, f in enumerate(names):
    print(f"    {f}({i});")
print("    for (long r = 0; r < 20000000; r++) sink ^= r;\n    return 0;\n}")
PY
gcc -pg -g -O0 many.c -o many || { echo "not ok - gcc -pg"; exit 1; }
./many || { echo "not ok - run"; exit 1; }
gprof -b ./many gmon.out > theirs.txt 2> theirs.err
check "gprof's index has [1001] and up in column 0" grep -q '^ \[1[0-9][0-9][0-9]\] _g' theirs.txt
timeout 60 "$R" --gprof ./many gmon.out 2> ours.err | head -c 50000000 > ours.txt
check "--gprof ends, its output of a sane size" test "$(wc -c < ours.txt)" -lt $((4 * $(wc -c < theirs.txt)))
check "--gprof is gprof -b's output, byte for byte" cmp theirs.txt ours.txt
finish
