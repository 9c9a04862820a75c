#!/bin/bash
# A tick never waits for the dynamic linker's lock (the soak's one hang,
# case 1/5570): the shims a tick can reach (libunwind calls read) are bound
# before the first tick, so no tick calls dlsym. prog_dlsym.c says how the
# children give a tick that calls dlsym its chance to land inside dlsym's
# lock or unlock; before the fix about 2 children in 100 hung, so 600 miss
# it with odds of about 1 in 100,000. No metadata: without the rule table
# every step of a tick's walk outside the program is libunwind's.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
cd "$TMP"
build pd prog_dlsym.c gcc -O2
n=600
# 1 kHz: the parent blocks SIGPROF long before its first period ends; each
# child computes 3 ms, so its first tick lands in its loop.
VPROF_HZ=1000 VPROF_STACKS_MAX=1000 prof out timeout -s KILL 120 ./pd $n 3 10 > out.txt 2> err.txt
st=$?
cat out.txt err.txt
check "$n children calling dlsym under 1 kHz ticks, none stuck (status $st)" test $st = 0
# The test can only fail if the children's ticks walked with libunwind.
files=(out/stacks.*)
ran=$(( ${#files[@]} - 1 ))            # one file is the parent's, without ticks
unwound=0
for f in "${files[@]}"; do
    "$VPCHECK" stacks "$f" | awk '!/^#/ && and($4, 2) {f=1} END {exit !f}' && unwound=$((unwound + 1))
done
check "the children's ticks unwound with libunwind ($unwound of $ran children)" \
    test $ran -ge 1 -a $unwound -ge $((ran * 9 / 10))
finish
