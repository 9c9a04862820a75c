#!/bin/bash
# A program that unwinds itself with libunwind while vprof unwinds it on
# every tick: libunwind's own signal masking must be honoured (a tick inside
# a libunwind lock would deadlock), and the program's results stay right.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
cd "$TMP"
gcc -pg -g -O1 -o pu "$SRC/prog_unw.c" -lunwind 2> cc.log
check "libunwind test program builds" test -x pu
rel=0; file pu | grep -q 'pie executable' && rel=1
f=$(symaddr pu frames | cut -d' ' -f1)
printf 'flags %s\nvar frames #global sint 8\nentry frames 0 0x7fffffffffff addr 0 8 0 %s\n' $rel "$f" > pu.txt
"$MKMETA" pu.txt pu.vmeta
for i in 1 2 3; do
    VPROF_META=$PWD/pu.vmeta VPROF_UNWIND=3 VPROF_OUT=out$i LD_PRELOAD=$LIBVPROF \
        timeout -s KILL 60 ./pu > run$i.txt
    st=$?
    check "run $i: no deadlock, program finished (status $st)" test $st = 0
done
v=$(one 'out1/values.*')
check "values sampled while the program unwinds itself" test "$("$VPCHECK" values "$v" | grep -vc '^#')" -gt 0
finish
