#!/bin/bash
# Bad variable metadata (truncated, corrupt, garbage, another binary's,
# missing) gives one clear line on stderr naming the file, and the program
# is still profiled, without values, and never crashes.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
cd "$TMP"
build pr prog_robust.c gcc -O1
handmeta pr good.vmeta
size=$(stat -c %s good.vmeta)
head -c 40 good.vmeta > trunc_header.vmeta
head -c $((size - 7)) good.vmeta > trunc_body.vmeta
cp good.vmeta badmagic.vmeta; printf 'XXXX' | dd of=badmagic.vmeta conv=notrunc 2>/dev/null
cp good.vmeta badcount.vmeta; printf '\377\377\377\177' | dd of=badcount.vmeta bs=1 seek=20 conv=notrunc 2>/dev/null
head -c 4096 /dev/urandom > garbage.vmeta
{ cat good.vmeta.txt; echo "buildid 00112233445566778899aabbccddeeff00112233"; } > other.txt
"$MKMETA" other.txt other.vmeta

for m in trunc_header trunc_body badmagic badcount garbage other missing; do
    VPROF_META=$PWD/$m.vmeta prof out_$m ./pr spin 100 > out.txt 2> err.txt
    st=$?
    check "$m: program unharmed (status $st)" test $st = 0 -a "$(cat out.txt)" = done
    check "$m: exactly one line on stderr" test "$(wc -l < err.txt)" = 1
    check "$m: it names the file" grep -q "^vprof: .*$m.vmeta" err.txt
    [ $m != missing ] && check "$m: and the offset" grep -q "offset [0-9]" err.txt
    cat err.txt
    check "$m: no values file" test -z "$(ls out_$m/values.* 2>/dev/null)"
    check "$m: gmon still written" test -n "$(one "out_$m/gmon.*.out")"
    check "$m: layout says error" test "$("$VPCHECK" layout "$(one "out_$m/layout.*")" | cut -d' ' -f1)" = error
done
VPROF_META=$PWD/good.vmeta prof out_good ./pr spin 100 > /dev/null 2> err.txt
check "good metadata: silent" test ! -s err.txt
check "good metadata: values written" test -n "$(one 'out_good/values.*')"
VPROF_QUIET=1 VPROF_META=$PWD/garbage.vmeta prof out_q ./pr spin 50 > /dev/null 2> err.txt
check "VPROF_QUIET=1 silences the message" test ! -s err.txt
finish
