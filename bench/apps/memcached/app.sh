#!/bin/bash
# bench/apps/memcached hooks for bench/apps/run.py (see bench/apps/README.md):
#   app.sh build TREE                 configure (once) and make memcached in
#                                     TREE (CC, CFLAGS, LDFLAGS, JOBS)
#   app.sh run TREE WORKLOAD RUNDIR   start TREE's memcached (4 worker
#                                     threads) in RUNDIR with env $PROG_ENV and
#                                     wrapper $PROG_WRAP on port $PORT, drive
#                                     it with mc_load (per WORKLOAD below),
#                                     write mc_load's digest to RUNDIR/out.txt
#                                     and shut the server down
# Workloads (ITEMS CONNS GETS BATCH of mc_load):
#   items-small   50,000 items, 1 connection, 6,000 gets of 100 keys
#   items-large   800,000 items, 1 connection, 6,000 gets of 100 keys
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
case "${1:-}" in
build)
    cd "$2"
    [ -f Makefile ] || ./configure --disable-extstore --disable-sasl --disable-tls \
        --disable-docs CC="$CC" CFLAGS="$CFLAGS" LDFLAGS="$LDFLAGS"
    exec make -j"${JOBS:-2}" memcached ;;
run)
    tree=$2 workload=$3 dir=$4
    case $workload in
        items-small) args="50000 1 6000 100" ;;
        items-large) args="800000 1 6000 100" ;;
        *) echo "memcached/app.sh: unknown workload $workload" >&2; exit 2 ;;
    esac
    load=$APP_WORK/inputs/mc_load
    if [ ! -x "$load" ] || [ "$HERE/mc_load.c" -nt "$load" ]; then
        mkdir -p "$APP_WORK/inputs"
        gcc -O2 -Wall -Wextra -pthread -o "$load" "$HERE/mc_load.c"
    fi
    cd "$dir"
    # -A: the client's "shutdown" ends the server through its normal exit path
    # (profiles are written at exit); -u root: the benchmark may run as root
    eval "env $PROG_ENV $PROG_WRAP \"\$tree/memcached\" -A -u root -l 127.0.0.1 -p $PORT \
        -U 0 -t 4 -m 1024 -c 256" > server.log 2>&1 &
    server=$!
    rc=0
    # shellcheck disable=SC2086
    "$load" "$PORT" $args shutdown > out.txt || rc=$?
    [ $rc -eq 0 ] || kill "$server" 2>/dev/null || true
    wait "$server" || rc=$?
    exit $rc ;;
*)
    echo "usage: app.sh build TREE | run TREE WORKLOAD RUNDIR" >&2; exit 2 ;;
esac
