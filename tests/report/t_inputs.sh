#!/bin/bash
# Never a silently wrong answer (vprof-report/checks.c, hist_assign.c): a
# gmon file of another program, runs of another build, profiles with nothing
# in them, a run cut by SIGKILL, value samples whose variables the layout
# does not describe. Inputs: vprof-gen-runs and small programs built with
# gcc -pg and vprof-cc.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/common.sh"
CC=$VPROF_BIN/vprof-cc
cd "$TMP"
run() { out=$("$R" "$@" 2>&1 >stdout.txt); rc=$?; first=$(head -1 <<<"$out"); }
refused() { [ $rc -eq 1 ] && [ ! -s stdout.txt ]; }

# --- a gmon file of another program ---------------------------------------
cat > a.c <<'C'
volatile long s;
void f(int n) { for (int i = 0; i < n; i++) s += i; }
int main(void) { for (int k = 0; k < 40; k++) f(1000000); return 0; }
C
cat > b.c <<'C'
volatile double s;
void g(int n) { for (int i = 0; i < n; i++) s += i * 0.5; }
void h(int n) { g(n); g(n / 2); }
void k(int n) { for (int i = 0; i < n; i++) s -= i; }
int main(void) { for (int j = 0; j < 20; j++) { h(1000000); k(500000); } return 0; }
C
gcc -pg -g -O0 a.c -o a && ./a && mv gmon.out a.gmon || { echo "not ok - gcc -pg a.c"; exit 1; }
gcc -pg -g -O0 b.c -o b && ./b && mv gmon.out b.gmon || { echo "not ok - gcc -pg b.c"; exit 1; }
run --gprof ./a a.gmon
check "--gprof: the program's own gmon is accepted" [ $rc -eq 0 ]
run --gprof ./a b.gmon
check "--gprof: another program's gmon is refused" refused
check "--gprof: the message names the file and says why" \
    grep -q "^vprof-report: b.gmon: not a profile of ./a" <<<"$first"
run --gprof ./a a.gmon b.gmon
check "--gprof: refused also as the second of several files" refused
run --gprof ./b a.gmon
check "--gprof: a smaller program's gmon is refused too" refused
# clang -pg calls mcount after a variadic function's register save area,
# ~100 bytes in: called from four sites, its arcs are one function entered
# late, not another program's (a varargs logging helper refused every run
# of fresh5_a_http_keepalive built with inlining)
cat > va.c <<'C'
#include <stdarg.h>
volatile long s;
__attribute__((noinline)) void note(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    double d = va_arg(ap, double);
    long l = va_arg(ap, long);
    s += (long)d + l + fmt[0];
    va_end(ap);
}
int main(void)
{
    for (int i = 0; i < 200000; i++) {
        note("a", 1.0, 1L); note("b", 2.0, 2L); note("c", 3.0, 3L); note("d", 4.0, 4L);
    }
    return 0;
}
C
if command -v clang-14 > /dev/null && clang-14 -pg -g -O2 va.c -o va && ./va && mv gmon.out va.gmon; then
    run --gprof ./va va.gmon
    check "--gprof: a variadic function's late mcount call (clang) is its own program's" [ $rc -eq 0 ]
fi

make_target "$TMP" || { echo "not ok - build target"; exit 1; }
gen rank normal n ./target --seed 1
gen rank buggy bb ./target --seed 2
run --json n bb
check "run directories of the program: accepted" [ $rc -eq 0 ]
cp -r bb bf; cp b.gmon bf/gmon.1000.out
run n bf
check "run directory with another program's gmon: refused" refused
check "run directory: the first line names the gmon file" \
    grep -q "^vprof-report: bf/gmon.1000.out: not a profile of .*target" <<<"$first"
run --force n bf
check "--force: that gmon file is left out with a warning" \
    eval '[ $rc -eq 0 ] && grep -q "warning: bf/gmon.1000.out: not a profile.*left out" <<<"$out"'

# --- runs of another build than the executable ------------------------------
gen rank normal nB ./target --seed 1 --build-id 0badc0de
gen rank buggy bB ./target --seed 2 --build-id 0badc0de
bid=$(readelf -n target | awk '/Build ID:/ {print $3}')
run nB bB
check "layouts recorded another build-id: refused" refused
check "build-id: the first line names the layout and both ids" \
    grep -q "^vprof-report: bB/layout.1000: the buggy run recorded build-id 0badc0de, but ./target has build-id $bid" <<<"$first"
run --force nB bB
check "build-id, --force: a warning, exit 0" eval '[ $rc -eq 0 ] && grep -q "symbols may be wrong" <<<"$out"'

# --- profiles with nothing in them -----------------------------------------
mkdir lo; cp bb/layout.1000 lo/
run n lo
check "a directory with only a layout log: refused" refused
check "only a layout log: the first line says the run has nothing to compare" \
    grep -q "^vprof-report: the buggy run lo has nothing to compare: its 1 process(es) left no gmon file, no value samples" <<<"$first"
run lo bb
check "only a layout log on the normal side: refused" \
    eval 'refused && grep -q "normal run lo has nothing" <<<"$first"'
