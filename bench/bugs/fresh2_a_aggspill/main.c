/* Written for the vprof bug corpus by a helper that had not seen the
 * profiler (2026-11-28); not modelled on a real issue. The fix is the
 * VPROF_CASE_FIX variant; the line marked FIX is the bug.
 *
 * aggspill - a web access-log roll-up. The log is split between two worker
 * threads; each parses its lines and pre-aggregates them per URL (hits,
 * bytes, 5xx errors, latency sum and maximum) in a private open-addressing
 * table. When the private table holds more distinct URLs than its flush
 * threshold, the worker spills it: under the global lock it merges every
 * entry into the shared result, a skip list ordered by URL (the report is
 * printed in URL order), then empties the private table.
 *
 * The threshold comes from the memory budget (--mem-mb) once per worker, in
 * agg_flush_threshold(): the worker's share of the budget divided by the
 * entry size, capped by the table's load limit. The bug: the budget in
 * bytes is computed in 32 bits, so 4096 MiB wraps to 0 and the threshold
 * falls to its floor of 64 entries. With a 1 GiB budget (normal) no worker
 * spills: the main thread merges both private tables after joining them;
 * with a 4 GiB budget (buggy) each worker spills every 64 distinct URLs,
 * and nearly every log line becomes a skip-list merge under the global
 * lock.
 *
 * usage: aggspill [--lines N] [--urls N] [--mem-mb N]
 */
#include "../common/corpus.h"
#include <pthread.h>

#define NWORKERS     2
#define URL_MAX      64
#define LOCAL_SLOTS  65536          /* power of two */
#define MIN_FLUSH    64
#define SKIP_LEVELS  16

struct agg_config { uint32_t mem_mb; int workers; };

struct local_entry {
    char     url[URL_MAX];
    uint32_t hash, hits, errors, lat_max;
    uint64_t bytes, lat_sum;
};

struct node {                       /* global result, one per URL */
    char     url[URL_MAX];
    uint64_t hits, errors, bytes, lat_sum;
    uint32_t lat_max;
    int      level;
    struct node *next[SKIP_LEVELS];
};

static struct {
    pthread_mutex_t lock;
    struct node head;
    uint64_t spills, merges;        /* informative, on stderr */
} global = { .lock = PTHREAD_MUTEX_INITIALIZER };

struct worker {
    const char *text;
    size_t begin, end;              /* byte range of whole lines */
    const struct agg_config *cfg;
    struct local_entry *slots;
    uint32_t *used;                 /* indexes of occupied slots */
    size_t nused, threshold;
    uint64_t lines, bad;
};

static uint32_t hash_url(const char *s, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 16777619u;
    return h ? h : 1;
}

/* ---------------------------------------------------------- global list */
static int url_cmp(const char *a, const char *b)
{
    return strcmp(a, b);
}

/* Merges one spilled entry into the global skip list (lock held). */
static void global_merge_entry(const struct local_entry *e)
{
    struct node *update[SKIP_LEVELS], *x = &global.head;
    for (int l = SKIP_LEVELS - 1; l >= 0; l--) {
        while (x->next[l] && url_cmp(x->next[l]->url, e->url) < 0)
            x = x->next[l];
        update[l] = x;
    }
    x = x->next[0];
    if (!x || url_cmp(x->url, e->url) != 0) {
        x = calloc(1, sizeof *x);
        if (!x) { perror("calloc"); exit(1); }
        memcpy(x->url, e->url, URL_MAX);
        /* the level follows from the URL, so the list's shape does not
         * depend on which worker spilled first */
        uint32_t h = e->hash * 0x9E3779B1u;
        x->level = 1;
        while (x->level < SKIP_LEVELS && (h & 3) == 0) {
            x->level++;
            h >>= 2;
        }
        for (int l = 0; l < x->level; l++) {
            x->next[l] = update[l]->next[l];
            update[l]->next[l] = x;
        }
    }
    x->hits += e->hits;
    x->errors += e->errors;
    x->bytes += e->bytes;
    x->lat_sum += e->lat_sum;
    if (e->lat_max > x->lat_max)
        x->lat_max = e->lat_max;
    global.merges++;
}

/* -------------------------------------------------------- worker tables */
/* How many distinct URLs a worker may hold before it spills: its share of
 * the memory budget in entries, between MIN_FLUSH and the load limit. */
