#!/bin/bash
# Overhead of libvprof (issue 2, "Measure"): run time of one CPU-bound
# program, as ratios in one run, under
#   plain       built without -pg
#   gprof       -pg, glibc's own gmon (100 Hz, glibc's fixed rate)
#   vprof-0     -pg + libvprof, no metadata           at 100 Hz and 1 kHz
#   vprof-1000  -pg + libvprof, ~1000 variables       at 100 Hz and 1 kHz
# and the per-tick handler cost (VPROF_STATS=1: average and percentiles of
# the time spent in the SIGPROF handler, samples per tick).
# Times are user+system CPU seconds, median of REPS runs (default 5).
# Usage: bench/overhead/run.sh   (from the repository root, after make)
#   BEFORE_LIB=path/to/libvprof.so: also measure that build's handler (an
#   older libvprof, e.g. built from an earlier commit) in the same run.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
LIB=$ROOT/build/lib/libvprof.so META=$ROOT/build/bin/vprof-meta
REPS=${REPS:-5} ROUNDS=${ROUNDS:-100000}
[ -f "$LIB" ] && [ -x "$META" ] || { echo "overhead: run make first"; exit 1; }
source "$ROOT/bench/overhead/common.sh"
overhead_workdir overhead
overhead_prog "$META"
gcc -O2 -g prog.c -o plain
nvars=$("$META" --dump vars.vmeta | grep -c '^var ')
nent=$("$META" --dump vars.vmeta | grep -c '^entry ')
ncpu=$(nproc)

# cpu CMD...: user+sys seconds of one run
cpu() { /usr/bin/time -f '%U %S' -o t.txt "$@" > /dev/null 2>>stats.txt; awk '{print $1 + $2}' t.txt; }
median() { sort -n | awk '{v[NR]=$1} END{print v[int((NR+1)/2)]}'; }
measure() {      # NAME CMD...: median CPU time over REPS runs
    local name=$1; shift
    for ((r = 0; r < REPS; r++)); do rm -rf out gmon.out; cpu "$@"; done | median > "m_$name"
}
: > stats.txt
measure plain ./plain $ROUNDS
measure gprof ./pg $ROUNDS
for hz in 100 1000; do
    measure v0_$hz env VPROF_OUT=out VPROF_HZ=$hz LD_PRELOAD=$LIB ./pg $ROUNDS
    measure v1k_$hz env VPROF_OUT=out VPROF_META=vars.vmeta VPROF_HZ=$hz LD_PRELOAD=$LIB ./pg $ROUNDS
