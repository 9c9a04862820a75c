# Sourced by the libvprof tests after tests/lib.sh: paths, builds, helpers.
LIBVPROF=$VPROF_LIB/libvprof.so
VPCHECK=$VPROF_ROOT/build/test-bin/vpcheck
MKMETA=$VPROF_ROOT/build/test-bin/mkmeta
VPROF_META_BIN=$VPROF_BIN/vprof-meta
SRC=$VPROF_ROOT/tests/libvprof
[ -x "$VPCHECK" ] && [ -f "$LIBVPROF" ] && [ -x "$MKMETA" ] || skip "libvprof not built (make)"
unset VPROF_OUT VPROF_META VPROF_HZ VPROF_UNWIND VPROF_QUIET VPROF_STATS GMON_OUT_PREFIX

# build OUT SRC CC FLAGS...: compiles a -pg test program
build() {
    local out=$1 src=$2 cc=$3; shift 3
    "$cc" -pg -g "$@" -o "$out" "$SRC/$src" -lpthread 2>"$out.cc.log"
}

# prof DIR CMD...: runs CMD under libvprof with VPROF_OUT=DIR
prof() {
    local dir=$1; shift
    VPROF_OUT=$dir LD_PRELOAD=$LIBVPROF "$@"
}

# one FILE-GLOB: the single file matching, or fails
one() { local f=( $1 ); [ ${#f[@]} -eq 1 ] && [ -e "${f[0]}" ] && echo "${f[0]}"; }

# symaddr EXE SYM: link-time address (hex, 0x..) and size of a symbol
symaddr() { nm -S "$1" | awk -v s="$2" '$4==s{print "0x"$1, "0x"$2; exit}'; }

# handmeta EXE OUT [extra lines]: metadata written by hand from nm for
# prog_robust/prog_values: g_phase everywhere in the text (always-live
# list) and, as phase_in_burn, inside burn() only (PCToVarTable chains).
handmeta() {
    local exe=$1 out=$2; shift 2
    local g b bs rel=0
    g=$(symaddr "$exe" g_phase | cut -d' ' -f1)
    read -r b bs < <(symaddr "$exe" burn)
    file "$exe" | grep -q 'pie executable\|shared object' && rel=1
    {
        echo "flags $rel"
        echo "var g_phase #global sint 4"
        echo "var phase_in_burn burn sint 4"
        echo "entry g_phase 0 0x7fffffffffff addr 0 4 2 $g"
        [ -n "$b" ] && echo "entry phase_in_burn $b $((b + bs)) addr 0 4 2 $g"
        for l in "$@"; do echo "$l"; done
    } > "$out.txt"
    "$MKMETA" "$out.txt" "$out"
}

# values_of VALUES LAYOUT NAME: the recorded values of one variable
values_of() {
    local id
    id=$("$VPCHECK" var-id "$2" "$3") || return 1
    "$VPCHECK" values "$1" | awk -v id="$id" '$1==id{print $4}'
}
