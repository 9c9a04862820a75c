#!/bin/bash
# Ticks in a PLT stub (every call of a library function passes one) belong
# to "name@plt", as objdump and perf name the stubs, not to "[unknown]":
# in the ranking (symbols.c add_plt) and in the calling contexts. gprof
# has no such symbols, so --gprof prints none.
. "$(dirname "$0")/../lib.sh"
R=$VPROF_BIN/vprof-report
LIBVPROF=$VPROF_LIB/libvprof.so
[ -x "$R" ] && [ -f "$LIBVPROF" ] || skip "tools not built"
cd "$TMP" || exit 1
# The called function is a library's empty one: its stub (one jmp) is a
# good part of each call, so it is sampled on any machine (strlen's stub
# was sampled 0-19 times in 0.5 s, by layout and CPU).
echo 'void nop(void) {}' > nop.c
cat > plt.c <<'C'
#include <x86intrin.h>
void nop(void);
/* Runs for a number of TSC cycles, not of calls: the same length of run
   on a fast machine as on a slow one. */
__attribute__((noinline)) void scan(unsigned long long cycles)
{
    unsigned long long t0 = __rdtsc();
    for (long i = 0;; i++) {
        nop();
        if ((i & 0xfffff) == 0 && __rdtsc() - t0 > cycles) break;
    }
}
int main(int argc, char **argv)
{
    (void)argv;
    scan(argc > 1 ? 1600000000ULL : 800000000ULL);
    return 0;
}
C
gcc -O2 -shared -fPIC -o libnop.so nop.c &&
    gcc -O0 -g -pg -o plt plt.c -L. -lnop -Wl,-rpath,"$TMP" || { echo "not ok - build"; exit 1; }
objdump -d plt | grep -q '<nop@plt>:' || skip "the linker wrote no nop@plt stub"
VPROF_OUT=n LD_PRELOAD=$LIBVPROF ./plt
VPROF_OUT=b LD_PRELOAD=$LIBVPROF ./plt buggy
"$R" -q --json --top 0 n b > r.json
# The histogram's bins are about 4 bytes, not aligned to the 16-byte
# stubs: the bin holding a stub's jmp also holds the previous stub's tail,
# and the stub's time must not go to that one (hist_assign.c
# stub_entry_in). Only the stub runs in the loop besides scan and nop.
check "the stub's time is nop@plt's, none is [unknown]'s or another stub's" python3 -c "
import json
F = {f['name']: f for f in json.load(open('r.json'))['functions']}
assert '[unknown]' not in F, F['[unknown]']['pc_cost']
stub = F.get('nop@plt', {}).get('pc_cost', 0)
other = {n: f['pc_cost'] for n, f in F.items() if '@plt' in n and n != 'nop@plt'}
assert stub > 0 and sum(other.values()) < 0.05 * stub, (stub, other)"
check "a stub has no bug pattern of its own" python3 -c "
import json
F = json.load(open('r.json'))['functions']
assert all(f['pattern'] == 'none' for f in F if f['name'].endswith('@plt') or f['name'] == '[plt]'), \
    [(f['name'], f['pattern']) for f in F if '@plt' in f['name']]"
"$R" --contexts n b > c.txt
check "calling contexts name the stub: scan > nop@plt" \
    bash -c "tr -s ' \n' '  ' < c.txt | grep -q 'scan ([0-9.]*) > nop@plt'"
"$R" --gprof ./plt b/gmon.*.out > g.txt
check "--gprof, like gprof, has no @plt symbol" bash -c "grep -q scan g.txt && ! grep -q '@plt' g.txt"
finish