static size_t agg_flush_threshold(const struct agg_config *cfg)
{
#ifdef VPROF_CASE_FIX
    uint64_t budget = (uint64_t)cfg->mem_mb << 20;
#else
    uint32_t budget = cfg->mem_mb << 20; /* FIX: compute the budget in 64 bits ((uint64_t)cfg->mem_mb << 20): 4096 MiB wraps to 0 in 32 */
#endif
    size_t entries = budget / (uint64_t)cfg->workers / sizeof(struct local_entry);
    if (entries < MIN_FLUSH)
        entries = MIN_FLUSH;
    if (entries > LOCAL_SLOTS / 4 * 3)
        entries = LOCAL_SLOTS / 4 * 3;
    return entries;
}

static void worker_spill(struct worker *w)
{
    pthread_mutex_lock(&global.lock);
    for (size_t i = 0; i < w->nused; i++)
        global_merge_entry(&w->slots[w->used[i]]);
    global.spills++;
    pthread_mutex_unlock(&global.lock);
    for (size_t i = 0; i < w->nused; i++)
        w->slots[w->used[i]].hash = 0;
    w->nused = 0;
}

static void local_add(struct worker *w, const char *url, size_t ulen, int status,
                      uint32_t bytes, uint32_t lat_us)
{
    if (ulen >= URL_MAX)
        ulen = URL_MAX - 1;
    uint32_t h = hash_url(url, ulen);
    size_t i = h & (LOCAL_SLOTS - 1);
    struct local_entry *e;
    for (;; i = (i + 1) & (LOCAL_SLOTS - 1)) {
        e = &w->slots[i];
        if (e->hash == 0) {
            if (w->nused >= w->threshold) {
                worker_spill(w);
                local_add(w, url, ulen, status, bytes, lat_us);
                return;
            }
            memset(e, 0, sizeof *e);
            memcpy(e->url, url, ulen);
            e->hash = h;
            w->used[w->nused++] = (uint32_t)i;
            break;
        }
        if (e->hash == h && strncmp(e->url, url, ulen) == 0 && e->url[ulen] == '\0')
            break;
    }
    e->hits++;
    e->errors += status >= 500;
    e->bytes += bytes;
    e->lat_sum += lat_us;
    if (lat_us > e->lat_max)
        e->lat_max = lat_us;
}

/* ------------------------------------------------------------- parsing */
static const char *parse_uint(const char *p, uint32_t *v)
{
    uint32_t x = 0;
    while (*p == ' ')
        p++;
    if (*p < '0' || *p > '9')
        return NULL;
    while (*p >= '0' && *p <= '9')
        x = x * 10 + (uint32_t)(*p++ - '0');
    *v = x;
    return p;
}

/* ip - - [date] "METHOD path?query HTTP/1.1" status bytes latency_us */
static int parse_line(struct worker *w, const char *p, const char *eol)
{
    const char *q = memchr(p, '"', (size_t)(eol - p));
    if (!q)
        return 0;
    const char *path = memchr(q, ' ', (size_t)(eol - q));
    if (!path)
        return 0;
    path++;
    const char *pe = path;
    while (pe < eol && *pe != ' ' && *pe != '?')
        pe++;
    const char *close = memchr(pe, '"', (size_t)(eol - pe));
    uint32_t status, bytes, lat;
    const char *r = close ? parse_uint(close + 1, &status) : NULL;
    r = r ? parse_uint(r, &bytes) : NULL;
    r = r ? parse_uint(r, &lat) : NULL;
    if (!r)
        return 0;
    local_add(w, path, (size_t)(pe - path), (int)status, bytes, lat);
    return 1;
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    w->slots = calloc(LOCAL_SLOTS, sizeof *w->slots);
    w->used = malloc(LOCAL_SLOTS * sizeof *w->used);
    if (!w->slots || !w->used) { perror("calloc"); exit(1); }
    w->threshold = agg_flush_threshold(w->cfg);
    const char *p = w->text + w->begin, *end = w->text + w->end;
    while (p < end) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        if (!eol)
            eol = end;
        if (parse_line(w, p, eol))
            w->lines++;
        else
            w->bad++;
        p = eol + 1;
    }
    return NULL;                    /* the main thread merges what is left */
}

