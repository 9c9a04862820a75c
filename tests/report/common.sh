# Sourced by tests/report/t_*.sh after ../lib.sh: a tiny target program and
# synthetic run directories written by vprof-gen-runs (no runtime needed).
R=$VPROF_BIN/vprof-report
GEN=$VPROF_BIN/vprof-gen-runs
[ -x "$R" ] && [ -x "$GEN" ] || { echo "not ok - vprof-report/vprof-gen-runs not built (make)"; exit 1; }

# make_target DIR: builds DIR/target (PIE, -g) with hot, caller, worker
make_target() {
    cat > "$1/target.c" <<'C'
volatile long sink;
void hot(int n) { for (int k = 0; k < n; k++) sink += k; }
void caller(int m) { for (int i = 0; i < m; i++) hot(50); }
void worker(int s) { while (s-- > 0) sink ^= s; }
int main(void) { caller(10); worker(5); return 0; }
C
    gcc -g -O0 -o "$1/target" "$1/target.c"
}
addr() { echo "0x$(nm "$1" | awk -v f="$2" '$3==f {print $1}')"; }
# gen SCENARIO normal|buggy DIR EXE [extra options]
gen() {
    local scen=$1 side=$2 dir=$3 exe=$4; shift 4
    "$GEN" "$scen" "$side" "$dir" "$exe" --func hot="$(addr "$exe" hot)" \
        --func caller="$(addr "$exe" caller)" --func worker="$(addr "$exe" worker)" "$@"
}

# perf_ev TIME FRAMES...: one event of `perf script` text (comm prog, tid 7,
# a 1 ms cpu-clock period), its call chain leaf first as perf prints it;
# FRAMES are given bottom first. PERF_EV_TAIL: lines after the chain.
perf_ev() {
    printf 'prog 7 %s:     1000000 cpu-clock:ppp: \n' "$1"; shift
    local fr=("$@") i
    for ((i = ${#fr[@]} - 1; i >= 0; i--)); do
        printf '\t    %x %s+0x%x (/tmp/prog)\n' $((0x401000 + i * 16)) "${fr[i]}" $((i * 4))
    done
    printf '%b\n' "${PERF_EV_TAIL:-}"
}
