#!/bin/bash
# Writers (FORMATS.md §1 `@writes`, `@field`): the schema pass records which
# function stores into each global and struct member, the same at -O0 and
# -O2, in C and C++, without changing the code; vprof-report's
# vpr_writers_of joins a variable read in one function with the functions
# that write it (resize() writing ht->nbuckets for lookup()'s t->nbuckets,
# init_budget() writing the global budget that ingest() reads).
. tests/lib.sh
. tests/cc/lib_cc.sh
cd "$TMP"

W=$CC_SRC/writers.c; X=$CC_SRC/writers_ext.c; P=$CC_SRC/writers.cpp
ln() { grep -nE "w:$2( |\$)" "$1" | cut -d: -f1; }   # line of marker w:$2 in $1
# lines_of NAME KIND: NAME.c built at -O0 and -O2, its schema's KIND lines
# sorted into NAME-O0.txt and NAME-O2.txt
lines_of() {
    for O in -O0 -O2; do
        "$VCC" $O -c "$1.c" -o "$1$O.o" && dump_of "$1$O.o" | grep "^$2 " | sort > "$1$O.txt"
    done
}

for O in -O0 -O2; do
    "$VCC" $O -c "$W" -o w$O.o && dump_of w$O.o > w$O.txt
    grep -e '^writes ' -e '^field ' w$O.txt | sort > wf$O.txt
done
check "writer and field lines are the same at -O0 and -O2" \
    bash -c "test -s wf-O0.txt && cmp -s wf-O0.txt wf-O2.txt"
check "C: writers of globals, members by type, global members, whole objects" has_lines w-O0.txt \
    "writes $W|init_budget|$(ln $W budget)|budget" \
    "writes $W|resize|$(ln $W nbuckets)|struct ht.nbuckets" \
    "writes $W|resize|$(ln $W b)|struct ht.b" \
    "writes $W|ingest|$(ln $W count)|struct ht.count" \
    "writes $W|configure|$(ln $W mode)|config.mode" \
    "writes $W|configure|$(ln $W misses)|struct stats.misses" \
    "writes $W|configure|$(ln $W flag)|flag_bits" \
    "writes $W|reset|$(ln $W memset)|struct ht" \
    "writes $W|reset|$(ln $W cap)|struct arena_t.cap" \
    "writes $W|reset|$(ln $W used)|struct arena_t.used"
check "C: nested member by its innermost struct (config.st.ops), atomic RMW" has_lines w-O0.txt \
    "writes $W|configure|$(ln $W st.ops)|struct stats.ops" \
    "writes $W|configure|$(ln $W atomic)|struct stats.ops"
check "C: element of a global array of structs by type; typedef'd anonymous struct by its typedef" \
    has_lines w-O0.txt "writes $W|reset|$(ln $W arenas)|struct arena_t.used"
check "C: member of an anonymous nested struct names the enclosing member" \
    has_lines w-O0.txt "writes $W|lookup|$(ln $W hits)|struct ht.in"
check "C: member variables carry their struct member (@field)" has_lines w-O0.txt \
    "field $W|lookup|t->nbuckets|struct ht.nbuckets|0" \
    "field $W|ingest|t->count|struct ht.count|4" \
    "field $W|reset|a->cap|struct arena_t.cap|8" \
    "field $W|#global|config.mode|struct cfg.mode|0"
check "C: no writer for locals (main's t, a, st) or a function's own scalars" \
    bash -c "! grep -q '^writes .*|main|' w-O0.txt"

"$VCC" -O1 -c "$X" -o x.o && dump_of x.o > x.txt
check "extern global without a debug type here: member by byte offset (config+24)" has_lines x.txt \
    "writes $X|tweak|$(ln $X ext.level)|config+24" "writes $X|tweak|$(ln $X ext.budget)|budget"

"$VCXX" -O2 -c "$P" -o p.o && dump_of p.o > p.txt
check "C++: this->member in a class template and a namespaced class, by mangled function" has_lines p.txt \
    "writes $P|_ZN5store3VecIiE4growEm|$(ln $P cap)|struct store::Vec<int>.cap" \
    "writes $P|_ZN5store3VecIiE4pushEi|$(ln $P len)|struct store::Vec<int>.len" \
    "writes $P|_ZN5store4Pool4giveEv|$(ln $P nfree)|class store::Pool.nfree" \
    "writes $P|_Z3runi|$(ln $P data)|struct store::Vec<int>.data" \
    "field $P|_Z4scanPN5store3VecIiEEPNS_4PoolE|v->len|struct store::Vec<int>.len|8" \
    "field $P|_Z4scanPN5store3VecIiEEPNS_4PoolE|p->nfree|class store::Pool.nfree|0"

