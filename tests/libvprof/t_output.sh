#!/bin/bash
# Where output goes: glibc's naming without VPROF_OUT (gmon.out,
# GMON_OUT_PREFIX.<pid>, values/layout beside it only with metadata), a
# VPROF_OUT directory created when missing, <exe>.vmeta found beside the
# executable, and no file ever written through a symlink.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
cd "$TMP"
build pr prog_robust.c gcc -O1

mkdir plain && (cd plain && LD_PRELOAD=$LIBVPROF ../pr spin 50 > /dev/null)
check "no VPROF_OUT: gmon.out in the working directory" test -s plain/gmon.out
check "no VPROF_OUT, no metadata: nothing else" test "$(ls plain)" = gmon.out

mkdir pre && (cd pre && GMON_OUT_PREFIX=prof LD_PRELOAD=$LIBVPROF ../pr spin 50 > /dev/null)
check "GMON_OUT_PREFIX=prof: prof.<pid>" test -n "$(one 'pre/prof.[0-9]*')"

handmeta pr pr.vmeta
mkdir withmeta && (cd withmeta && VPROF_META=../pr.vmeta LD_PRELOAD=$LIBVPROF ../pr spin 50 > /dev/null)
check "no VPROF_OUT, metadata: gmon.out, values.<pid>, layout.<pid>" \
    test -s withmeta/gmon.out -a -n "$(one 'withmeta/values.[0-9]*')" -a -n "$(one 'withmeta/layout.[0-9]*')"

mkdir beside && cp pr beside/ && cp pr.vmeta beside/pr.vmeta
VPROF_OUT=bes LD_PRELOAD=$LIBVPROF ./beside/pr spin 50 > /dev/null
check "<exe>.vmeta beside the executable is found" test -n "$(one 'bes/values.*')"

prof deep/er/dir ./pr spin 20 > /dev/null
check "VPROF_OUT created with its parents" test -n "$(one 'deep/er/dir/gmon.*.out')"

VPROF_OUT=$PWD/abs LD_PRELOAD=$LIBVPROF sh -c 'cd / && exec '"$PWD"'/pr spin 20' > /dev/null
check "absolute VPROF_OUT kept across a chdir before exec" test -n "$(one 'abs/gmon.*.out')"

mkdir sym && echo precious > victim && ln -s ../victim sym/gmon.out
(cd sym && LD_PRELOAD=$LIBVPROF ../pr spin 20 > /dev/null 2> ../sym.err)
check "gmon.out symlink not followed" test "$(cat victim)" = precious
check "the symlink is replaced by the new profile" test -f sym/gmon.out -a ! -L sym/gmon.out

# The layout log names the executable, its build-id and load bias, the
# metadata's variables and the executable mappings.
VPROF_META=$PWD/pr.vmeta prof lay ./pr spin 20 > /dev/null
l=$(one 'lay/layout.*')
bid=$(readelf -n pr | awk '/Build ID/{print $3}')
check "layout: exe path" grep -qx "exe	$PWD/pr" "$l"
check "layout: build-id from the ELF note ($bid)" grep -qx "build_id	$bid" "$l"
check "layout: PIE load bias is page-aligned and non-zero" \
    awk -F'\t' '$1=="load_bias"{v=strtonum($2); ok=(v>0 && v%4096==0)} END{exit !ok}' "$l"
check "layout: metadata ok with its 2 variables" test "$(grep -c '^var	' "$l")" = 2 -a -n "$(grep -x "meta	$PWD/pr.vmeta	ok" "$l")"
check "layout: executable mappings listed (exe, libc)" test -n "$(grep "^map	.*$PWD/pr\$" "$l")" -a -n "$(grep '^map	.*libc' "$l")"
check "layout: readable by the format module, with its end line" test "$("$VPCHECK" layout "$l" | cut -d' ' -f1,2,3)" = "ok 1 2"

VPROF_HZ=abc prof hz ./pr spin 20 > /dev/null 2> hz.err
check "bad VPROF_HZ reported, default kept" grep -q "VPROF_HZ=abc" hz.err
check "bad VPROF_HZ: layout says 1500" test "$("$VPCHECK" layout "$(one 'hz/layout.*')" | cut -d' ' -f7)" = 1500
VPROF_HZ=250 VPROF_UNWIND=1 prof hz2 ./pr spin 20 > /dev/null
check "VPROF_HZ and VPROF_UNWIND recorded in the layout log" \
    test "$("$VPCHECK" layout "$(one 'hz2/layout.*')" | cut -d' ' -f7,8)" = "250 1"

VPROF_META=$PWD/pr.vmeta VPROF_MAX_SAMPLES=5 prof full ./pr spin 200 > /dev/null 2> full.err
"$VPCHECK" values "$(one 'full/values.*')" | head -1 > full.txt
check "full sample file: capacity kept, drops counted" grep -q "n=5 capacity=5 dropped=[1-9]" full.txt
check "full sample file: reported at exit" grep -q "samples dropped" full.err
check "full sample file: file not written past its capacity" \
    test "$(stat -c %s "$(one 'full/values.*')")" = $((64 + 5 * 40))
finish
