#!/bin/bash
# run-dynamic.sh OBJ OUT CC: after `make build-full`, runs an ordinary
# (dynamically linked) gcc -pg demo on the patched libc.so of the glibc
# build tree OBJ, through that tree's own testrun.sh, and checks that the
# shared libc records values and per-process files like the static one.
# One "ok - ..." / "not ok - ..." line per check; non-zero exit on failure.
set -u
obj=$1 out=$2 cc=$3
here=$(cd "$(dirname "$0")" && pwd)
d=$out/dynamic
bin=$d/vprof-dynamic-demo
per=6000000
fails=0
ok()  { echo "ok - $*"; }
bad() { echo "not ok - $*"; fails=$((fails + 1)); }

[ -x "$obj/testrun.sh" ] && [ -f "$obj/libc.so" ] || { echo "run-dynamic: $obj has no built libc.so (make build-full)" >&2; exit 2; }
meta_tool=$(cd "$here/../.." && pwd)/build/bin/vprof-meta
[ -x "$meta_tool" ] || { echo "run-dynamic: needs $meta_tool (make vprof-meta)" >&2; exit 2; }
rm -rf "$d" && mkdir -p "$d"
"$cc" -pg -O2 -g -o "$bin" "$here/vprof-static-demo.c" || { bad "link the dynamic demo"; exit 1; }
"$meta_tool" --quiet --all --files '*vprof-static-demo.c' -o "$d/demo.vmeta" "$bin" || { bad "vprof-meta"; exit 1; }

VPROF_OUT=$d/run VPROF_META=$d/demo.vmeta "$obj/testrun.sh" "$bin" 20 $per 1 > "$d/stdout" 2> "$d/stderr"
if grep -q "sink parity" "$d/stdout" && [ ! -s "$d/stderr" ]; then ok "the dynamic -pg demo runs on the patched libc.so"
else bad "the dynamic -pg demo runs on the patched libc.so (see $d/stderr)"; fi
n=$(ls "$d"/run/layout.* 2>/dev/null | wc -l)
[ "$n" -eq 2 ] && ok "parent and fork child: two layout logs" || bad "parent and fork child: $n layout logs"
for lay in "$d"/run/layout.*; do
    id=${lay##*/layout.}
    w_n=$(gawk -F'\t' '$1 == "var" && $4 == "work" && $6 == "n" {print $2}' "$lay")
    "$out/bin/vprof-vdump" "$d/run/values.$id" > "$d/run/values.$id.txt" 2>&1
    if grep -q '^meta	.*	ok$' "$lay" && grep -q '^end	' "$lay" &&
       gawk -v wn="$w_n" -v per=$per 'NR > 1 && $1 == wn && $2 == 0 { n++; if ($4 != per) bad++ }
            END { exit !(n > 0 && !bad) }' "$d/run/values.$id.txt"; then
        ok "$id: metadata loaded, work's n = $per in every sample, run ended"
    else
        bad "$id: values (see $d/run/values.$id.txt)"
    fi
    if gprof -b -p "$bin" "$d/run/gmon.$id.out" 2>&1 | grep -Eq ' 20 .* work$'; then
        ok "$id: binutils gprof reads gmon.$id.out (20 calls of work)"
    else
        bad "$id: gprof on gmon.$id.out"
    fi
done
[ $fails -eq 0 ]
