#!/bin/bash
# glibc-patch: the patch series applies without fuzz to Debian's packaged
# glibc 2.36 source (glibc-source), and what it compiles can be staged from
# this tree. Runs `make -C glibc-patch check` (a few seconds).
. "$(dirname "$0")/../lib.sh"
cd "$VPROF_ROOT" || exit 2
[ -r /usr/src/glibc/glibc-2.36.tar.xz ] || skip "glibc-source is not installed (scripts/install-deps.sh installs it)"

out=$(make -s -C glibc-patch check 2>&1); rc=$?
echo "$out"
check "make -C glibc-patch check succeeds" test $rc -eq 0

# The check must be able to fail: a series with one context line changed
# does not apply without fuzz.
mkdir -p "$TMP/gp/patches"
cp -r glibc-patch/Makefile glibc-patch/scripts glibc-patch/src "$TMP/gp/"
cp glibc-patch/patches/* "$TMP/gp/patches/"
sed -i '0,/^ #include <not-cancel.h>$/s// #include <not-cancelled.h>/' \
    "$TMP/gp/patches/0001-gmon-vprof-setup-files-fork.patch"
make -s -C "$TMP/gp" check TOP="$VPROF_ROOT" > "$TMP/broken.log" 2>&1
check "a patch whose context no longer matches is rejected" test $? -ne 0
check "the rejection names the patch" grep -q "0001-gmon-vprof-setup-files-fork.patch: does not apply" "$TMP/broken.log"
finish
