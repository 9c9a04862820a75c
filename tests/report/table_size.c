/* A chained hash table sized once (tests/report/t_sizers.sh): table_init()
 * gives it 64 buckets whatever the program will store (the fix: size it
 * for the expected entries), table_insert() fills it without ever
 * resizing, and lookup() walks the chains, comparing keys in key_eq().
 * The normal run stores 64 keys, the buggy one 2,048 with the same lookups
 * per key: every lookup walks ~32 times as far. The decision is
 * table_init's (or table_insert's missing resize), off the stack of the
 * lookups that pay. Argument: the number of keys. */
#include <stdio.h>
#include <stdlib.h>

struct ent { unsigned key; struct ent *next; };
struct table { unsigned nbuckets; struct ent **b; long count; };

__attribute__((noinline)) void table_init(struct table *t)
{
    t->nbuckets = 64;
    t->b = calloc(t->nbuckets, sizeof *t->b);
    t->count = 0;
}

static unsigned mix(unsigned k) { return k * 2654435761u; }

__attribute__((noinline)) void table_insert(struct table *t, struct ent *e)
{
    unsigned i = mix(e->key) & (t->nbuckets - 1);
    e->next = t->b[i];
    t->b[i] = e;
    t->count++;
}

__attribute__((noinline)) int key_eq(const struct ent *e, unsigned key)
{
    return e->key == key;
}

__attribute__((noinline)) struct ent *lookup(const struct table *t, unsigned key)
{
    struct ent *e = t->b[mix(key) & (t->nbuckets - 1)];
    while (e && !key_eq(e, key))
        e = e->next;
    return e;
}

int main(int argc, char **argv)
{
    unsigned n = argc > 1 ? (unsigned)atoi(argv[1]) : 64;
    struct table t;
    table_init(&t);
    struct ent *ents = calloc(n, sizeof *ents);
    for (unsigned i = 0; i < n; i++) {
        ents[i].key = i * 7 + 1;
        table_insert(&t, &ents[i]);
    }
    long found = 0;
    /* the same number of lookups per key in both */
    for (unsigned r = 0; r < 600; r++)
        for (unsigned i = 0; i < n; i++)
            found += lookup(&t, i * 7 + 1) != NULL;
    printf("%ld\n", found);
    return 0;
}
