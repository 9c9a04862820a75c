/* A chained hash table whose growth is capped too low (tests/report/
 * t_sizers.sh): table_insert() grows it when the entries outnumber the
 * buckets, table_rehash() stores the new bucket count its caller passes,
 * and next_buckets() - which computes that count - caps it at 64 (the fix:
 * cap at the allocator's limit). The normal run stores 64 keys, the buggy
 * one 2,048 with the same lookups per key: every lookup walks ~32 times as
 * far. The size was computed in next_buckets, off the stack of the lookups
 * that pay and of the store that wrote it. Argument: the number of keys. */
#include <stdio.h>
#include <stdlib.h>

struct ent { unsigned key; struct ent *next; };
struct table { unsigned nbuckets; struct ent **b; long count; };

static unsigned mix(unsigned k) { return k * 2654435761u; }

__attribute__((noinline)) unsigned next_buckets(const struct table *t)
{
    unsigned next = t->nbuckets * 2;
    return next > 64 ? t->nbuckets : next;
}

__attribute__((noinline)) void table_rehash(struct table *t, unsigned nbuckets)
{
    struct ent **old = t->b;
    unsigned n_old = t->nbuckets;
    t->b = calloc(nbuckets, sizeof *t->b);
    t->nbuckets = nbuckets;
    for (unsigned i = 0; i < n_old; i++)
        for (struct ent *e = old[i], *nx; e; e = nx) {
            nx = e->next;
            unsigned h = mix(e->key) & (t->nbuckets - 1);
            e->next = t->b[h];
            t->b[h] = e;
        }
    free(old);
}

__attribute__((noinline)) void table_insert(struct table *t, struct ent *e)
{
    if (t->count >= t->nbuckets) {
        unsigned n = next_buckets(t);
        if (n != t->nbuckets)
            table_rehash(t, n);
    }
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
    struct table t = {8, calloc(8, sizeof(struct ent *)), 0};
    struct ent *ents = calloc(n, sizeof *ents);
    for (unsigned i = 0; i < n; i++) {
        ents[i].key = i * 7 + 1;
        table_insert(&t, &ents[i]);
    }
    long found = 0;
    /* the same number of lookups per key in both */
    for (unsigned r = 0; r < 1500; r++)
        for (unsigned i = 0; i < n; i++)
            found += lookup(&t, i * 7 + 1) != NULL;
    printf("%ld\n", found);
    return 0;
}