check_same_code "$W" "$P"

# The report side: a program linked from both units; its schema section
# parsed into a model and queried with vpr_writers_of.
Q=$TMP/writers_query
cc -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -I"$VPROF_ROOT/vprof-report" \
    -I"$VPROF_ROOT/libvprof/format" "$VPROF_ROOT/tests/report/writers_query.c" \
    "$VPROF_ROOT/vprof-report/writers.c" "$VPROF_LIB/libvprof-format.a" -o "$Q" ||
    { not_ok "writers_query builds"; finish; }
for O in -O0 -O2; do
    "$VCC" $O -o prog$O "$W" "$X" 2>/dev/null && schema_of prog$O prog$O.schema ||
        { not_ok "program links at $O"; continue; }
    "$Q" prog$O.schema "$W|lookup|t->nbuckets" "$W|ingest|budget" "$W|#global|budget" \
        "$W|#global|config.mode" "$W|#global|config.level" "$W|reset|a->cap" \
        "$W|main|argc" > q$O.txt
    check "$O: lookup's t->nbuckets is written by resize (by type) and reset's memset" has_lines q$O.txt \
        "t->nbuckets <- type resize $W:$(ln $W nbuckets) struct ht.nbuckets" \
        "t->nbuckets <- type reset $W:$(ln $W memset) struct ht"
    check "$O: lookup's t->nbuckets has exactly those two writers" \
        test "$(grep -c '^t->nbuckets <- ' q$O.txt)" -eq 2
    check "$O: the global budget read in ingest is written by init_budget and tweak" has_lines q$O.txt \
        "budget <- direct init_budget $W:$(ln $W budget) budget" \
        "budget <- direct tweak $X:$(ln $X ext.budget) budget"
    check "$O: budget has no other writer" test "$(grep -c '^budget <- direct' q$O.txt)" -eq 2
    check "$O: config.mode written by configure only (not by tweak's config.level)" bash -c \
        "grep -qFx 'config.mode <- direct configure $W:$(ln $W mode) config.mode' q$O.txt &&
         test \$(grep -c '^config.mode <- ' q$O.txt) -eq 1"
    check "$O: config.level written by tweak through the extern's byte offset" has_lines q$O.txt \
        "config.level <- direct tweak $X:$(ln $X ext.level) config+24"
    check "$O: a->cap written by reset, by type" has_lines q$O.txt \
        "a->cap <- type reset $W:$(ln $W cap) struct arena_t.cap"
    check "$O: a local (argc) has no writers" has_lines q$O.txt "argc <- none"
    # the same joins for a state as a @guardstate line names it
    "$Q" prog$O.schema "@struct ht.nbuckets" "@budget" "@config.mode" "@config.level" \
        "@struct nosuch.f" > s$O.txt
    check "$O: state struct ht.nbuckets: resize and reset's memset, by type" has_lines s$O.txt \
        "struct ht.nbuckets <- type resize $W:$(ln $W nbuckets) struct ht.nbuckets" \
        "struct ht.nbuckets <- type reset $W:$(ln $W memset) struct ht"
    check "$O: states budget, config.mode, config.level: as their variables" has_lines s$O.txt \
        "budget <- direct init_budget $W:$(ln $W budget) budget" \
        "budget <- direct tweak $X:$(ln $X ext.budget) budget" \
        "config.mode <- direct configure $W:$(ln $W mode) config.mode" \
        "config.level <- direct tweak $X:$(ln $X ext.level) config+24" \
        "struct nosuch.f <- none"
done
# `ingest|budget` is not how the schema names a global: only #global is.
check "a global is queried as #global (ingest|budget: none)" has_lines q-O0.txt "budget <- none"

