#!/bin/bash
# One small program per location kind vprof-meta supports (docs/vprof-meta.md
# "Locations"): each is checked for the entry vprof-meta writes (--dump) and,
# where the value is observable, against gdb through the oracle.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/oracle_lib.sh"
command -v gdb >/dev/null || skip "gdb not installed"
[ -x "$META" ] || skip "vprof-meta not built"
command -v clang-14 >/dev/null || skip "clang-14 not installed"
oracle_build || { not_ok "build oracle_trace"; finish; }
cd "$TMP" || exit 1

# build NAME CC FLAGS: compiles NAME.c (from stdin) into NAME
build() {
    local name=$1 cc=$2; shift 2
    cat >"$name.c"
    "$cc" -g "$@" -o "$name" "$name.c"
}
# meta NAME [vprof-meta args...]: schema-less over NAME.c, dump in NAME.txt
meta() {
    local name=$1; shift
    "$META" --all --files "$name.c" --explain -o "$name.vmeta" "$@" "$name" \
        2>"$name.explain" && "$META" --dump "$name.vmeta" >"$name.txt"
}
oracle() {  # oracle NAME: values agree with gdb, no false claims
    oracle_run "$1: gdb agrees" "$TMP/$1" "$1.c" "$TMP/$1.vmeta" "" -- \
        --min-coverage 0.5
}
has() { grep -q -- "$2" "$1.txt"; }

# --- DW_OP_addr (gcc) and DW_OP_addrx (clang, DWARF 5): static address
for cc in gcc clang-14; do
    n=addr_${cc%-14}
    build $n $cc -O0 <<'C'
