#!/bin/bash
# Globals behind pointers (docs/RUNTIME.md "How a tick works", step 2): their
# values are read once per tick, as part of the tick's global group, and the
# reads that need a system call (the heap) are made together, several per
# process_vm_readv; a read that fails in the middle of such a batch (an
# unmapped page) must cost only its own sample. prog_heapvars.c points 80
# globals at known values - on the heap, in its own data, at NULL, at an
# unmapped page - more than the group takes (the rest are read per frame,
# also batched). Every sample must hold its variable's value, at every frame
# a tick sampled; the variables that cannot be read have none. The same
# through the pipe (VPROF_READ=pipe) and with a budget of 5 system-call
# reads a tick.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
cd "$TMP"
build hv prog_heapvars.c gcc -O2
check "prog_heapvars builds" test -x hv
rel=0; file hv | grep -q 'pie executable' && rel=1
base=$(symaddr hv g_p | cut -d' ' -f1)
{
    echo "flags $rel"
    for i in $(seq 0 79); do
        echo "var p$i #global sint 8"
        # addr, 8 bytes, deref | signed, at &g_p[i], through it at offset 0
        echo "entry p$i 0 0x7fffffffffff addr 0 8 3 $((base + 8 * i)) 0 0"
    done
} > m.txt
"$MKMETA" m.txt m.vmeta
check "metadata of 80 globals behind pointers" test -s m.vmeta

# verify DIR: every sample's value is 1000 + its variable's number; the
# unreadable ones have none; the readable ones are sampled below main too
verify() {
    local l v
    l=$(one "$1/layout.*") v=$(one "$1/values.*")
    [ -n "$l" ] && [ -n "$v" ] || { echo "no files in $1"; return 1; }
    for i in $(seq 0 79); do echo "$("$VPCHECK" var-id "$l" "p$i") $i"; done > ids.txt
    "$VPCHECK" values "$v" > v.txt
    awk 'NR==FNR{num[$1]=$2; next} /^#/{next}
         { n = num[$1]; seen[n]++; if ($2 > 0) deep[n]++
           if ($4 != 1000 + n) { bad++; if (bad < 5) print "wrong value", $0, "for p" n } }
         END{ for (n = 0; n < 80; n++) {
                  dead = (n % 5 == 4 || n % 7 == 3)
                  if (dead && seen[n]) { bad++; print "p" n " cannot be read but has", seen[n], "samples" }
                  if (!dead && seen[n] < 20) { bad++; print "p" n " has only", seen[n] + 0, "samples" }
                  if (!dead && deep[n] < 5) { bad++; print "p" n " has", deep[n] + 0, "samples below the leaf" }
              }
              exit bad > 0 }' ids.txt v.txt
}
faults() { "$VPCHECK" values "$(one "$1/values.*")" | sed -n 's/^#.* faults=\([0-9]*\).*/\1/p'; }

VPROF_META=$PWD/m.vmeta VPROF_HZ=1000 prof o ./hv 10 > run.txt 2> err.txt
check "the program ran to the end" grep -q '^done' run.txt
check "every sample holds its variable's value; the unreadable have none" verify o
check "the failed reads are counted ($(faults o))" test "$(faults o)" -gt 0

VPROF_READ=pipe VPROF_META=$PWD/m.vmeta VPROF_HZ=1000 prof p ./hv 10 > run.txt 2> err.txt
check "VPROF_READ=pipe: the program ran to the end" grep -q '^done' run.txt
check "VPROF_READ=pipe: the same values" verify p

VPROF_TICK_READS=5 VPROF_META=$PWD/m.vmeta VPROF_HZ=1000 prof b ./hv 10 > run.txt 2> err.txt
check "VPROF_TICK_READS=5: the program ran to the end" grep -q '^done' run.txt
n5=$(grep -vc '^#' <("$VPCHECK" values "$(one "b/values.*")"))
n0=$(grep -vc '^#' <("$VPCHECK" values "$(one "o/values.*")"))
check "VPROF_TICK_READS=5: fewer samples ($n5 against $n0), none wrong" \
    bash -c "[ $n5 -lt $n0 ] && awk 'NR==FNR{num[\$1]=\$2; next} /^#/{next} \$4 != 1000 + num[\$1]{exit 1}' ids.txt <('$VPCHECK' values \"\$(ls b/values.*)\")"
finish
