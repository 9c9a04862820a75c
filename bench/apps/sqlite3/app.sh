#!/bin/bash
# bench/apps/sqlite3 hooks for bench/apps/run.py (see bench/apps/README.md):
#   app.sh build TREE                 configure (once) and make the sqlite3
#                                     shell in TREE (CC, CFLAGS, LDFLAGS, JOBS)
#   app.sh run TREE WORKLOAD RUNDIR   run the shell on the WORKLOAD's SQL
#                                     (gen.sh) in RUNDIR, with env $PROG_ENV
#                                     and wrapper $PROG_WRAP; query results to
#                                     RUNDIR/out.txt
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
case "${1:-}" in
build)
    cd "$2"
    # no amalgamation: the schema can be limited to single source files
    if [ ! -f Makefile ]; then
        ./configure --disable-amalgamation --disable-tcl --disable-readline \
            --disable-shared --disable-load-extension \
            CC="$CC" CFLAGS="$CFLAGS" LDFLAGS="$LDFLAGS"
    fi
    exec make -j"${JOBS:-2}" sqlite3 ;;
run)
    tree=$2 workload=$3 dir=$4
    in=$APP_WORK/inputs/$workload.sql
    if [ ! -s "$in" ]; then
        mkdir -p "$APP_WORK/inputs"
        "$HERE/gen.sh" "$workload" > "$in.tmp" && mv "$in.tmp" "$in"
    fi
    db=$(head -1 "$in" | sed -n 's/^-- database: //p')
    cd "$dir"
    eval "env $PROG_ENV $PROG_WRAP \"\$tree/sqlite3\" \"\${db:-:memory:}\"" < "$in" > out.txt ;;
*)
    echo "usage: app.sh build TREE | run TREE WORKLOAD RUNDIR" >&2; exit 2 ;;
esac