long counter = 5;
static int hidden = 2;
int main(void) { for (int i = 0; i < 3; i++) counter += hidden; return 0; }
C
    meta $n
    addr=$(( 16#$(nm $n | awk '$3 == "counter" { print $1 }') ))
    check "$cc: global at its symbol address (ADDR)" \
        grep -q "var=0 ADDR reg=0 size=8 flags=2 offset=$addr " $n.txt
    oracle $n
done

# --- thread-local storage: reported, not mis-read
for cc in gcc clang-14; do
    n=tls_${cc%-14}
    build $n $cc -O0 <<'C'
__thread int tcount = 3;
int main(void) { return tcount - 3; }
C
    meta $n
    check "$cc: TLS reported as unsupported" \
        grep -q "tcount: not placed: thread-local storage" $n.explain
    check "$cc: no entry for the TLS variable" \
        test "$(grep -c '^entry' $n.txt)" -eq 0
done

# --- DW_OP_regN (location lists, DWARF 5 .debug_loclists)
for cc in gcc clang-14; do
    n=reg_${cc%-14}
    build $n $cc -O2 <<'C'
#include <stdio.h>
__attribute__((noinline)) long sum(const int *v, int n)
{
    long s = 0;
    for (int i = 0; i < n; i++)
        s += v[i] * (i + 1);
    return s;
}
int main(void) { int v[6] = {1, 2, 3, 4, 5, 6}; printf("%ld\n", sum(v, 6)); return 0; }
C
    meta $n
    check "$cc -O2: DWARF 5 location lists in .debug_loclists" \
        sh -c "readelf -S $n | grep -q debug_loclists"
    check "$cc -O2: register entries (REG)" has $n " REG reg="
    oracle $n
done

# --- DWARF 4 location lists (.debug_loc) and ranges (.debug_ranges)
for cc in gcc clang-14; do
    n=loc4_${cc%-14}
    cp reg_${cc%-14}.c $n.c
    $cc -g -gdwarf-4 -O2 -o $n $n.c
    meta $n
    check "$cc -gdwarf-4: .debug_loc present" \
        sh -c "readelf -S $n | grep -q '\.debug_loc '"
    check "$cc -gdwarf-4: register entries (REG)" has $n " REG reg="
    oracle $n
done

# --- DW_OP_bregN: a variable living in memory at register+offset
n=breg
build $n gcc -O1 <<'C'
#include <stdio.h>
struct node { int key; struct node *next; };
__attribute__((noinline)) long walk(struct node *p)
{
    long s = 0;
    for (; p; p = p->next) {
        int k = p->key;
        s += k * k;
    }
    return s;
}
int main(void)
{
    struct node c = {3, 0}, b = {2, &c}, a = {1, &b};
    printf("%ld\n", walk(&a));
    return 0;
}
C
meta $n
check "gcc -O1: memory at register+offset (BREG)" has $n " BREG reg=5 "
oracle $n

# --- DW_OP_fbreg with DW_OP_call_frame_cfa (gcc) resolved through the CFI
n=fbcfa
build $n gcc -O0 <<'C'
int twice(int x) { int y = x * 2; return y; }
int main(void) { return twice(21) - 42; }
C
meta $n
check "gcc -O0: frame base = CFA, rsp+8 at entry" has $n "FBREG reg=7 size=4 flags=2 offset=-20 fb_offset=8 "
check "gcc -O0: frame base = CFA, rbp+16 after the prologue" has $n "FBREG reg=6 size=4 flags=2 offset=-20 fb_offset=16 "
oracle $n

# --- DW_OP_fbreg with DW_AT_frame_base DW_OP_reg6 (clang)
n=fbreg6
cp fbcfa.c $n.c
clang-14 -g -O0 -o $n $n.c
meta $n
check "clang -O0: frame base rbp, fb_offset 0" has $n "FBREG reg=6 size=4 flags=2 offset=-[0-9]* fb_offset=0 "
oracle $n

# --- DW_OP_entry_value: skipped cleanly, reported
n=entry
build $n gcc -O2 <<'C'
#include <stdio.h>
__attribute__((noinline)) void sink(long v) { printf("%ld\n", v); }
__attribute__((noinline)) long f(long x) { sink(x * 3); sink(1); return 2; }
int main(int argc, char **argv) { (void)argv; return (int)f(argc); }
C
meta $n
check "entry_value ranges reported" grep -q "f: x: 1 range(s) skipped: entry value only" $n.explain
check "x still placed where it is in a register" has $n " REG reg=5 size=8 "
oracle $n

# --- DW_OP_lit/constu + DW_OP_stack_value, DW_AT_const_value: CONST
for cc in gcc clang-14; do
    n=const_${cc%-14}
    build $n $cc -O2 <<'C'
#include <stdio.h>
__attribute__((noinline)) void show(int v) { printf("%d\n", v); }
int main(void) { int k = 7; for (int i = 0; i < 2; i++) show(k + i); return 0; }
C
    meta $n
    check "$cc -O2: constant value recorded (CONST 7)" has $n " CONST reg=0 size=4 flags=2 offset=7 "
    oracle $n
done

# --- DW_AT_const_value as a block (gcc: floating-point constants)
n=constf
build $n gcc -O2 <<'C'
#include <stdio.h>
__attribute__((noinline)) void show(double v) { printf("%f\n", v); }
int main(void) { double d = 2.75; float f = 1.25f; for (int i = 0; i < 2; i++) show(d * i + f); return 0; }
C
meta $n
check "double constant 2.75 recorded as its IEEE bits" has $n " CONST reg=0 size=8 flags=4 offset=4613374868287651840 "
check "float constant 1.25 recorded as its IEEE bits" has $n " CONST reg=0 size=4 flags=4 offset=1067450368 "
oracle $n

# --- DW_OP_implicit_value in a location list (a double taking constants)
for cc in gcc clang-14; do
    n=implicit_${cc%-14}
    build $n $cc -O2 <<'C'
#include <stdio.h>
__attribute__((noinline)) void show(double v) { printf("%f\n", v); }
__attribute__((noinline)) void run(int n)
{
    double x = 1.5;
    show(x);
    x = 2.5;
    show(x);
    for (int i = 0; i < n; i++) { x = x * 3.25; show(x); }
}
int main(void) { run(2); return 0; }
C
    meta $n
    check "$cc: DW_OP_implicit_value 1.5 as CONST" has $n " CONST reg=0 size=8 flags=4 offset=4609434218613702656 "
    oracle $n
done

# --- inlined subroutines and lexical blocks
for cc in gcc clang-14; do
    n=inl_${cc%-14}
    build $n $cc -O2 <<'C'
#include <stdio.h>
int bias = 3;
__attribute__((noinline)) void note(int x) { bias += x & 1; }
static inline __attribute__((always_inline)) int sq(int v)
{
    int r = v * v + bias;
    note(r);
    return r + 1;
}
__attribute__((noinline)) int run(int n)
{
    int t = 0;
    for (int i = 0; i < n; i++) {
        int s = sq(i);
        t += s;
    }
    return t;
}
int main(void) { printf("%d\n", run(5)); return 0; }
C
    meta $n
    id=$(awk '$1 == "var" && $4 == "sq" && $5 == "v" { print $2 }' $n.txt)
    check "$cc: inlined variable belongs to the inlined function" test -n "$id"
    # entries of sq's v must lie within run()'s code [value, value+size)
    check "$cc: ...and is placed inside the caller's code" python3 - $n "$id" <<'PY'
import subprocess, sys
name, vid = sys.argv[1], sys.argv[2]
lo = hi = None
for line in subprocess.run(["nm", "-S", name], capture_output=True,
                           text=True).stdout.splitlines():
    f = line.split()
    if len(f) == 4 and f[3] == "run":
        lo, hi = int(f[0], 16), int(f[0], 16) + int(f[1], 16)
ents = [l.split() for l in open(name + ".txt") if l.startswith("entry ")]
ents = [(int(e[1], 16), int(e[2], 16)) for e in ents if e[3] == "var=" + vid]
sys.exit(0 if lo is not None and ents and
         all(lo <= a and b <= hi for a, b in ents) else 1)
PY
    oracle $n
done
# lexical block: at -O0 the loop variable's entries cover the loop only
n=inl_gcc0
cp inl_gcc.c $n.c
gcc -g -O0 -o $n $n.c
meta $n
ti=$(awk '$1 == "var" && $4 == "run" && $5 == "t" { print $2 }' $n.txt)
ii=$(awk '$1 == "var" && $4 == "run" && $5 == "i" { print $2 }' $n.txt)
span() {  # total bytes of PC range of variable id $1
    python3 -c 'import sys
print(sum(int(f[2], 16) - int(f[1], 16) for f in (l.split() for l in open(sys.argv[1]))
          if f[0] == "entry" and f[3] == "var=" + sys.argv[2]))' $n.txt "$1"
}
check "lexical block: i's range is inside and smaller than t's" \
    test "$(span $ii)" -gt 0 -a "$(span $ii)" -lt "$(span $ti)"
oracle $n

# --- pointer to a basic type: one dereference
n=ptr
build $n gcc -O0 <<'C'
int target = 11;
int *gp = &target;
__attribute__((noinline)) int get(const int *p) { return *p + 1; }
int main(void) { return get(gp) - 12; }
C
meta $n
check "pointer to int: kind ptr-basic, deref flag, 4 bytes" \
    sh -c "grep -q ' gp int \* line=2 tags=none+global kind=ptr-basic size=4' $n.txt && grep -q 'ADDR reg=0 size=4 flags=3 ' $n.txt"
oracle $n
finish
