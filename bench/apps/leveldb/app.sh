#!/bin/bash
# bench/apps/leveldb hooks for bench/apps/run.py (see bench/apps/README.md):
#   app.sh build TREE                 cmake (once) and make db_bench in
#                                     TREE/build (CC, CXX, CXXFLAGS, LDFLAGS,
#                                     JOBS from the environment)
#   app.sh run TREE WORKLOAD RUNDIR   run TREE's db_bench on a fresh database
#                                     in RUNDIR (env $PROG_ENV, wrapper
#                                     $PROG_WRAP); out.txt gets what does not
#                                     depend on timing: the read benchmark's
#                                     "N of M found" and dbsum's digest of the
#                                     whole database
# Workloads (db_bench arguments; 100-byte values, no compression library):
#   fill-bigvals fillrandom,readrandom  --num=20000 --value_size=2000
#   fill-mid     fillrandom,readrandom  --num=100000
#   read-small   fillseq,readrandom     --num=60000   --reads=20000 --open_files=200
#   read-large   fillseq,readrandom     --num=1000000 --reads=20000 --open_files=200
# dbsum is built once from dbsum.cc against the unpatched plain build
# ($APP_WORK/builds/plain/base, the driver's layout).
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
case "${1:-}" in
build)
    cd "$2"
    if [ ! -f build/Makefile ]; then
        cmake -S . -B build -DCMAKE_BUILD_TYPE=None -DBUILD_SHARED_LIBS=OFF \
            -DLEVELDB_BUILD_TESTS=OFF -DLEVELDB_BUILD_BENCHMARKS=ON \
            -DCMAKE_C_COMPILER="$CC" -DCMAKE_CXX_COMPILER="$CXX" \
            -DCMAKE_C_FLAGS="$CFLAGS" -DCMAKE_CXX_FLAGS="$CXXFLAGS" \
            -DCMAKE_EXE_LINKER_FLAGS="$LDFLAGS"
    fi
    exec make -C build -j"${JOBS:-2}" db_bench ;;
run)
    tree=$2 workload=$3 dir=$4
    case $workload in
        fill-bigvals) args="--benchmarks=fillrandom,readrandom --num=20000 --value_size=2000" ;;
        fill-mid) args="--benchmarks=fillrandom,readrandom --num=100000" ;;
        read-small) args="--benchmarks=fillseq,readrandom --num=60000 --reads=20000 --open_files=200" ;;
        read-large) args="--benchmarks=fillseq,readrandom --num=1000000 --reads=20000 --open_files=200" ;;
        *) echo "leveldb/app.sh: unknown workload $workload" >&2; exit 2 ;;
    esac
    sum=$APP_WORK/inputs/dbsum base=$APP_WORK/builds/plain/base
    if [ ! -x "$sum" ] || [ "$HERE/dbsum.cc" -nt "$sum" ]; then
        mkdir -p "$APP_WORK/inputs"
        g++ -O2 -std=c++17 -I"$base/include" -o "$sum" "$HERE/dbsum.cc" \
            "$base/build/libleveldb.a" -pthread
    fi
    cd "$dir"
    # shellcheck disable=SC2086
    eval "env $PROG_ENV $PROG_WRAP \"\$tree/build/db_bench\" --db=\"\$dir/db\" $args" > bench.txt
    { grep -o '([0-9]* of [0-9]* found)' bench.txt || true; "$sum" "$dir/db"; } > out.txt ;;
*)
    echo "usage: app.sh build TREE | run TREE WORKLOAD RUNDIR" >&2; exit 2 ;;
esac
