#!/bin/bash
# Every output file is created exclusively (issue 14 item 4): a hard link
# or symlink planted under the name a process will use is never written
# through. Names of this process's files that are taken give a new id
# (<pid>.1); gmon.out and $GMON_OUT_PREFIX.<pid> (glibc's names, which a
# new run replaces) are unlinked and created anew; files reopened at exit
# are only written if they are still the ones vprof created.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
cd "$TMP"
build pr prog_robust.c gcc -O1
handmeta pr pr.vmeta
export VPROF_META=$PWD/pr.vmeta
echo precious > victim

# intact: the victim still holds its one line (not truncated, overwritten
# or appended to); unplant: remove every link to it but itself.
intact() { test "$(cat victim)" = precious; }
unplant() { find . -samefile victim ! -name victim -delete; echo precious > victim; }
# plant DIR NAME...: hard links to the victim under NAME ($$ = the pid)
# and, for latency, a symlink; then exec the program (same pid).
V=$PWD/victim
run_planted() {
    local dir=$1 names=
    shift
    while [ "$1" != -- ]; do names="$names $1"; shift; done
    shift
    VPROF_LATENCY=on sh -c '
        for n in '"$names"'; do ln "'"$V"'" "'"$dir"'/$(echo $n | sed "s/PID/$$/")"; done
        ln -s "'"$V"'" "'"$dir"'/latency.$$"
        echo $$ > pid.txt
        exec env LD_PRELOAD="'"$LIBVPROF"'" "$@"' sh "$@" > /dev/null 2> "$dir.err"
}

# --- with VPROF_OUT: every name of <pid> is taken, the run uses <pid>.1
mkdir out
VPROF_OUT=out run_planted out layout.PID values.PID gmon.PID.out -- ./pr spin 50
pid=$(cat pid.txt)
check "VPROF_OUT: planted hard links (layout, values, gmon) and symlink (latency) not written through" \
    intact
check "VPROF_OUT: the process took a new id ($pid.1) for all its files" \
    test -s "out/layout.$pid.1" -a -s "out/values.$pid.1" -a -s "out/gmon.$pid.1.out" \
         -a -s "out/latency.$pid.1"
check "VPROF_OUT: its files are complete" test "$("$VPCHECK" layout "out/layout.$pid.1" | cut -d' ' -f1,2)" = "ok 1"
unplant
VPROF_OUT=out run_planted out gmon.PID.out -- ./pr spin 50
pid=$(cat pid.txt)
check "VPROF_OUT: a planted gmon.<pid>.out alone is not written through either" intact
check "VPROF_OUT: ... and the run's files use <pid>.1" test -s "out/gmon.$pid.1.out" -a -s "out/layout.$pid.1"
unplant

# --- without VPROF_OUT: gmon.out replaced, layout/values of <pid> get <pid>.1
mkdir cwd && cd cwd && ln ../victim gmon.out && cd ..
(cd cwd && VPROF_OUT= run_planted . layout.PID values.PID -- ../pr spin 50)
pid=$(cat cwd/pid.txt)
check "no VPROF_OUT: planted gmon.out, layout, values links not written through" intact
check "no VPROF_OUT: gmon.out replaced by this run's profile (a new file)" \
    test "$(stat -c %h cwd/gmon.out)" = 1 -a -n "$("$VPCHECK" hist cwd/gmon.out)"
check "no VPROF_OUT: layout and values under <pid>.1" \
    test -s "cwd/layout.$pid.1" -a -s "cwd/values.$pid.1"
unplant

# --- GMON_OUT_PREFIX: <prefix>.<pid> planted
mkdir pre
(cd pre && VPROF_OUT= GMON_OUT_PREFIX=prof run_planted . prof.PID -- ../pr spin 50)
pid=$(cat pre/pid.txt)
check "GMON_OUT_PREFIX: planted prof.<pid> link not written through" intact
check "GMON_OUT_PREFIX: prof.<pid> is this run's profile" \
    test "$(stat -c %h "pre/prof.$pid")" = 1 -a -n "$("$VPCHECK" hist "pre/prof.$pid")"
unplant

# --- a name swapped for a link during the run: not reopened at exit
VPROF_OUT=swap LD_PRELOAD=$LIBVPROF ./pr spin 3000 > /dev/null 2>&1 &
pid=$!
for ((i = 0; i < 200; i++)); do [ -s "swap/values.$pid" ] && break; sleep 0.05; done
sleep 0.3
rm -f "swap/layout.$pid" "swap/values.$pid"
ln victim "swap/layout.$pid"; ln victim "swap/values.$pid"
wait $pid
check "layout and values swapped for links during the run: nothing appended or truncated at exit" \
    intact
finish
