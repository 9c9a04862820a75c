#!/bin/bash
# vprof-cc link steps: libvprof linked ahead of libc with an rpath, metadata
# written beside the output, the program runs without LD_LIBRARY_PATH (from
# the build tree and from an installed layout) and profiles.
. tests/lib.sh
. tests/cc/lib_cc.sh
[ -f "$RUNTIME" ] || skip "runtime $RUNTIME not built yet"
[ -x "$VPROF_BIN/vprof-meta" ] || skip "vprof-meta not built yet"
cd "$TMP"
unset LD_LIBRARY_PATH LD_PRELOAD

"$VCC" -O2 "$CC_SRC/busy.c" -o busy 2>link.err
check "compile-and-link: program and busy.vmeta written" test -x busy -a -s busy.vmeta
needed=$(readelf -d busy | awk '/NEEDED/ {print $NF}' | tr -d '[]' | tr '\n' ' ')
check "libvprof.so is needed before libc.so.6 ($needed)" bash -c \
    "[[ '$needed' == *libvprof.so*libc.so.6* ]]"
check "runpath points at the build tree's lib" bash -c \
    "readelf -d busy | grep -E 'R(UN)?PATH' | grep -qF '$(cd "$VPROF_LIB" && pwd -P)'"
mkdir out
VPROF_OUT=out ./busy; rc=$?
check "program runs without LD_LIBRARY_PATH, exit status kept (3)" test $rc -eq 3
check "run wrote a gmon file" bash -c "ls out/gmon.*.out >/dev/null 2>&1"
check "runtime found busy.vmeta" bash -c "grep -q \"^meta	$PWD/busy.vmeta	ok\" out/layout.*"
check "run wrote value samples (values file larger than its header)" bash -c \
    "test \$(stat -c %s out/values.*) -gt 64"
check "binutils gprof reads the gmon file" bash -c "gprof -b -p busy out/gmon.*.out | grep -q ' main$'"

# Link-only from objects, C++, and a program using a -shared library.
"$VCC" -O2 -c "$CC_SRC/pass.c" -o pass.o && "$VCC" pass.o -o linked
check "link-only from objects: program and metadata" test -x linked -a -s linked.vmeta
check "link-only program runs" ./linked
"$VCXX" -O2 "$CC_SRC/pass.cpp" -o cxx
check "vprof-c++ compile-and-link runs" bash -c "./cxx && test -s cxx.vmeta && readelf -d cxx | grep -q libstdc"
cat > use.c <<'X'
int lib_add(int n);
int main(void) { return lib_add(4) == 6 ? 0 : 1; }
X
"$VCC" -fPIC -shared "$CC_SRC/lib.c" -o libt.so && "$VCC" use.c -L. -lt -Wl,-rpath,"$PWD" -o use
check "program linked against a vprof-cc -shared library runs" ./use
check "-shared library has its own metadata" test -s libt.so.vmeta

check "link to /dev/null succeeds (configure-style check)" "$VCC" "$CC_SRC/pass.c" -o /dev/null
"$VCC" -r pass.o -o part.o 2>part.err
check "partial link -r: no metadata, no libvprof, no warning" bash -c \
    "test -f part.o -a ! -e part.o.vmeta -a ! -s part.err && ! readelf -d part.o 2>/dev/null | grep -q libvprof"
"$VCC" -fPIC -c "$CC_SRC/lib.c" -o lib.o && "$VCC" -shared lib.o -o libo.so 2>libo.err
check "-shared link of objects: metadata written, no unused-argument warning" bash -c \
    "test -s libo.so.vmeta && ! grep -q 'unused' libo.err"
same_fail() {
    "$VCC" "$CC_SRC/bad.c" -o bad >v.out 2>v.err; local a=$?
    clang-14 "$CC_SRC/bad.c" -o bad >c.out 2>c.err; local b=$?
    [ $a -ne 0 ] && [ $a -eq $b ] && cmp -s v.err c.err && cmp -s v.out c.out
}
check "bad source in compile-and-link fails exactly like clang-14" same_fail
"$VCC" -static "$CC_SRC/busy.c" -o static 2>static.err; rc=$?
check "-static executable refused with a message naming -static" bash -c \
    "test $rc -ne 0 -a ! -e static && grep -q -- '-static' static.err"

# Installed layout (what `make install PREFIX=P` produces): P/bin, P/lib.
P=$TMP/prefix
mkdir -p "$P/bin" "$P/lib"
cp "$VCC" "$VPROF_BIN/vprof-meta" "$P/bin/" && ln -s vprof-cc "$P/bin/vprof-c++"
cp "$RUNTIME" "$PLUGIN" "$P/lib/"
"$P/bin/vprof-cc" -O2 "$CC_SRC/busy.c" -o ibusy
check "installed vprof-cc links against P/lib" bash -c \
    "readelf -d ibusy | grep -E 'R(UN)?PATH' | grep -qF '$P/lib'"
mkdir iout
VPROF_OUT=iout ./ibusy; rc=$?
check "program built by the installed vprof-cc runs and profiles" \
    bash -c "test $rc -eq 3 && ls iout/gmon.*.out >/dev/null && grep -q 'ibusy.vmeta	ok' iout/layout.*"
finish
