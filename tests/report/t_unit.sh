#!/bin/bash
# Unit tests of the analysis steps (tests/report/unit_report.c), linked with
# vprof-report's own objects from the build.
source "$(dirname "$0")/../lib.sh"
OBJ=$VPROF_ROOT/build/obj/vprof-report
objs=$(ls "$OBJ"/*.o 2>/dev/null | grep -v '/main\.o$')
[ -n "$objs" ] || { echo "not ok - vprof-report objects not built (make)"; exit 1; }
objs="$objs $VPROF_ROOT/build/obj/dwarf-meta/ranges.o $VPROF_ROOT/build/obj/dwarf-meta/dwutil.o"   # lines.c's DIE ranges
gcc -std=c11 -D_GNU_SOURCE -Wall -Wextra -O1 -g -I"$VPROF_ROOT/vprof-report" \
    -I"$VPROF_ROOT/libvprof/format" "$VPROF_ROOT/tests/report/unit_report.c" $objs \
    "$VPROF_LIB/libvprof-format.a" -lgsl -lgslcblas -ldwarf -lelf -lz -lm -liberty \
    -o "$TMP/unit" || { echo "not ok - unit test builds"; exit 1; }
"$TMP/unit"
