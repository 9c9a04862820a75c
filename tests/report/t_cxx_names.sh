#!/bin/bash
# Demangling and the short forms of C++ names for narrow columns
# (tests/report/cxx_names.c), built from source with ASan and UBSan, with
# libiberty as vprof-report links it (and the format module's hash and
# checked allocation). The names of a real C++ program (the
# router fixture, built with g++ -O0: every template instance is a symbol)
# check the widths.
source "$(dirname "$0")/../lib.sh"
gcc -std=c11 -D_GNU_SOURCE -Wall -Wextra -O1 -g -fsanitize=address,undefined \
    -fno-sanitize-recover=undefined -I"$VPROF_ROOT/vprof-report" -I"$VPROF_ROOT/libvprof/format" \
    "$VPROF_ROOT/tests/report/cxx_names.c" "$VPROF_ROOT/vprof-report/demangle.c" \
    "$VPROF_LIB/libvprof-format.a" -liberty \
    -o "$TMP/names" || { echo "not ok - the names test builds (libiberty-dev installed?)"; exit 1; }
S=$VPROF_ROOT/tests/report/router
g++ -std=gnu++17 -O0 -g -o "$TMP/router" "$S/main.cc" "$S/router.cc" "$S/route.cc" ||
    { echo "not ok - g++ builds the router fixture"; exit 1; }
"$TMP/names" $(nm "$TMP/router" | awk '$2 ~ /^[tTwW]$/ {print $3}')
