#!/bin/bash
# Replays the kept fuzz corpus (vprof-report/fuzz/corpus/<target>/) through
# every libFuzzer target under ASan/UBSan: no fuzzing, just no crash, leak
# or undefined behaviour on any kept input.
source "$(dirname "$0")/../lib.sh"
command -v "${CLANG:-clang-14}" >/dev/null || skip "clang-14 not installed"
cd "$VPROF_ROOT"
make -s -j2 report-fuzz > "$TMP/build.log" 2>&1 || { cat "$TMP/build.log"; echo "not ok - fuzz targets build"; exit 1; }
for dir in vprof-report/fuzz/corpus/*/; do
    t=$(basename "$dir")
    f=build/fuzz/fuzz_$t
    [ -x "$f" ] || { not_ok "fuzz target for corpus $t exists"; continue; }
    n=$(ls "$dir" | wc -l)
    if "$f" -runs=0 "$dir" > "$TMP/$t.log" 2>&1 && ! grep -q "ERROR: \|runtime error" "$TMP/$t.log"; then
        ok "corpus $t: $n inputs replayed cleanly"
    else
        not_ok "corpus $t: $n inputs"
        grep -m5 "ERROR\|runtime error\|SUMMARY" "$TMP/$t.log"
    fi
done
# every target has a corpus
for f in vprof-report/fuzz/fuzz_*.c; do
    t=$(basename "$f" .c); t=${t#fuzz_}
    check "target $t has a kept corpus" [ -n "$(ls "vprof-report/fuzz/corpus/$t" 2>/dev/null)" ]
done
finish
