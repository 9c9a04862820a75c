#!/bin/bash
# A program that uses SIGPROF itself (its own handler driven by
# setitimer, blocking SIGPROF, SIG_IGN) runs exactly as without vprof, and
# vprof keeps sampling it.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
cd "$TMP"
build ps prog_signals.c gcc -O1
./ps > plain.txt
check "program passes its own checks without vprof" grep -q '^ok' plain.txt
prof out ./ps > vp.txt
st=$?
cat vp.txt
check "program passes its own checks under vprof (status $st)" test $st = 0
check "program saw its own ITIMER_PROF signals, held and delivered on unblock" grep -q '^ok' vp.txt
read -r _ _ _ _ tot < <("$VPCHECK" hist "$(one 'out/gmon.*.out')")
check "vprof kept sampling while the program used SIGPROF ($tot ticks)" test "${tot:-0}" -gt 5

# A program whose SIGTERM handler exits normally: vprof steps aside, the
# handler runs, _mcleanup writes everything.
cat > term.c <<'C'
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>
static void bye(int s) { (void)s; exit(7); }
int main(void) { signal(SIGTERM, bye); for (;;) pause(); }
C
gcc -pg -g -o term term.c
VPROF_OUT=tout LD_PRELOAD=$LIBVPROF ./term &
pid=$!
sleep 0.5; kill -TERM $pid; wait $pid; st=$?
check "program's own SIGTERM handler ran (status $st)" test $st = 7
check "gmon written through exit()" test -n "$(one 'tout/gmon.*.out')"
finish
