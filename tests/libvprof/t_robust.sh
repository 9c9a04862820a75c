#!/bin/bash
# Robustness: 32 threads, 50 forked children, exec, metadata that points at
# unmapped memory or through a wild pointer, SIGKILL and SIGTERM mid-run.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
cd "$TMP"
build pr prog_robust.c gcc -O2
W=$(symaddr pr g_wild | cut -d' ' -f1) H=$(symaddr pr g_heap | cut -d' ' -f1)
# unmapped: 4 GiB above the stack pointer; far: an address nobody maps;
# wild: g_wild followed to 0xdead0000.
handmeta pr pr.vmeta \
    "var unmapped #global sint 8" "var far #global sint 8" "var wild #global sint 8" \
    "var heapval #global sint 8" "entry heapval 0 0x7fffffffffff addr 0 8 1 $H 0 0" \
    "entry unmapped 0 0x7fffffffffff breg 7 8 0 0x100000000" \
    "entry far 0 0x7fffffffffff addr 0 8 0 0x7ff000000000" \
    "entry wild 0 0x7fffffffffff addr 0 8 1 $W 0 0"
export VPROF_META=$PWD/pr.vmeta

# --- threads: every thread sampled on its own CPU clock; no lost counts
# (120 ms of CPU each: on a loaded machine a thread that runs in short
# slices between the kernel's ticks is signalled rarely, with overruns;
# at 60 ms a thread with no sample at all was seen at load 45 on 2 cores)
prof thr ./pr threads 32 120 > thr.txt
check "32 threads: program ran to the end" grep -qx done thr.txt
v=$(one "thr/values.*") l=$(one "thr/layout.*") g=$(one "thr/gmon.*.out")
tids=$("$VPCHECK" values "$v" | awk '!/^#/{print $5}' | sort -u | wc -l)
check "32 threads: samples from every thread ($tids threads)" test "$tids" -ge 32
values_of "$v" "$l" g_phase > g.txt
check "32 threads: g_phase values legal" awk '$1<1||$1>2{b=1}END{exit b}' g.txt
read -r b bs < <(symaddr pr burn)
n=$("$VPCHECK" arcs "$g" | awk -v lo=$((b)) -v hi=$((b + bs)) \
    '{s=strtonum($2)} s>=lo && s<hi {n+=$3} END{print n+0}')
check "32 threads: burn() counted exactly 32 times, no call lost ($n)" test "$n" = 32

# --- faults: unmapped and wild reads are skipped and counted, no crash
"$VPCHECK" values "$v" | head -1 > hdr.txt
faults=$(sed -n 's/.*faults=\([0-9]*\).*/\1/p' hdr.txt)
check "unmapped and wild-pointer reads counted as faults ($faults)" test "$faults" -gt 0
for var in unmapped far wild; do
    check "no sample recorded for $var" test -z "$(values_of "$v" "$l" $var)"
done
values_of "$v" "$l" heapval > h.txt
check "heap value read through a pointer: always 42 ($(wc -l < h.txt))" \
    awk 'NR>0{n++} $1!=42{b=1} END{exit b || !n}' h.txt

# --- the same faults through the pipe fallback (no process_vm_readv)
VPROF_READ=pipe prof pip ./pr spin 200 > pip.txt
check "pipe reads: program unharmed" grep -qx done pip.txt
v=$(one "pip/values.*") l=$(one "pip/layout.*")
faults=$("$VPCHECK" values "$v" | head -1 | sed -n 's/.*faults=\([0-9]*\).*/\1/p')
check "pipe reads: faults counted ($faults)" test "${faults:-0}" -gt 0
values_of "$v" "$l" g_phase > g.txt
check "pipe reads: g_phase still read right" awk '$1!=2{b=1}END{exit b}' g.txt
values_of "$v" "$l" heapval > h.txt
check "pipe reads: heap value through the pipe, always 42 ($(wc -l < h.txt))" \
    awk 'NR>0{n++} $1!=42{b=1} END{exit b || !n}' h.txt
