#!/bin/bash
# A global's discount goes only to the functions the schema says use it
# (@uses), unless --all-global-users asks for the paper's rule.
. tests/lib.sh
[ -x "$VPROF_BIN/vprof-cc" ] && [ -x "$VPROF_BIN/vprof-report" ] || skip "tools not built"
cd "$TMP" || exit 1
"$VPROF_BIN/vprof-cc" -O1 -o gu "$VPROF_ROOT/tests/report/global_uses.c" 2>/dev/null \
    || { not_ok "build with vprof-cc"; finish; }
check "schema lists configure as the user of mode" \
    bash -c "readelf -p .vprof_schema gu | grep -q '@uses, .*global_uses.c, configure, mode'"
VPROF_OUT=normal ./gu 1 && VPROF_OUT=buggy ./gu 7 || not_ok "runs"
var_of() {  # FUNCTION [report options...]
    local fn=$1; shift
    "$VPROF_BIN/vprof-report" --json -q "$@" normal buggy | python3 -c "
import json, sys
for f in json.load(sys.stdin)['functions']:
    if f['name'] == '$fn': print(f['variable'] or '-')"
}
w=$(var_of work); c=$(var_of configure)
check "work is not blamed for mode (got '$w')" test "$w" != mode
w_all=$(var_of work --all-global-users)
check "--all-global-users: work takes mode's discount (got '$w_all')" test "$w_all" = mode
finish
