#!/bin/bash
# The values walk stops at a thread's bottom (docs/RUNTIME.md "How a tick
# works"): once learned, a walk that leaves the program through the return
# address under main (or under a thread's start routine) stops there and
# writes _start's frame record from what it learned, instead of stepping
# through libc's start-up frames; later walks stop at main itself when its
# return address is that bottom's. The samples must be the ones a walk to
# the end gives - compared with VPROF_UNWINDER=libunwind, which learns
# nothing (no rule table) - and a library that calls back into the program
# (qsort) must never be taken for a bottom. Values format version 2: every
# frame a tick sampled carries the tick's global group (vpcheck reads the
# file through vpf_values_next).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
[ -x "$VPROF_META_BIN" ] || skip "vprof-meta not built"
cd "$TMP"

# pairs FILE [ID DEPTH]: the distinct "var depth" pairs of a vpcheck values
# listing, of the ticks where variable ID was sampled at DEPTH (all ticks
# without them): ticks with the same frames, whichever ran
pairs() {
    awk -v id="${2:--1}" -v d="${3:--1}" '!/^#/{t=$5" "$6; r[NR]=t" "$1" "$2; if (id < 0 || ($1==id && $2==d)) keep[t]=1}
        END{for (i in r) { split(r[i], f, " "); if (f[1]" "f[2] in keep) print f[3], f[4] }}' "$1" | sort -u
}
# mean deepest sample of the ticks
deepest() { awk '!/^#/{t=$5" "$6; if ($2>md[t]) md[t]=$2} END{for (t in md) {s+=md[t]; n++}; printf "%.2f", n ? s/n : 0}' "$1"; }
# steps DIR.err: table steps per tick from VPROF_STATS
steps() { awk '/stats: ticks=/{sub(/.*ticks=/, ""); t=$1+0} /steps: /{sub(/.*steps: /, ""); s=$1+0}
               END{printf "%.2f", t ? s / t : 99}' "$1"; }

build pv prog_values.c gcc -O2
"$VPROF_META_BIN" --all --files '*prog_values.c' --quiet -o pv.vmeta pv
check "vprof-meta describes prog_values" test -s pv.vmeta
for u in cfi libunwind; do
    VPROF_STACKS=0 VPROF_UNWINDER=$u VPROF_STATS=1 VPROF_META=$PWD/pv.vmeta prof o_$u ./pv 12 > /dev/null 2> o_$u.err
    "$VPCHECK" values "$(one "o_$u/values.*")" > v_$u.txt
done
l=$(one "o_cfi/layout.*")
g=$("$VPCHECK" var-id "$l" g_phase) k=$("$VPCHECK" var-id "$l" k)
s=$(steps o_cfi.err)
echo "# table steps per tick: $s; samples: $(grep -vc '^#' v_cfi.txt) (cfi), $(grep -vc '^#' v_libunwind.txt) (libunwind)"
check "ticks in work: the same variables at the same depths with and without the stop" \
    cmp -s <(pairs v_cfi.txt "$k" 1) <(pairs v_libunwind.txt "$k" 1)
# per tick: the depth of caller's k (caller is 1 frame up, main 2) and of
# g_phase's deepest sample (_start: main's depth + 3)
awk -v g="$g" -v k="$k" '!/^#/{t=$5" "$6; if ($1==k && $2==1) dk[t]=$2; if ($1==g && $2>dg[t]) dg[t]=$2}
    END{for (t in dk) { tot++; if (dg[t] == dk[t] + 4) good++ }
        print good+0, tot+0}' v_cfi.txt > startd.txt
read -r good tot < startd.txt
check "every tick in work has g_phase at _start, 4 frames above caller ($good of $tot ticks)" \
    test "$tot" -gt 20 -a "$good" -eq "$tot"
check "the walk stops at main, below the known bottom: 2 table steps per tick, not 5 ($s)" \
    awk -v s="$s" 'BEGIN{exit !(s >= 1.8 && s <= 2.5)}'
check "version 2 file: fewer records than samples (the group once per tick)" \
    test "$(sed -n 's/^end\tticks=[0-9]*\tsamples=\([0-9]*\).*/\1/p' "$l")" -lt "$(grep -vc '^#' v_cfi.txt)"

# qsort's comparator: the library frames between cmp and sort_it are a
# callback site, never a bottom; deep enough, the walk reaches main.
build lc prog_libcleaf.c gcc -O1
"$VPROF_META_BIN" --all --files '*prog_libcleaf.c' --quiet -o lc.vmeta lc
for d in 1 6; do
    for u in cfi libunwind; do
        VPROF_STACKS=0 VPROF_UNWIND=$d VPROF_UNWINDER=$u VPROF_STATS=1 VPROF_META=$PWD/lc.vmeta prof lc${d}_$u ./lc 20 > /dev/null 2> lc${d}_$u.err
        "$VPCHECK" values "$(one "lc${d}_$u/values.*")" > lv${d}_$u.txt
    done
done
# share of ticks FILE VAR-ID: percent of the ticks that sampled the variable
share() { awk -v id="$2" '!/^#/{t=$5" "$6; n[t]=1; if ($1==id) h[t]=1} END{printf "%d", length(n) ? 100 * length(h) / length(n) : 0}' "$1"; }
nid=$("$VPCHECK" var-id "$(one "lc1_cfi/layout.*")" n)
a=$(share lv1_cfi.txt "$nid") b=$(share lv1_libunwind.txt "$nid")
check "qsort callbacks, VPROF_UNWIND=1: sort_it's n above the comparator as often as without the stop ($a% / $b% of ticks)" \
    test "$a" -ge 50 -a "$b" -ge 50
l=$(one "lc6_cfi/layout.*")
r3=$("$VPCHECK" var-id "$l" r3)
t=$("$VPCHECK" layout "$l" | cut -d' ' -f9)
n3=$(awk -v id="$r3" '!/^#/ && $1==id' lv6_cfi.txt | wc -l)
check "VPROF_UNWIND=6: level3's r3 above the callback, in most ticks ($n3 of $t)" \
    test "$t" -gt 10 -a $((n3 * 2)) -ge "$t"
s1=$(steps lc1_cfi.err) d1=$(deepest lv1_cfi.txt)
check "VPROF_UNWIND=1: the callback site learned once, not probed at every tick ($s1 steps per tick, deepest sample $d1)" \
    awk -v s="$s1" -v d="$d1" 'BEGIN{exit !(d > 3 && s - d < 0.5)}'

# threads: the bottom is start_thread's return address, nothing above it
build pt prog_timer.c gcc -O1
"$VPROF_META_BIN" --all --files '*prog_timer.c' --quiet -o pt.vmeta pt
for u in cfi libunwind; do
    VPROF_STACKS=0 VPROF_UNWINDER=$u VPROF_META=$PWD/pt.vmeta prof pt_$u ./pt uneven 4 40 > /dev/null 2>&1
    "$VPCHECK" values "$(one "pt_$u/values.*")" > tv_$u.txt
done
e=$("$VPCHECK" var-id "$(one "pt_cfi/layout.*")" end)
check "threads, ticks in burn: the same variables at the same depths with and without the stop" \
    cmp -s <(pairs tv_cfi.txt "$e" 0) <(pairs tv_libunwind.txt "$e" 0)
check "threads: burn's ticks sampled ($(pairs tv_cfi.txt "$e" 0 | wc -l) pairs)" \
    test "$(pairs tv_cfi.txt "$e" 0 | wc -l)" -ge 3
finish
