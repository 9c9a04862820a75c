#!/bin/bash
# Container items (FORMATS.md §1 `@items`): the schema pass records, per
# function, the std:: containers held in a member or a global that it adds
# to (push_back, emplace_back, push, insert: `add`) or walks (size(),
# data(), begin(), end() in a function with a loop: `walk`). Not a string's
# characters, not a program's own method named insert() or size(), not a
# size() check in a function without a loop. The same lines at -O0 and
# -O2; no code change.
. tests/lib.sh
. tests/cc/lib_cc.sh
cd "$TMP"

cat > it.cc <<'CC'
#include <string>
#include <vector>
#include <queue>
struct Sub { unsigned session; unsigned char qos; };
struct Node { std::vector<Sub> subs; std::string name; };
struct Own { int n; void insert(int) { n++; } unsigned size() const { return n; } };
std::queue<int> g_work;
Own g_own;
void subscribe(Node *node, unsigned s)
{
    node->subs.push_back({s, 1});
}
unsigned offer_all(const Node *node)
{
    unsigned t = 0;
    for (const Sub &s : node->subs)
        t += s.session;
    return t;
}
unsigned name_len(const Node *node)
{
    unsigned t = 0;
    for (unsigned i = 0; i < node->name.size(); i++)
        t += node->name[i];
    return t;
}
bool has_subs(const Node *node)
{
    return node->subs.size() > 0;
}
void enqueue(int x)
{
    g_work.push(x);
    g_own.insert(x);
}
unsigned own_walk()
{
    unsigned t = 0;
    for (unsigned i = 0; i < g_own.size(); i++)
        t += i;
    return t;
}
CC
for O in -O0 -O2; do
    "$VCXX" $O -c it.cc -o it$O.o && dump_of it$O.o | grep '^items ' | sort > it$O.txt
done
check "@items: adds and walks of std:: containers held in members and globals" diff - it-O0.txt <<'IT'
items it.cc|_Z7enqueuei|33|add|g_work
items it.cc|_Z9offer_allPK4Node|16|walk|struct Node.subs
items it.cc|_Z9subscribeP4Nodej|11|add|struct Node.subs
IT
check "@items: the same lines at -O2" cmp -s it-O0.txt it-O2.txt
check "pass leaves code unchanged at -O2 (it.cc)" same_code -O2 it.cc clang++-14

# Arrays held in a member or a global: an append stores into the element a
# count the function increments indexes (`seg->index[seg->nindex++] = e`,
# `g_log[g_n] = x; g_n++`), a scan loads an element in a loop (through a
# local that holds the array too); an add made only when a predicate's
# answer says so gets an @addguard line naming it. Not a store at a
# computed index (`t->b[h] = e`: a table's slot), not an element read
# outside a loop, not a local array.
cat > ra.c <<'C'
struct entry { unsigned off, pos; };
struct seg { struct entry *index; unsigned nindex, size; struct entry fixed[8]; unsigned nfixed; };
int g_log[64];
unsigned g_n;
static int entry_due(const struct seg *s) { return s->size % 4096 == 0; }
void append(struct seg *s, unsigned off)
{
    if (entry_due(s))
        s->index[s->nindex++] = (struct entry){off, s->size};
    s->fixed[s->nfixed++].pos = off;
    s->size += 100;
}
void note(int x)
{
    g_log[g_n] = x;
    g_n++;
}
void put(struct seg *s, unsigned h, unsigned off)
{
    s->index[h % 7] = (struct entry){off, 0};
}
unsigned lookup(const struct seg *s, unsigned off)
{
    unsigned lo = 0, hi = s->nindex;
    while (hi - lo > 1) {
        unsigned mid = (lo + hi) / 2;
        if (s->index[mid].off <= off) lo = mid; else hi = mid;
    }
    return s->index[lo].pos;
}
int sum_log(void)
{
    const int *l = g_log;
    int t = 0, local[4] = {0};
    for (unsigned i = 0; i < g_n; i++)
        t += l[i] + local[i & 3];
    return t;
}
C
for O in -O0 -O2; do
    "$VCC" $O -c ra.c -o ra$O.o && dump_of ra$O.o | grep -e '^items ' -e '^addguard ' | sort > ra$O.txt
