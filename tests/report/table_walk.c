/* A chained hash table sized for its content (tests/report/t_sizers.sh):
 * table_init() gives it a bucket for every 4 keys the program will store
 * (16 at least), and lookup() counts lookups in an overloaded table - so
 * the bucket count is sampled - but walks the insertion-order link
 * instead of the bucket's chain: the same answers, a walk through every
 * older entry. The normal run stores 64 keys, the buggy one 1,024: every
 * lookup walks ~16 times as far, while the bucket count grew with the
 * keys (16 -> 256). The decision is lookup's own loop, not the table's
 * size: no sizer or filler may rank for it (table_size.c is the table
 * that does not grow). Argument: the number of keys. */
#include <stdio.h>
#include <stdlib.h>

struct ent { unsigned key; struct ent *next, *older; };
struct table { unsigned nbuckets; struct ent **b; long count; struct ent *last; };
static struct table tab;
static long overloaded;

__attribute__((noinline)) void table_init(unsigned want)
{
    tab.nbuckets = 16;
    while (4 * tab.nbuckets < want)
        tab.nbuckets <<= 1;
    tab.b = calloc(tab.nbuckets, sizeof *tab.b);
}

static unsigned mix(unsigned k) { return k * 2654435761u; }

__attribute__((noinline)) void table_insert(struct ent *e)
{
    unsigned i = mix(e->key) & (tab.nbuckets - 1);
    e->next = tab.b[i];
    tab.b[i] = e;
    e->older = tab.last;
    tab.last = e;
    tab.count++;
}

__attribute__((noinline)) int key_eq(const struct ent *e, unsigned key)
{
    return e->key == key;
}

__attribute__((noinline)) struct ent *lookup(unsigned key)
{
    if (tab.count > 4 * (long)tab.nbuckets)
        overloaded++;
    struct ent *e = tab.b[mix(key) & (tab.nbuckets - 1)];
    while (e && !key_eq(e, key))
        e = e->older;               /* the bug: e->next is the bucket's chain */
    return e;
}

int main(int argc, char **argv)
{
    unsigned n = argc > 1 ? (unsigned)atoi(argv[1]) : 64;
    table_init(n);
    struct ent *ents = calloc(n, sizeof *ents);
    for (unsigned i = 0; i < n; i++) {
        ents[i].key = i * 7 + 1;
        table_insert(&ents[i]);
    }
    long found = 0;
    /* the same number of lookups per key in both */
    for (unsigned r = 0; r < 300; r++)
        for (unsigned i = 0; i < n; i++)
            found += lookup(i * 7 + 1) != NULL;
    printf("%ld %ld\n", found, overloaded);
    return 0;
}
