#!/bin/bash
# moncontrol() switches vprof's histogram and arcs like glibc's, and a
# program calling profil() itself gets its buffer filled.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
cd "$TMP"
build pc prog_control.c gcc -O1
prof out ./pc mon
check "moncontrol program ran" test $? = 0
g=$(one 'out/gmon.*.out')
gprof -b -p pc "$g" > flat.txt 2>&1
cat flat.txt
on=$(awk '$NF=="on_part"{print $3}' flat.txt)
check "ticks counted while on ($on s in on_part)" awk -v v="${on:-0}" 'BEGIN{exit !(v > 0)}'
check "no tick counted while moncontrol(0)" test -z "$(awk '$NF=="off_part" && $3 > 0' flat.txt)"
check "no call counted while moncontrol(0)" test -z "$("$VPCHECK" arcs "$g" | awk -v a="$(symaddr pc off_part | cut -d' ' -f1)" '$2 >= strtonum(a) && $2 < strtonum(a) + 32')"

gcc -O1 -g -o pn "$SRC/prog_control.c"
LD_PRELOAD=$LIBVPROF ./pn profil > pn.txt
st=$?
cat pn.txt
check "profil() buffer filled by vprof's ticks, and stops with profil(NULL) (status $st)" test $st = 0
finish