done
# Handler cost: one more run of each vprof configuration with VPROF_STATS,
# and at 1 kHz with VPROF_UNWIND=0 and with libunwind for every frame
# (VPROF_UNWINDER=libunwind: the unwinder before the rule table).
: > stats.txt
for hz in 100 1000; do
    for m in none vars.vmeta vars.vmeta:0 vars.vmeta:libunwind vars.vmeta:s0; do
        [ $hz = 100 ] && [ "${m#*:}" != "$m" ] && continue
        rm -rf out
        echo "== VPROF_HZ=$hz metadata=${m%%:*}$( [ "${m#*:}" = 0 ] && echo ' VPROF_UNWIND=0'; [ "${m#*:}" = libunwind ] && echo ' VPROF_UNWINDER=libunwind'; [ "${m#*:}" = s0 ] && echo ' VPROF_STACKS=0')" >> stats.txt
        ( mm=${m%%:*}; [ $mm = none ] || export VPROF_META=$PWD/$mm
          [ "${m#*:}" = 0 ] && export VPROF_UNWIND=0
          [ "${m#*:}" = libunwind ] && export VPROF_UNWINDER=libunwind
          [ "${m#*:}" = s0 ] && export VPROF_STACKS=0
          VPROF_OUT=out VPROF_STATS=1 VPROF_HZ=$hz LD_PRELOAD=$LIB ./pg $ROUNDS > /dev/null 2>> stats.txt )
        [ $m = vars.vmeta ] && ls -s out/values.* | awk '{print "  values file: " $1 " KiB"}' >> stats.txt
    done
done

# Delivered vs requested rate (issue 13): ticks per CPU second, per-thread
# perf events (VPROF_TIMER=perf) against POSIX CPU-time timers, on one
# thread spinning 300 ms and on 8 threads burning 20..160 ms (prog_timer.c).
gcc -O1 -g -pg -o ptimer "$ROOT/tests/libvprof/prog_timer.c" -lpthread
rate() {     # TIMER HZ THREADS: delivered ticks per CPU second
    rm -rf out
    if [ "$3" = 1 ]; then
        VPROF_TIMER=$1 VPROF_HZ=$2 VPROF_OUT=out LD_PRELOAD=$LIB ./ptimer spin 300 > r.txt 2>/dev/null
        cpu=$(awk '$1=="cpu_ms"{print $2}' r.txt)
    else
        VPROF_TIMER=$1 VPROF_HZ=$2 VPROF_OUT=out LD_PRELOAD=$LIB ./ptimer uneven "$3" 20 > r.txt 2>/dev/null
        cpu=$(awk '$1=="thread"{s += $3} END{print s}' r.txt)
    fi
    t=$(sed -n 's/^end\tticks=\([0-9]*\).*/\1/p' out/layout.*)
    awk -v t="${t:-0}" -v c="${cpu:-0}" 'BEGIN{printf "%.0f", (c > 0 ? t / (c / 1000) : 0)}'
}
rates=""
for tm in perf posix; do
    for th in 1 8; do
        line=$(printf '  %-6s %d thread(s):' $tm $th)
        for hz in 100 1000 4000 10000; do line="$line $(printf '%7s' "$(rate $tm $hz $th)")"; done
        rates="$rates$line"$'\n'
    done
done
# Run time at the perf-event rates (CPU seconds, median of REPS).
for hz in 2000 4000; do
    measure v1k_$hz env VPROF_OUT=out VPROF_META=vars.vmeta VPROF_HZ=$hz LD_PRELOAD=$LIB ./pg $ROUNDS
done

# Deterministic handler cost: instructions per tick under callgrind.
# Records: what the values file holds; samples: what the report reads from
# it (a version 2 file writes a tick's globals once, FORMATS.md §3).
VPCHECK=$ROOT/build/test-bin/vpcheck
ir_per_tick() {     # UNWIND META [UNWINDER [LIB]]: "instructions/tick samples/tick"
    rm -rf out cg.out
    ( [ "$2" = none ] || export VPROF_META=$PWD/$2
      VPROF_UNWINDER=${3:-cfi} VPROF_OUT=out VPROF_UNWIND=$1 LD_PRELOAD=${4:-$LIB} valgrind --tool=callgrind \
        --callgrind-out-file=cg.out ./pg $((ROUNDS / 50)) > /dev/null 2>&1 )
    local ir ticks recs samples=0 v
    ir=$(callgrind_annotate --inclusive=yes --threshold=100 cg.out 2>/dev/null |
         awk '/signals.c:on_sigprof/{gsub(",", "", $1); print $1; exit}')
    ticks=$(sed -n 's/^end\tticks=\([0-9]*\)\tsamples=\([0-9]*\).*/\1/p' out/layout.*)
    recs=$(sed -n 's/^end\tticks=\([0-9]*\)\tsamples=\([0-9]*\).*/\2/p' out/layout.*)
    for v in out/values.*; do
        [ -f "$v" ] && [ -x "$VPCHECK" ] && samples=$((samples + $("$VPCHECK" values "$v" | grep -vc '^#')))
    done
    awk -v i="${ir:-0}" -v t="${ticks:-0}" -v r="${recs:-0}" -v s="$samples" \
        'BEGIN{ if (t > 0) printf "%d instructions/tick, %.1f samples/tick in %.1f records (%d ticks)", i/t, s/t, r/t, t; else print "n/a" }'
}
if command -v valgrind > /dev/null; then
    cg_none=$(ir_per_tick 3 none)
    cg_u0=$(ir_per_tick 0 vars.vmeta)
    cg_u3=$(ir_per_tick 3 vars.vmeta)
    cg_u0_lu=$(ir_per_tick 0 vars.vmeta libunwind)
    cg_u3_lu=$(ir_per_tick 3 vars.vmeta libunwind)
    # the same without stack samples (VPROF_STACKS=0): the tick alone
    cg_none_s0=$(VPROF_STACKS=0 ir_per_tick 3 none)
    cg_u0_s0=$(VPROF_STACKS=0 ir_per_tick 0 vars.vmeta)
    cg_u3_s0=$(VPROF_STACKS=0 ir_per_tick 3 vars.vmeta)
    if [ -n "${BEFORE_LIB:-}" ]; then
        cg_b_none=$(ir_per_tick 3 none cfi "$BEFORE_LIB")
        cg_b_u0=$(ir_per_tick 0 vars.vmeta cfi "$BEFORE_LIB")
        cg_b_u3=$(ir_per_tick 3 vars.vmeta cfi "$BEFORE_LIB")
        cg_b_none_s0=$(VPROF_STACKS=0 ir_per_tick 3 none cfi "$BEFORE_LIB")
        cg_b_u0_s0=$(VPROF_STACKS=0 ir_per_tick 0 vars.vmeta cfi "$BEFORE_LIB")
        cg_b_u3_s0=$(VPROF_STACKS=0 ir_per_tick 3 vars.vmeta cfi "$BEFORE_LIB")
    fi
fi
if [ -n "${BEFORE_LIB:-}" ]; then
    for m in none vars.vmeta vars.vmeta:0 vars.vmeta:s0; do
        rm -rf out
        echo "== BEFORE_LIB VPROF_HZ=1000 metadata=${m%%:*}$( [ "${m#*:}" = 0 ] && echo ' VPROF_UNWIND=0'; [ "${m#*:}" = s0 ] && echo ' VPROF_STACKS=0')" >> stats.txt
        ( mm=${m%%:*}; [ $mm = none ] || export VPROF_META=$PWD/$mm
          [ "${m#*:}" = 0 ] && export VPROF_UNWIND=0
          [ "${m#*:}" = s0 ] && export VPROF_STACKS=0
          VPROF_OUT=out VPROF_STATS=1 VPROF_HZ=1000 LD_PRELOAD=$BEFORE_LIB ./pg $ROUNDS > /dev/null 2>> stats.txt )
    done
fi

p=$(cat m_plain) g=$(cat m_gprof)
r() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.3f", (b > 0 ? a / b : 0)}'; }
echo "vprof overhead — $(date -u +%F) — $(uname -m), $ncpu CPUs, load $(cut -d' ' -f1 /proc/loadavg)"
echo "program: $(grep -c '^__attribute' prog.c) functions, rounds=$ROUNDS; metadata: $nvars variables, $nent location entries"
echo "CPU seconds (user+sys), median of $REPS runs"
printf '%-28s %8s %10s %10s\n' configuration seconds "vs plain" "vs gprof"
printf '%-28s %8s %10s %10s\n' "plain (no -pg)" "$p" 1.000 "$(r "$p" "$g")"
printf '%-28s %8s %10s %10s\n' "gprof (glibc, 100 Hz)" "$g" "$(r "$g" "$p")" 1.000
for hz in 100 1000; do
    a=$(cat m_v0_$hz) b=$(cat m_v1k_$hz)
    printf '%-28s %8s %10s %10s\n' "vprof, no metadata, $hz Hz" "$a" "$(r "$a" "$p")" "$(r "$a" "$g")"
    printf '%-28s %8s %10s %10s\n' "vprof, $nvars vars, $hz Hz" "$b" "$(r "$b" "$p")" "$(r "$b" "$g")"
done
for hz in 2000 4000; do
    b=$(cat m_v1k_$hz)
    printf '%-28s %8s %10s %10s\n' "vprof, $nvars vars, $hz Hz" "$b" "$(r "$b" "$p")" "$(r "$b" "$g")"
done
echo
echo "delivered ticks per CPU second, asked:   100    1000    4000   10000"
printf '%s' "$rates"
echo
echo "per-tick handler cost (VPROF_STATS=1, thread CPU time in the handler):"
grep -v '^$' stats.txt | sed 's/^vprof: stats: /  /'
if [ -n "${cg_u3:-}" ]; then
    echo "per-tick handler cost (callgrind, instructions executed in the handler):"
    echo "  no metadata:                    $cg_none"
    echo "  $nvars vars, VPROF_UNWIND=0:     $cg_u0"
    echo "  $nvars vars, VPROF_UNWIND=3:     $cg_u3"
    echo "  the same with VPROF_UNWINDER=libunwind (every frame by libunwind):"
    echo "  $nvars vars, VPROF_UNWIND=0:     $cg_u0_lu"
    echo "  $nvars vars, VPROF_UNWIND=3:     $cg_u3_lu"
    echo "  without stack samples (VPROF_STACKS=0):"
    echo "  no metadata:                    $cg_none_s0"
    echo "  $nvars vars, VPROF_UNWIND=0:     $cg_u0_s0"
    echo "  $nvars vars, VPROF_UNWIND=3:     $cg_u3_s0"
    if [ -n "${BEFORE_LIB:-}" ]; then
        echo "  BEFORE_LIB ($BEFORE_LIB):"
        echo "  no metadata:                    $cg_b_none"
        echo "  $nvars vars, VPROF_UNWIND=0:     $cg_b_u0"
        echo "  $nvars vars, VPROF_UNWIND=3:     $cg_b_u3"
        echo "  BEFORE_LIB, VPROF_STACKS=0:"
        echo "  no metadata:                    $cg_b_none_s0"
        echo "  $nvars vars, VPROF_UNWIND=0:     $cg_b_u0_s0"
        echo "  $nvars vars, VPROF_UNWIND=3:     $cg_b_u3_s0"
    fi
fi