/* ------------------------------------------------------------ workload */
static char *make_log(long lines, long urls, size_t *len)
{
    static const char *const shapes[] = {
        "/api/v2/catalog/items/%06lu/reviews", "/api/v2/catalog/items/%06lu",
        "/static/img/product-%06lu.webp", "/api/v2/users/%06lu/cart",
    };
    rng_t r;
    rng_seed(&r, 20261128);
    size_t cap = (size_t)lines * 140 + 1;
    char *t = malloc(cap);
    if (!t) { perror("malloc"); exit(1); }
    size_t n = 0;
    char url[URL_MAX];
    for (long i = 0; i < lines; i++) {
        uint64_t u = rng_below(&r, (uint64_t)urls);
        snprintf(url, sizeof url, shapes[u % 4], (unsigned long)(u / 4));
        uint64_t s = rng_below(&r, 100);
        int status = s < 90 ? 200 : s < 96 ? 304 : s < 99 ? 404 : 503;
        n += (size_t)snprintf(t + n, cap - n,
                              "203.0.%u.%u - - [28/Nov/2026:10:%02ld:%02ld +0000] "
                              "\"GET %s?s=%u HTTP/1.1\" %d %u %u\n",
                              (unsigned)rng_below(&r, 256), (unsigned)rng_below(&r, 256),
                              i / 60 % 60, i % 60, url, (unsigned)rng_below(&r, 1000),
                              status, (unsigned)(200 + rng_below(&r, 60000)),
                              (unsigned)(300 + rng_below(&r, 90000)));
    }
    *len = n;
    return t;
}

int main(int argc, char **argv)
{
    opt_t opts[] = {
        { "lines",  "log lines", 300000, 1, 100000000, 0 },
        { "urls",   "distinct URLs in the log", 10000, 4, 4000000, 0 },
        { "mem-mb", "aggregation memory budget in MiB", 1024, 1, 65535, 0 },
    };
    opts_parse(argc, argv, opts, NOPTS(opts));
    long lines = opt_get(opts, NOPTS(opts), "lines");
    long urls = opt_get(opts, NOPTS(opts), "urls");
    struct agg_config cfg = { (uint32_t)opt_get(opts, NOPTS(opts), "mem-mb"), NWORKERS };

    size_t len;
    char *text = make_log(lines, urls, &len);
    global.head.level = SKIP_LEVELS;

    struct worker w[NWORKERS];
    pthread_t tid[NWORKERS];
    size_t at = 0;
    for (int i = 0; i < NWORKERS; i++) {
        memset(&w[i], 0, sizeof w[i]);
        size_t end = i == NWORKERS - 1 ? len : len * (size_t)(i + 1) / NWORKERS;
        while (end < len && text[end - 1] != '\n')
            end++;
        w[i].text = text;
        w[i].begin = at;
        w[i].end = end;
        w[i].cfg = &cfg;
        at = end;
        if (pthread_create(&tid[i], NULL, worker_main, &w[i]) != 0) {
            fprintf(stderr, "pthread_create failed\n");
            return 1;
        }
    }
    uint64_t parsed = 0, bad = 0;
    for (int i = 0; i < NWORKERS; i++)
        pthread_join(tid[i], NULL);
    for (int i = 0; i < NWORKERS; i++) {
        worker_spill(&w[i]);
        free(w[i].slots);
        free(w[i].used);
        parsed += w[i].lines;
        bad += w[i].bad;
    }

    /* the report, in URL order: totals, the busiest URL, a digest */
    uint64_t nurls = 0, hits = 0, errors = 0, bytes = 0, digest = 1469598103934665603ULL;
    const struct node *top = NULL;
    for (const struct node *x = global.head.next[0]; x; x = x->next[0]) {
        nurls++;
        hits += x->hits;
        errors += x->errors;
        bytes += x->bytes;
        digest = (digest ^ hash_url(x->url, strlen(x->url)) ^ x->hits ^ x->lat_max)
                 * 1099511628211ULL;
        if (!top || x->hits > top->hits)
            top = x;
    }
    printf("lines=%llu bad=%llu urls=%llu hits=%llu errors=%llu bytes=%llu digest=%016llx\n",
           (unsigned long long)parsed, (unsigned long long)bad, (unsigned long long)nurls,
           (unsigned long long)hits, (unsigned long long)errors, (unsigned long long)bytes,
           (unsigned long long)digest);
    if (top)
        printf("busiest %s hits=%llu mean_latency_us=%llu max_latency_us=%u\n", top->url,
               (unsigned long long)top->hits, (unsigned long long)(top->lat_sum / top->hits),
               top->lat_max);
    fprintf(stderr, "threshold=%zu spills=%llu merges=%llu\n", w[0].threshold,
            (unsigned long long)global.spills, (unsigned long long)global.merges);
    free(text);
    return 0;
}
