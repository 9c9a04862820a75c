#!/bin/bash
# vprof-c++ compiles what g++ compiles: a C++ command without -std= gets the
# default standard of the system's g++ (clang++-14 alone defaults to
# gnu++14), asked once and cached per g++ executable; a -std= of the user
# wins; C inputs never get a C++ standard. A CMake project that sets no
# standard builds.
. tests/lib.sh
. tests/cc/lib_cc.sh
[ -f "$RUNTIME" ] || skip "runtime $RUNTIME not built yet"
command -v g++ >/dev/null || skip "g++ not installed"
unset LD_LIBRARY_PATH LD_PRELOAD VPROF_CC_CXX_STD VPROF_CC_GXX
export XDG_CACHE_HOME=$TMP/cache
cd "$TMP"
SRC=$CC_SRC/cxx17.cc
GXX_STD=$(g++ -dM -E -x c++ /dev/null | awk '$2 == "__cplusplus" {print $3}')
case $GXX_STD in
    201703L) EXP=gnu++17 ;; 202002L) EXP=gnu++20 ;;
    *) skip "this test expects a g++ defaulting to C++17 or C++20 (has $GXX_STD)" ;;
esac

# The fixture is the test: clang++-14 without -std= must reject it.
check "fixture: clang++-14 alone rejects the C++17 program" \
    bash -c "! clang++-14 -c '$SRC' -o /dev/null 2>/dev/null"
g++ -O2 -g -o app_g "$SRC" || { echo "not ok - g++ builds the fixture"; exit 1; }
"$VCXX" -O2 -g -o app "$SRC" > build.log 2>&1; rc=$?
check "vprof-c++ -O2 -g -o app app.cc builds C++17 without -std= (as g++ does)" test $rc -eq 0
[ $rc -eq 0 ] || cat build.log
check "the program runs and prints what g++'s build prints" \
    bash -c "test \"\$(./app)\" = \"\$(./app_g)\""
check "the program has its metadata and C++ schema" bash -c \
    "test -s app.vmeta && objcopy --dump-section .vprof_schema=s.txt app s.o && grep -q ', _Z' s.txt"
check "__cplusplus seen by vprof-c++ equals g++'s ($GXX_STD)" bash -c \
    "'$VCXX' -dM -E -x c++ /dev/null | grep -qx '#define __cplusplus $GXX_STD'"
check "-E of a C++ file: clang++-14's output with g++'s standard" bash -c \
    "'$VCXX' -E '$SRC' > v.i && clang++-14 -std=$EXP -E '$SRC' > c.i && cmp -s v.i c.i"

# What is added, and when (the command line as run).
cmd() { VPROF_CC_VERBOSE=1 "$@" 2>&1 >/dev/null | grep -m1 'clang'; }
check "-std=$EXP added to a C++ compile" bash -c \
    "$(declare -f cmd); cmd '$VCXX' -c '$SRC' -o a.o | grep -q ' -std=$EXP '"
check "the user's -std= wins: nothing added" bash -c \
    "$(declare -f cmd); c=\$(cmd '$VCXX' -std=c++2a -c '$SRC' -o b.o); ! grep -q $EXP <<<\"\$c\" && grep -q -- '-std=c++2a' <<<\"\$c\""
check "the user's --std c++14 wins, and C++14 rejects the program as g++ would" bash -c \
    "! '$VCXX' --std c++14 -c '$SRC' -o b.o 2>/dev/null"
check "vprof-cc (C driver) compiling a .cc file adds it too (as gcc does)" bash -c \
    "$(declare -f cmd); cmd '$VCC' -c '$SRC' -o c.o | grep -q ' -std=$EXP '"
check "a C file through vprof-cc gets no standard" bash -c \
    "$(declare -f cmd); ! cmd '$VCC' -c '$CC_SRC/pass.c' -o d.o | grep -q -- '-std='"
check "-x c in vprof-c++ gets no C++ standard (and compiles)" bash -c \
    "$(declare -f cmd); ! cmd '$VCXX' -x c -c '$CC_SRC/pass.c' -o e.o | grep -q -- '-std=' && test -s e.o"
check "mixed C and C++ inputs get none (one -std= cannot serve both)" bash -c \
    "$(declare -f cmd); c=\$(cmd '$VCC' -c '$CC_SRC/pass.c' '$CC_SRC/pass.cpp'); ! grep -q -- '-std=' <<<\"\$c\""
check "a link of objects gets none" bash -c \
    "$(declare -f cmd); '$VCXX' -c '$SRC' -o l.o && ! cmd '$VCXX' l.o -o l | grep -q -- '-std='"
