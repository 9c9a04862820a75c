#!/bin/sh
# check-patches.sh TARBALL VERSION PATCH...: the patch series applies, in
# order and without fuzz, to the packaged glibc source, and every file its
# gmon/vprof-*.c wrappers include is one that `make stage` copies from the
# vprof tree. Extracts only the files the patches touch (about a second).
set -eu
tarball=$1 ver=$2; shift 2
here=$(cd "$(dirname "$0")/.." && pwd)
fail() { echo "glibc-patch check: $*" >&2; exit 1; }

[ -r "$tarball" ] || fail "$tarball: missing (install Debian's glibc-source: scripts/install-deps.sh)"
pkg=$(dpkg-query -W -f='${Version}' glibc-source 2>/dev/null || true)
case "$pkg" in "$ver"-*) ;; *) fail "glibc-source is '$pkg', the series targets $ver" ;; esac

tmp=$(mktemp -d "${TMPDIR:-/tmp}/glibc-patch-check.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# Files that exist before the series: the "+++ b/PATH" of every hunk set
# whose "---" side is not new (diff -N writes the epoch or /dev/null).
existing=$(awk '/^--- /{new = ($0 ~ /1970-01-01|\/dev\/null/)}
                /^\+\+\+ b\//{p = $2; sub(/^b\//, "", p); if (!new) print p}' "$@" | sort -u)
[ -n "$existing" ] || fail "no files found in the patches"
members=$(for f in $existing; do printf 'glibc-%s/%s\n' "$ver" "$f"; done)
# shellcheck disable=SC2086
tar -xJf "$tarball" -C "$tmp" --strip-components=1 $members \
    || fail "$tarball: does not contain every file the patches change"

for p in "$@"; do
    out=$(patch -d "$tmp" -p1 -F0 --no-backup-if-mismatch < "$p" 2>&1) \
        || { echo "$out" >&2; fail "$p: does not apply to glibc-source $pkg"; }
    if echo "$out" | grep -q 'offset'; then
        echo "$out" | grep offset | sed "s|^|glibc-patch check: note: $(basename "$p"): |"
    fi
    echo "ok - $(basename "$p") applies to glibc-source $pkg"
done

# The wrappers and the list in gmon/Makefile agree, and every included file
# is staged from this tree.
make -s -C "$here" stage GLIBC_SRC="$tmp" >/dev/null
listed=$(sed -n '/^vprof-routines :=/,/^[^\t].*[^\\]$/p' "$tmp/gmon/Makefile" |
         tr ' \t\\' '\n\n\n' | grep '^vprof-' | grep -v '^vprof-routines$' | sort)
present=$(cd "$tmp/gmon" && ls vprof-*.c | sed 's/\.c$//' | sort)
[ "$listed" = "$present" ] || fail "gmon/Makefile vprof-routines ($listed) differ from the wrappers ($present)"
for w in "$tmp"/gmon/vprof-*.c; do
    inc=$(sed -n 's/^#include "\(vprof\/[^"]*\)"$/\1/p' "$w")
    [ -n "$inc" ] || fail "$(basename "$w"): includes nothing from vprof/"
    [ -f "$tmp/gmon/$inc" ] || fail "$(basename "$w"): $inc is not staged (libvprof file renamed?)"
done
echo "ok - $(echo "$present" | wc -l) vprof files staged and included"

# Inside glibc only the SYS_ names that glibc-compat.h maps exist.
for s in $(cat "$tmp"/gmon/vprof/*.c | grep -o 'SYS_[a-z_0-9]*' | sort -u); do
    grep -q "define $s " "$tmp/gmon/vprof/glibc-compat.h" \
        || fail "libvprof uses $s, which src/glibc-compat.h does not define for the glibc build"
done
echo "ok - every SYS_ name libvprof uses is mapped for the glibc build"

# Every staged file compiles as the glibc build will see it, as far as the
# host compiler can tell (a libvprof change that breaks the glibc build
# fails here, in CI, not deep into a libc build).
cc=${CC:-gcc}
for c in "$tmp"/gmon/vprof/*.c; do
    "$cc" -std=gnu11 -c -O0 -D_GNU_SOURCE -Wall -Wextra -Werror=implicit-function-declaration \
        -I"$tmp/gmon/vprof" -include glibc-compat.h -o "${c%.c}.o" "$c" 2> "$tmp/cc.log" \
        || { cat "$tmp/cc.log" >&2; fail "gmon/vprof/$(basename "$c") does not compile as staged for glibc"; }
done
echo "ok - the staged vprof sources compile (host compiler)"

# ... and nothing the glue needs is left out of the staged set: linked with
# a caller of the five entry points (and libc only), no symbol is missing.
cat > "$tmp/entry.c" <<'EOC'
#include "vprof-glibc.h"
int main(void)
{
    if (__vprof_glibc_start(0, 0, 100))
        __vprof_glibc_tick((void *)0);
    return __vprof_glibc_gmon_open() + __vprof_glibc_fork_child() + (__vprof_glibc_stop(), 0);
}
EOC
"$cc" -I"$tmp/gmon/vprof" -o "$tmp/entry" "$tmp/entry.c" "$tmp"/gmon/vprof/*.o 2> "$tmp/ld.log" \
    || { grep -i 'undefined' "$tmp/ld.log" >&2; fail "the staged vprof files do not link on their own (a libvprof file missing from LIBVPROF_FILES?)"; }
echo "ok - the staged vprof files link on their own (no libvprof file missing)"
