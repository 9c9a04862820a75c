#!/bin/bash
# One reader of the GNU build-id and the .vprof_schema section
# (libvprof/format/vprof_elf.h) for vprof-meta and vprof-report: a schema
# split over two .vprof_schema sections is read whole (both tools used to
# differ: vprof-report concatenated them, vprof-meta kept one), and the
# build-id both tools see is the one in the ELF note.
source "$(dirname "$0")/../lib.sh"
META=$VPROF_BIN/vprof-meta R=$VPROF_BIN/vprof-report GEN=$VPROF_BIN/vprof-gen-runs
command -v objcopy >/dev/null || skip "binutils objcopy not installed"
cd "$TMP"
cat > p.c <<'C'
volatile long sink;
void alpha(int n) { for (int i = 0; i < n; i++) sink += i; }
void beta(int m) { for (int j = 0; j < m; j++) sink ^= j; }
int main(void) { alpha(10); beta(20); return 0; }
C
"$VPROF_BIN/vprof-cc" -O0 -g -o p p.c 2> cc.err || { echo "not ok - vprof-cc"; cat cc.err; exit 1; }
objcopy --dump-section .vprof_schema=s.txt p /dev/null
grep -v beta s.txt > a.txt
{ echo "# vprof-schema 1"; grep beta s.txt; } > b.txt
objcopy --remove-section .vprof_schema --add-section .vprof_schema=a.txt \
        --add-section .vprof_schemb=b.txt p p2 &&
    objcopy --rename-section .vprof_schemb=.vprof_schema p2 split
check "the split binary has two .vprof_schema sections" \
    [ "$(readelf -SW split | grep -c ' \.vprof_schema ')" -eq 2 ]

# the variables placed, without their line in the schema text
vars() { "$META" -q -o "$1.vmeta" "$1" && "$META" --dump "$1.vmeta" | awk '$1 == "var" {$2 = ""; sub(/ schema_line=[0-9]+/, ""); print}' | sort; }
vars p > whole.txt; vars split > split.txt
check "vprof-meta: 5 variables from the one section" [ "$(wc -l < whole.txt)" -eq 5 ]
check "vprof-meta: the same variables from two sections" cmp -s whole.txt split.txt
cmp -s whole.txt split.txt || diff whole.txt split.txt | sed 's/^/# /'

bid=$(readelf -n p | awk '/Build ID:/ {print $3}')
check "the program has a build-id" [ -n "$bid" ]
check "vprof-meta records the note's build-id" \
    grep -q "build_id $bid\$" <("$META" --dump p.vmeta | head -1)
# vprof-report names the build-id it read when the runs recorded another
addr() { echo "0x$(nm "$1" | awk -v f="$2" '$3==f {print $1}')"; }
for s in normal buggy; do
    "$GEN" rank $s $s ./p --func hot="$(addr p alpha)" --func caller="$(addr p main)" \
        --build-id 0123abcd > /dev/null
done
out=$("$R" normal buggy 2>&1 >/dev/null)
check "vprof-report reads the same build-id" grep -q "recorded build-id 0123abcd, but ./p has build-id $bid" <<<"$out"
finish