check "VPROF_CC_CXX_STD=none: clang's own default" bash -c \
    "$(declare -f cmd); ! VPROF_CC_CXX_STD=none cmd '$VCXX' -c '$CC_SRC/pass.cpp' -o f.o | grep -q -- '-std='"
check "VPROF_CC_CXX_STD=c++20 is used as given" bash -c \
    "$(declare -f cmd); VPROF_CC_CXX_STD=c++20 cmd '$VCXX' -c '$SRC' -o g.o | grep -q ' -std=c++20 '"
VPROF_CC_CXX_STD='c++17 -O0' "$VCXX" -c "$SRC" -o h.o 2>bad.err; rc=$?
check "a bad VPROF_CC_CXX_STD is refused with a message" \
    bash -c "test $rc -ne 0 && grep -q \"VPROF_CC_CXX_STD='c++17 -O0' is not\" bad.err"
check "no g++ in reach: nothing added (clang's default)" bash -c \
    "$(declare -f cmd); ! VPROF_CC_GXX=$TMP/no-such-g++ cmd '$VCXX' -c '$CC_SRC/pass.cpp' -o i.o | grep -q -- '-std='"

# --help says what it adds and why.
"$VCXX" --help > help.txt 2>&1
check "--help: clang's own options, then vprof's part" bash -c \
    "grep -q '^USAGE: clang' help.txt && grep -q '^vprof-c++: clang++-14 with value profiling' help.txt"
check "--help: names the standard and the g++ it came from" \
    grep -q "C++ standard when a C++ command gives no -std=: $EXP," help.txt
check "--help: ...and the g++" grep -q "the default of g++ (/" help.txt

# The cache: g++ is asked once per executable (path, size, mtime).
check "cache written under XDG_CACHE_HOME" bash -c \
    "grep -q \"^vprof-cxx-std 1	.*	$EXP	.*	\$(readlink -f \$(command -v g++))\$\" '$XDG_CACHE_HOME/vprof/cxx-std'"
mkdir -p fake && cat > fake/g++ <<EOF
#!/bin/sh
echo x >> $TMP/fake/asked
echo '#define __GNUC__ 99'
echo '#define __cplusplus 202002L'
EOF
chmod +x fake/g++
asked() { cat fake/asked 2>/dev/null | wc -l; }
c1=$(VPROF_CC_GXX=$TMP/fake/g++ cmd "$VCXX" -c "$SRC" -o j.o)
check "another g++ (C++20 default) is asked: -std=gnu++20" grep -q ' -std=gnu++20 ' <<<"$c1"
VPROF_CC_GXX=$TMP/fake/g++ "$VCXX" -c "$SRC" -o j.o
VPROF_CC_GXX=$TMP/fake/g++ "$VCXX" -c "$SRC" -o j.o
check "...once: later compiles read the cache" test "$(asked)" -eq 1
touch -d '2001-01-01' fake/g++
VPROF_CC_GXX=$TMP/fake/g++ "$VCXX" -c "$SRC" -o j.o
check "...and again after that g++ changed (mtime)" test "$(asked)" -eq 2
echo "garbage" > "$XDG_CACHE_HOME/vprof/cxx-std"
check "a damaged cache is rewritten" bash -c \
    "$(declare -f cmd); cmd '$VCXX' -c '$SRC' -o k.o | grep -q ' -std=$EXP ' && grep -q '^vprof-cxx-std 1	' '$XDG_CACHE_HOME/vprof/cxx-std'"
HOME=/nonexistent XDG_CACHE_HOME= "$VCXX" -c "$SRC" -o m.o
check "no writable cache: still compiles" test -s m.o

# CMake project that sets no standard: CMake's own probe sees g++'s default
# (__cplusplus 2017), and the C++17 target builds.
if command -v cmake >/dev/null; then
    cmake -S "$VPROF_ROOT/tests/cc/proj/cmake17" -B cm -DCMAKE_CXX_COMPILER="$VCXX" >cm.log 2>&1 &&
        cmake --build cm -j2 >>cm.log 2>&1; rc=$?
    check "CMake C++17 project without a standard builds with vprof-c++" test $rc -eq 0
    [ $rc -eq 0 ] || tail -20 cm.log
    check "CMake computes the compiler's default standard as g++'s (${EXP#gnu++})" \
        grep -q "CMAKE_CXX_STANDARD_COMPUTED_DEFAULT \"${EXP#gnu++}\"" cm/CMakeFiles/*/CMakeCXXCompiler.cmake
    check "CMake-built program runs, with metadata" bash -c "cm/words | grep -q '^35 1\$' && test -s cm/words.vmeta"
else
    not_ok "cmake not installed (install-deps.sh)"
fi
finish
