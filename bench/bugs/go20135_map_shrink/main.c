/* A session cache on a Go-style hash map that never shrinks, modelled on
 * golang/go issue #20135 ("runtime: maps do not shrink after elements
 * removal (delete)").
 *
 * The map is Go's: 2^B buckets of 8 slots with a top-hash byte per slot
 * and overflow buckets; it doubles when the average load passes 6.5 per
 * bucket. Iterating it (for k, v := range m) visits every bucket and every
 * slot, empty or not. The service keeps a few thousand live sessions and a
 * janitor walks the whole map every few hundred requests to expire idle
 * ones.
 *
 * The bug: mapdelete() only clears the slot; the bucket array keeps the
 * size of the largest the map ever was. After a burst of sessions that is
 * later deleted (normal: a burst of 3,000; buggy: 40,000) the map holds
 * the same 2,000 sessions, but every janitor pass walks 8,192 buckets
 * instead of 512. gprof blames the slot test and the iterator; the delete
 * that never gives the space back is the root cause (the fix shrinks the
 * map when it is mostly empty, as the issue asks for). Go simplifications:
 * growth rehashes at once instead of incrementally. */
#include "../common/corpus.h"

#define BUCKETCNT     8
#define EMPTY         0                /* top-hash of an empty slot */
#define MIN_TOPHASH   1
#define LOAD_NUM      13               /* load factor 6.5 = 13/2 */
#define LOAD_DEN      2

typedef struct session {
    uint64_t id, last_seen, bytes;
} session;

typedef struct bmap {
    uint8_t      tophash[BUCKETCNT];
    uint64_t     keys[BUCKETCNT];
    session     *elems[BUCKETCNT];
    struct bmap *overflow;
} bmap;

typedef struct {
    long     count;
    uint8_t  B;                        /* log2 of the number of buckets */
    bmap    *buckets;
    uint64_t hash0;
} hmap;

typedef struct {
    hmap    *h;
    long     bucket;
    bmap    *b;
    int      i;
    uint64_t key;
    session *elem;
} hiter;

static uint64_t n_grows, n_shrinks;

static uint64_t memhash64(uint64_t key, uint64_t seed)
{
    uint64_t h = key ^ seed;
    h ^= h >> 33; h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33; h *= 0xc4ceb9fe1a85ec53ULL;
    return h ^ (h >> 33);
}

static uint8_t tophash(uint64_t hash)
{
    uint8_t top = (uint8_t)(hash >> 56);
    return top < MIN_TOPHASH ? top + MIN_TOPHASH : top;
}

static int isEmpty(uint8_t x)
{
    return x == EMPTY;
}

static int overLoadFactor(long count, uint8_t B)
{
    return count > BUCKETCNT && count * LOAD_DEN > (long)LOAD_NUM * (1L << B);
}

static bmap *newarray(long n)
{
    bmap *b = calloc((size_t)n, sizeof *b);
    if (!b) { perror("calloc"); exit(1); }
    return b;
}

static void freebuckets(bmap *buckets, long n)
{
    for (long i = 0; i < n; i++)
        for (bmap *o = buckets[i].overflow, *next; o; o = next) {
            next = o->overflow;
            free(o);
        }
    free(buckets);
}

static void mapassign_nogrow(hmap *h, uint64_t key, session *elem);

/* Rebuilds the map with 2^newB buckets (growth, and the fix's shrink). */
static void hashResize(hmap *h, uint8_t newB)
{
    bmap *old = h->buckets;
    long nold = 1L << h->B;
    h->buckets = newarray(1L << newB);
    h->B = newB;
    h->count = 0;
    for (long i = 0; i < nold; i++)
        for (bmap *b = &old[i]; b; b = b->overflow)
            for (int k = 0; k < BUCKETCNT; k++)
                if (!isEmpty(b->tophash[k]))
                    mapassign_nogrow(h, b->keys[k], b->elems[k]);
    freebuckets(old, nold);
}

static void hashGrow(hmap *h)
{
    n_grows++;
    hashResize(h, (uint8_t)(h->B + 1));
}

static void mapassign_nogrow(hmap *h, uint64_t key, session *elem)
{
    uint64_t hash = memhash64(key, h->hash0);
    uint8_t top = tophash(hash);
    bmap *b = &h->buckets[hash & ((1UL << h->B) - 1)];
    bmap *free_b = NULL;
    int free_i = -1;
    for (;; b = b->overflow) {
        for (int i = 0; i < BUCKETCNT; i++) {
            if (isEmpty(b->tophash[i])) {
                if (!free_b) { free_b = b; free_i = i; }
                continue;
            }
            if (b->tophash[i] == top && b->keys[i] == key) {
                b->elems[i] = elem;
                return;
            }
        }
        if (!b->overflow)
            break;
    }
    if (!free_b) {
        b->overflow = newarray(1);
        free_b = b->overflow;
        free_i = 0;
    }
    free_b->tophash[free_i] = top;
    free_b->keys[free_i] = key;
    free_b->elems[free_i] = elem;
    h->count++;
}

static void mapassign(hmap *h, uint64_t key, session *elem)
{
    if (overLoadFactor(h->count + 1, h->B))
        hashGrow(h);
    mapassign_nogrow(h, key, elem);
}

static session *mapaccess(hmap *h, uint64_t key)
{
    uint64_t hash = memhash64(key, h->hash0);
    uint8_t top = tophash(hash);
    for (bmap *b = &h->buckets[hash & ((1UL << h->B) - 1)]; b; b = b->overflow)
        for (int i = 0; i < BUCKETCNT; i++)
            if (b->tophash[i] == top && b->keys[i] == key)
                return b->elems[i];
    return NULL;
}

