#!/bin/bash
# Table sizes (FORMATS.md §1 `@sizes`): the schema pass records the global
# or member an index is reduced by - a mask (`h & (t->nbuckets - 1)`, `h &
# ((1 << hashpower) - 1)`, through a local mask too) or a modulus (`h %
# g_size`, in a helper that returns the index) - where the index addresses
# memory, `slot` when the function stores into the element; not a ring
# buffer's cursor (`(q->head + q->count) % q->cap`: the table's own state)
# nor a modulus by a local. The same lines at -O0 and -O2; no code change.
. tests/lib.sh
. tests/cc/lib_cc.sh
cd "$TMP"

cat > sz.c <<'C'
struct ent { unsigned h; struct ent *next; };
struct table { unsigned nbuckets; struct ent **b; long count; };
struct ring { unsigned head, count, cap; int *ring; };
unsigned hashpower = 4, g_size = 61;
struct ent *slots[1u << 20];
int cells[64];
void insert(struct table *t, struct ent *e)
{
    e->next = t->b[e->h & (t->nbuckets - 1)];
    t->b[e->h & (t->nbuckets - 1)] = e;
    t->count++;
}
struct ent *lookup(const struct table *t, unsigned h)
{
    unsigned long mask = t->nbuckets - 1;
    struct ent *e = t->b[h & mask];
    while (e && e->h != h)
        e = e->next;
    return e;
}
struct ent *find_pow(unsigned h)
{
    return slots[h & ((1u << hashpower) - 1)];
}
unsigned index_of(unsigned h)
{
    return h % g_size;
}
void push(struct ring *q, int v)
{
    q->ring[(q->head + q->count) % q->cap] = v;
    q->count++;
}
int cell(unsigned i, unsigned width)
{
    return cells[i % width];
}
C
for O in -O0 -O2; do
    "$VCC" $O -c sz.c -o sz$O.o && dump_of sz$O.o | grep '^sizes ' | sort > sz$O.txt
done
check "@sizes: masks and moduli by a global or member that index memory" diff - sz-O0.txt <<'SZ'
sizes sz.c|find_pow|23|index|hashpower
sizes sz.c|index_of|27|index|g_size
sizes sz.c|insert|10|slot|struct table.nbuckets
sizes sz.c|insert|9|index|struct table.nbuckets
sizes sz.c|lookup|16|index|struct table.nbuckets
SZ
check "@sizes: the same lines at -O2" cmp -s sz-O0.txt sz-O2.txt
check "pass leaves code unchanged at -O2 (sz.c)" same_code -O2 sz.c clang-14

# C++: a std::vector's element is an operator[] call at pipeline start
cat > szx.cc <<'CC'
#include <vector>
struct E { unsigned h; E *next; };
struct T {
    unsigned n;
    std::vector<E *> b;
    void put(E *e) { b[e->h & (n - 1)] = e; }
    E *get(unsigned h) const { return b.at(h % n); }
};
template struct std::vector<E *>;
void use(T &t, E *e) { t.put(e); (void)t.get(e->h); }
CC
"$VCXX" -O0 -c szx.cc -o szx.o && dump_of szx.o | grep '^sizes ' | sort > szx.txt
check "@sizes (C++): operator[] and at() are the index's use, a store into operator[]'s element a slot" diff - szx.txt <<'SZ'
sizes szx.cc|_ZN1T3putEP1E|6|slot|struct T.n
sizes szx.cc|_ZNK1T3getEj|7|index|struct T.n
SZ
finish
