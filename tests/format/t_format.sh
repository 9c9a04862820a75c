#!/bin/bash
# Unit tests of the format module, built normally and under ASan/UBSan.
. tests/lib.sh
for san in "" "-fsanitize=address,undefined -fno-sanitize-recover=undefined"; do
    gcc -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -g $san -Ilibvprof/format \
        tests/format/test_format.c libvprof/format/*.c libvprof/format/offline/*.c -lelf -o "$TMP/tf" || { not_ok "build ($san)"; continue; }
    "$TMP/tf" | sed "s/^\(not \)\{0,1\}ok - /&${san:+[san] }/"
    [ "${PIPESTATUS[0]}" -eq 0 ] || _n_fail=$((_n_fail + 1))
done
finish
