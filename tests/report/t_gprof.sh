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

# a profile without call arcs (the program calls nothing profiled): gprof
# prints the flat profile only, no call graph and no index
cat > noarcs.c <<'C'
volatile long sink;
int main(void) { for (long i = 0; i < 300000000; i++) sink += i; return 0; }
C
gcc -pg -g -O0 noarcs.c -o noarcs && ./noarcs && mv gmon.out noarcs.out
"$R" --gprof ./noarcs noarcs.out > ours_na.txt
gprof -b ./noarcs noarcs.out > theirs_na.txt
check "--gprof without call arcs: flat profile only, as gprof -b" \
    bash -c "! grep -q 'Call graph' ours_na.txt && grep -q ' main\$' ours_na.txt && cmp -s ours_na.txt theirs_na.txt"
cmp -s ours_na.txt theirs_na.txt || diff ours_na.txt theirs_na.txt | head -10

# a run too short for a single tick: "no time accumulated" in the flat
# profile, "no time propagated" in the call graph, as gprof says
cat > notime.c <<'C'
__attribute__((noinline)) int one(int x) { return x + 1; }
int main(void) { int r = 0; for (int i = 0; i < 10; i++) r = one(r); return r != 10; }
C
gcc -pg -g -O0 notime.c -o notime && ./notime && mv gmon.out notime.out
"$R" --gprof ./notime notime.out > ours_nt.txt
gprof -b ./notime notime.out > theirs_nt.txt
check "--gprof without ticks: 'no time accumulated' and 'no time propagated', as gprof -b" \
    bash -c "grep -q '^ no time accumulated\$' ours_nt.txt && grep -q 'covers .* no time propagated\$' ours_nt.txt && cmp -s ours_nt.txt theirs_nt.txt"
cmp -s ours_nt.txt theirs_nt.txt || diff ours_nt.txt theirs_nt.txt | head -10

# calls that mostly go to clones gprof does not list ("f.isra.0",
# "f.part.0"): still a profile of this program (the check that a gmon file
# belongs to the program looks at every function symbol), and the clones'
# calls count for the function below them, as in gprof
cat > clones.c <<'C'
volatile long sink;
#define CLONE(f, name) __attribute__((noinline)) static long f(long n) __asm__(name); \
    static long f(long n) { for (long i = 0; i < n; i++) sink += i; return sink; }
CLONE(c1, "scan.isra.0")
CLONE(c2, "sort.part.0")
CLONE(c3, "merge.isra.0")
CLONE(c4, "probe.part.0")
__attribute__((noinline)) long plain(long n) { return n + 1; }
volatile long size = 20000000;
int main(void) { return (int)((c1(size) + c2(size) + c3(size) + c4(size) + plain(1)) & 0); }
C
gcc -pg -g -O0 clones.c -o cclones && ./cclones && mv gmon.out cclones.out
"$R" --gprof ./cclones cclones.out > ours_cl.txt 2> ours_cl.err
rc=$?
gprof -b ./cclones cclones.out > theirs_cl.txt
check "--gprof: calls into unlisted clones are no sign of another program's gmon (rc $rc)" \
    bash -c "[ $rc -eq 0 ] && ! grep -q 'not a profile' ours_cl.err"
check "--gprof: ... and the output is gprof -b's" cmp -s ours_cl.txt theirs_cl.txt
cmp -s ours_cl.txt theirs_cl.txt || { cat ours_cl.err; diff ours_cl.txt theirs_cl.txt | head -10; }
finish
