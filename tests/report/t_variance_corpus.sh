#!/bin/bash
# vprof-report --variance on the three variance cases of the bug corpus
# (bench/variance/cases/var_*, case.conf key `variance_shape`), built with vprof-cc --latency
# and run as their case.conf says:
#   lock_tail      a lock wait in ~1 % of the requests makes the tail: the lock
#                  holder's function is the top factor, under the mutex wait
#   inherent       the handler's time grows with its input: labelled inherent
#   queue_handoff  the latency is queueing behind the consumer thread: the top
#                  factor hangs under [queued] (the walk followed the hand-off)
# Timing: on an oversubscribed machine a runnable thread waits for a CPU, and
# that wait counts as the time of whatever it was running (VProfiler §3.3.2
# has the same limit); it would drown the planted variance. The workloads
# therefore run as SCHED_FIFO (chrt -f 1) when that is permitted; otherwise
# the variance checks are skipped when the load average exceeds the CPU count.
source "$(dirname "$0")/../lib.sh"
R=$VPROF_BIN/vprof-report CC=$VPROF_BIN/vprof-cc
[ -x "$CC" ] && [ -e "$VPROF_LIB/libvprof.so" ] && [ -e "$VPROF_LIB/vprof-latency.so" ] ||
    skip "vprof-cc, libvprof or the latency pass not built"
command -v python3 > /dev/null || skip "python3 not installed"
cd "$TMP"
RUN=()
if command -v chrt > /dev/null && chrt -f 1 true 2> /dev/null; then
    RUN=(chrt -f 1)
    echo "# workloads run as SCHED_FIFO 1"
