#!/bin/bash
# A global's discount goes only to the functions the schema says use it
# (@uses, matched by the global's base name: `cfg` for `cfg.limit`), to every
# function that sampled it with --globals sampled (the paper's rule), or to
# none with --globals none (the paper's artifact).
. tests/lib.sh
[ -x "$VPROF_BIN/vprof-cc" ] && [ -x "$VPROF_BIN/vprof-report" ] || skip "tools not built"
cd "$TMP" || exit 1
"$VPROF_BIN/vprof-cc" -O1 -o gu "$VPROF_ROOT/tests/report/global_uses.c" 2>/dev/null \
    || { not_ok "build with vprof-cc"; finish; }
check "schema lists configure as the user of mode" \
    bash -c "readelf -p .vprof_schema gu | grep -q '@uses, .*global_uses.c, configure, mode'"
VPROF_OUT=normal ./gu 1 && VPROF_OUT=buggy ./gu 7 || not_ok "runs"
vars_of() {  # FUNCTION [report options...]: its variables, sorted, one line
    local fn=$1; shift
    "$VPROF_BIN/vprof-report" --json -q "$@" normal buggy | python3 -c "
import json, sys
for f in json.load(sys.stdin)['functions']:
    if f['name'] == '$fn': print(' '.join(sorted(v['name'] for v in f['variables'])))"
}
w=$(vars_of work)
check "work is not given mode (got '$w')" bash -c "! grep -qw mode <<< '$w'"
check "work is not given opts.level, a member of a global it does not use (got '$w')" \
    bash -c "! grep -qw opts.level <<< '$w'"
check "work is given cfg.limit: @uses names the base cfg (got '$w')" grep -qw cfg.limit <<< "$w"
w_all=$(vars_of work --globals sampled)
check "--globals sampled: work takes mode (got '$w_all')" grep -qw mode <<< "$w_all"
w_old=$(vars_of work --all-global-users)
check "--all-global-users is --globals sampled" test "$w_old" = "$w_all"
w_none=$(vars_of work --globals none)
check "--globals none: work has no global (got '$w_none')" \
    bash -c "! grep -Eqw 'mode|opts.level|cfg.limit' <<< '$w_none'"
check "--globals bad: refused" bash -c "! '$VPROF_BIN/vprof-report' --globals every normal buggy 2>/dev/null"
finish
