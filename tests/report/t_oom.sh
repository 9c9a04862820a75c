#!/bin/bash
# Out of memory in the offline tools (vprof-report, its --gprof and
# --waits modes, vprof-meta): the allocation policy of libvprof/format/vprof_xalloc.h.
# failmalloc.c makes every allocation of the tool's own code fail from the
# N-th on; for every N until the run completes, the tool must either finish
# with exactly the output of an unhindered run, or exit 1 saying "out of
# memory" (or naming the file it could not read for lack of memory) — never
# crash, never print something else.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/common.sh"
# failmalloc.so replaces malloc: the plain tools, not the sanitizer build's
# (ASan has an allocator of its own)
R=${VPROF_PLAIN_BIN:-$VPROF_BIN}/vprof-report
META=${VPROF_PLAIN_BIN:-$VPROF_BIN}/vprof-meta
cd "$TMP"
gcc -shared -fPIC -O1 -o failmalloc.so "$VPROF_ROOT/tests/report/failmalloc.c" ||
    { echo "not ok - build failmalloc.so"; exit 1; }
make_target "$TMP" || { echo "not ok - build target"; exit 1; }
gen rank normal n ./target --seed 1
gen rank buggy b ./target --seed 2

# sweep NAME OUTFILE CMD...: fails allocation N = 1, 2, ..., 10, then every
# STRIDE-th (a sample of the points, to keep the test short), until CMD
# completes with the reference output; reports crashes and wrong outcomes
sweep() {
    local name=$1 out=$2; shift 2
    "$@" > /dev/null 2>&1; cp "$out" ref.out
    local n=0 crash=0 wrong=0 oom=0 done=0
    while [ $n -lt 3000 ]; do
        n=$((n < 10 ? n + 1 : n + ${STRIDE:-4}))
        rm -f "$out"
        FAILMALLOC_AT=$n LD_PRELOAD=$TMP/failmalloc.so "$@" > /dev/null 2> err.txt
        rc=$?
        if [ $rc -ge 128 ]; then
            crash=$((crash + 1)); echo "# $name: allocation $n: killed by signal $((rc - 128))"
        elif [ $rc -eq 0 ]; then
            if cmp -s "$out" ref.out; then done=1; break; fi
            wrong=$((wrong + 1)); echo "# $name: allocation $n: exit 0 with another output"
        elif [ $rc -eq 1 ] && grep -q "out of memory" err.txt; then
            oom=$((oom + 1))
        else
            wrong=$((wrong + 1)); echo "# $name: allocation $n: rc $rc: $(head -c 200 err.txt)"
        fi
    done
    echo "# $name: complete at allocation point $n; $oom of the points tried said out of memory"
    check "$name: completes once allocations succeed" [ $done -eq 1 ]
    check "$name: never crashes when memory runs out" [ $crash -eq 0 ]
    check "$name: out of memory is said, not a wrong report" [ $wrong -eq 0 ]
    check "$name: the sweep reached the tool's allocations" [ $oom -ge 10 ]
}

# vprof-report writes to stdout: wrap it so the output lands in a file
report() { "$R" "$@" > report.out; }
sweep "vprof-report" report.out report --json --top 0 n b
sweep "vprof-report --gprof" report.out report --gprof ./target b/gmon.1000.out
meta() { "$META" --quiet --all --files '*' -o meta.out ./target; }
sweep "vprof-meta" meta.out meta
# --waits, from latency events and from perf's scheduler tracepoints
gen waits-fig2 buggy w ./target --bias 0x555555554000
sweep "vprof-report --waits" report.out report --waits --json w
sweep "vprof-report --waits --perf-script" report.out \
    report --waits --json --waits-min 0 --perf-script "$VPROF_ROOT/tests/report/data/sched.perf.txt"

# The policy on the sources: outside the helpers (and the fuzz targets,
# which run under libFuzzer's own allocator limits) the offline tools call
# no allocator of libc directly, so no allocation can go unchecked or grow
# one element at a time (a sweep only reaches the paths its input takes).
raw=$(cd "$VPROF_ROOT" && grep -nE '(^|[^_[:alnum:]])(malloc|calloc|realloc|strdup|strndup|v?asprintf)[[:space:]]*\(' \
        vprof-report/*.c vprof-report/tools/*.c dwarf-meta/*.c)
[ -n "$raw" ] && echo "$raw" | sed -n "1,10s/^/# /p"
check "vprof-report, vprof-gen-runs, vprof-meta: every allocation through vpf_x*/vpf_grow" test -z "$raw"
finish
