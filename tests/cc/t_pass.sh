#!/bin/bash
# The schema pass: what it finds (globals, cond, args, loop induction
# variables, one-level members, blocks), at -O0 and -O2, in C and C++; that it
# leaves the generated code alone; VPROF_COMPONENT; concatenation at link.
. tests/lib.sh
. tests/cc/lib_cc.sh
cd "$TMP"

F=$CC_SRC/pass.c
expect_c=(
  "var $F|#global|6|pool_free_frames|unsigned long|cond"
  "var $F|#global|7|verbose|int|cond"
  "var $F|#global|8|banner|const char *|none"
  "var $F|scan|14|calls|int|none"
  "var $F|scan|12|n|int|cond"
  "var $F|scan|17|i|int|loop|cond|args"
  "var $F|scan|12|bp->len|int|cond"
  "var $F|scan|12|bp|struct buf *|cond|args"
  "var $F|scan|21|local.len|int|loop|cond"
  "var $F|scan|24|p|char *|loop|cond"
  "var $F|scan|12|bp->data|char *|args"
  "var $F|walk|44|p|struct node *|loop|cond"
  "var $F|walk|45|steps|int|loop|cond"
  "var $F|walk|44|p->key|int|cond"
  "var $F|walk|42|key|int|cond"
)
for O in -O0 -O2; do
    "$VCC" $O -c "$F" -o pass$O.o
    dump_of pass$O.o > pass$O.txt
    check "C schema at $O has every expected entry" has_lines pass$O.txt "${expect_c[@]}"
    check "C schema at $O lists no other variable" \
        test "$(grep -c '^var ' pass$O.txt)" -eq "${#expect_c[@]}"
    check "C schema at $O: a struct is not listed for s.f, an unused local not at all" \
        bash -c "! grep -q -e '|local|' -e unused_local pass$O.txt"
    for k in entry loop_header loop_body loop_exit branch; do
        check "C schema at $O: scan has a $k block" grep -q "^block $F|scan|[0-9]*|[0-9]*|[0-9]*|$k\$" pass$O.txt
    done
    check "C schema at $O: block ids of scan count from 0 without gaps" bash -c \
        "grep '^block $F|scan|' pass$O.txt | cut -d'|' -f3 | awk '\$1 != NR-1 {exit 1}'"
done
check "blocks carry source lines (scan's loop header is on line 17)" \
    grep -q "^block $F|scan|[0-9]*|17|17|loop_header\$" pass-O0.txt

G=$CC_SRC/pass.cpp
"$VCXX" -O2 -c "$G" -o cxx.o && dump_of cxx.o > cxx.txt
check "C++ schema: namespace global, mangled functions, this->member" has_lines cxx.txt \
  "var $G|#global|3|cache_hits|int|none" \
  "var $G|_Z3runi|17|j|int|loop|cond|args" \
  "var $G|_Z3runi|13|k|int|cond" \
  "var $G|_ZN5store4Pool4grabEi|6|want|int|cond" \
  "var $G|_ZN5store4Pool4grabEi|0|this->nfree|int|loop|cond"
# C++ types as the source spells them (typedef names, scopes, no keyword)
TY=$CC_SRC/types.cpp
"$VCXX" -O0 -c "$TY" -o types.o && dump_of types.o > types.txt
SCAN=_ZNK3app5Table4scanERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEEPSt6vectorINS_5RouteESaISA_EENS_4KindE
check "C++ types: std::string (a typedef) for basic_string, scoped, no class keyword" has_lines types.txt \
  "var $TY|$SCAN|18|key|const std::string &|cond|args" \
  "var $TY|$SCAN|0|this->name_|std::string *|cond|args" \
  "var $TY|$SCAN|0|this|const app::Table *|cond|args" \
  "var $TY|$SCAN|18|k|app::Kind|cond" \
  "var $TY|$SCAN|18|v|std::vector<app::Route, std::allocator<app::Route> > *|cond|args"
check "C++ types: no inline namespace (__cxx11) where a typedef names the type" \
  bash -c "! awk -F'|' '\$2 == \"$SCAN\" { print \$5 }' types.txt | grep -q __cxx11"
# A method defined out of line, in a unit that does not emit the class's
# constructor: clang alone describes the class there as a declaration only,
# and `this->max_scan_` would go untagged; vprof-c++ asks for complete types.
RT=$VPROF_ROOT/tests/report/router/router.cc
"$VCXX" -O2 -c "$RT" -o router.o && dump_of router.o > router.txt
check "C++ method out of line: this->member tagged in a unit without the constructor" \
  has_lines router.txt "var $RT|_ZNK6Router5matchESt17basic_string_viewIcSt11char_traitsIcEE|0|this->max_scan_|std::size_t|cond"
check "...which plain clang++ -g alone would miss (the fixture is the test)" bash -c \
  "$(declare -f schema_of dump_of); SCHEMA_DUMP=$SCHEMA_DUMP TMP=$TMP
   clang++-14 -std=gnu++17 -O2 -g -pg -fpass-plugin='$PLUGIN' -c '$RT' -o plain.o &&
   dump_of plain.o > plain.txt && grep -q 'var.*|this|' plain.txt && ! grep -q 'this->max_scan_' plain.txt"
# every code section (inline functions have their own), with relocations
code_of() { objdump -d -r --no-show-raw-insn "$1" | tail -n +4; }
check "-fstandalone-debug leaves code unchanged" bash -c \
  "$(declare -f code_of); clang++-14 -std=gnu++17 -O2 -g -pg -c '$RT' -o sd0.o &&
   clang++-14 -std=gnu++17 -O2 -g -pg -fstandalone-debug -c '$RT' -o sd1.o &&
   code_of sd0.o > sd0.dis && code_of sd1.o > sd1.dis && grep -q Router5match sd0.dis && cmp -s sd0.dis sd1.dis"

