#!/bin/bash
# vprof-report --contexts (IntroPerf's Algorithms 1-3) on perf script text:
# generated stack sequences with the cases of the paper's Figure 3 (a
# context change at the same depth, discontinuity propagating upwards,
# recursion, an instance interrupted and resumed), checked instance by
# instance in both estimates; the differential ranking of a path only the
# buggy run has; bad input; and a real `perf record -g` run when perf works.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/common.sh"
S=${VPROF_SAN_BIN:-}/vprof-report
if [ -x "$S" ] && ! [ "$S" -ot "$R" ]; then R=$S; echo "# using $S"; fi
cd "$TMP"
# perf script's layout (perf_ev, common.sh), with a libc frame below main
# and a kernel frame below that
ev() {
    PERF_EV_TAIL='\t    7f0000001000 __libc_start_call_main+0x7a (/usr/lib/x86_64-linux-gnu/libc.so.6)\n\tffffffff81000000 asm_sysvec_apic_timer_interrupt+0x1a ([kernel.kallsyms])\n' perf_ev "$@"
}
{ ev 1.000000 main Z; } > n.perf
{
    ev 1.000000 main A B D
    ev 1.001000 main A B D
    ev 1.002000 main A C D      # B -> C at depth 2: D is another instance too
    ev 1.003000 main A C
    ev 1.004000 main A A A      # recursion
    ev 1.005000 main A A
    ev 1.006000 main A B        # B again: a second instance of main>A>B
    ev 1.007000 main A B D
} > fig3.perf
"$R" --contexts --json --top 0 n.perf fig3.perf > f.json 2> f.err
check "fig3: exit 0" [ $? -eq 0 ]
py() { python3 -c "
import json; d = json.load(open('f.json'))
def node(path):
    for p in d['paths']:
        names = [f['name'] for f in p['functions']]
        if names[:len(path)] == path:
            return p['functions'][len(path) - 1]
    raise AssertionError('no path ' + '>'.join(path))
def lat(path): n = node(path); return (round(n['conservative_ms'], 6), round(n['aggressive_ms'], 6), n['instances'])
$1"; }
check "fig3: kernel and libc frames below main are the chain's, kernel dropped" py '
assert all(p["functions"][0]["name"] in ("__libc_start_call_main", "main") for p in d["paths"]), d'
check "fig3: main and A continue through every sample (7 ms, one instance each)" py '
assert lat(["__libc_start_call_main", "main"]) == (7.0, 7.0, 1), lat(["__libc_start_call_main", "main"])
assert lat(["__libc_start_call_main", "main", "A"]) == (7.0, 7.0, 1)'
check "fig3: B changes to C at the same depth: B ends (1 ms conservative, 2 aggressive), and again 1.006-1.007" py '
assert lat(["__libc_start_call_main", "main", "A", "B"]) == (2.0, 3.0, 2), lat(["__libc_start_call_main", "main", "A", "B"])'
check "fig3: D under B is a different instance from D under C (discontinuity propagates upwards)" py '
assert lat(["__libc_start_call_main", "main", "A", "B", "D"]) == (1.0, 2.0, 2), lat(["__libc_start_call_main", "main", "A", "B", "D"])
assert lat(["__libc_start_call_main", "main", "A", "C", "D"]) == (0.0, 1.0, 1), lat(["__libc_start_call_main", "main", "A", "C", "D"])'
check "fig3: C lasts 1.002-1.003 (1 ms), until the recursion replaces it (2 ms aggressive)" py '
assert lat(["__libc_start_call_main", "main", "A", "C"]) == (1.0, 2.0, 1)'
check "fig3: recursion: A>A is one instance (1 ms), A>A>A a shorter one (0 / 1 ms)" py '
assert lat(["__libc_start_call_main", "main", "A", "A"]) == (1.0, 2.0, 1), lat(["__libc_start_call_main", "main", "A", "A"])
assert lat(["__libc_start_call_main", "main", "A", "A", "A"]) == (0.0, 1.0, 1)'
check "fig3: own time = latency minus the callees' (A: 7 - 2 - 1 - 1 = 3 ms)" py '
a = node(["__libc_start_call_main", "main", "A"]); assert abs(a["own_ms"] - 3.0) < 1e-9, a'

# differential ranking: the buggy run adds a path main > X > Z
{ t=0; for i in $(seq 1 50); do ev "2.$(printf %06d $((i * 1000)))" main X Y; done; } > dn.perf
{ for i in $(seq 1 50); do ev "2.$(printf %06d $((i * 1000)))" main X Y; done
  for i in $(seq 51 99); do ev "2.$(printf %06d $((i * 1000)))" main X Z; done; } > db.perf
"$R" --contexts --json dn.perf db.perf > d.json
check "diff: the path only the buggy run has ranks first, Z its hottest function" python3 -c "
import json; p = json.load(open('d.json'))['paths']
top = p[0]; names = [f['name'] for f in top['functions']]
assert names[-1] == 'Z' and top['new'] is True and top['cost_ms'] > 40, top
z = top['functions'][-1]; assert z['rank_in_path'] == 1, z
rest = [x for x in p if [f['name'] for f in x['functions']][-1] == 'Y']
assert rest and abs(rest[0]['cost_ms']) < 2, rest"
"$R" --contexts --estimate aggressive dn.perf db.perf > d.txt
check "text: estimate named, the new path first with its chain" \
    bash -c "grep -q 'aggressive estimate' d.txt && grep -A2 '^\[1\]' d.txt | grep -q 'main (.*) > X (.*) > Z ('"
check "text fits 80 columns" awk 'length($0) > 80 { exit 1 }' d.txt

# --clock: a thread descheduled for 100 ms between two 1 ms ticks of main > P
{ ev 3.000000 main P; ev 3.001000 main P; ev 3.101000 main P; ev 3.102000 main P; } > gap.perf
"$R" --contexts --json --top 0 n.perf gap.perf > cpu.json
"$R" --contexts --json --top 0 --clock wall n.perf gap.perf > wall.json
check "--clock cpu (default): P's latency is its ticks' periods (3 ms), not the 102 ms gap" python3 -c "
import json
def lat(f):
    for p in json.load(open(f))['paths']:
        if [x['name'] for x in p['functions']][-1] == 'P': return p['functions'][-1]['conservative_ms']
assert abs(lat('cpu.json') - 3) < 1e-6 and abs(lat('wall.json') - 102) < 1e-6, (lat('cpu.json'), lat('wall.json'))"
sed 's/cpu-clock:ppp/cycles:u/' gap.perf > cyc.perf
"$R" --contexts --json n.perf cyc.perf > cyc.json 2> cyc.err
check "--clock cpu on a non-clock event: the timestamps instead, with a warning" \
    bash -c "grep -q \"cyc.perf: '1000000 cycles:u' is not a cpu-clock or task-clock event\" cyc.err &&
             python3 -c \"import json; assert json.load(open('cyc.json'))['buggy']['samples'] == 4\""
"$R" --contexts --clock fast n.perf gap.perf > /dev/null 2> e5.txt
check "--clock fast: usage error" bash -c "[ $? -eq 2 ] && grep -q 'not cpu or wall' e5.txt"

# bad input: named, non-zero
echo "not perf output" > junk.txt
"$R" --contexts junk.txt db.perf > /dev/null 2> e1.txt
check "junk file: exit 1 naming the file" bash -c "[ $? -eq 1 ] && grep -q 'junk.txt: no perf script events' e1.txt"
printf 'prog 7 1.000000:     1000000 cpu-clock:ppp: \n\n' > nochain.perf
"$R" --contexts nochain.perf db.perf > /dev/null 2> e2.txt
check "events without call chains: exit 1, says to record with -g" bash -c "[ $? -eq 1 ] && grep -q 'nochain.perf: .*no call chains.*perf record -g' e2.txt"
"$R" --contexts --estimate fast dn.perf db.perf > /dev/null 2> e3.txt
check "--estimate fast: usage error" bash -c "[ $? -eq 2 ] && grep -q 'not conservative or aggressive' e3.txt"
"$R" --contexts dn.perf > /dev/null 2> e4.txt
check "one file: usage error" [ $? -eq 2 ]

# a real run, when perf may record here
if command -v perf > /dev/null && perf record -q -o probe.data -g true > /dev/null 2>&1; then
    cat > app.c <<'C'
#include <stdlib.h>
volatile long sink;
__attribute__((noinline)) void probe(long n) { for (long i = 0; i < n; i++) sink += i; }
__attribute__((noinline)) void lookup(long k, long fallback) { probe(fallback ? 40 * k : k); sink++; }
int main(int argc, char **argv) { long fb = atol(argv[1]); for (long k = 0; k < 4000; k++) lookup(2000, fb); return 0; }
C
    gcc -O1 -g -fno-omit-frame-pointer -o app app.c
    perf record -q -F 2000 -g -o n.data ./app 0 > /dev/null 2>&1 && perf script -i n.data > rn.perf 2>/dev/null
    perf record -q -F 2000 -g -o b.data ./app 1 > /dev/null 2>&1 && perf script -i b.data > rb.perf 2>/dev/null
    "$R" --contexts --json rn.perf rb.perf > r.json
    check "perf record -g: the top path runs from main to probe, probe its hottest" python3 -c "
import json; p = json.load(open('r.json'))['paths'][0]
names = [f['name'] for f in p['functions']]
assert 'main' in names and names[-1] == 'probe', names
assert p['functions'][-1]['rank_in_path'] == 1 and p['cost_ms'] > 0, p"
else
    echo "# perf record not usable here: real-run check skipped"
fi
finish
