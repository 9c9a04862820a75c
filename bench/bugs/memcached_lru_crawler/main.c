/* A key-value cache whose LRU crawler holds the LRU lock across a whole
 * pass over the items, modelled on the memcached LRU-crawler finding of
 * LDB (NSDI '24, §6: "a background thread holds a lock that GET requests
 * need while it scans") and on MariaDB MDEV-23399 (a scan under a mutex).
 *
 * The main thread serves GET requests (parse, hash, look the item up and
 * bump it in the LRU under lru_lock, build the response), one every
 * --think-us. A crawler thread wakes every --crawl-interval-us and checks
 * every item for expiry (crawler_check_item), reclaiming expired ones.
 *
 * The bug: lru_crawler_crawl() takes lru_lock once and keeps it for the
 * whole pass, so its length grows with the number of items. With a small
 * cache (normal) a pass takes microseconds; with a large one (buggy) it
 * takes milliseconds, and every GET that arrives meanwhile waits in
 * item_get() for the lock. The GET path burns no more CPU than before: PC
 * sampling and gprof see only the crawler's per-item check. vprof's
 * latency events show the waiting path (item_get, process_get_command),
 * the lock's holder (lru_crawler_crawl) and, per request, whom it waited
 * for. The request API (vprof_req_start/end) is declared weak, so the
 * program also links without libvprof (gcc -pg). */
#include "../common/corpus.h"
#include <pthread.h>
#include <time.h>

#define KEY_LEN        16
#define HASH_POWER     18            /* 2^18 buckets */
#define CRAWL_PASSES   60            /* crawler passes per run */
#define TTL_SPAN       1000          /* expiry times are 0..TTL_SPAN-1 */
#define CRAWL_BATCH    32            /* the fix: items per hold of lru_lock */

/* vprof's request API, if the program runs under vprof (weak: optional) */
void vprof_req_start(uint64_t id) __attribute__((weak));
void vprof_req_end(uint64_t id) __attribute__((weak));

typedef struct item {
    struct item *h_next;             /* hash chain */
    struct item *prev, *next;        /* LRU: prev = towards the head (hot) */
    char key[KEY_LEN];
    uint32_t exptime, value;
    int linked;
} item_t;

static struct {
    pthread_mutex_t lru_lock;
    item_t *items;
    long n_items;
    item_t *head, *tail;
    item_t **hash;
    uint64_t hits, misses, reclaimed, crawled, key_hash_sum;
    long max_hold;
} cache = {.lru_lock = PTHREAD_MUTEX_INITIALIZER};

static volatile uint32_t current_time;      /* the cache's clock, in ticks */

/* ---- items, hash, LRU ---------------------------------------------------- */
static uint32_t hash_key(const char *key)
{
    uint32_t h = 2166136261u;
    for (int i = 0; i < KEY_LEN && key[i]; i++)
        h = (h ^ (uint8_t)key[i]) * 16777619u;
    return h;
}

static void make_key(char *key, long n)
{
    snprintf(key, KEY_LEN, "key:%011ld", n);
}

static void lru_link_head(item_t *it)
{
    it->prev = NULL;
    it->next = cache.head;
    if (cache.head) cache.head->prev = it;
    cache.head = it;
    if (!cache.tail) cache.tail = it;
    it->linked = 1;
}

static void lru_unlink(item_t *it)
{
    if (it->prev) it->prev->next = it->next; else cache.head = it->next;
    if (it->next) it->next->prev = it->prev; else cache.tail = it->prev;
    it->prev = it->next = NULL;
    it->linked = 0;
}

static void cache_fill(long n, rng_t *r)
{
    cache.n_items = n;
    cache.items = calloc((size_t)n, sizeof *cache.items);
    cache.hash = calloc((size_t)1 << HASH_POWER, sizeof *cache.hash);
    if (!cache.items || !cache.hash) { perror("calloc"); exit(1); }
    for (long i = 0; i < n; i++) {
        item_t *it = &cache.items[i];
        make_key(it->key, i);
        it->exptime = (uint32_t)rng_below(r, TTL_SPAN) + 1;
        it->value = (uint32_t)rng_next(r);
        uint32_t b = hash_key(it->key) & ((1u << HASH_POWER) - 1);
        it->h_next = cache.hash[b];
        cache.hash[b] = it;
        lru_link_head(it);
    }
}

/* ---- the crawler ----------------------------------------------------------- */
/* Expired items get a fresh expiry (a "reload"), so every pass finds work. */
static void crawler_reclaim(item_t *it)
{
    it->exptime = current_time + 1 + (it->value % TTL_SPAN);
    cache.reclaimed++;
}

/* The longest stretch of items the crawler examined under one hold of
 * lru_lock (reported on stderr: the fix check compares it, a count that
 * does not depend on timing, with the normal run's). */
static void note_lock_hold(long items)
{
    if (items > cache.max_hold)
        cache.max_hold = items;
}

static int crawler_check_item(item_t *it)
{
    cache.key_hash_sum += hash_key(it->key);  /* memcached re-hashes to lock the item */
    if (it->exptime <= current_time) {
        crawler_reclaim(it);
        return 1;
    }
    return 0;
}

