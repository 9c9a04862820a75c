/* A cache whose readers rebuild it when a member says it is stale
 * (tests/report/t_state_writers.sh): query() calls rebuild() when
 * !c->valid. set_item() invalidates it on every 1000th request in both
 * runs; on_update() - a heartbeat - invalidates it too, although nothing
 * the cache holds changed, and only the buggy run sends heartbeats
 * (argument: one every N requests; 0: none). The rebuilds cost; the
 * decision to make them was on_update's, off the stack of the cost.
 * 2,000,000 requests: with 400,000 the normal run had 1-2 ticks, and
 * rebuild's added cost (buggy - normal x the run's growth) swung from 0 to
 * all of it on whether one tick landed in it (rebuild ranked first in a CI
 * clone).
 *
 * Built with -DGEN_EPOCH, the cache also holds the generation it was built
 * in, and query() rebuilds it when it was never built or an older epoch
 * built it (`!c->valid || c->gen != E.gen`, the last test of an `||`
 * chain deciding); on_update() bumps the epoch instead of clearing the
 * flag, so the state it writes is the second test's. */
#include <stdio.h>
#include <stdlib.h>

struct cache { int valid; unsigned gen; long n; long items[4096]; };
struct epoch { unsigned gen; };
static struct cache C;
static struct epoch E;
static volatile long sink;

/* -DINLINED_REBUILD: rebuild is inlined into query, as -O2 does with a
 * small helper, and gmon sees no call of it (vprof-cc's counters must). */
#ifdef INLINED_REBUILD
static inline __attribute__((always_inline)) void rebuild(struct cache *c)
#else
__attribute__((noinline)) void rebuild(struct cache *c)
#endif
{
    for (int i = 0; i < 4096; i++) sink += c->items[i] * 3 + i;
    c->n++;
    c->valid = 1;
    c->gen = E.gen;
}

__attribute__((noinline)) void on_update(struct cache *c, int rating_changed)
{
    (void)rating_changed;
#ifdef GEN_EPOCH
    (void)c;
    E.gen++;            /* the fix: only when rating_changed */
#else
    c->valid = 0;       /* the fix: only when rating_changed */
#endif
}

__attribute__((noinline)) void set_item(int k, long v)
{
    C.items[k & 4095] = v;
    C.valid = 0;
}

__attribute__((noinline)) long query(struct cache *c, int k)
{
#ifdef GEN_EPOCH
    if (!c->valid || c->gen != E.gen)
#else
    if (!c->valid)
#endif
        rebuild(c);
    return c->items[k & 4095];
}

int main(int argc, char **argv)
{
    int heartbeats = argc > 1 ? atoi(argv[1]) : 0;
    long s = 0;
    for (int i = 0; i < 2000000; i++) {
        if (i % 1000 == 0) set_item(i, i);
        if (heartbeats && i % heartbeats == 0) on_update(&C, 0);
        s += query(&C, i);
    }
    printf("%d\n", s > 0);
    return 0;
}
