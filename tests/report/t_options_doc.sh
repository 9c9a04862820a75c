#!/bin/bash
# Every option vprof-report --help lists (the rows of cli.c) is documented in
# docs/vprof-report.md and in the man page: a new knob cannot ship without
# its default written down.
source "$(dirname "$0")/../lib.sh"
R=$VPROF_BIN/vprof-report
[ -x "$R" ] || skip "vprof-report not built"
opts=$("$R" --help | grep -oE '^ +(-[a-zA-Z], )?--[a-z][a-z0-9-]*' | sed 's/.*--//' | sort -u)
[ -n "$opts" ] || { echo "not ok - --help lists options"; exit 1; }
ok "--help lists $(echo "$opts" | wc -l) options"
DOC=$VPROF_ROOT/docs/vprof-report.md MAN=$VPROF_ROOT/vprof-report/vprof-report.1
for o in $opts; do
    check "--$o in docs/vprof-report.md" grep -qF -- "--$o" "$DOC"
    esc=$(printf '%s' "$o" | sed 's/-/\\-/g')
    check "--$o in vprof-report.1" grep -qF -- "\\-\\-$esc" "$MAN"
done