done
check "@items of arrays: appends at an incremented count, element reads in loops; @addguard for a predicate's add" diff - ra-O0.txt <<'IT'
addguard ra.c|append|9|struct seg.index|entry_due
items ra.c|append|10|append|struct seg.fixed
items ra.c|append|9|append|struct seg.index
items ra.c|lookup|27|scan|struct seg.index
items ra.c|note|15|append|g_log
items ra.c|sum_log|36|scan|g_log
IT
check "@items of arrays: the same lines at -O2" cmp -s ra-O0.txt ra-O2.txt
check "pass leaves code unchanged at -O2 (ra.c)" same_code -O2 ra.c clang-14

# Ranges (@bounds): a loop whose variable starts from one member and is
# held against another of the same struct (`for (c = d->lo; c < d->hi;
# c++)`), or of the same global; not a loop over a count (`i < g->n`).
cat > rg.c <<'C'
struct span { int lo, hi; };
struct grid { struct span dmg[8]; int n; int cells[64]; };
struct win { int start, end; } g_win;
int paint(const struct grid *g)
{
    int t = 0;
    for (int r = 0; r < 8; r++)
        for (int c = g->dmg[r].lo; c < g->dmg[r].hi; c++)
            t += g->cells[c];
    return t;
}
int count(const struct grid *g)
{
    int t = 0;
    for (int i = 0; i < g->n; i++)
        t += g->cells[i];
    return t;
}
int sum_win(const int *a)
{
    int t = 0;
    for (int i = g_win.start; i < g_win.end; i++)
        t += a[i];
    return t;
}
C
for O in -O0 -O2; do
    "$VCC" $O -c rg.c -o rg$O.o && dump_of rg$O.o | grep '^bounds ' | sort > rg$O.txt
done
check "@bounds: ranges held in members of one struct or one global, not a count" diff - rg-O0.txt <<'IT'
bounds rg.c|paint|8|hi|struct span.hi
bounds rg.c|paint|8|lo|struct span.lo
bounds rg.c|sum_win|22|hi|g_win.end
bounds rg.c|sum_win|22|lo|g_win.start
IT
check "@bounds: the same lines at -O2" cmp -s rg-O0.txt rg-O2.txt

# Stops (@stops): a test that leaves a loop when a value reaches a limit
# held in a member or a global - a break through clang's cleanup slot
# (search), a loop condition on a call's answer (wait); not a counter or a
# cursor against a length (count, scan, a doubling width), not a key found (find), not an
# element an index selects (per_row)
cat > st.c <<'C'
struct plan { unsigned nice; };
struct buf { unsigned len; unsigned char *p; };
struct node { int key; struct node *next; };
struct tab { unsigned n; unsigned lim[8]; };
unsigned long g_deadline;
unsigned match(unsigned c);
unsigned long now_us(void);
unsigned step(const struct buf *b, unsigned pos);
unsigned search(const struct plan *p, unsigned c)
{
    unsigned best = 0;
    for (unsigned chain = 0; chain < 100; chain++) {
        unsigned len = match(c + chain);
        if (len > best) {
            best = len;
            if (len >= p->nice)
                break;
        }
    }
    return best;
}
unsigned wait(void)
{
    unsigned polls = 0;
    while (now_us() < g_deadline)
        polls++;
    return polls;
}
unsigned count(const struct tab *t)
{
    unsigned s = 0;
    for (unsigned i = 0; i < t->n; i++)
        s += i;
    return s;
}
unsigned scan(const struct buf *b)
{
    unsigned pos = 0, n = 0;
    while (pos < b->len) {
        pos += step(b, pos);
        n++;
    }
    return n;
}
struct node *find(struct node *e, int k)
{
    while (e && e->key != k)
        e = e->next;
    return e;
}
unsigned widths(const struct tab *t)
{
    unsigned s = 0;
    for (unsigned w = 1; w < t->n; w *= 2)
        s += w;
    return s;
}
unsigned per_row(const struct tab *t, int r)
{
    unsigned v = 0;
    while (match(v) < t->lim[r])
        v++;
    return v;
}
C
for O in -O0 -O2; do
    "$VCC" $O -c st.c -o st$O.o && dump_of st$O.o | grep '^stops ' | sort > st$O.txt
done
check "@stops: a break at a member limit, a loop held against a global; no count, cursor, key or element" diff - st-O0.txt <<'IT'
stops st.c|search|16|limit|struct plan.nice
stops st.c|wait|25|limit|g_deadline
IT
check "@stops: the same lines at -O2" cmp -s st-O0.txt st-O2.txt
finish
