#!/bin/bash
# Value truth: in prog_values.c every monitored variable only ever holds
# values known in advance (g_phase in {1,2,3}, i in [0,N], k in [0,REPS]:
# a loop variable holds its bound at the exit test, and the DWARF location
# lists cover that test).
# Built with gcc and clang at -O0 (locals in the frame) and -O2 (loop
# variables in registers), described by vprof-meta, every recorded sample
# must be one of those values; k, whose function spends all its time in a
# callee, must be seen through virtual unwinding (depth >= 1).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
[ -x "$VPROF_META_BIN" ] || skip "vprof-meta not built"
cd "$TMP"
N=1000003 REPS=7

# in_range FILE LO HI: non-empty, every line an integer in [LO, HI); the
# lines outside are shown (with the sample's depth and PC when FILE has them)
in_range() {
    [ -s "$1" ] && awk -v lo="$2" -v hi="$3" '$1 < lo || $1 >= hi {bad=1; if (n++ < 5) print "# outside:", $0} END{exit bad}' "$1"
}

for cc in gcc clang-14; do
    command -v $cc >/dev/null || { echo "# $cc missing"; continue; }
    for opt in -O0 -O2; do
        t="$cc $opt"; x=pv_${cc}_$opt
        # clang -O2 unrolls work()'s loop and then describes i only in a few
        # short PC ranges (5-8 samples a run, 2 once): the loop stays
        # register-allocated without unrolling, and is sampled ~60 times.
        extra=; [ $opt = -O2 ] && extra=-fno-unroll-loops
        build $x prog_values.c $cc $opt $extra
        "$VPROF_META_BIN" --all --files '*prog_values.c' --quiet -o $x.vmeta $x
        check "$t: vprof-meta describes the program" test -s $x.vmeta
        VPROF_META=$x.vmeta VPROF_UNWIND=3 prof out_$x ./$x 40 > /dev/null
        check "$t: program ran" test $? -eq 0
        v=$(one "out_$x/values.*") l=$(one "out_$x/layout.*")
        check "$t: values and layout written" test -n "$v" -a -n "$l"
        "$VPCHECK" values "$v" > all.txt
        n=$(grep -vc '^#' all.txt)
        check "$t: samples recorded ($n)" test "$n" -gt 20
        values_of "$v" "$l" g_phase > g.txt
        check "$t: g_phase only ever 1, 2 or 3 ($(wc -l < g.txt) samples)" in_range g.txt 1 4
        id_i=$("$VPCHECK" var-id "$l" i work)
        awk -v id="$id_i" '$1==id{print $4, "depth", $2, "pc", $3}' all.txt > i.txt
        check "$t: work's i always in [0, N] ($(wc -l < i.txt) samples)" in_range i.txt 0 $((N + 1))
        check "$t: i takes several values" test "$(cut -d' ' -f1 i.txt | sort -u | wc -l)" -ge 3
        id_k=$("$VPCHECK" var-id "$l" k caller)
        awk -v id="$id_k" '$1==id{print $4, "depth", $2, "pc", $3}' all.txt > k.txt
        awk -v id="$id_k" '$1==id && $2>=1' all.txt > kdeep.txt
        check "$t: caller's k always in [0, REPS] ($(wc -l < k.txt) samples)" in_range k.txt 0 $((REPS + 1))
        check "$t: k sampled through virtual unwinding ($(wc -l < kdeep.txt) at depth>=1)" test -s kdeep.txt
        VPROF_META=$x.vmeta VPROF_UNWIND=0 prof out0_$x ./$x 5 > /dev/null
        "$VPCHECK" values "$(one "out0_$x/values.*")" > u0.txt
        check "$t: VPROF_UNWIND=0 records depth 0 only" \
            awk '!/^#/ && $2 != 0 {bad=1} END{exit bad}' u0.txt
    done
done

# Hand-written metadata (no vprof-meta involved): a global by address, in
# the always-live list and in one function's PCToVarTable chain.
build pr prog_robust.c gcc -O2
handmeta pr pr.vmeta
VPROF_META=pr.vmeta prof out_hand ./pr spin 300 > /dev/null
v=$(one "out_hand/values.*") l=$(one "out_hand/layout.*")
values_of "$v" "$l" g_phase > g.txt
check "hand-written metadata: g_phase sampled, always 2 ($(wc -l < g.txt))" \
    in_range g.txt 2 3
values_of "$v" "$l" phase_in_burn > b.txt
check "hand-written metadata: PC-ranged entry sampled inside burn() only" in_range b.txt 2 3

# Computed values (EXPR, FORMATS.md §2.1) read by the tick's evaluator:
# 3 * g_phase through the program's own address (plus the load bias), the
# stack pointer's low 4 bits (a register, in [0, 16)), a division by zero
# (never a sample), and an invalid program (refused when loaded, said in
# the layout log).
g=$(symaddr pr g_phase | cut -d' ' -f1)
handmeta pr px.vmeta "var triple #global sint 4" "var low #global uint 8" \
    "var undef #global sint 4" "var invalid #global sint 4" \
    "entry triple 0 0x7fffffffffff expr 7 4 0 a$((g))_d4_#3_mul" \
    "entry low 0 0x7fffffffffff expr 7 8 0 r7_#15_and" \
    "entry undef 0 0x7fffffffffff expr 7 4 0 a$((g))_d4_#0_div" \
    "entry invalid 0 0x7fffffffffff expr 7 4 0 #1_add"
VPROF_META=px.vmeta prof out_expr ./pr spin 300 > /dev/null
v=$(one "out_expr/values.*") l=$(one "out_expr/layout.*")
values_of "$v" "$l" triple > t.txt
check "EXPR: 3 * g_phase sampled, always 6 ($(wc -l < t.txt))" in_range t.txt 6 7
values_of "$v" "$l" low > t.txt
check "EXPR: rsp & 15 sampled, in [0, 16) ($(wc -l < t.txt))" in_range t.txt 0 16
values_of "$v" "$l" undef > t.txt
check "EXPR: a division by zero is never a sample" test ! -s t.txt
values_of "$v" "$l" invalid > t.txt
check "EXPR: an invalid program is never read" test ! -s t.txt
check "EXPR: the layout log says one entry was refused" \
    grep -q '^meta.*ok (1 location entries refused: invalid expression program)' "$l"
finish
