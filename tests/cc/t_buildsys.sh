#!/bin/bash
# vprof-cc in build systems: CC in make (-j2), CMAKE_C_COMPILER in CMake, CC
# for an autoconf configure script (whose checks must all come out right).
. tests/lib.sh
. tests/cc/lib_cc.sh
[ -f "$RUNTIME" ] || skip "runtime $RUNTIME not built yet"
[ -x "$VPROF_BIN/vprof-meta" ] || skip "vprof-meta not built yet"
unset LD_LIBRARY_PATH LD_PRELOAD
PROJ=$VPROF_ROOT/tests/cc/proj

# make -j2: objects built in parallel carry their schemas; the link
# concatenates them; no file appears beside the objects but the usual ones.
cp -r "$PROJ/make" "$TMP/mk" && cd "$TMP/mk"
make -s -j2 CC="$VCC" >make.log 2>&1; rc=$?
check "make -j2 CC=vprof-cc succeeds" test $rc -eq 0
files=$(ls | tr '\n' ' ')
check "make: no side files (only sources, objects, deps, outputs)" test \
    "$files" = "Makefile app app.vmeta libstats.a main.c main.d main.o make.log queue.c queue.d queue.h queue.o stats.c stats.d stats.o "
check "make: program runs" ./app 3
check "make: app.vmeta written" test -s app.vmeta
schema_of app app.schema
check "make: linked schema has all three objects (incl. the static library)" bash -c \
    "test \$(grep -c '^# vprof-schema 1\$' app.schema) -eq 3"
"$SCHEMA_DUMP" app.schema > app.dump
check "make: loop and member entries from separate files" has_lines app.dump \
    "var queue.c|queue_drain|2|q->len|int|loop|cond" \
    "var stats.c|stats_sum|5|i|int|loop|cond" \
    "var main.c|main|7|r|int|loop|cond"
check "make: no entries for bodies not emitted here (glibc's extern inline atoi)" \
    bash -c "! grep -q '|atoi|' app.dump"
touch queue.h && make -s -j2 CC="$VCC" >>make.log 2>&1
check "make: -MMD dependencies drive a rebuild" bash -c "test queue.o -nt queue.c && ./app 2"

# CMake: compiler identification, shared library, executable.
if command -v cmake >/dev/null; then
    cd "$TMP" && mkdir cm
    cmake -S "$PROJ/cmake" -B cm -DCMAKE_C_COMPILER="$VCC" -DCMAKE_CXX_COMPILER="$VCXX" >cm.log 2>&1 &&
        cmake --build cm -j2 >>cm.log 2>&1; rc=$?
    check "cmake with CMAKE_C_COMPILER=vprof-cc, CMAKE_CXX_COMPILER=vprof-c++ builds" test $rc -eq 0
    check "cmake identifies both compilers as Clang" bash -c \
        "grep -q 'CMAKE_C_COMPILER_ID \"Clang\"' cm/CMakeFiles/*/CMakeCCompiler.cmake &&
         grep -q 'CMAKE_CXX_COMPILER_ID \"Clang\"' cm/CMakeFiles/*/CMakeCXXCompiler.cmake"
    check "cmake: executables run (find the shared library via rpath)" bash -c "cm/tool && cm/tool2"
    check "cmake: C++ executable has metadata and its schema names C++ functions" bash -c \
        "test -s cm/tool2.vmeta && objcopy --dump-section .vprof_schema=t2.txt cm/tool2 t2.o && grep -q '_Z' t2.txt"
    check "cmake: metadata for the executable and the library" test -s cm/tool.vmeta -a -s cm/libcounter.so.vmeta
else
    not_ok "cmake not installed (install-deps.sh)"
fi

# autoconf: configure's compiler and library checks pass through vprof-cc.
if command -v autoconf >/dev/null; then
    cp -r "$PROJ/autoconf" "$TMP/ac" && cd "$TMP/ac"
    autoconf >ac.log 2>&1 && ./configure CC="$VCC" >configure.out 2>&1; rc=$?
    check "./configure CC=vprof-cc succeeds" test $rc -eq 0
    check "configure: compiler works, not cross compiling, no exe suffix" has_lines configure.out \
        "checking whether the C compiler works... yes" \
        "checking whether we are cross compiling... no" \
        "checking for suffix of executables... "
    check "configure: header, function, library and sizeof checks answer right" has_lines configure.out \
        "checking for strdup... yes" "checking for cos in -lm... yes" \
        "checking size of long... 8" "checking for string.h... yes"
    make -s >make.log 2>&1
    check "configure+make: program built by vprof-cc runs (checks were right)" ./hello
    check "configure+make: hello.vmeta written" test -s hello.vmeta
else
    not_ok "autoconf not installed (install-deps.sh)"
fi
finish