check "pipe reads: nothing read through the wild pointer" test -z "$(values_of "$v" "$l" wild)"

# --- fork: 50 children, each with its own files and a fresh profile
prof frk ./pr fork 50 40 > frk.txt
check "fork 50: parent ran to the end, all children exited 0" grep -qx done frk.txt
check "fork 50: 51 layout logs" test "$(ls frk/layout.* | wc -l)" = 51
check "fork 50: 51 value files" test "$(ls frk/values.* | wc -l)" = 51
check "fork 50: 51 gmon files" test "$(ls frk/gmon.*.out | wc -l)" = 51
parent=$(for f in frk/layout.*; do "$VPCHECK" layout $f; done | awk '{print $5, $6}' |
    awk '{pid[$1]=1; pp[NR]=$2} END{for(i in pp) if(pp[i] in pid) n++; print n+0}')
check "fork 50: 50 logs name the parent as ppid ($parent)" test "$parent" = 50
ends=$(for f in frk/layout.*; do "$VPCHECK" layout $f; done | awk '$2==1' | wc -l)
check "fork 50: every process closed its layout log" test "$ends" = 51
fresh=0
for f in frk/gmon.*.out; do
    c=$("$VPCHECK" arcs $f | awk -v lo=$((b)) -v hi=$((b + bs)) \
        '{s=strtonum($2)} s>=lo && s<hi {n+=$3} END{print n+0}')
    [ "$c" -le 1 ] && fresh=$((fresh + 1))
done
check "fork 50: children start afresh (burn() counted at most once per file)" test $fresh = 51
ch3=0
for f in frk/values.*; do
    id=${f#frk/values.}
    if values_of "$f" "frk/layout.$id" g_phase | grep -qx 3; then ch3=$((ch3 + 1)); fi
done
check "fork 50: children's own samples (g_phase = 3) in their files ($ch3)" test $ch3 -ge 40

# --- exec: same pid, new image, new id, nothing overwritten
prof exc ./pr exec 30 > exc.txt
check "exec: the new image ran" grep -qx done exc.txt
check "exec: two layout logs (<pid> and <pid>.1)" test "$(ls exc/layout.* | wc -l)" = 2
check "exec: <pid>.1 used for the new image" test -n "$(ls exc/layout.*.1)"

# --- SIGKILL: the samples taken so far are on disk
VPROF_OUT=kil LD_PRELOAD=$LIBVPROF ./pr spin 5000 > /dev/null &
pid=$!
sleep 1.5
kill -KILL $pid; wait $pid 2>/dev/null
v=$(one "kil/values.*") l=$(one "kil/layout.*")
"$VPCHECK" values "$v" > kil.txt
check "SIGKILL: values file readable" test $? -eq 0
n=$(grep -vc '^#' kil.txt)
check "SIGKILL: samples survive ($n)" test "$n" -gt 10
values_of "$v" "$l" g_phase > g.txt
check "SIGKILL: surviving samples are sound" awk '$1!=2{b=1}END{exit b}' g.txt
check "SIGKILL: layout log has no end line" test "$("$VPCHECK" layout "$l" | cut -d' ' -f2)" = 0

# --- SIGTERM: dies by the signal, histogram and arcs written first
VPROF_OUT=trm LD_PRELOAD=$LIBVPROF ./pr spin 5000 > /dev/null &
pid=$!
sleep 1.5
kill -TERM $pid; wait $pid; st=$?
check "SIGTERM: process still dies by SIGTERM (status $st)" test $st = 143
g=$(one "trm/gmon.*.out")
check "SIGTERM: gmon written" test -n "$g"
read -r _ _ _ _ tot < <("$VPCHECK" hist "$g")
check "SIGTERM: histogram has the ticks ($tot)" test "${tot:-0}" -gt 10
check "SIGTERM: layout log closed" test "$("$VPCHECK" layout "$(one 'trm/layout.*')" | cut -d' ' -f2)" = 1
check "SIGTERM: values closed cleanly" grep -q "clean=1" <("$VPCHECK" values "$(one 'trm/values.*')" | head -1)
finish
