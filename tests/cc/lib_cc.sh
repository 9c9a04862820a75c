# Sourced by tests/cc/t_*.sh after tests/lib.sh: helpers for vprof-cc tests.
CC_SRC=$VPROF_ROOT/tests/cc/src
VCC=$VPROF_BIN/vprof-cc
VCXX=$VPROF_BIN/vprof-c++
PLUGIN=$VPROF_LIB/vprof-schema.so
RUNTIME=$VPROF_LIB/libvprof.so
[ -x "$VCC" ] && [ -f "$PLUGIN" ] || skip "vprof-cc or vprof-schema.so not built (make schema-gen)"

# schema_of OBJ OUT: the `.vprof_schema` section of OBJ, as text, into OUT.
schema_of() {
    objcopy --dump-section .vprof_schema="$2" "$1" "$TMP/.dump.o" 2>/dev/null
}

# dump_of OBJ: the schema of OBJ as the format module's reader sees it.
SCHEMA_DUMP=$TMP/schema_dump
cc -std=c11 -D_GNU_SOURCE -I"$VPROF_ROOT/libvprof/format" \
    "$VPROF_ROOT/tests/cc/schema_dump.c" "$VPROF_LIB/libvprof-format.a" \
    -o "$SCHEMA_DUMP" || skip "cannot build schema_dump (libvprof-format.a missing?)"
dump_of() {
    schema_of "$1" "$TMP/.schema.txt" && "$SCHEMA_DUMP" "$TMP/.schema.txt"
}

# has_lines FILE LINE...: every LINE occurs as a whole line of FILE.
has_lines() {
    local f=$1 l; shift
    for l in "$@"; do
        grep -Fxq -- "$l" "$f" || { echo "# missing: $l" >&2; return 1; }
    done
}

# same_code -O SRC DRIVER: the pass changes no code: same .text with and
# without the plugin, and the whole object identical once the schema
# section is removed.
same_code() {
    local O=$1 src=$2 drv=$3
    $drv $O -g -pg -fpass-plugin="$PLUGIN" -c "$src" -o with.o &&
    $drv $O -g -pg -c "$src" -o without.o &&
    objcopy -O binary --only-section=.text with.o with.text &&
    objcopy -O binary --only-section=.text without.o without.text &&
    test -s with.text && cmp -s with.text without.text &&
    objcopy --remove-section .vprof_schema with.o with-stripped.o &&
    objcopy without.o without-copy.o && cmp -s with-stripped.o without-copy.o
}

# check_same_code C_SRC CXX_SRC: same_code checks of a C source at every -O
# level and a C++ source at -O2.
check_same_code() {
    local O
    for O in -O0 -O1 -O2 -O3 -Os; do
        check "pass leaves code unchanged at $O (C, ${1##*/})" same_code $O "$1" clang-14
    done
    check "pass leaves code unchanged at -O2 (C++, ${2##*/})" same_code -O2 "$2" clang++-14
}
