#!/bin/bash
# bench/apps/redis hooks for bench/apps/run.py (see bench/apps/README.md):
#   app.sh build TREE                 make redis-server in TREE (CC, CFLAGS,
#                                     LDFLAGS, JOBS from the environment)
#   app.sh run TREE WORKLOAD RUNDIR   start TREE's redis-server in RUNDIR
#                                     (env $PROG_ENV, wrapper $PROG_WRAP, port
#                                     $PORT), send the WORKLOAD's command stream
#                                     (gen.py), write the replies' digest to
#                                     RUNDIR/out.txt, shut the server down
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
case "${1:-}" in
build)
    # libc malloc: the allocator is not what is measured; no LTO (-O2 given)
    exec make -C "$2/src" -j"${JOBS:-2}" MALLOC=libc USE_SYSTEMD=no BUILD_TLS=no \
        OPTIMIZATION= CC="$CC" CFLAGS="$CFLAGS" LDFLAGS="$LDFLAGS" redis-server ;;
run)
    tree=$2 workload=$3 dir=$4
    in=$APP_WORK/inputs/$workload.resp
    if [ ! -s "$in" ]; then
        mkdir -p "$APP_WORK/inputs"
        python3 "$HERE/gen.py" "$workload" > "$in.tmp" && mv "$in.tmp" "$in"
    fi
    cd "$dir"
    # shellcheck disable=SC2086  # PROG_ENV is K=V words, PROG_WRAP shell-quoted
    eval "env $PROG_ENV $PROG_WRAP \"\$tree/src/redis-server\" --port $PORT --bind 127.0.0.1 \
        --save '' --appendonly no --daemonize no --logfile server.log" &
    server=$!
    rc=0
    python3 "$HERE/../lib/resp_client.py" "$PORT" "$in" out.txt --shutdown || rc=$?
    [ $rc -eq 0 ] || kill "$server" 2>/dev/null || true
    wait "$server" || rc=$?
    exit $rc ;;
*)
    echo "usage: app.sh build TREE | run TREE WORKLOAD RUNDIR" >&2; exit 2 ;;
esac
