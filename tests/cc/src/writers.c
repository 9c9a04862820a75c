/* Writers of globals and struct members (`@writes`, `@field`): the value a
 * function reads was decided by another function. tests/cc/t_writers.sh
 * finds the expected lines by the `w:` markers. */
#include <stdlib.h>
#include <string.h>

#include "writers.h"

long budget;                         /* decided at start-up */
struct cfg config;                   /* a global struct */
arena_t arenas[4];
static int flag_bits;

void init_budget(long mem)
{
    budget = mem / 4;                                /* w:budget */
}

void resize(struct ht *ht, unsigned n)
{
    ht->b = realloc(ht->b, n * sizeof *ht->b);       /* w:b */
    ht->nbuckets = n;                                /* w:nbuckets */
}

int lookup(struct ht *t, unsigned key)
{
    if (t->nbuckets == 0)
        return 0;
    t->in.hits++;                                    /* w:hits */
    return t->b[key % t->nbuckets] != 0;
}

void ingest(struct ht *t, long n)
{
    for (long k = 0; k < n && t->count < budget; k++) {
        t->count += 1;                               /* w:count */
        if (t->count > t->nbuckets * 2)
            resize(t, t->nbuckets * 2);
    }
}

void configure(int mode, struct stats *s)
{
    config.mode = mode;                              /* w:mode */
    config.st.ops = 0;                               /* w:st.ops */
    s->misses++;                                     /* w:misses */
    __atomic_fetch_add(&s->ops, 1, __ATOMIC_RELAXED);   /* w:atomic */
    flag_bits |= 1;                                  /* w:flag */
}

int reset(struct ht *t, arena_t *a, int i)
{
    memset(t, 0, sizeof *t);                         /* w:memset */
    arenas[i].used = 0;                              /* w:arenas */
    a->cap = 64;                                     /* w:cap */
    if (a->cap > budget && config.mode)
        a->used = a->cap;                            /* w:used */
    return flag_bits;
}

int main(int argc, char **argv)
{
    struct ht t = {0};
    arena_t a;
    struct stats st = {0};
    init_budget(argc > 1 ? atol(argv[1]) : 1000);
    configure(argc, &st);
    tweak(2);
    resize(&t, 8);
    ingest(&t, 100);
    if (config.level > 1)
        ingest(&t, 10);
    return lookup(&t, 3) + reset(&t, &a, 1) + (int)budget;
}
