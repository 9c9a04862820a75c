#!/bin/bash
# The tick's unwinder (libvprof/cfi.c, unwind.c: a rule table compiled from
# the CFI, libunwind where it has no rule) gives the same frames and
# registers as libunwind alone: VPROF_UNWINDER=check runs both on every
# tick and compares each frame's PC and its callee-saved registers. The
# program (prog_unwinder.c) recurses, keeps values in callee-saved
# registers, sizes frames with alloca, sorts with a qsort callback, calls
# through a shared library built without frame pointers and works inside a
# SIGALRM handler; it is built with gcc and clang, -O0 and -O2, and the
# library's code (no frame pointers, no -pg) both as a shared library and
# linked into the executable (-pg forces frame pointers on the rest).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
cd "$TMP"
all_unw=0
# noloader.so counts libunwind's calls into the dynamic loader: a tick must
# make none (t_dlopen.sh says why)
gcc -O2 -fPIC -shared -o noloader.so "$SRC/noloader.c" 2> noloader.cc.log
variants="gcc:-O0:so gcc:-O2:so clang:-O0:so clang:-O2:so gcc:-O2:exe clang:-O2:exe"
for v in $variants; do
    IFS=: read -r cc fl how <<< "$v"
    n=${v//[^A-Za-z0-9]/}
    command -v "$cc" > /dev/null || { ok "$v: $cc not installed (skipped)"; continue; }
    if [ "$how" = so ]; then
        "$cc" $fl -fomit-frame-pointer -fPIC -shared -o "libunw_$n.so" "$SRC/unwlib.c" 2> "cc_$n.log"
        lib=$PWD/libunw_$n.so
    else
        "$cc" $fl -fomit-frame-pointer -c -o "unw_$n.o" "$SRC/unwlib.c" 2> "cc_$n.log"
        lib=unw_$n.o
    fi
    "$cc" -pg -g $fl -DWITH_LIB -o "p_$n" "$SRC/prog_unwinder.c" "$lib" 2>> "cc_$n.log"
    check "$v: builds" test -x "p_$n"
    [ -x "p_$n" ] || { cat "cc_$n.log"; continue; }
    rel=0; file "p_$n" | grep -q 'pie executable' && rel=1
    g=$(symaddr "p_$n" g_counter | cut -d' ' -f1)
    printf 'flags %s\nvar g_counter #global sint 8\nentry g_counter 0 0x7fffffffffff addr 0 8 0 %s\n' \
        "$rel" "$g" > "m_$n.txt"
    "$MKMETA" "m_$n.txt" "m_$n.vmeta"
    VPROF_UNWINDER=check VPROF_STATS=1 VPROF_UNWIND=6 VPROF_HZ=4000 VPROF_META=$PWD/m_$n.vmeta \
        VPROF_OUT=out_$n LD_PRELOAD="$LIBVPROF $PWD/noloader.so" timeout -s KILL 60 "./p_$n" 250 > "run_$n.txt" 2> "err_$n.txt"
    st=$?
    check "$v: program finished (status $st)" test $st = 0 -a -n "$(grep '^done' "run_$n.txt")"
    line=$(grep 'unwind check:.*compared' "err_$n.txt")
    cmp=$(sed -n 's/.*check: \([0-9]*\) frames compared, \([0-9]*\) differ.*/\1/p' <<< "$line")
    dif=$(sed -n 's/.*check: \([0-9]*\) frames compared, \([0-9]*\) differ.*/\2/p' <<< "$line")
    steps=$(grep 'unwind: table' "err_$n.txt")
    tab=$(sed -n 's/.*steps: \([0-9]*\) by the table, \([0-9]*\) by libunwind.*/\1/p' <<< "$steps")
    unw=$(sed -n 's/.*steps: \([0-9]*\) by the table, \([0-9]*\) by libunwind.*/\2/p' <<< "$steps")
    check "$v: thousands of frames compared (${cmp:-none})" test "${cmp:-0}" -ge 2000
    check "$v: table and libunwind agree on every frame (${dif:-?} differ)" test "${dif:-1}" = 0
    [ "${dif:-1}" = 0 ] || grep 'unwind check' "err_$n.txt"
    check "$v: the table took most steps ($tab; libunwind $unw)" \
        test "${tab:-0}" -gt $((5 * ${unw:-0}))
    check "$v: no tick called into the loader ($(grep noloader: "err_$n.txt"))" \
        grep -q 'noloader: 0 calls from libunwind$' "err_$n.txt"
    all_unw=$((all_unw + ${unw:-0}))
done
# Whether a tick lands in the SIGALRM handler deep enough for the unwind to
# reach its signal frame depends on inlining and timing (gcc -O2 often never
# does), so the fallback is asserted over all variants together.
check "libunwind took the signal frames in some variant ($all_unw steps)" test "$all_unw" -gt 0
finish