# Join rules on a hand-written schema: global instances of a struct type,
# whole-object writes, duplicates from an inline function in two objects.
cat > s.schema <<'EOF'
# vprof-schema 1
a.c, #global, 3, g.n, int, cond
a.c, f, 9, p->n, int, cond
@field, a.c, #global, g.n, struct S.n, 4
@field, a.c, f, p->n, struct S.n, 4
@field, b.c, #global, h.n, struct S.n, 4
@field, b.c, #global, h.m, struct S.m, 0
@writes, b.c, set_h, 5, h.n
@writes, c.c, set_h2, 6, h+4
@writes, c.c, set_hm, 7, h+0
@writes, a.c, clear, 8, g
@writes, a.c, zero, 9, struct S
@writes, a.h, inl, 2, struct S.n
# vprof-schema 1
@writes, a.h, inl, 2, struct S.n
@writes, a.c, other, 3, struct T.n
@writes, a.c, gm, 4, g.m
EOF
"$Q" s.schema "a.c|f|p->n" "a.c|#global|g.n" > s.txt
check "by type: global instances (h.n, h+4), whole objects, deduplicated, ordered" \
    diff - s.txt <<'EOF'
p->n <- type clear a.c:8 g
p->n <- type zero a.c:9 struct S
p->n <- type inl a.h:2 struct S.n
p->n <- type set_h b.c:5 h.n
p->n <- type set_h2 c.c:6 h+4
g.n <- direct clear a.c:8 g
g.n <- type zero a.c:9 struct S
g.n <- type inl a.h:2 struct S.n
g.n <- type set_h b.c:5 h.n
g.n <- type set_h2 c.c:6 h+4
EOF

# @from: a local that takes a function's return value (`level =
# random_level()`), the same at -O0 and -O2; not a global, not a member,
# not a value computed from a call's result; a choice between an answer
# and a constant (`k > 0 ? random_level() : 0`, either way round, nested)
# is the answer's, a choice between an answer and another variable is not
cat > fr.c <<'C'
#include <stdlib.h>
struct node { int level; };
int g;
static int random_level(void) { return rand() % 4 + 1; }
static long budget(int k) { return k * 8L; }
int insert(struct node *n, int k)
{
    int level = random_level();
    long mag = labs((long)k);
    int twice = 2 * random_level();
    n->level = random_level();
    g = random_level();
    long b = k > 0 ? budget(k) : 0;
    long c = k > 9 ? 1 : k > 0 ? budget(k) : random_level();
    long d = k > 0 ? budget(k) : mag;
    return level + (int)mag + twice + (int)(b + c + d);
}
C
lines_of fr from
check "@from: level and mag (a library function too), by the line of the call; b and c through a choice with constants, not d" diff - fr-O0.txt <<'EOF'
from fr.c|insert|13|b|budget
from fr.c|insert|14|c|budget
from fr.c|insert|14|c|random_level
from fr.c|insert|8|level|random_level
from fr.c|insert|9|mag|labs
EOF
check "@from: the same lines at -O2 (the pass runs before the optimizer)" cmp -s fr-O0.txt fr-O2.txt

# @setfrom: a global or member that takes a function's answer as it is
# (`n->level = random_level()`, `g = random_level()`), named as @writes
# names the store; not a computed value, not a local (those are @from)
lines_of fr setfrom
check "@setfrom: the member and the global that store random_level's answer" diff - fr-O0.txt <<'EOF'
setfrom fr.c|insert|11|struct node.level|random_level
setfrom fr.c|insert|12|g|random_level
EOF
check "@setfrom: the same lines at -O2" cmp -s fr-O0.txt fr-O2.txt

# @setfrom through a parameter: a resize stores its argument as passed
# (`t->nbuckets = n`), and a caller in the unit passes a function's answer,
# directly or through a local holding it: the size is that function's.
# Not when the caller passes a computed value (grow_by's n * 2), nor a
# parameter reassigned before the store (clamp's n), nor a local whose
# address escapes (maybe's).
cat > sp.c <<'C'
struct tab { unsigned nbuckets, cap; };
unsigned next_size(const struct tab *t);
unsigned other_size(void);
void take(unsigned *p);
static void resize(struct tab *t, unsigned n) { t->nbuckets = n; }
static void clamp(struct tab *t, unsigned n) { if (n > 64) n = 64; t->cap = n; }
void grow(struct tab *t)
{
    unsigned n = next_size(t);
    if (n != t->nbuckets)
        resize(t, n);
}
void grow_now(struct tab *t) { resize(t, other_size()); }
void grow_by(struct tab *t, unsigned n) { resize(t, n * 2); clamp(t, next_size(t)); }
void maybe(struct tab *t)
{
    unsigned n = next_size(t);
    take(&n);
    resize(t, n);
}
C
lines_of sp setfrom
check "@setfrom: a parameter stored as passed, the answers its callers pass (directly, through a local)" diff - sp-O0.txt <<'EOF'
setfrom sp.c|resize|5|struct tab.nbuckets|next_size
setfrom sp.c|resize|5|struct tab.nbuckets|other_size
EOF
check "@setfrom (parameter): the same lines at -O2" cmp -s sp-O0.txt sp-O2.txt

