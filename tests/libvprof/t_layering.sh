#!/bin/bash
# The runtime's layering (issue 14 item 7), checked on the built objects:
# runtime.c owns the lifecycle and calls down; signals.c and threads.c
# never call back into it (they may read the shell's state, vprof_sh); the
# stack scanner reaches the runtime only through what hooks.h hands it
# (no symbol of libvprof's shell or core); the sampling core uses nothing
# of the shell.
. "$(dirname "$0")/../lib.sh"
O=$VPROF_ROOT/build/obj
[ -f "$O/libvprof/runtime.o" ] || skip "libvprof not built (make)"
cd "$O"
defs()  { nm --defined-only "$@" 2>/dev/null | awk '$2 ~ /[TDBRVW]/ {print $3}' | sort -u; }
undef() { nm -u "$@" 2>/dev/null | awk '{print $2}' | sort -u; }
shell="libvprof/runtime.o libvprof/signals.o libvprof/threads.o libvprof/callgraph.o
       libvprof/config.o libvprof/exeinfo.o libvprof/session.o libvprof/mcount.o"
core="libvprof/core.o libvprof/vartable.o libvprof/value_read.o libvprof/memread.o libvprof/unwind.o"
scanner=$(ls stack-scanner/rt/*.o)

for o in signals threads; do
    up=$(comm -12 <(undef libvprof/$o.o) <(defs libvprof/runtime.o) | grep -vx vprof_sh | tr "\n" " ")
    check "$o.c calls nothing of runtime.c (${up:-none})" test -z "$up"
done
for o in callgraph config exeinfo session; do
    up=$(comm -12 <(undef libvprof/$o.o) <(defs libvprof/runtime.o libvprof/signals.o libvprof/threads.o) | tr "\n" " ")
    check "$o.c uses nothing of runtime.c, signals.c, threads.c (${up:-none})" test -z "$up"
done
# shellcheck disable=SC2086
up=$(comm -12 <(undef $scanner) <(defs $shell $core) | tr '\n' ' ')
check "the stack scanner uses no symbol of libvprof's shell or core (${up:-none})" test -z "$up"
# shellcheck disable=SC2086
up=$(comm -12 <(undef $core) <(defs $shell) | tr '\n' ' ')
check "the sampling core uses nothing of the shell (${up:-none})" test -z "$up"
grep -q 'struct vprof_rt_services' "$VPROF_ROOT/libvprof/hooks.h"
check "hooks.h declares what the runtime gives the scanner" test $? = 0
finish
