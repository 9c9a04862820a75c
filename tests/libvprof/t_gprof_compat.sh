#!/bin/bash
# gprof compatibility: the same deterministic -pg program profiled by
# glibc's own gmon and by libvprof (LD_PRELOAD, -lvprof, the static archive,
# -mfentry) gives identical arcs and call counts; binutils gprof reads
# vprof's gmon.<id>.out.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
cd "$TMP"

# calls EXE GMON: "function calls" for every function gprof lists with a
# call count (the time columns depend on sampling, the counts must not).
calls() {
    gprof -b -p "$1" "$2" 2>/dev/null | awk 'NF == 7 && $4 ~ /^[0-9]+$/ {print $7, $4}' | sort
}

for pie in pie no-pie; do
    build prog_$pie prog_gprof.c gcc -O1 -f$pie $( [ $pie = no-pie ] && echo -no-pie )
    check "gcc -pg build ($pie)" test -x prog_$pie
    rm -f gmon.out
    ./prog_$pie > glibc.out
    check "plain run under glibc gmon ($pie)" test -s gmon.out
    mv gmon.out glibc_$pie.gmon
    prof out_$pie ./prog_$pie > vprof.out
    check "program output unchanged under libvprof ($pie)" cmp -s glibc.out vprof.out
    g=$(one "out_$pie/gmon.*.out")
    check "libvprof wrote gmon.<id>.out ($pie)" test -n "$g"
    "$VPCHECK" gmon-cmp glibc_$pie.gmon "$g" > cmp_$pie.txt
    check "identical arcs and call counts, arc by arc ($pie)" test $? -eq 0
    cat cmp_$pie.txt
    n=$("$VPCHECK" arcs "$g" | wc -l)
    check "arcs recorded ($pie: $n)" test "$n" -ge 8
    gprof -b -p prog_$pie "$g" > flat_$pie.txt 2>&1
    check "binutils gprof prints a flat profile ($pie)" grep -q "Flat profile" flat_$pie.txt
    calls prog_$pie glibc_$pie.gmon > calls_glibc_$pie.txt
    calls prog_$pie "$g" > calls_vprof_$pie.txt
    check "gprof reports the same call counts from both files ($pie)" \
        cmp -s calls_glibc_$pie.txt calls_vprof_$pie.txt
    check "gprof counts leaf() 35280 times ($pie)" grep -qx "leaf 35280" calls_vprof_$pie.txt
done

# Linked ahead of libc instead of preloaded: shared and static archive.
gcc -pg -g -O1 -o prog_linked "$SRC/prog_gprof.c" -L"$VPROF_LIB" -Wl,-rpath,"$VPROF_LIB" -lvprof
VPROF_OUT=out_linked ./prog_linked > /dev/null
check "-lvprof ahead of libc: identical arcs" "$VPCHECK" gmon-cmp glibc_pie.gmon "$(one 'out_linked/gmon.*.out')"
gcc -pg -g -O1 -o prog_static "$SRC/prog_gprof.c" "$VPROF_LIB/libvprof.a" -lunwind -lunwind-x86_64 -ldl -lpthread
VPROF_OUT=out_static ./prog_static > /dev/null
# A different binary: compare what gprof makes of it, function by function.
calls prog_static "$(one 'out_static/gmon.*.out')" > calls_static.txt
check "libvprof.a linked in: same call counts per function" cmp -s calls_glibc_pie.txt calls_static.txt

# -mfentry: __fentry__ instead of mcount, against glibc's __fentry__.
build prog_fentry prog_gprof.c gcc -O1 -mfentry
rm -f gmon.out; ./prog_fentry > /dev/null; mv gmon.out glibc_fentry.gmon
prof out_fentry ./prog_fentry > /dev/null
check "-mfentry: identical arcs" "$VPCHECK" gmon-cmp glibc_fentry.gmon "$(one 'out_fentry/gmon.*.out')"

# clang -pg too.
if command -v clang-14 >/dev/null; then
    build prog_clang prog_gprof.c clang-14 -O1
    rm -f gmon.out; ./prog_clang > /dev/null; mv gmon.out glibc_clang.gmon
    prof out_clang ./prog_clang > /dev/null
    check "clang -pg: identical arcs" "$VPCHECK" gmon-cmp glibc_clang.gmon "$(one 'out_clang/gmon.*.out')"
fi

# The histogram: right range and rate, and it counts ticks.
read -r lo hi nb rate tot < <("$VPCHECK" hist "$(one 'out_pie/gmon.*.out')")
read -r glo ghi gnb grate gtot < <("$VPCHECK" hist glibc_pie.gmon)
check "histogram covers glibc's range with glibc's bin count" test "$lo $hi $nb" = "$glo $ghi $gnb"
check "prof_rate is VPROF_HZ (1500 by default)" test "$rate" = 1500
finish
