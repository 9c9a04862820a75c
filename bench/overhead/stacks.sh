#!/bin/bash
# Cost of VPROF_STACKS (issue 16): what recording every tick's call chain
# adds, on two programs without metadata (so the ticks do nothing else):
#   flat  bench/overhead/gen_prog.sh's 250 functions called round-robin from
#         main (every call through mcount: many ticks land in the trampoline,
#         outside the program, and take the unwinder to the first frame)
#   mixed tests/report/ctxprog.c: a three-deep chain, qsort comparators (a
#         library calling back: a full unwind each), memset (a libc leaf),
#         a thread, recursion deeper than 32 frames
# Measured: instructions per tick in the stack recorder and in the whole
# SIGPROF handler (callgrind, deterministic), with VPROF_STACKS=0 and 32;
# run time (CPU seconds, median of REPS) against glibc's gprof and vprof
# without stacks, in the same run; bytes per tick; how many ticks needed
# the unwinder. Usage: bench/overhead/stacks.sh (after make).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
LIB=$ROOT/build/lib/libvprof.so VPCHECK=$ROOT/build/test-bin/vpcheck
REPS=${REPS:-5} ROUNDS=${ROUNDS:-60000} MIXED=${MIXED:-4}
[ -f "$LIB" ] && [ -x "$VPCHECK" ] || { echo "stacks: run make first"; exit 1; }
source "$ROOT/bench/overhead/common.sh"
overhead_workdir stacks
bash "$ROOT/bench/overhead/gen_prog.sh" > flat.c
gcc -O2 -g -pg flat.c -o flat_pg
gcc -O1 -g -pg -pthread "$ROOT/tests/report/ctxprog.c" -o mixed_pg
# the mixed program's run, repeated MIXED times per measurement (one run is ~0.5 s)
cat > mixed.sh <<EOF
#!/bin/sh
for i in \$(seq $MIXED); do ./mixed_pg normal || exit 1; done
EOF
chmod +x mixed.sh
flat() { ./flat_pg "$ROUNDS" > /dev/null; }

cpu() { /usr/bin/time -f '%U %S' -o t.txt "$@" > /dev/null 2>&1; awk '{print $1 + $2}' t.txt; }
median() { sort -n | awk '{v[NR]=$1} END{print v[int((NR+1)/2)]}'; }
# measure NAME CMD...: median CPU seconds; the configurations of one program
# are interleaved run by run so that load changes hit them alike
declare -A M
measure_set() {     # PROG CMD: gprof, vprof without and with stacks
    local prog=$1 cmd=$2 r
    : > "g_$prog" ; : > "v0_$prog"; : > "v32_$prog"
    for ((r = 0; r < REPS; r++)); do
        rm -rf out gmon.out; cpu sh -c "$cmd" >> "g_$prog"
        rm -rf out; cpu env VPROF_OUT=out VPROF_STACKS=0 LD_PRELOAD=$LIB sh -c "$cmd" >> "v0_$prog"
        rm -rf out; cpu env VPROF_OUT=out VPROF_STACKS=32 LD_PRELOAD=$LIB sh -c "$cmd" >> "v32_$prog"
    done
    for c in g v0 v32; do M[${c}_$prog]=$(median < "${c}_$prog"); done
}
measure_set flat "./flat_pg $ROUNDS"
measure_set mixed "./mixed.sh"

# instructions per tick under callgrind (ticks follow CPU time, which
# callgrind stretches: many ticks)
# (the recorder: the handler with stacks less the handler without, per
# tick - its functions are inlined into the tick by the link)
ir() {      # STACKS CMD...: "handler ticks"
    local s=$1; shift
    rm -rf out cg.out
    VPROF_OUT=out VPROF_STACKS=$s LD_PRELOAD=$LIB valgrind --tool=callgrind \
        --callgrind-out-file=cg.out "$@" > /dev/null 2>&1
    local h t
    h=$(callgrind_annotate --inclusive=yes --threshold=100 cg.out 2>/dev/null |
        awk '/signals.c:on_sigprof[ .]/{gsub(",", "", $1); print $1; exit}')
    t=$(cat out/layout.* | sed -n 's/^end\tticks=\([0-9]*\).*/\1/p' | awk '{s += $1} END{print s}')
    echo "${h:-0} ${t:-0}"
}
per() { awk -v a="$1" -v t="$2" 'BEGIN{printf "%.0f", (t > 0 ? a / t : 0)}'; }
declare -A IR
if command -v valgrind > /dev/null; then
    for p in flat mixed; do
        if [ $p = flat ]; then cmd=(./flat_pg $((ROUNDS / 30))); else cmd=(./mixed_pg normal); fi
        read -r h0 t0 < <(ir 0 "${cmd[@]}")
        read -r h1 t1 < <(ir 32 "${cmd[@]}")
        IR[$p]="$(per "$h0" "$t0") $(per "$h1" "$t1") $(( $(per "$h1" "$t1") - $(per "$h0" "$t0") )) $t1"
    done
fi
# bytes per tick, depth and walks (one ordinary run each)
walks() {   # CMD...: "ticks bytes/tick mean-depth unwound% truncated%"
    rm -rf out
    VPROF_OUT=out LD_PRELOAD=$LIB "$@" > /dev/null 2>&1
    local bytes
    bytes=$(cat out/stacks.* | wc -c)
    for f in out/stacks.*; do "$VPCHECK" stacks "$f"; done | grep -v '^#' |
        awk -v b="$bytes" '{n++; d += $5; if (int($4 / 2) % 2) u++; if ($4 % 2) tr++}
            END{printf "%d %.0f %.1f %.1f %.1f", n, b / n, d / n, 100 * u / n, 100 * tr / n}'
}
WF=$(walks ./flat_pg "$ROUNDS") WM=$(walks ./mixed_pg normal)

r() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.3f", (b > 0 ? a / b : 0)}'; }
echo "VPROF_STACKS cost — $(date -u '+%F %H:%M') UTC — $(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg)"
echo "CPU seconds (user+sys), median of $REPS interleaved runs, 1 kHz, no metadata"
printf '%-8s %10s %14s %14s %12s %12s\n' program gprof "vprof STACKS=0" "vprof STACKS=32" "32 vs gprof" "32 vs 0"
for p in flat mixed; do
    printf '%-8s %10s %14s %14s %12s %12s\n' $p "${M[g_$p]}" "${M[v0_$p]}" "${M[v32_$p]}" \
        "$(r "${M[v32_$p]}" "${M[g_$p]}")" "$(r "${M[v32_$p]}" "${M[v0_$p]}")"
done
echo
echo "per tick: ticks bytes/tick mean-depth %unwinder %truncated"
echo "  flat:  $WF"
echo "  mixed: $WM"
if [ -n "${IR[flat]:-}" ]; then
    echo
    echo "instructions per tick (callgrind): handler STACKS=0, handler STACKS=32, recorder, ticks"
    echo "  flat:  ${IR[flat]}"
    echo "  mixed: ${IR[mixed]}"
fi
