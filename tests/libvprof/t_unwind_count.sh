#!/bin/bash
# Virtual unwinding counts the program's own frames (issue 11, item 1; the
# paper's gprof sees only program PCs): a program whose ticks land in libc
# (qsort, ~16 frames deep) and in the mcount trampoline still gets value
# samples from the callers 3 program frames above its innermost program
# frame, with the default VPROF_UNWIND=3. VPROF_UNWIND_COUNT=all counts
# every frame (the old behaviour) and then reaches none of them.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
[ -x "$VPROF_META_BIN" ] || skip "vprof-meta not built"
cd "$TMP"
build lc prog_libcleaf.c gcc -O1
"$VPROF_META_BIN" --all --files '*prog_libcleaf.c' --quiet -o lc.vmeta lc
check "vprof-meta describes the program" test -s lc.vmeta
export VPROF_META=$PWD/lc.vmeta

# count DIR VAR: samples of VAR; ticks DIR: the run's ticks
count() {
    local l v id
    l=$(one "$1/layout.*") v=$(one "$1/values.*")
    id=$("$VPCHECK" var-id "$l" "$2") || { echo 0; return; }
    "$VPCHECK" values "$v" | awk -v id="$id" '!/^#/ && $1==id' | wc -l
}
ticks() { "$VPCHECK" layout "$(one "$1/layout.*")" | cut -d' ' -f9; }

prof prog ./lc 30 > prog.txt 2>&1
check "program ran" grep -q '^done' prog.txt
t=$(ticks prog) r3=$(count prog r3) r2=$(count prog r2) n=$(count prog n)
echo "# default: $t ticks; samples of sort_it's n $n, level2's r2 $r2, level3's r3 $r3"
check "default (program frames): level3's r3, 3 program frames up, in most ticks ($r3 of $t)" \
    test "$t" -gt 10 -a $((r3 * 2)) -ge "$t"
check "default: level2's r2 and sort_it's n too ($r2, $n of $t)" \
    test $((r2 * 2)) -ge "$t" -a $((n * 2)) -ge "$t"
"$VPCHECK" values "$(one 'prog/values.*')" | awk '!/^#/{print $2}' | sort -n | tail -1 > maxd.txt
check "unwound through the libc frames (deepest sample at depth $(cat maxd.txt) > 3, <= 3 + 32)" \
    test "$(cat maxd.txt)" -gt 3 -a "$(cat maxd.txt)" -le 35
check "layout log says what the depth counts" grep -qx 'unwind_count	program' "$(one 'prog/layout.*')"

VPROF_UNWIND_COUNT=all prof all ./lc 30 > /dev/null 2>&1
t=$(ticks all) r3=$(count all r3)
check "VPROF_UNWIND_COUNT=all: the first 3 frames only, libc's — level3 out of reach ($r3 of $t)" \
    test "$t" -gt 10 -a $((r3 * 10)) -lt "$t"
check "VPROF_UNWIND_COUNT=all recorded in the layout log" grep -qx 'unwind_count	all' "$(one 'all/layout.*')"
check "the format module reads it back" test "$("$VPCHECK" layout "$(one 'all/layout.*')" | cut -d' ' -f14)" = all

VPROF_UNWIND_COUNT=frames prof bad ./lc 2 > /dev/null 2> bad.err
check "bad VPROF_UNWIND_COUNT: reported, program frames used" \
    test -n "$(grep 'VPROF_UNWIND_COUNT=frames' bad.err)" -a \
         -n "$(grep -x 'unwind_count	program' "$(one 'bad/layout.*')")"
finish
