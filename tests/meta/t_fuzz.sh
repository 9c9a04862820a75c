#!/bin/bash
# Mutation test under ASan+UBSan: 300 mutated ELF files (DWARF/CFI bytes,
# section headers, truncation, ELF header; half from a gcc build, half from
# a clang build, whose DWARF 5 uses offset tables) and 150 mutated schema
# texts.
# Every run must end with exit 0 or 1 (with a "vprof-meta: FILE..." message
# for 1), never a sanitizer report, a signal or a hang.
. "$(dirname "$0")/../lib.sh"
# (re)build the sanitizer binary of this component only: make does nothing
# when it is up to date, and a stale one would test old code
make -s -C "$VPROF_ROOT" -j2 SAN=1 BUILD=build/san build/san/bin/vprof-meta \
    >"$TMP/make.log" 2>&1 || { cat "$TMP/make.log"; skip "ASan build failed"; }
SAN_META=$VPROF_ROOT/build/san/bin/vprof-meta
cd "$TMP" || exit 1
cp "$VPROF_ROOT/tests/meta/progs/basic.c" .
gcc -g -O2 -o seed basic.c
clang-14 -g -O2 -o seedc basic.c 2>/dev/null || cp seed seedc
cat >seed.vschema <<'S'
# vprof-schema 1
basic.c, use_struct, 48, s.key, int, args
basic.c, use_struct, 48, q->weight, long, args
basic.c, walk, 24, steps, int, loop
basic.c, mix, 39, pi, int *, args
basic.c, #global, 8, g_total, long, none
S
mkdir mut
mkdir mutc
python3 "$VPROF_ROOT/tests/meta/mutate.py" 20261122 150 150 seed seed.vschema mut
python3 "$VPROF_ROOT/tests/meta/mutate.py" 4242 150 0 seedc seed.vschema mutc
export ASAN_OPTIONS=exitcode=99:detect_leaks=0:abort_on_error=0
export UBSAN_OPTIONS=exitcode=98:halt_on_error=1:print_stacktrace=1

bad=0 n=0 n1=0 fmt_bug=0
run_one() {  # run_one LABEL ARGS...
    local label=$1
    shift
    n=$((n + 1))
    timeout 20 "$SAN_META" "$@" -o /dev/null -q >out.txt 2>err.txt
    local rc=$?
    if [ $rc -eq 1 ]; then
        n1=$((n1 + 1))
        grep -q '^vprof-meta: ' err.txt && return 0
    fi
    [ $rc -eq 0 ] && return 0
    # qsort(NULL, 0, ...) in the format module's vpf_mb_write when there is
    # no entry at all: counted apart so the report names the right module
    if grep -q 'libvprof/format/meta.c.*null pointer passed as argument 1' err.txt; then
        fmt_bug=$((fmt_bug + 1))
        return 1
    fi
    bad=$((bad + 1))
    echo "# $label: rc=$rc"; head -5 err.txt | sed 's/^/#   /'
    cp "${@: -1}" "$VPROF_ROOT/build/test-logs/meta-fuzz-crash-$bad" 2>/dev/null
    return 1
}
for f in mut/elf_* mutc/elf_*; do
    run_one "$f (schema-less)" --all --files '*' "$f"
    run_one "$f (schema)" -s seed.vschema "$f"
done
for f in mut/schema_*; do
    run_one "$f" -s "$f" seed
done
echo "# $n runs, $n1 rejected with a message, $bad crashes/hangs, $fmt_bug UBSan reports in vpf_mb_write"
check "no crash, hang or sanitizer report in $n mutated runs" test $bad -eq 0
check "format module: vpf_mb_write with zero entries is UBSan-clean ($fmt_bug reports)" \
    test $fmt_bug -eq 0
check "mutations were actually rejected sometimes" test $n1 -gt 20
finish
