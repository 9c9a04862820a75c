#!/bin/bash
# Bad input: a clear message naming the file (and line/offset), exit 1, no
# crash: not an ELF, truncated, no debug info, stripped, relocatable object,
# missing schema section, malformed schema line, missing file; usage: exit 2.
. "$(dirname "$0")/../lib.sh"
META=$VPROF_BIN/vprof-meta
[ -x "$META" ] || skip "vprof-meta not built"
cd "$TMP" || exit 1
cp "$VPROF_ROOT/tests/meta/progs/basic.c" .
gcc -g -O1 -o good basic.c

# expect_err NAME PATTERN ARGS...: exit status 1, stderr matches PATTERN
expect_err() {
    local name=$1 pat=$2; shift 2
    "$META" "$@" >out.bin 2>err.txt
    local rc=$?
    if [ $rc -eq 1 ] && grep -q -- "$pat" err.txt; then
        ok "$name"
    else
        not_ok "$name (rc=$rc: $(head -c 300 err.txt))"
    fi
}

echo "just text" >notelf
expect_err "not an ELF" "notelf: offset 0: not an ELF file" --all --files '*' notelf
head -c 40 good >hdr
expect_err "truncated ELF header" "hdr: offset 0: truncated or corrupt ELF header" --all --files '*' hdr
head -c 9000 good >trunc
expect_err "truncated ELF" "trunc: offset [0-9]*: section header table lies past the end" --all --files '*' trunc
gcc -O1 -o nodebug basic.c
expect_err "no debug info" "nodebug: no DWARF debug information" --all --files '*' nodebug
cp good stripped && strip stripped
expect_err "stripped" "stripped: stripped: no .debug_info and no .symtab" --all --files '*' stripped
gcc -g -c -o obj.o basic.c
expect_err "relocatable object" "obj.o: a relocatable object" --all --files '*' obj.o
expect_err "no embedded schema" "good: no .vprof_schema section" good
expect_err "missing binary" "nothere: cannot open" --all --files '*' nothere
printf '# vprof-schema 1\nbasic.c, main, 59, n, int, none\nbasic.c, main, 3, x\n' >bad.vschema
expect_err "malformed schema line names file and line" "bad.vschema:3:" -s bad.vschema good
printf 'basic.c, main, 59, n, int, none\n' >nomagic.vschema
expect_err "schema without magic line" "nomagic.vschema:1:" -s nomagic.vschema good
expect_err "missing schema file" "nothere.vschema" -s nothere.vschema good
expect_err "--dump of a non-metadata file" "notelf: " --dump notelf
"$META" >/dev/null 2>&1; check "no arguments: usage, exit 2" test $? -eq 2
"$META" --all good >/dev/null 2>&1; check "--all without --files: exit 2" test $? -eq 2
"$META" -s x --all --files '*' good >/dev/null 2>&1
check "-s with --all: exit 2" test $? -eq 2
# an output path that cannot be written: error, exit 1
expect_err "unwritable output" "/nonexistent-dir/x.vmeta" --all --files '*' -o /nonexistent-dir/x.vmeta good
# a valid run with nothing matching still writes valid (empty) metadata
"$META" --all --files 'nomatch*.c' -o empty.vmeta good 2>err.txt
check "no CU matches: warning, exit 0" grep -q "no compilation unit of good matches" err.txt
check "no CU matches: valid empty metadata" sh -c "'$META' --dump empty.vmeta | grep -q '^flags 1 vars 0 entries 0'"
finish
