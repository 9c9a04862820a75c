#!/bin/bash
# Schema mode against the gdb oracle: members (s.field, p->field), pointers
# to basic types (one dereference), globals, locals and a struct split into
# registers (DW_OP_piece), with gcc and clang at -O0 and -O2; plus the
# embedded .vprof_schema section made of two concatenated schema texts.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/oracle_lib.sh"
command -v gdb >/dev/null || skip "gdb not installed"
[ -x "$META" ] || skip "vprof-meta not built"
oracle_build || { not_ok "build oracle_trace"; finish; }
cp "$HERE/progs/basic.c" "$HERE/progs/pieces.c" "$TMP/"
cd "$TMP" || exit 1

cat >basic.vschema <<'S'
# vprof-schema 1
basic.c, use_struct, 48, s.key, int, args
basic.c, use_struct, 48, s.weight, long, args
basic.c, use_struct, 48, s.score, double, args
basic.c, use_struct, 48, q->key, int, args
basic.c, use_struct, 48, q->weight, long, args
basic.c, use_struct, 48, q->score, double, args
basic.c, walk, 25, p->weight, long, loop
basic.c, walk, 25, p, struct item *, loop|cond
basic.c, walk, 24, steps, int, loop
basic.c, mix, 39, pi, int *, args
basic.c, main, 67, seven, int, none
basic.c, #global, 8, g_total, long, none
basic.c, #global, 11, g_ptr, int *, none
S
names='s.key,s.weight,s.score,q->key,q->weight,q->score,p->weight,p,steps,pi,seven,g_total,g_ptr'
exprs='use_struct:s.key;use_struct:s.weight;use_struct:s.score;use_struct:q->key;use_struct:q->weight;use_struct:q->score;walk:p->weight'
printf '# vprof-schema 1\npieces.c, pieces, 15, pp.a, int, loop\npieces.c, pieces, 15, pp.b, int, args\n' >pieces.vschema

ccs="gcc"
command -v clang-14 >/dev/null && ccs="gcc clang-14"
for cc in $ccs; do
    for o in -O0 -O2; do
        bin=$TMP/basic_${cc}$o
        $cc -g $o -o "$bin" basic.c || { not_ok "$cc $o: compile"; continue; }
        if "$META" -s basic.vschema -o "$bin.vmeta" -q "$bin"; then
            oracle_run "schema $cc $o" "$bin" basic.c "$bin.vmeta" "$exprs" \
                -- --names "$names" --min-coverage 0.9
        else
            not_ok "schema $cc $o: vprof-meta"
        fi
        bin=$TMP/pieces_${cc}$o
        $cc -g $o -o "$bin" pieces.c || { not_ok "$cc $o: compile"; continue; }
        if "$META" -s pieces.vschema -o "$bin.vmeta" -q "$bin"; then
            oracle_run "pieces $cc $o" "$bin" pieces.c "$bin.vmeta" \
                "pieces:pp.a;pieces:pp.b" -- --names pp.a,pp.b --miss-ok 8
        else
            not_ok "pieces $cc $o: vprof-meta"
        fi
    done
done
# the -O2 builds keep pp.b in a register piece: a REG entry must exist
"$META" --dump "$TMP/pieces_gcc-O2.vmeta" | grep -q ' REG reg=4 size=4 ' &&
    ok "gcc -O2: pp.b read from its register piece" ||
    not_ok "gcc -O2: pp.b read from its register piece"

# Type units (-fdebug-types-section; DWARF 4 .debug_types, DWARF 5
# DW_UT_type): members are found through the type signature, and the
# metadata is the same as without type units.
gcc -g -O0 -o tu0 basic.c
"$META" -s basic.vschema -q -o tu0.vmeta tu0
"$META" --dump tu0.vmeta | sed 1d >tu0.txt
for v in 4 5; do
    gcc -g -gdwarf-$v -fdebug-types-section -O0 -o tu$v basic.c
    "$META" -s basic.vschema -q -o tu$v.vmeta tu$v
    "$META" --dump tu$v.vmeta | sed 1d >tu$v.txt
    check "type units (DWARF $v): same metadata as without" cmp -s tu0.txt tu$v.txt
done

# Embedded schema: two objects, each with its own .vprof_schema text; the
# linker concatenates them (two "# vprof-schema 1" headers).
cat >s1.s <<'S'
	.section .vprof_schema,"",@progbits
	.ascii "# vprof-schema 1\nbasic.c, #global, 8, g_total, long, none\n"
	.section .note.GNU-stack,"",@progbits
S
cat >s2.s <<'S'
	.section .vprof_schema,"",@progbits
	.ascii "# vprof-schema 1\nbasic.c, walk, 24, steps, int, loop\nbasic.c, walk, 24, steps, int, cond\n"
	.section .note.GNU-stack,"",@progbits
S
gcc -g -O0 -o emb basic.c s1.s s2.s
"$META" -o emb.vmeta emb 2>emb.err
check "embedded schema: exit 0" test $? -eq 0
"$META" --dump emb.vmeta >emb.txt
check "embedded schema: two variables from two schema texts" \
    test "$(grep -c '^var ' emb.txt)" -eq 2
check "embedded schema: duplicate lines merged (tags OR-ed)" \
    grep -q 'walk steps int line=24 tags=loop|cond' emb.txt
check "embedded schema: global tagged and placed" \
    grep -q '#global g_total long line=8 tags=none+global' emb.txt
check "PIE: relative flag set" grep -q '^flags 1 ' emb.txt
bid=$(readelf -n emb | sed -n 's/.*Build ID: //p')
check "build-id copied from the note" grep -q "build_id $bid" emb.txt
finish