static session *mapdelete(hmap *h, uint64_t key)
{
    uint64_t hash = memhash64(key, h->hash0);
    uint8_t top = tophash(hash);
    session *found = NULL;
    for (bmap *b = &h->buckets[hash & ((1UL << h->B) - 1)]; b && !found; b = b->overflow)
        for (int i = 0; i < BUCKETCNT; i++)
            if (b->tophash[i] == top && b->keys[i] == key) {
                found = b->elems[i];
                b->tophash[i] = EMPTY;
                b->elems[i] = NULL;
                h->count--;
                break;
            }
#ifdef VPROF_CASE_FIX
    /* Shrink when a quarter of the load factor is left: halve until the
     * map is at most half full. */
    if (found && h->B > 4 && h->count * LOAD_DEN * 4 < (long)LOAD_NUM * (1L << h->B)) {
        uint8_t nb = h->B;
        while (nb > 4 && h->count * LOAD_DEN * 2 < (long)LOAD_NUM * (1L << (nb - 1)))
            nb--;
        n_shrinks++;
        hashResize(h, nb);
    }
#endif
    return found; /* FIX: shrink the bucket array when the map is mostly empty */
}

static void mapiterinit(hmap *h, hiter *it)
{
    memset(it, 0, sizeof *it);
    it->h = h;
    it->bucket = 0;
    it->b = &h->buckets[0];
    it->i = 0;
}

/* Advances to the next live slot: every slot of every bucket is looked at. */
static int mapiternext(hiter *it)
{
    hmap *h = it->h;
    for (;;) {
        if (it->i == BUCKETCNT) {
            it->i = 0;
            it->b = it->b->overflow;
            if (!it->b) {
                if (++it->bucket == 1L << h->B)
                    return 0;
                it->b = &h->buckets[it->bucket];
            }
        }
        int i = it->i++;
        if (!isEmpty(it->b->tophash[i])) {
            it->key = it->b->keys[i];
            it->elem = it->b->elems[i];
            return 1;
        }
    }
}

/* ------------------------------------------------------------- service */
static hmap sessions;
static uint64_t now_tick;

static session *session_touch(uint64_t id, uint64_t bytes)
{
    session *s = mapaccess(&sessions, id);
    if (!s) {
        s = calloc(1, sizeof *s);
        if (!s) { perror("calloc"); exit(1); }
        s->id = id;
        mapassign(&sessions, id, s);
    }
    s->last_seen = now_tick;
    s->bytes += bytes;
    return s;
}

static void session_end(uint64_t id)
{
    session *s = mapdelete(&sessions, id);
    free(s);
}

/* The janitor: for id, s := range sessions { if idle { delete } }. */
static uint64_t *idle_ids;
static long idle_cap;

static uint64_t janitor_sweep(uint64_t idle_ticks, long *expired)
{
    uint64_t sum = 0;
    long n = 0;
    hiter it;
    mapiterinit(&sessions, &it);
    while (mapiternext(&it)) {
        sum += it.elem->bytes;
        if (now_tick - it.elem->last_seen > idle_ticks) {
            if (n == idle_cap) {
                idle_cap = idle_cap ? idle_cap * 2 : 256;
                idle_ids = realloc(idle_ids, (size_t)idle_cap * sizeof *idle_ids);
                if (!idle_ids) { perror("realloc"); exit(1); }
            }
            idle_ids[n++] = it.key;
        }
    }
    for (long i = 0; i < n; i++)
        session_end(idle_ids[i]);
    *expired += n;
    return sum;
}

int main(int argc, char **argv)
{
    opt_t opts[] = {
        { "burst",    "sessions opened during the start-up burst",  3000, 0, 50000000, 0 },
        { "live",     "sessions kept open afterwards",              2000, 1, 10000000, 0 },
        { "requests", "requests in the steady phase",            1200000, 1, 1000000000, 0 },
        { "sweep-every", "janitor pass every this many requests",   2000, 1, 100000000, 0 },
    };
    opts_parse(argc, argv, opts, NOPTS(opts));
    long burst = opt_get(opts, NOPTS(opts), "burst");
    long live = opt_get(opts, NOPTS(opts), "live");
    long requests = opt_get(opts, NOPTS(opts), "requests");
    long every = opt_get(opts, NOPTS(opts), "sweep-every");
    sessions.B = 0;
    sessions.buckets = newarray(1);
    sessions.hash0 = 0x9e3779b97f4a7c15ULL;

    /* Start-up burst: many short-lived sessions, all ended again. */
    for (long i = 0; i < burst; i++)
        session_touch(1000000000ULL + (uint64_t)i, 1);
    for (long i = 0; i < burst; i++)
        session_end(1000000000ULL + (uint64_t)i);

    /* Steady phase: requests on LIVE sessions, the janitor now and then. */
    rng_t r;
    rng_seed(&r, 20135);
    uint64_t total = 0;
    long expired = 0;
    for (long q = 0; q < requests; q++) {
        now_tick++;
        session_touch(rng_below(&r, (uint64_t)live), 1 + rng_below(&r, 1500));
        if (q % every == every - 1)
            total += janitor_sweep(5000, &expired);
    }
    printf("burst %ld, %ld requests: %ld sessions open, %ld expired, bytes seen %llu\n",
           burst, requests, sessions.count, expired, (unsigned long long)total);
    fprintf(stderr, "buckets 2^%u, grows %llu, shrinks %llu\n", sessions.B,
            (unsigned long long)n_grows, (unsigned long long)n_shrinks);
    return 0;
}
