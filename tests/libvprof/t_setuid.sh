#!/bin/bash
# A setuid program run by an unprivileged user (issue 14 item 3): the
# user's VPROF_* settings are ignored (the stack scanner's too: no scanner,
# no SCHED_FIFO, no latency file), vprof's files are created 0600, and
# nothing is written into a directory the real user could not write.
# Needs root (to make a setuid-root program) and setpriv (to run it as
# nobody).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"
[ "$(id -u)" = 0 ] || skip "needs root to create a setuid-root program and switch to nobody"
command -v setpriv >/dev/null || skip "setpriv (util-linux) not installed"
NOBODY=$(id -u nobody 2>/dev/null) || skip "no user nobody"
NOGROUP=$(id -g nobody)
# A world-traversable place (the test's own TMP is 0700) on a file system
# that honours setuid.
W=$(mktemp -d /tmp/vprof-suid.XXXXXX); trap 'rm -rf "$W" "$TMP"' EXIT
chmod 755 "$W"
ls -ld "$VPROF_LIB" >/dev/null
setpriv --reuid="$NOBODY" --regid="$NOGROUP" --clear-groups test -r "$LIBVPROF" ||
    skip "$LIBVPROF is not readable by nobody"
# Linked with libvprof (LD_PRELOAD is ignored for setuid programs), with
# its metadata beside it (the one VPROF_META a privileged process uses).
gcc -pg -g -O1 -o "$W/pr" "$SRC/prog_robust.c" -L"$VPROF_LIB" -Wl,-rpath,"$VPROF_LIB" \
    -lvprof -lpthread 2> "$W/cc.log"
check "setuid test program links with libvprof" test -x "$W/pr"
( cd "$W" && handmeta pr pr.vmeta )
chown root:root "$W/pr" && chmod 4755 "$W/pr"
mkdir "$W/rootdir" "$W/userdir" "$W/out"
chmod 755 "$W/rootdir" "$W/out"
chown "$NOBODY:$NOGROUP" "$W/userdir"

# as_nobody DIR: runs the setuid program in DIR as nobody, with settings
# that would write elsewhere, log and start a real-time scanner.
as_nobody() {
    setpriv --reuid="$NOBODY" --regid="$NOGROUP" --clear-groups \
        env VPROF_OUT="$W/out" GMON_OUT_PREFIX="$W/out/g" VPROF_META=/nonexistent \
            VPROF_LATENCY=on VPROF_SCAN_PRIO=rt VPROF_STATS=1 \
        sh -c "cd '$1' && exec '$W/pr' spin 200"
}
as_nobody "$W/userdir" > "$W/u.txt" 2> "$W/u.err"
check "setuid program runs as nobody (euid root, AT_SECURE)" grep -qx done "$W/u.txt"
check "VPROF_OUT, GMON_OUT_PREFIX ignored: nothing in the directory they name" \
    test -z "$(ls -A "$W/out")"
check "VPROF_STATS ignored" test -z "$(grep 'stats:' "$W/u.err")"
check "gmon.out written in the working directory the real user may write" test -s "$W/userdir/gmon.out"
check "values and layout written there (metadata beside the program)" \
    test -n "$(ls "$W/userdir" | grep '^values\.')" -a -n "$(ls "$W/userdir" | grep '^layout\.')"
check "VPROF_LATENCY ignored: no latency file, no scanner" \
    test -z "$(ls "$W/userdir" | grep '^latency\.')"
modes=$(stat -c '%a %n' "$W/userdir"/* | awk '{print $1}' | sort -u | tr '\n' ' ')
check "every file created 0600 ($modes)" test "$modes" = "600 "

as_nobody "$W/rootdir" > "$W/r.txt" 2> "$W/r.err"
check "in a directory only root may write: the program runs" grep -qx done "$W/r.txt"
check "... and vprof writes nothing there" test -z "$(ls -A "$W/rootdir")"
check "... and says why" grep -q 'real user may not write' "$W/r.err"

# The same program run by root itself is not privileged: usual modes.
( cd "$W/rootdir" && "$W/pr" spin 20 > /dev/null )
m=$(stat -c %a "$W/rootdir/gmon.out" 2>/dev/null)
check "run by its owner (not AT_SECURE): gmon.out mode 0666 minus umask ($m)" \
    test "$m" = "$(printf '%o' $((0666 & ~$(umask))))"
finish
