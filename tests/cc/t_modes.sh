#!/bin/bash
# vprof-cc as a drop-in compiler: every mode that does not need the runtime
# library (compile-only, -S, -E, -M*, assembler files, response files,
# -fsyntax-only, --version, bad input, -shared) and its error reports.
. tests/lib.sh
. tests/cc/lib_cc.sh
cd "$TMP"
F=$CC_SRC/pass.c

"$VCC" -O2 -c "$F" -o c.o
check "-c: object carries .vprof_schema" bash -c "readelf -SW c.o | grep -q ' .vprof_schema '"
"$VCC" -O2 -S "$F" -o s.s
check "-S: assembly carries the schema section" grep -q '^[[:space:]]*.section[[:space:]]*.vprof_schema,"",@progbits' s.s
check "-S output assembles through vprof-cc -c" "$VCC" -c s.s -o s.o
check "assembled -S output has a parseable schema" bash -c \
    "$(declare -f schema_of dump_of); SCHEMA_DUMP=$SCHEMA_DUMP TMP=$TMP; dump_of s.o | grep -q '|scan|17|i|'"

# Preprocessing and dependency output: byte-identical to clang's.
same_out() { # same_out ARGS...: stdout and status of vprof-cc and clang-14 agree
    local a b
    "$VCC" "$@" > v.out 2>v.err; a=$?
    clang-14 "$@" > c.out 2>c.err; b=$?
    [ $a -eq $b ] && cmp -s v.out c.out && cmp -s v.err c.err
}
check "-E output identical to clang-14" same_out -E "$F"
check "-M output identical" same_out -M "$F"
check "-MM output identical" same_out -MM "$F"
check "-E -dM output identical" same_out -E -dM -x c /dev/null
check "-fsyntax-only identical" same_out -fsyntax-only "$F"
check "--version identical" same_out --version
"$VCC" -c "$F" -MD -MF v.d -MT obj.o -o v.o && clang-14 -c "$F" -MD -MF c.d -MT obj.o -o c2.o
check "-MD -MF dependency file identical" cmp -s v.d c.d
check "-MMD with -c still compiles with the pass" bash -c \
    "'$VCC' -c '$F' -MMD -o m.o && test -f m.d && readelf -SW m.o | grep -q vprof_schema"

# Assembler inputs pass through (no -g added that could clash with .file).
check "assembler file .s compiles" "$VCC" -c "$CC_SRC/asm_fn.s" -o asm1.o
check "assembler file .S compiles" "$VCC" -c "$CC_SRC/asm_pp.S" -o asm2.o
check ".S object identical to clang-14's" bash -c \
    "clang-14 -c '$CC_SRC/asm_pp.S' -o asm3.o && cmp -s asm2.o asm3.o"

# Response files: read for the analysis, passed through as written.
mkdir -p "out dir"
printf '%s\n' "-O2 -c" "'$F'" "-o \"out dir/r.o\"" > args.rsp
check "@response file compiles (quoted path with a space)" "$VCC" @args.rsp
check "object from response file carries the schema" bash -c \
    "readelf -SW 'out dir/r.o' | grep -q vprof_schema"
printf '%s\n' "-E" "'$F'" > pp.rsp
check "@response file with -E passes through like clang" same_out @pp.rsp

# Bad input fails exactly as clang does (status, diagnostics).
check "bad source: same status and diagnostics as clang-14" same_out -c "$CC_SRC/bad.c" -o bad.o
check "bad source status is non-zero" bash -c "! '$VCC' -c '$CC_SRC/bad.c' -o bad.o 2>/dev/null"
check "missing source: same status and diagnostics" same_out -c no-such-file.c

# -shared: the library gets its metadata beside it.
"$VCC" -O2 -fPIC -shared "$CC_SRC/lib.c" -o libt.so 2>shared.err
check "-shared links and runs vprof-meta (libt.so.vmeta written)" test -s libt.so.vmeta
check "-shared library carries its schema" bash -c "readelf -SW libt.so | grep -q vprof_schema"
check "-shared library is not linked against libvprof" bash -c "! readelf -d libt.so | grep -q libvprof"

# Missing parts are reported by name: a copy of vprof-cc in a tree without
# lib/ (no plugin), and one with the plugin but no vprof-meta beside it.
mkdir -p bare/bin && cp "$VCC" bare/bin/vprof-cc
bare/bin/vprof-cc -c "$F" -o bare.o 2> bare.err; rc=$?
check "missing plugin: non-zero exit" test $rc -ne 0
check "missing plugin: named in the message" grep -q 'vprof-schema.so' bare.err
mkdir -p norun/bin norun/lib && cp "$VCC" norun/bin/vprof-cc && cp "$PLUGIN" norun/lib/
norun/bin/vprof-cc "$F" -o norun.out 2> norun.err; rc=$?
check "missing libvprof.so: link refused, library named" bash -c \
    "test $rc -ne 0 -a ! -e norun.out && grep -q 'norun/lib/libvprof.so' norun.err"
check "missing libvprof.so: compile-only still works" norun/bin/vprof-cc -c "$F" -o norun.o
mkdir -p nometa/bin && cp "$VCC" nometa/bin/vprof-cc && ln -s "$VPROF_LIB" nometa/lib
nometa/bin/vprof-cc -fPIC -shared "$CC_SRC/lib.c" -o libn.so 2> nometa.err; rc=$?
check "missing vprof-meta: link fails" test $rc -ne 0
check "missing vprof-meta: named in the message" grep -q 'nometa/bin/vprof-meta' nometa.err
check "missing vprof-meta: output removed (make will relink)" test ! -e libn.so
VPROF_CC_NO_META=1 nometa/bin/vprof-cc -fPIC -shared "$CC_SRC/lib.c" -o libn.so 2> nometa2.err; rc=$?
check "VPROF_CC_NO_META=1: link succeeds" test $rc -eq 0 -a -f libn.so
check "VPROF_CC_NO_META=1: warns naming vprof-meta" grep -q 'vprof-meta.*not found' nometa2.err
check "VPROF_CC_COMPILER: named compiler used, missing one reported" bash -c \
    "VPROF_CC_COMPILER=no-such-cc '$VCC' -c '$F' -o x.o 2>&1 | grep -q 'no-such-cc'"

# The argument analysis under ASan/UBSan (SAN=1 BUILD=build/san build).
SCC=${VPROF_SAN_BIN:-}/vprof-cc
if [ -n "${VPROF_SAN_BIN:-}" ] && [ -x "$SCC" ] && [ -f "$VPROF_SAN_BIN/../lib/vprof-schema.so" ]; then
    printf '%s\n' "-c '$F' -o 'out dir/san.o' -MD -MF san.d -x c -Dx='a b'" "-MT \\'t\\'" > san.rsp
    "$SCC" @san.rsp 2> san.err && "$SCC" -E "$F" -o /dev/null 2>> san.err &&
        "$SCC" -S -xc "$F" -o san.s 2>> san.err; rc=$?
    check "sanitizer build of vprof-cc: compile, -E, -S, response file" bash -c \
        "test $rc -eq 0 && ! grep -q 'Sanitizer\|runtime error' san.err && test -s 'out dir/san.o'"
fi
finish
