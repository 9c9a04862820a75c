#!/bin/bash
# glibc-patch end to end: patched static libc.a (fast build: glibc's gmon/
# rebuilt with the patches and substituted into a copy of the installed
# libc.a of the same version), a static -pg demo linked against it, its
# value samples, per-process files, fork child, and binutils gprof on its
# gmon files. Not run by default (the brief keeps `build` out of CI); takes
# 20 s (idle) to about a minute (busy) on this 2-core machine, 17 s of CPU:
#   VPROF_TEST_GLIBC_BUILD=1 tests/run glibc
. "$(dirname "$0")/../lib.sh"
cd "$VPROF_ROOT" || exit 2
[ "${VPROF_TEST_GLIBC_BUILD:-0}" = 1 ] || skip "set VPROF_TEST_GLIBC_BUILD=1 to build the patched static libc (20-60 s)"
[ -r /usr/src/glibc/glibc-2.36.tar.xz ] || skip "glibc-source is not installed"
make -s -C glibc-patch build WORK="$TMP/glibc" 2>&1 | grep -E '^(ok|not ok) - |^[0-9.]+: |rror'
rc=${PIPESTATUS[0]}
check "make -C glibc-patch build (fast) and its demo succeed" test "$rc" -eq 0
finish
