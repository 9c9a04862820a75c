#!/bin/bash
# VPROF_STACKS's walk (libvprof/stacks.c) on crafted signal contexts, with a
# stub of the core's unwinder, under AddressSanitizer and
# UndefinedBehaviorSanitizer (tests/libvprof/stacks_unit.c says what).
. "$(dirname "$0")/../lib.sh"
cd "$VPROF_ROOT"
SANF="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
gcc -std=c11 -D_GNU_SOURCE -Wall -Wextra -O1 -g $SANF -Ilibvprof -Ilibvprof/format \
    -o "$TMP/stacks_unit" tests/libvprof/stacks_unit.c libvprof/stacks.c libvprof/memread.c \
    libvprof/format/*.c -lm 2> "$TMP/cc.log"
check "stacks unit test builds warning-free with ASan+UBSan" test $? = 0 -a ! -s "$TMP/cc.log"
cat "$TMP/cc.log"
TMPDIR=$TMP "$TMP/stacks_unit" > "$TMP/out.txt" 2>&1
st=$?
cat "$TMP/out.txt"
check "stack walk unit tests pass, no sanitizer report" \
    test $st = 0 -a -z "$(grep -l 'runtime error\|AddressSanitizer' "$TMP/out.txt")"
finish