# @predicate: a function that answers a truth value (comparisons, 0 or 1,
# && and ||, through a `retval` or a bool local) and changes nothing (its
# own locals only; callees that change nothing either, one called twice
# too). Not a count or a
# length (size_of), not a predicate that counts its calls (noisy) or
# calls one that does (via), not one that calls an unknown function, not
# a search (contains: a loop; its answer is a fact about the data).
cat > pd.c <<'C'
#include <stdbool.h>
struct b { unsigned count, max; unsigned long oldest; };
static long n_asked;
int external(int);
static int full(const struct b *b) { return b->count >= b->max; }
static int due(const struct b *b, unsigned long now)
{
    if (full(b) && full(b))
        return 1;
    return b->count > 0 && now - b->oldest >= 100;
}
static bool stale(const struct b *b) { bool s = b->oldest < 5; return !s ? false : b->count == 0; }
static unsigned size_of(const struct b *b) { return b->count; }
static int noisy(const struct b *b) { n_asked++; return b->count > 3; }
static int via(const struct b *b) { return noisy(b) && b->max > 1; }
static int unknown(const struct b *b) { return external(b->count) > 0; }
static int contains(const int *keys, int n, int k)
{
    for (int i = 0; i < n; i++)
        if (keys[i] == k)
            return 1;
    return 0;
}
long use(struct b *b, unsigned long now)
{
    return due(b, now) + stale(b) + (long)size_of(b) + noisy(b) + via(b) + unknown(b) +
           contains((const int *)b, 2, 3);
}
C
lines_of pd predicate
check "@predicate: due (calls full twice), full, stale (a bool local); not a count, a writer, its caller, an unknown call, a search" diff - pd-O0.txt <<'EOF'
predicate pd.c|due|6|truth|pure
predicate pd.c|full|5|truth|pure
predicate pd.c|stale|12|truth|pure
EOF
check "@predicate: the same lines at -O2" cmp -s pd-O0.txt pd-O2.txt

# @guard: a call made only when a branch on another function's answer goes
# its way - `if (pred()) call()`, `if (!pred()) return; call()`, a compared
# answer - named with the nearest such predicate (limit() itself runs only
# when should_log said so); not a call under a plain condition, not a loop
# body under the loop's own condition (walk: `while (next_item(it))`)
cat > gd.c <<'C'
#include <stdio.h>
static int needs_flush(int n) { return n > 64; }
static int should_log(int lvl) { return lvl > 2; }
static long limit(void) { return 100; }
void flush(void);
void format_event(int e);
void account(int e);
int next_item(int *it);
void visit(int it);
void walk(int *it)
{
    while (next_item(it))
        visit(*it);
}
void step(int n, int lvl, long k)
{
    if (needs_flush(n))
        flush();
    if (!should_log(lvl))
        return;
    format_event(n);
    if (k >= limit())
        account(n);
    if (n > 3)
        account(-n);
}
C
lines_of gd guard
check "@guard: the calls each predicate's answer decides, by the line of the call" diff - gd-O0.txt <<'GD'
guard gd.c|step|18|flush|needs_flush
guard gd.c|step|21|format_event|should_log
guard gd.c|step|22|limit|should_log
guard gd.c|step|23|account|limit
guard gd.c|step|25|account|should_log
GD
check "@guard: the same lines at -O2 (the pass runs before the optimizer)" cmp -s gd-O0.txt gd-O2.txt

# @guard through a veto: the miss path after `if (e && fresh(e)) { ...;
# return; }` runs when e is null or fresh() says no - fresh()'s answer can
# keep it from running (its other edge returns), so it names the calls
# there; a branch whose other edge comes back (a plain if/else joining) is
# no veto, and neither is a test of a stored answer (`e`)
cat > vt.c <<'C'
struct ent { long t; };
struct ent *lookup(long k);
int fresh(const struct ent *e);
void touch(struct ent *e);
long load(long k);
void note(long k);
int ok(long k);
long get(long k)
{
    struct ent *e = lookup(k);
    if (e && fresh(e)) {
        touch(e);
        return e->t;
    }
    long v = load(k);
    if (ok(k))
        note(k);
    else
        note(-k);
    touch(e);
    return v;
}
C
lines_of vt guard
check "@guard: a predicate that can veto a block names its calls (load, the touch after the if/else)" diff - vt-O0.txt <<'VT'
guard vt.c|get|12|touch|fresh
guard vt.c|get|15|load|fresh
guard vt.c|get|16|ok|fresh
guard vt.c|get|17|note|ok
guard vt.c|get|19|note|ok
guard vt.c|get|20|touch|fresh
VT
check "@guard (veto): the same lines at -O2" cmp -s vt-O0.txt vt-O2.txt

