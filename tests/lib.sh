# Sourced by test scripts: common helpers. Each script runs from the repo root.
set -u
: "${VPROF_ROOT:=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
: "${VPROF_BIN:=$VPROF_ROOT/build/bin}" "${VPROF_LIB:=$VPROF_ROOT/build/lib}"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/vprof-test.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
_n_fail=0
ok()     { echo "ok - $*"; }
not_ok() { echo "not ok - $*"; _n_fail=$((_n_fail + 1)); }
# check NAME CMD...: runs CMD, reports ok/not ok by its status
check()  { local n=$1; shift; if "$@"; then ok "$n"; else not_ok "$n"; fi; }
skip()   { echo "skip: $*"; exit 77; }
finish() { [ "$_n_fail" -eq 0 ]; exit $?; }
