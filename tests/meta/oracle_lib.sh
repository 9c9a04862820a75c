# oracle_lib.sh - helpers for the gdb oracle tests (sourced after lib.sh).
# oracle_build: compiles the tracer (links the runtime's value reader).
# oracle_run LABEL BIN SRC META [compare options...]: gdb + tracer + compare.
META=${VPROF_META_BIN:-$VPROF_BIN/vprof-meta}
HERE=$VPROF_ROOT/tests/meta

oracle_build() {
    gcc -std=c11 -D_GNU_SOURCE -O1 -g -I"$VPROF_ROOT/libvprof/format" \
        -I"$VPROF_ROOT/libvprof" -o "$TMP/oracle_trace" \
        "$HERE/oracle_trace.c" "$VPROF_ROOT/libvprof/value_read.c" \
        "$VPROF_LIB/libvprof-format.a"
}

# oracle_run LABEL BIN SRC META [ORACLE_EXPRS] -- [compare options]
oracle_run() {
    local label=$1 bin=$2 src=$3 meta=$4 exprs=$5
    shift 5
    [ "${1:-}" = "--" ] && shift
    ORACLE_EXPRS=$exprs ORACLE_SRC=$src ORACLE_PCS=$bin.pcs \
        ORACLE_OUT=$bin.gdb timeout 120 gdb -batch -nx \
        -x "$HERE/gdb_oracle.py" --args "$bin" >"$bin.gdblog" 2>&1
    if [ ! -s "$bin.pcs" ]; then
        not_ok "$label: gdb oracle produced no PCs"
        tail -5 "$bin.gdblog"
        return
    fi
    "$TMP/oracle_trace" "$meta" "$bin.pcs" "$bin" >"$bin.trace"
    local out
    out=$(python3 "$HERE/compare.py" "$bin.gdb" "$bin.trace" \
          --label "$label" "$@")
    local rc=$?
    echo "$out" | sed '1!s/^/# /' | sed '1s/^/# /'
    if [ $rc -eq 0 ]; then ok "$label"; else not_ok "$label"; fi
}