# The same veto in a loop: `continue` after a fresh entry comes back to the
# miss path only in the next iteration, which is another decision
cat > vl.c <<'C'
struct ent { long t; };
struct ent *lookup(long k);
int fresh(const struct ent *e);
long load(long k);
void touch(struct ent *e);
long scan(long *keys, int n)
{
    long s = 0;
    for (int i = 0; i < n; i++) {
        struct ent *e = lookup(keys[i]);
        if (e && fresh(e)) {
            touch(e);
            continue;
        }
        s += load(keys[i]);
    }
    return s;
}
C
lines_of vl guard
check "@guard (veto in a loop): fresh() names the miss path's load" diff - vl-O0.txt <<'VL'
guard vl.c|scan|12|touch|fresh
guard vl.c|scan|15|load|fresh
VL
check "@guard (veto in a loop): the same lines at -O2" cmp -s vl-O0.txt vl-O2.txt

# @guardstate: a call whose nearest deciding branch is on a loaded global or
# member, the state named as @writes names it (a member by type, a global by
# name, a global's member as g.f); not a branch on a predicate (that is a
# @guard), on a local or argument, or a loop's own condition
cat > gs.c <<'C'
struct cache { int valid; long n; };
struct stats { long hits; };
struct stats st;
long hash_items, limit_;
void rebuild(struct cache *c);
void expand(void);
void reset(void);
void visit(long i);
int full(long n);
void flush(void);
void query(struct cache *c, int local)
{
    if (!c->valid)
        rebuild(c);
    if (hash_items > limit_)
        expand();
    if (st.hits > 100)
        reset();
    if (local > 3)
        visit(local);
    for (long i = 0; i < c->n; i++)
        visit(i);
    if (full(c->n))
        flush();
}
C
lines_of gs guardstate
check "@guardstate: the calls a loaded member or global decides, with the state" diff - gs-O0.txt <<'GS'
guardstate gs.c|query|14|rebuild|struct cache.valid
guardstate gs.c|query|16|expand|hash_items
guardstate gs.c|query|16|expand|limit_
guardstate gs.c|query|18|reset|st.hits
GS
check "@guardstate: the same lines at -O2" cmp -s gs-O0.txt gs-O2.txt

# @guardstate at a join: the calls of a block entered from several tests
# that one of them can keep from running - the last test of an `||` chain
# (refill: a slot never used, or filled under an older generation), here
# in a loop (the skipped edge's next iteration does not count as coming
# back) - name the state of every test that enters it; an if/else that
# joins again (note after both arms) decides nothing, and a `&&` chain is
# decided by its last test alone (rebuild)
cat > gj.c <<'C'
struct slot { int used; unsigned gen; long v; };
struct agent { unsigned gen; int dirty; long n; };
void refill(struct slot *s);
void note(long v);
void rebuild(struct agent *a);
long serve(struct agent *ag, struct slot *slots, int n)
{
    long sum = 0;
    for (int i = 0; i < n; i++) {
        struct slot *s = &slots[i];
        if (!s->used || s->gen != ag->gen)
            refill(s);
        if (s->v > 0)
            sum += s->v;
        else
            sum -= s->v;
        note(sum);
    }
    if (ag->dirty && ag->n > 10)
        rebuild(ag);
    return sum;
}
C
lines_of gj guardstate
check "@guardstate: an || chain names each test's state, a && chain its last" diff - gj-O0.txt <<'GJ'
guardstate gj.c|serve|12|refill|struct agent.gen
guardstate gj.c|serve|12|refill|struct slot.gen
guardstate gj.c|serve|12|refill|struct slot.used
guardstate gj.c|serve|20|rebuild|struct agent.n
GJ
check "@guardstate (join): the same lines at -O2" cmp -s gj-O0.txt gj-O2.txt
finish
