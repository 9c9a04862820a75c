#!/bin/bash
# The bundled demo (examples/demo): the program builds warning-free, plain
# gprof blames the expensive callee and not the root cause ingest_all, the
# buggy input merges far more often; and, when vprof is built, `make run`
# works and vprof-report ranks ingest_all in its top 3, ahead of gprof.
source "$(dirname "$0")/../lib.sh"
command -v gprof >/dev/null || skip "binutils gprof not installed"
D=$TMP/demo
cp -r "$VPROF_ROOT/examples/demo" "$D"
rm -rf "$D/normal" "$D/buggy" "$D/demo" "$D/demo.vmeta"

warn=$(gcc -O2 -g -pg -Wall -Wextra -o "$D/demo-gprof" "$D/demo.c" 2>&1)
[ -z "$warn" ] && ok "demo builds warning-free with gcc -Wall -Wextra" || not_ok "demo warnings: $warn"

for w in normal buggy; do
    mkdir -p "$D/g-$w"
    (cd "$D/g-$w" && ../demo-gprof "../$w.in" > out.txt) \
        && ok "demo runs the $w input" || not_ok "demo fails on the $w input"
done
flat() { gprof -b -p "$D/demo-gprof" "$D/g-$1/gmon.out" | awk '$1 ~ /^[0-9.]+$/ && NF >= 4'; }
top=$(flat buggy | head -1 | awk '{print $NF}')
grank=$(flat buggy | awk '{print $NF}' | grep -nx ingest_all | cut -d: -f1)
[ "$top" = merge_buffer_into_index ] && [ "${grank:-0}" != 1 ] \
    && ok "gprof blames $top, ranks ingest_all ${grank:-NR}" \
    || not_ok "gprof top is $top, ingest_all rank ${grank:-NR}"
calls() { flat "$1" | awk '$NF == "merge_buffer_into_index" {print $4}'; }
cn=$(calls normal) cb=$(calls buggy)
[ -n "$cn" ] && [ -n "$cb" ] && [ "$cb" -ge $((cn * 50)) ] \
    && ok "buggy input merges ${cb}x vs ${cn}x" || not_ok "merge calls normal=$cn buggy=$cb"
cmp -s <(grep -o 'checksum.*' "$D/g-normal/out.txt") <(grep -o 'checksum.*' "$D/g-buggy/out.txt") \
    && ok "both inputs build the same index" || not_ok "index checksums differ"
printf 'docs = -3\n' > "$D/bad.in"
out=$("$D/demo-gprof" "$D/bad.in" 2>&1); rc=$?
[ $rc -ne 0 ] && [[ "$out" == *"bad.in:1"* ]] && ok "bad config: error names file and line" \
    || not_ok "bad config: rc=$rc out=$out"

if [ -x "$VPROF_BIN/vprof-cc" ] && [ -x "$VPROF_BIN/vprof-report" ]; then
    if make -s -C "$D" run VPROF_BIN="$VPROF_BIN" > "$TMP/run.txt" 2>&1; then
        ok "make run (vprof-cc, two runs, vprof-report) succeeds"
        vrank=$("$VPROF_BIN/vprof-report" --json --top 0 -q "$D/normal" "$D/buggy" \
            | python3 -c 'import json,sys
d=json.load(sys.stdin); f=[x for x in d["functions"] if x["name"]=="ingest_all"]
print(f[0]["rank"] if f else "NR")')
        [[ "$vrank" =~ ^[0-9]+$ ]] && [ "$vrank" -le 3 ] \
            && ok "vprof ranks ingest_all $vrank (gprof: ${grank:-NR})" \
            || not_ok "vprof ranks ingest_all ${vrank:-?}, want <= 3"
    else
        not_ok "make run failed: $(tail -5 "$TMP/run.txt")"
    fi
else
    echo "# vprof-cc/vprof-report not built: vprof part of the demo not checked"
fi
finish