fi
ncpu=$(nproc)
load=$(cut -d' ' -f1 /proc/loadavg)
# The shapes are latency shapes: the runs must not queue behind other work.
# SCHED_FIFO protects them from ordinary tasks, not from a loaded virtual
# machine (var_inherent's R² fell from 0.41 to 0.28 with make test and a
# benchmark beside it), so above twice as many runnable tasks as CPUs the
# checks are skipped; the load average is read again when they run, and
# the larger counts.
quiet_enough() {
    local now limit
    now=$(cut -d' ' -f1 /proc/loadavg)
    limit=$ncpu
    [ ${#RUN[@]} -gt 0 ] && limit=$((2 * ncpu))
    awk -v a="$load" -v b="$now" -v n="$limit" 'BEGIN { exit !(a <= n && b <= n) }'
}

# One case: build, both runs, the report and its shape checks (a subshell:
# case.conf is sourced into it).
run_case() {
    local dir=$1 case_name
    case_name=$(basename "$dir")
    ( # case.conf is source-able: KEY=VALUE lines
        source "$dir/case.conf"
        [ -n "${variance_shape:-}" ] || { echo "not ok - $case_name: case.conf has no variance_shape"; exit 1; }
        "$CC" $vprof_cc_flags -O2 -g -fno-inline -Wall -Wextra -pthread -o "$case_name" \
            "$dir"/*.c > "$case_name.cc.log" 2>&1 ||
            { cat "$case_name.cc.log"; echo "not ok - $case_name: builds with vprof-cc"; exit 1; }
        for side in normal buggy; do
            args_var=${side}_args
            rm -rf "$case_name.$side"
            env VPROF_OUT="$case_name.$side" $vprof_env "${RUN[@]}" "./$case_name" ${!args_var} \
                > "$case_name.$side.out" 2>&1 ||
                { cat "$case_name.$side.out"; echo "not ok - $case_name: $side run"; exit 1; }
        done
        echo "ok - $case_name: built with vprof-cc $vprof_cc_flags, both workloads ran"
        "$R" --variance --json "$case_name.normal" "$case_name.buggy" > "$case_name.json" 2> "$case_name.err" ||
            { cat "$case_name.err"; echo "not ok - $case_name: vprof-report --variance"; exit 1; }
        "$R" --variance "$case_name.normal" "$case_name.buggy" > "$case_name.txt" 2>&1
        echo "ok - $case_name: vprof-report --variance exit 0"
        if ! quiet_enough; then
            echo "skip: $case_name: shape checks need a load average <= $ncpu, or <= $((2 * ncpu)) under SCHED_FIFO (it was $load, is $(cut -d' ' -f1 /proc/loadavg))"
            exit 0
        fi
        python3 - "$case_name.json" "$variance_shape" "$root_cause" "$cost_function" <<'PY' || { sed -n '1,40p' "$case_name.txt"; exit 1; }
import json, sys
d, shape, root, cost = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3], sys.argv[4]
nodes = {n["id"]: n for n in d["nodes"]}
top = [f for f in d["factors"] if f["top"]]
base = lambda name: name[:-len(" (self)")] if name.endswith(" (self)") else name
def ancestors(n):
    while n["parent"] >= 0:
        n = nodes[n["parent"]]
        yield n
def under(fname, typ):
    """share of the factor's variance (buggy) in its nodes below a node of type typ"""
    ns = [n for n in d["nodes"] if n["name"] == fname and not n["leaf_body"]]
    tot = sum(n["buggy"]["var_us2"] for n in ns)
    return sum(n["buggy"]["var_us2"] for n in ns if any(a["type"] == typ for a in ancestors(n))) / tot
def check(ok, what):
    print(("ok - " if ok else "not ok - ") + sys.argv[1][:-5] + ": " + what)
    return ok
good = check(len(top) >= 1, "a top factor is selected")
if not good: sys.exit(1)
t = top[0]
buggy = [s for s in d["sides"] if s["name"] == "buggy"][0]
if shape == "lock_tail":
    good &= check(base(t["name"]) in (root, cost),
                  "top factor %s is the lock holder's (%s or its %s)" % (t["name"], root, cost))
    good &= check(t["contribution"] >= 0.5, "it explains %.0f %% of the variance" % (100 * t["contribution"]))
    good &= check(under(t["name"], "mutex") >= 0.9,
                  "it hangs under the mutex wait (edge to the holder)")
    waits = [n for n in d["nodes"] if n["type"] == "mutex"]
    frac = max(n["buggy"]["present"] for n in waits) / buggy["intervals"]
    good &= check(0.001 <= frac <= 0.05, "the wait is in %.1f %% of the requests" % (100 * frac))
elif shape == "inherent":
    good &= check(base(t["name"]) in (root, cost), "top factor %s is the handler (%s or its %s)"
                  % (t["name"], root, cost))
    good &= check(t["inherent"] is True, "it is labelled inherent (R² %.2f with the work)" % t["r2"])
    good &= check(buggy["work"]["r2"] >= 0.5, "the work explains %.0f %% of the latency variance"
                  % (100 * buggy["work"]["r2"]))
elif shape == "queue_handoff":
    good &= check(base(t["name"]) in (root, cost), "top factor %s is the consumer's %s or its %s"
                  % (t["name"], root, cost))
    # measured live: on a loaded 2-CPU machine the scheduler's own delays
    # in the hand-off take a third to a half of the variance (0.33-0.49
    # seen at load 4-6, above 0.6 when quiet); the factor stays the top one
    good &= check(t["contribution"] >= 0.25, "it explains %.0f %% of the variance" % (100 * t["contribution"]))
    good &= check(under(t["name"], "queued") >= 0.9,
                  "it hangs under [queued]: the walk followed the hand-off to the consumer")
    ch = d["changed"] or []
    good &= check(bool(ch) and base(ch[0]["name"]) in (root, cost), "it is also the top factor of the increase")
else:
    good = check(False, "unknown shape " + shape)
sys.exit(0 if good else 1)
PY
    )
}

# A case whose shape checks fail is recorded and checked once more: the
# latency shapes are wall-time measurements, and now and then a run takes
# an outlier from outside the program (var_inherent: R² with the work 0.98
# to 0.99 in most runs, 0.08 in one CI run on an idle machine). A defect
# that changes the shape fails both attempts; the first one's lines are
# kept as comments.
for dir in "$VPROF_ROOT"/bench/variance/cases/var_*/; do
    case_name=$(basename "$dir")
    out=$(run_case "$dir" 2>&1); rc=$?
    if [ $rc -ne 0 ] && grep -q '^not ok' <<< "$out"; then
        echo "# $case_name: a shape check failed; recorded and checked again:"
        sed 's/^/#   /' <<< "$out"
        out=$(run_case "$dir" 2>&1); rc=$?
    fi
    printf '%s\n' "$out"
    [ $rc -eq 0 ] || _n_fail=$((_n_fail + 1))
done

# --work-var: the work read from a sampled variable instead of vprof_req_work
# (the handler's row count, render_report's parameter rows): the same label
if [ -d var_inherent.buggy ]; then
    "$R" --variance --json --work-var render_report:rows var_inherent.buggy > wv.json 2> wv.err
    check "var_inherent --work-var render_report:rows: exit 0" [ $? -eq 0 ]
    if quiet_enough; then
        check "var_inherent --work-var: most requests sampled it; the top factor is inherent" \
            python3 -c "
import json
d = json.load(open('wv.json'))
w = d['sides'][0]['work']
top = [f for f in d['factors'] if f['top']][0]
assert w['source'] == 'render_report:rows' and w['intervals'] >= 0.5 * d['sides'][0]['intervals'], w
assert w['r2'] >= 0.5 and top['inherent'] is True, (w, top['name'], top['r2'])"
    fi
    "$R" --variance --work-var nosuch_var var_inherent.buggy > /dev/null 2> wv2.err; rc=$?
    check "--work-var of a variable never sampled: exit 1, names it" \
        eval '[ $rc -eq 1 ] && grep -q "no sampled variable nosuch_var" wv2.err'
    "$R" --variance --work-var render_report: var_inherent.buggy > /dev/null 2> wv3.err
    check "--work-var FUNC: without a name: usage error (2)" [ $? -eq 2 ]
fi
finish
