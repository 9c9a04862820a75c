#!/bin/sh
# same-version.sh LIBC_A VERSION: the fast build puts objects compiled from
# the glibc-source tree into a copy of the installed libc.a, which is only
# sound when Debian built that libc.a from the same source package version.
# Exits non-zero, saying why, when it did not.
set -e
libc_a=$1 ver=$2
[ -r "$libc_a" ] || { echo "glibc-patch: $libc_a: not readable (libc6-dev missing?)" >&2; exit 1; }
src=$(dpkg-query -W -f='${Version}' glibc-source 2>/dev/null) || src=
[ -n "$src" ] || { echo "glibc-patch: package glibc-source is not installed (run scripts/install-deps.sh)" >&2; exit 1; }
banner=$(strings "$libc_a" | grep -m1 'GNU C Library (Debian GLIBC ' || true)
case "$banner" in
*"GLIBC $src)"*" version $ver."*) exit 0 ;;
esac
echo "glibc-patch: $libc_a is not Debian glibc $src ($banner);" >&2
echo "  the fast build needs libc6-dev and glibc-source of the same version; use build-full otherwise" >&2
exit 1
