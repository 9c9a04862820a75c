#!/bin/bash
# The sampling core's value reader and PC tables, unit-tested under
# AddressSanitizer and UndefinedBehaviorSanitizer.
. "$(dirname "$0")/../lib.sh"
cd "$VPROF_ROOT"
SANF="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
gcc -std=c11 -D_GNU_SOURCE -Wall -Wextra -O1 -g $SANF -Ilibvprof -Ilibvprof/format \
    -o "$TMP/core_unit" tests/libvprof/core_unit.c libvprof/value_read.c libvprof/vartable.c \
    libvprof/format/*.c -lm 2> "$TMP/cc.log"
check "core unit test builds warning-free with ASan+UBSan" test $? = 0 -a ! -s "$TMP/cc.log"
cat "$TMP/cc.log"
"$TMP/core_unit" > "$TMP/out.txt" 2>&1
st=$?
cat "$TMP/out.txt"
check "value reader and PCToVarTable unit tests pass, no sanitizer report" \
    test $st = 0 -a -z "$(grep -l 'runtime error\|AddressSanitizer' "$TMP/out.txt")"
finish
