/* A memcached-like cache whose hash table stops expanding after a burst of
 * SETs, modelled on memcached PR #340 ("remove redundant counter/lock from
 * hash table": "this actually ends up fixing an obscure bug: if you burst a
 * bunch of sets then stop, the hash table won't attempt to expand a second
 * time until the next insert. with this change, every second the hash
 * table has a chance of expanding again").
 *
 * The event loop serves SETs and GETs; a clock event runs once per
 * (simulated) second: it refreshes current_time from the real clock and
 * runs the hash-table maintenance, which doubles the table when an
 * expansion was requested.
 *
 * The bug: only assoc_insert() asks for an expansion, when the items pass
 * 1.5 x the buckets, and it cannot ask again while one is pending. SETs
 * spread over many seconds (normal) keep the table growing; the same
 * 200,000 SETs in one burst (buggy) get one doubling at the next tick and
 * then no insert ever asks again: every GET walks chains of about 12
 * items. gprof blames the key comparison and assoc_find; the insert-time
 * check is the root cause (the fix checks from the clock event). */
#include "../common/corpus.h"
#include <time.h>

#define KEY_MAX 24

typedef struct item {
    struct item *h_next;
    uint32_t exptime, time;            /* rel_time */
    uint8_t nkey;
    char key[KEY_MAX];
    uint64_t value;
} item;

static item **primary_hashtable;
static unsigned int hashpower = 13;
static unsigned long hash_items;
static int started_expanding;
static volatile uint32_t current_time;   /* seconds since start, from the clock */
static time_t process_started;
static struct { uint64_t get_hits, get_misses, cmd_set, expansions; } stats;
static uint64_t key_compares;          /* item_key_matches calls */

#define hashsize(n) ((unsigned long)1 << (n))
#define hashmask(n) (hashsize(n) - 1)

static uint32_t hash(const char *key, size_t n)
{
    uint32_t h = 0x811c9dc5u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (uint8_t)key[i]) * 0x01000193u;
    return h ^ (h >> 16);
}

static int item_key_matches(const item *it, const char *key, size_t nkey)
{
    key_compares++;
    return it->nkey == nkey && memcmp(it->key, key, nkey) == 0;
}

static item *assoc_find(const char *key, size_t nkey, uint32_t hv)
{
    for (item *it = primary_hashtable[hv & hashmask(hashpower)]; it; it = it->h_next)
        if (item_key_matches(it, key, nkey))
            return it;
    return NULL;
}

static __attribute__((unused)) void assoc_start_expand(void)
{
    started_expanding = 1;             /* the maintenance work runs at the next tick */
}

static void assoc_insert(item *it, uint32_t hv)
{
    it->h_next = primary_hashtable[hv & hashmask(hashpower)];
    primary_hashtable[hv & hashmask(hashpower)] = it;
    hash_items++;
#ifndef VPROF_CASE_FIX
    if (!started_expanding && hash_items > (hashsize(hashpower) * 3) / 2) /* FIX: check for expansion from the clock event, not only here */
        assoc_start_expand();
#endif
}

/* The maintenance thread's work: double the table and move every item. */
static void assoc_expand(void)
{
    unsigned int newpower = hashpower + 1;
    item **t = calloc(hashsize(newpower), sizeof *t);
    if (!t) { perror("calloc"); exit(1); }
    for (unsigned long b = 0; b < hashsize(hashpower); b++)
        for (item *it = primary_hashtable[b], *next; it; it = next) {
            next = it->h_next;
            uint32_t hv = hash(it->key, it->nkey);
            it->h_next = t[hv & hashmask(newpower)];
            t[hv & hashmask(newpower)] = it;
        }
    free(primary_hashtable);
    primary_hashtable = t;
    hashpower = newpower;
    stats.expansions++;
}

static void assoc_maintenance_tick(void)
{
#ifdef VPROF_CASE_FIX
    if (hash_items > (hashsize(hashpower) * 3) / 2)
        started_expanding = 1;
#endif
    if (started_expanding) {
        assoc_expand();
        started_expanding = 0;
    }
}

/* Once per second: the clock, then the hash-table maintenance. */
static void clock_handler(void)
{
    current_time = (uint32_t)(time(NULL) - process_started) + 2;
    assoc_maintenance_tick();
}

/* ------------------------------------------------------------ commands */
static void process_set(const char *key, size_t nkey, uint64_t value)
{
    uint32_t hv = hash(key, nkey);
    item *it = assoc_find(key, nkey, hv);
    if (!it) {
        it = calloc(1, sizeof *it);
        if (!it) { perror("calloc"); exit(1); }
        it->nkey = (uint8_t)nkey;
        memcpy(it->key, key, nkey);
        assoc_insert(it, hv);
    }
    it->value = value;
    it->time = current_time;
    it->exptime = 0;
    stats.cmd_set++;
}

static uint64_t process_get(const char *key, size_t nkey)
{
    item *it = assoc_find(key, nkey, hash(key, nkey));
    if (it && it->exptime && it->exptime <= current_time)
        it = NULL;                     /* expired */
    if (!it) { stats.get_misses++; return 0; }
    stats.get_hits++;
    it->time = current_time;
    return it->value;
}

int main(int argc, char **argv)
{
    opt_t opts[] = {
        { "items",         "keys SET",                                200000, 1, 100000000, 0 },
        { "sets-per-tick", "SETs served per second (tick)",            10000, 1, 100000000, 0 },
        { "gets",          "GETs after the SETs",                     600000, 0, 1000000000, 0 },
        { "gets-per-tick", "GETs served per second (tick)",            50000, 1, 100000000, 0 },
    };
    opts_parse(argc, argv, opts, NOPTS(opts));
    long n_items = opt_get(opts, NOPTS(opts), "items");
    long spt = opt_get(opts, NOPTS(opts), "sets-per-tick");
    long n_gets = opt_get(opts, NOPTS(opts), "gets");
    long gpt = opt_get(opts, NOPTS(opts), "gets-per-tick");
    process_started = time(NULL);
    primary_hashtable = calloc(hashsize(hashpower), sizeof *primary_hashtable);
    if (!primary_hashtable) { perror("calloc"); return 1; }
    rng_t r;
    rng_seed(&r, 340);
    char key[KEY_MAX];
    for (long i = 0; i < n_items; i++) {
        if (i % spt == 0)
            clock_handler();
        int n = snprintf(key, sizeof key, "obj:%ld", i);
        process_set(key, (size_t)n, rng_next(&r));
    }
    uint64_t h = 0, set_compares = key_compares;
    for (long i = 0; i < n_gets; i++) {
        if (i % gpt == 0)
            clock_handler();
        int n = snprintf(key, sizeof key, "obj:%ld", (long)rng_below(&r, (uint64_t)n_items * 9 / 8));
        h = h * 31 + process_get(key, (size_t)n);
    }
    printf("%llu sets, %ld gets: hits %llu misses %llu, values %016llx\n",
           (unsigned long long)stats.cmd_set, n_gets, (unsigned long long)stats.get_hits,
           (unsigned long long)stats.get_misses, (unsigned long long)h);
    fprintf(stderr, "hashpower %u, expansions %llu\nget_compares=%llu\n", hashpower,
            (unsigned long long)stats.expansions, (unsigned long long)(key_compares - set_compares));
    return 0;
}
