#!/bin/bash
# `make install` installs one runtime (issue 14 item 10): libvprof.so and
# libvprof.a, which contain the stack scanner; no separate scanner archive
# that a program could link a second time. Both installed forms start the
# scanner (exactly one scanner thread) with VPROF_LATENCY=on — the static
# archive too, whose runtime pulls the scanner in.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
P=$TMP/prefix
make -s -C "$VPROF_ROOT" install PREFIX="$P" > "$TMP/install.log" 2>&1
st=$?
tail -5 "$TMP/install.log"
check "make install PREFIX=... (status $st)" test $st = 0
check "libvprof.so and libvprof.a installed" test -f "$P/lib/libvprof.so" -a -f "$P/lib/libvprof.a"
check "no separate scanner runtime installed (libvprof-latency.a)" test ! -e "$P/lib/libvprof-latency.a"
with=$(cd "$P/lib" && for f in *.a *.so; do
           nm "$f" 2>/dev/null | grep -qi ' t vprof_latency_start$' && echo "$f"; done | sort | tr '\n' ' ')
check "only libvprof.so and libvprof.a contain the scanner ($with)" test "$with" = "libvprof.a libvprof.so "

cd "$TMP"
# scanners DIR: scanner threads in the parent process, latency files in DIR
# (the parent's and its fork child's)
scanners() {
    echo "$(awk '$1=="parent" && $2=="scanner"{print $3}' "$1.txt" | sort -u | wc -l) $(ls "$1" | grep -c '^latency\.')"
}
gcc -pg -g -O1 -o dyn "$SRC/prog_ownthreads.c" -L"$P/lib" -Wl,-rpath,"$P/lib" -lvprof 2> dyn.log
VPROF_LATENCY=on VPROF_OUT=dyn.out ./dyn > dyn.out.txt 2>&1
check "installed libvprof.so: one scanner thread, latency files written ($(scanners dyn.out))" \
    test "$(scanners dyn.out)" = "1 2"
gcc -pg -g -O1 -o sta "$SRC/prog_ownthreads.c" -Wl,-Bstatic -L"$P/lib" -lvprof -Wl,-Bdynamic \
    -lunwind -lunwind-x86_64 -ldl -lpthread 2> sta.log
check "a program links with the installed static libvprof.a" test -x sta
VPROF_LATENCY=on VPROF_OUT=sta.out ./sta > sta.out.txt 2>&1
check "installed libvprof.a: one scanner thread, latency files written ($(scanners sta.out))" \
    test "$(scanners sta.out)" = "1 2"
finish