mkdir gn gb; cp n/layout.1000 n/gmon.1000.out gn/; cp bb/layout.1000 bb/gmon.1000.out gb/
run --json n gb
check "gmon but no values on the buggy side: exit 0" [ $rc -eq 0 ]
check "gmon but no values on the buggy side: says so" grep -q "warning: the buggy runs have no value samples" <<<"$out"
run --json gn gb
check "gmon but no values on both sides: exit 0" [ $rc -eq 0 ]
check "gmon but no values on both sides: says so" grep -q "warning: neither side has value samples" <<<"$out"
sed -i 's/^meta\t.*/meta\t\tnone/' gb/layout.1000
run --json gn gb
check "no values: the layout's metadata status is given" grep -q "variable metadata none: build with vprof-cc" <<<"$out"

# --- samples of variables the layout does not describe ------------------
cp -r bb bv; sed -i '/^var\t/d' bv/layout.1000
run n bv
check "no variable described: refused" refused
check "no variable described: the first line names values and layout" \
    grep -q "^vprof-report: bv/values.1000: [0-9]* of [0-9]* value samples name variable ids (e.g. [0-9]*) that bv/layout.1000 does not describe" <<<"$first"
# a layout log cut at a line end (before its var lines)
cp -r bb bt; head -n 6 bb/layout.1000 > bt/layout.1000
run n bt
check "truncated layout log: refused, what is missing first" \
    eval 'refused && grep -q "bt/values.1000: .* bt/layout.1000 does not describe" <<<"$first"'
# cut inside a line
cp -r bb bc; head -c $(( $(grep -b -m1 $'^var\t1\t' bb/layout.1000 | cut -d: -f1) + 7 )) bb/layout.1000 > bc/layout.1000
run n bc
check "layout log cut inside a line: refused naming it" eval 'refused && grep -q "bc/layout.1000" <<<"$first"'

# --- a run cut short: values kept, gmon lost -----------------------------
# synthetic: the layout without its end line, no gmon file
cp -r bb bk; sed -i '/^end\t/d' bk/layout.1000; rm bk/gmon.1000.out
run --json n bk
check "killed run with value samples: proceeds (exit 0)" [ $rc -eq 0 ]
check "killed run: a loud warning names the process and what is lost" \
    grep -q "WARNING: buggy run bk: process 1000 did not exit normally .*PC histogram and call counts are lost; it is ranked from its [0-9]* value samples alone" <<<"$out"
check "killed run: the report is printed" grep -q '"functions"' stdout.txt
mkdir bk0; sed '/^end\t/d' bb/layout.1000 > bk0/layout.1000
run n bk0
check "killed run without value samples: refused" \
    eval 'refused && grep -q "buggy run bk0 has nothing to compare.*none of them exited normally" <<<"$first"'

# real: a program built with vprof-cc, killed with SIGKILL while it runs
if [ -x "$CC" ] && [ -e "$VPROF_LIB/libvprof.so" ]; then
    cat > spin.c <<'C'
#include <stdlib.h>
volatile long sink;
__attribute__((noinline)) void work(long n) { for (long i = 0; i < n; i++) sink += i & 7; }
int main(int argc, char **argv)
{
    long rounds = atol(argv[1]);
    for (long r = 0; r < rounds; r++) work(2000000);
    return 0;
}
C
    "$CC" -O1 -g -o spin spin.c > cc.log 2>&1 || { cat cc.log; echo "not ok - vprof-cc spin.c"; exit 1; }
    VPROF_OUT=sn ./spin 100 || { echo "not ok - normal spin run"; exit 1; }
    mkdir sk; VPROF_OUT=sk ./spin 100000000 & pid=$!
    # wait until it has written value samples (up to 20 s), then kill it:
    # the file's header counts them (its size says nothing: it is sized to
    # its capacity, sparse, when it is created)
    for i in $(seq 200); do
        v=$(ls sk/values.* 2>/dev/null | head -1)
        n=$([ -n "$v" ] && "$VPROF_ROOT/build/test-bin/vpcheck" values "$v" 2>/dev/null |
            sed -n '1s/^# n=\([0-9]*\).*/\1/p')
        [ "${n:-0}" -gt 100 ] && break
        sleep 0.1
    done
    kill -KILL $pid; wait $pid 2>/dev/null
    check "SIGKILL: no gmon file, no end line" eval '! ls sk/gmon.* >/dev/null 2>&1 && ! grep -q "^end" sk/layout.*'
    run --json sn sk
    check "SIGKILL: the report proceeds on the value samples" [ $rc -eq 0 ]
    check "SIGKILL: it says the process did not exit normally" \
        grep -q "WARNING: buggy run sk: process $pid did not exit normally" <<<"$out"
    check "SIGKILL: work still ranked (its variable-based cost)" \
        /usr/bin/python3 -c "import json; f = json.load(open('stdout.txt'))['functions']; w = [x for x in f if x['name'] == 'work']; assert w and w[0]['var_cost'] > 0 and w[0]['pc_cost'] == 0, w"
fi
finish