# The pass must not change code (same_code, lib_cc.sh).
check_same_code "$F" "$G"
check "schema section is not allocated (no A flag)" bash -c \
    "readelf -SW pass-O2.o | grep ' .vprof_schema ' | awk '{print \$0}' | grep -vq ' WA\| A '"

# The paper's own example (Figures 1 and 3).
P1=$CC_SRC/figure1.c
"$VCC" -O2 -c "$P1" -o fig1.o && dump_of fig1.o > fig1.txt
check "paper Figure 3: recv_n_pool_free_frames none, available_mem cond|args" has_lines fig1.txt \
    "var $P1|#global|4|recv_n_pool_free_frames|unsigned long|none" \
    "var $P1|recv_group_scan_log_recs|14|available_mem|unsigned long|cond|args" \
    "var $P1|recv_group_scan_log_recs|16|start_lsn|unsigned long|loop|cond|args" \
    "var $P1|recv_group_scan_log_recs|16|end_lsn|unsigned long|cond|args"

# Unusual code: the pass must neither crash nor change the code.
T=$CC_SRC/torture.c; TX=$CC_SRC/torture.cpp
for O in -O0 -O2; do
    check "torture.c at $O: compiles, schema parses" bash -c \
        "'$VCC' $O -c '$T' -o tc$O.o && $(declare -f schema_of dump_of); SCHEMA_DUMP=$SCHEMA_DUMP TMP=$TMP; dump_of tc$O.o > tc$O.txt"
    check "torture.cpp at $O: compiles, schema parses" bash -c \
        "'$VCXX' $O -c '$TX' -o tx$O.o && $(declare -f schema_of dump_of); SCHEMA_DUMP=$SCHEMA_DUMP TMP=$TMP; dump_of tx$O.o > tx$O.txt"
    check "torture.c at $O: code unchanged" same_code $O "$T" clang-14
    check "torture.cpp at $O: code unchanged" same_code $O "$TX" clang++-14
done
check "torture.c: bit-fields skipped, the plain member beside them kept" bash -c \
    "grep -q '|torture|27|bp->whole|int|cond\$' tc-O0.txt && ! grep -q 'bp->[ab]|' tc-O0.txt"
check "torture.c: varargs loop, flexible-array struct, globals of odd types" has_lines tc-O0.txt \
    "var $T|sum|21|k|int|loop|cond" "var $T|torture|27|fx->n|int|cond" \
    "var $T|torture|38|j|int|loop|cond" "var $T|#global|14|hook|function pointer|cond" \
    "var $T|#global|13|jb|jmp_buf|none" "var $T|#global|12|hits|int|none"
check "torture.cpp: loop in torture_cxx, template instance, lambda body" bash -c \
    "grep -q '^var $TX|_Z11torture_cxxiRK4Base|[0-9]*|i|int|loop|cond|args\$' tx-O0.txt &&
     grep -q '^var $TX|_Z8clampsumIiET_RKSt6vectorIS0_SaIS0_EES0_|[0-9]*|s|int|cond' tx-O0.txt &&
     grep -q '^var $TX|_ZZ11torture_cxxiRK4BaseENK3\$_0clEi|[0-9]*|k|int|cond' tx-O0.txt"

# Paths with characters the assembler string and the schema text must escape.
odd='we"ird\dir, ü%20'
mkdir -p "$odd" && cp "$F" "$odd/x.c"
"$VCC" -c "$odd/x.c" -o odd.o && dump_of odd.o > odd.txt
check "source path with quote, backslash, comma, %, UTF-8 survives" \
    grep -qF "var $odd/x.c|scan|17|i|int|loop|cond|args" odd.txt

# VPROF_COMPONENT: globs on the source path.
cp "$F" comp.c
mkdir -p storage/buf && cp "$F" storage/buf/lru.c
VPROF_COMPONENT='other/*' "$VCC" -c comp.c -o c1.o && dump_of c1.o > c1.txt
check "VPROF_COMPONENT not matching: no entries" test ! -s c1.txt
VPROF_COMPONENT='x/*:comp.c' "$VCC" -c comp.c -o c2.o && dump_of c2.o > c2.txt
check "VPROF_COMPONENT second of two globs matches" grep -q '|scan|' c2.txt
(cd storage && VPROF_COMPONENT='storage/buf/*' "$VCC" -c ../storage/buf/lru.c -o ../c3.o)
dump_of c3.o > c3.txt
check "VPROF_COMPONENT glob matches a path suffix (../storage/buf/lru.c)" grep -q '|scan|' c3.txt
VPROF_COMPONENT='' "$VCC" -c comp.c -o c4.o && dump_of c4.o > c4.txt
check "empty VPROF_COMPONENT selects everything" grep -q '|scan|' c4.txt

# Sections of several objects concatenate at link into one parseable schema.
"$VCC" -fPIC -c "$F" -o a.o && "$VCXX" -fPIC -Dmain=cxx_main -c "$G" -o b.o
clang++-14 -shared a.o b.o -o both.so
schema_of both.so both.txt
check "linked schema holds one text per object" test "$(grep -c '^# vprof-schema 1$' both.txt)" -eq 2
"$SCHEMA_DUMP" both.txt > both.dump
check "linked schema parses with entries from both objects" \
    has_lines both.dump "var $F|scan|17|i|int|loop|cond|args" "var $G|_Z3runi|17|j|int|loop|cond|args"
finish
