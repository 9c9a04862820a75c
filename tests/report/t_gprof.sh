#!/bin/bash
# --gprof against binutils `gprof -b` on gmon files written by glibc's own
# profiling runtime (gcc -pg): flat profile and call graph numbers.
source "$(dirname "$0")/../lib.sh"
R=$VPROF_BIN/vprof-report
command -v gprof >/dev/null || skip "binutils gprof not installed"
cd "$TMP"
cat > prog.c <<'C'
volatile double sink;
void leaf(int n) { for (int i = 0; i < n; i++) sink += i * 0.5; }
void mid(int n) { leaf(n); leaf(n / 2); }
static void other(int n) { for (int i = 0; i < n; i++) sink -= i; }
int fact(int n) { return n <= 1 ? 1 : n * fact(n - 1); }
int main(void)
{
    for (int k = 0; k < 12; k++) { mid(2500000); other(1500000); sink += fact(10); }
    leaf(1000);
    return 0;
}
C
gcc -pg -g -O0 prog.c -o prog || { echo "not ok - gcc -pg"; exit 1; }
./prog && mv gmon.out g1.out && ./prog && mv gmon.out g2.out

# numbers of the flat profile: name -> %time cum self calls self/call total/call
flat() { awk '/^Flat profile/{f=1;next} /^\f/{f=0} f && $NF ~ /^[a-z_]/ && $1 ~ /^[0-9.]+$/ {print $NF, $1, $2, $3, $4, $5, $6}' | sort; }
# primary lines of the call graph: index %time self children called name
cg() { awk '/^\[[0-9]+\]/ {print}' | sort; }

for set in "g1.out" "g1.out g2.out"; do
    "$R" --gprof ./prog $set > ours.txt 2>ours.err
    check "--gprof $set: exit 0" [ $? -eq 0 ]
    gprof -b ./prog $set > theirs.txt
    flat < ours.txt > of; flat < theirs.txt > tf
    check "--gprof $set: flat profile has entries" [ "$(wc -l < tf)" -ge 3 ]
    check "--gprof $set: flat profile numbers equal gprof -b" cmp -s of tf
    cmp -s of tf || diff of tf | head -10
    cg < ours.txt > oc; cg < theirs.txt > tc
    check "--gprof $set: call graph primary lines equal gprof -b" cmp -s oc tc
    cmp -s oc tc || diff oc tc | head -10
done
check "--gprof: whole output identical to gprof -b (one file)" \
    cmp -s <("$R" --gprof ./prog g1.out) <(gprof -b ./prog g1.out)

head -c 30 g1.out > trunc.out
out=$("$R" --gprof ./prog trunc.out 2>&1); rc=$?
check "truncated gmon: non-zero exit" [ $rc -ne 0 ]
check "truncated gmon: message names file and offset" grep -q "trunc.out.*offset" <<<"$out"
# mutual recursion (a <cycle 1>), self recursion and long static names in
# the index: the whole output must be what gprof -b prints (several times:
# sampling differs from run to run)
cat > cyc.c <<'C'
volatile double sink;
void work(int n) { for (int i = 0; i < n; i++) sink += i; }
int odd(int n);
int even(int n) { work(20000); return n == 0 ? 1 : odd(n - 1); }
int odd(int n) { work(30000); return n == 0 ? 0 : even(n - 1); }
static int a_rather_long_static_function_name(int n) { work(n); return n <= 0 ? 0 : a_rather_long_static_function_name(n - 1000); }
int main(void)
{
    int r = 0;
    for (int k = 0; k < 200; k++) r += even(20);
    r += a_rather_long_static_function_name(300000);
    work(1000000);
    /* main's own time keeps its total above work's: with equal totals the
     * order of the two entries depends on floating-point rounding */
    for (int i = 0; i < 3000000; i++) sink += i;
    return r > 1000000;
}
C
gcc -pg -g -O0 cyc.c -o cyc
for i in 1 2 3; do
    ./cyc && mv gmon.out cyc.out
    "$R" --gprof ./cyc cyc.out > ours_cyc.txt
    gprof -b ./cyc cyc.out > theirs_cyc.txt
    check "--gprof: cycle entry printed ($i)" grep -q "<cycle 1 as a whole>" ours_cyc.txt
    check "--gprof: cycles, recursion, long names identical to gprof -b ($i)" cmp -s ours_cyc.txt theirs_cyc.txt
    cmp -s ours_cyc.txt theirs_cyc.txt || diff ours_cyc.txt theirs_cyc.txt | head -20
done
# no function with calls has time (all of it in main, which nobody calls):
# gprof's per-call unit is then its first, tera-seconds ("Ts/call")
cat > idle.c <<'C'
volatile long sink;
__attribute__((noinline)) int quick(int x) { return x + 1; }
int main(void)
{
    int r = quick(1);
    for (long i = 0; i < 200000000; i++) sink += i;
    return r != 2;
}
C
gcc -pg -g -O0 idle.c -o idle && ./idle && mv gmon.out idle.out
"$R" --gprof ./idle idle.out > ours_idle.txt
gprof -b ./idle idle.out > theirs_idle.txt
check "--gprof: called functions without time: gprof's Ts/call header" grep -q 'Ts/call' theirs_idle.txt
check "--gprof: ... and the same output as gprof -b" cmp -s ours_idle.txt theirs_idle.txt
cmp -s ours_idle.txt theirs_idle.txt || diff ours_idle.txt theirs_idle.txt | head -10
finish
