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
cat > plt.c <<'C'
#include <stdlib.h>
#include <string.h>
volatile size_t sink;
__attribute__((noinline)) void scan(const char *s, long n)
{
    for (long i = 0; i < n; i++) sink += strlen(s + (i & 7));
}
int main(int argc, char **argv)
{
    (void)argv;
    scan("abcdefghijklmnop", argc > 1 ? 60000000 : 30000000);
    return 0;
}
C
gcc -O0 -g -pg -fno-builtin -o plt plt.c || { echo "not ok - build"; exit 1; }
objdump -d plt | grep -q '<strlen@plt>:' || skip "the linker wrote no strlen@plt stub"
VPROF_OUT=n LD_PRELOAD=$LIBVPROF ./plt
VPROF_OUT=b LD_PRELOAD=$LIBVPROF ./plt buggy
"$R" -q --json --top 0 n b > r.json
# The histogram's bins are about 4 bytes, not aligned to the 16-byte
# stubs: a tick in the first stub may fall in a bin shared with the PLT
# header ("[plt]"); the stack samples below have exact PCs.
check "the stubs' time is the PLT's (strlen@plt, [plt]), none is [unknown]'s" python3 -c "
import json
F = {f['name']: f for f in json.load(open('r.json'))['functions']}
assert '[unknown]' not in F, F['[unknown]']['pc_cost']
assert sum(F.get(n, {}).get('pc_cost', 0) for n in ('strlen@plt', '[plt]')) > 0, list(F)"
check "a stub has no bug pattern of its own" python3 -c "
import json
F = json.load(open('r.json'))['functions']
assert all(f['pattern'] == 'none' for f in F if f['name'].endswith('@plt') or f['name'] == '[plt]'), \
    [(f['name'], f['pattern']) for f in F if '@plt' in f['name']]"
"$R" --contexts n b > c.txt
check "calling contexts name the stub: scan > strlen@plt" \
    bash -c "tr -s ' \n' '  ' < c.txt | grep -q 'scan ([0-9.]*) > strlen@plt'"
"$R" --gprof ./plt b/gmon.*.out > g.txt
check "--gprof, like gprof, has no @plt symbol" bash -c "grep -q scan g.txt && ! grep -q '@plt' g.txt"
finish
