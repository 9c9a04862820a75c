#!/bin/bash
# The unwind rule table (libvprof/cfi.c) under AddressSanitizer and
# UndefinedBehaviorSanitizer: the rules of a real executable, and thousands
# of corrupted copies of its CFI compiled without a read out of bounds.
. "$(dirname "$0")/../lib.sh"
cd "$VPROF_ROOT"
SANF="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
gcc -std=c11 -D_GNU_SOURCE -Wall -Wextra -O1 -g $SANF -Ilibvprof \
    -o "$TMP/cfi_unit" tests/libvprof/cfi_unit.c libvprof/cfi.c 2> "$TMP/cc.log"
check "cfi unit test builds warning-free with ASan+UBSan" test $? = 0 -a ! -s "$TMP/cc.log"
cat "$TMP/cc.log"
"$TMP/cfi_unit" > "$TMP/out.txt" 2>&1
st=$?
cat "$TMP/out.txt"
check "rule table unit tests pass, no sanitizer report" \
    test $st = 0 -a -z "$(grep -l 'runtime error\|AddressSanitizer' "$TMP/out.txt")"
finish
