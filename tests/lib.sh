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

# pyrank FILE CODE: runs python CODE with d (vprof-report's JSON in FILE),
# F (its functions by name) and r (their ranks by name): the checks of the
# report tests that place one function after another.
pyrank() {
    python3 -c "import json
d = json.load(open('$1')); F = {f['name']: f for f in d['functions']}
r = {f['name']: f['rank'] for f in d['functions']}
$2"
}