static long lru_crawler_crawl(void)
{
    long n = 0, held = 0;
#ifdef VPROF_CASE_FIX
    pthread_mutex_lock(&cache.lru_lock);
    for (item_t *it = cache.tail; it; it = it->prev) {
        n += crawler_check_item(it);
        cache.crawled++;
        if (++held == CRAWL_BATCH) {         /* let waiting GETs in */
            note_lock_hold(held);
            held = 0;
            pthread_mutex_unlock(&cache.lru_lock);
            pthread_mutex_lock(&cache.lru_lock);
        }
    }
#else
    pthread_mutex_lock(&cache.lru_lock);     /* FIX: take lru_lock per batch of items and release it between batches (memcached's crawler yields every few items) */
    uint64_t start = cache.crawled;
    for (item_t *it = cache.tail; it; it = it->prev) {
        n += crawler_check_item(it);
        cache.crawled++;
    }
    held = (long)(cache.crawled - start);
#endif
    note_lock_hold(held);
    pthread_mutex_unlock(&cache.lru_lock);
    return n;
}

static void sleep_us(long us)
{
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    nanosleep(&ts, NULL);
}

struct crawler_args { long interval_us; };

static void *lru_crawler_thread(void *arg)
{
    const struct crawler_args *a = arg;
    for (int pass = 0; pass < CRAWL_PASSES; pass++) {
        lru_crawler_crawl();
        sleep_us(a->interval_us);
    }
    return NULL;
}

/* ---- the request path ----------------------------------------------------- */
static item_t *item_get(const char *key)
{
    uint32_t b = hash_key(key) & ((1u << HASH_POWER) - 1);
    pthread_mutex_lock(&cache.lru_lock);     /* GETs bump the item in the LRU */
    item_t *it = cache.hash[b];
    while (it && strncmp(it->key, key, KEY_LEN)) it = it->h_next;
    if (it && it->linked) { lru_unlink(it); lru_link_head(it); }
    if (it) cache.hits++; else cache.misses++;
    pthread_mutex_unlock(&cache.lru_lock);
    return it;
}

static long parse_command(const char *line, char *key)
{
    long n = 0;
    if (sscanf(line, "get key:%ld", &n) != 1) return -1;
    make_key(key, n);
    return n;
}

static int build_response(char *out, size_t len, const char *key, const item_t *it)
{
    if (!it) return snprintf(out, len, "END\r\n");
    return snprintf(out, len, "VALUE %s 0 %u\r\nEND\r\n", key, it->value);
}

static uint64_t process_get_command(const char *line)
{
    char key[KEY_LEN], resp[96];
    if (parse_command(line, key) < 0) return 0;
    const item_t *it = item_get(key);
    return (uint64_t)build_response(resp, sizeof resp, key, it);
}

static uint64_t serve_requests(long n_requests, long think_us, long n_keys, rng_t *r)
{
    uint64_t bytes = 0;
    char line[64];
    for (long i = 0; i < n_requests; i++) {
        uint64_t id = (uint64_t)i + 1;
        if (vprof_req_start) vprof_req_start(id);
        snprintf(line, sizeof line, "get key:%ld", (long)rng_below(r, (uint64_t)n_keys));
        bytes += process_get_command(line);
        current_time++;
        if (vprof_req_end) vprof_req_end(id);
        sleep_us(think_us);
    }
    return bytes;
}

int main(int argc, char **argv)
{
    opt_t o[] = {
        {"items", "items in the cache (the crawler scans them all)", 2000, 1, 4000000, 0},
        {"requests", "GET requests served", 300, 1, 1000000, 0},
        {"think-us", "pause between two requests, µs", 1000, 0, 1000000, 0},
        {"crawl-interval-us", "pause between two crawler passes, µs", 2000, 0, 1000000, 0},
    };
    opts_parse(argc, argv, o, NOPTS(o));
    rng_t r;
    rng_seed(&r, 11211);
    long n_items = opt_get(o, NOPTS(o), "items");
    cache_fill(n_items, &r);
    struct crawler_args ca = {opt_get(o, NOPTS(o), "crawl-interval-us")};
    pthread_t t;
    if (pthread_create(&t, NULL, lru_crawler_thread, &ca)) { perror("pthread_create"); return 1; }
    rng_t rr;
    rng_seed(&rr, 42);
    uint64_t bytes = serve_requests(opt_get(o, NOPTS(o), "requests"),
                                    opt_get(o, NOPTS(o), "think-us"), n_items, &rr);
    pthread_join(t, NULL);           /* the crawler does its CRAWL_PASSES passes */
    printf("items %ld, hits %llu, misses %llu, response bytes %llu\n",
           n_items, (unsigned long long)cache.hits, (unsigned long long)cache.misses,
           (unsigned long long)bytes);
    fprintf(stderr, "crawled %llu\nmax_items_per_lock_hold=%ld\n",
            (unsigned long long)cache.crawled, cache.max_hold);
    return 0;
}
