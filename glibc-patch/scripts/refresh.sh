#!/bin/sh
# refresh.sh A B: rewrites every patch in patches/series from two trees,
# A = pristine glibc-source files, B = the same files edited. Each patch
# keeps its header (everything before its first "--- a/") and its list of
# files (its "+++ b/" lines), so moving a file between patches is an edit
# of the patch by hand. For maintainers; the build never runs it.
set -eu
a=$1 b=$2
cd "$(dirname "$0")/.."
for p in $(cat patches/series); do
    f=patches/$p
    files=$(sed -n 's/^+++ b\/\([^\t]*\).*/\1/p' "$f")
    hdr=$(mktemp)
    sed '/^--- a\//,$d' "$f" > "$hdr"
    {
        cat "$hdr"
        for x in $files; do
            (cd "$(dirname "$a")" && diff -uN "$(basename "$a")/$x" "$(basename "$b")/$x" |
             sed -e "1s|^--- $(basename "$a")/|--- a/|" -e "2s|^+++ $(basename "$b")/|+++ b/|") || true
        done
    } > "$f.new"
    rm -f "$hdr"
    mv "$f.new" "$f"
done
