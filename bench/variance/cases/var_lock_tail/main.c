/* A transaction engine whose page cleaner holds the buffer-pool mutex across
 * a whole flush batch, modelled on VProfiler's MySQL finding (EuroSys '17,
 * §4.5: buf_pool_mutex_enter, 32.9 % of the variance of TPC-C transaction
 * latency; transactions wait for the buffer pool mutex while another thread
 * works under it).
 *
 * The main thread runs a transaction every --think-us: each reads four
 * pages through buf_page_get() (which takes pool.mutex to move the page to
 * the head of the LRU list) and processes 80..120 rows of them
 * (row_process: the transaction's own work, which grows with its row
 * count). A page cleaner thread wakes every --flush-interval-us and
 * flushes --flush-batch pages from the tail of the LRU list.
 *
 * The bug: buf_flush_lru_tail() takes pool.mutex once for the whole batch.
 * With a small batch (normal) a flush takes microseconds; with a large one
 * (buggy) milliseconds, and the transaction that needs a page meanwhile
 * (one per pass: about 1 % of them) waits for it: the tail of the latency
 * distribution. Mean
 * latency and CPU profiles barely change. The request API (vprof.h) is
 * declared weak, so the program also links without libvprof (gcc -pg). */
#include "../../../bugs/common/corpus.h"
#include <pthread.h>
#include <time.h>

#define N_PAGES      131072
#define FLUSH_PASSES 20             /* page cleaner passes per run */
#define FLUSH_ROUNDS 10             /* checksum rounds per flushed page: ~40 ns */
#define PAGE_WORDS   8
#define ROW_COST     300            /* hash rounds per row: ~0.4 µs */

/* vprof's request API, if the program runs under vprof (weak: optional) */
void vprof_req_start(uint64_t id) __attribute__((weak));
void vprof_req_end(uint64_t id) __attribute__((weak));
void vprof_req_work(uint64_t id, uint64_t units) __attribute__((weak));

typedef struct page {
    struct page *prev, *next;       /* LRU: prev = towards the head (young) */
    uint32_t no, lsn;
    int dirty;
    uint64_t data[PAGE_WORDS];
} page_t;

static struct {
    pthread_mutex_t mutex;
    page_t *pages;
    page_t *head, *tail;
    uint64_t reads, flushed, checksum;
} pool = {.mutex = PTHREAD_MUTEX_INITIALIZER};

static volatile uint64_t sink;

/* ---- the LRU list --------------------------------------------------------- */
static void lru_remove(page_t *p)
{
    if (p->prev) p->prev->next = p->next; else pool.head = p->next;
    if (p->next) p->next->prev = p->prev; else pool.tail = p->prev;
    p->prev = p->next = NULL;
}

static void lru_add_head(page_t *p)
{
    p->prev = NULL;
    p->next = pool.head;
    if (pool.head) pool.head->prev = p;
    pool.head = p;
    if (!pool.tail) pool.tail = p;
}

static void pool_init(rng_t *r)
{
    pool.pages = calloc(N_PAGES, sizeof *pool.pages);
    if (!pool.pages) { perror("calloc"); exit(1); }
    for (uint32_t i = 0; i < N_PAGES; i++) {
        page_t *p = &pool.pages[i];
        p->no = i;
        for (int w = 0; w < PAGE_WORDS; w++) p->data[w] = rng_next(r);
        lru_add_head(p);
    }
}

/* ---- the page cleaner -------------------------------------------------------- */
/* "Writes" a page: checksums it, as a flush computes the page trailer. */
static void buf_flush_page(page_t *p)
{
    uint64_t c = p->no;
    for (int round = 0; round < FLUSH_ROUNDS; round++)
        for (int w = 0; w < PAGE_WORDS; w++)
            c = (c ^ p->data[w]) * 0x100000001b3ull + (uint64_t)round;
    pool.checksum += c;
    p->dirty = 0;
    p->lsn++;
    pool.flushed++;
}

static long buf_flush_lru_tail(long batch)
{
    long n = 0;
    pthread_mutex_lock(&pool.mutex);    /* FIX: flush in chunks of a few dozen pages and release pool.mutex between them (MySQL's LRU flushing does) */
    for (page_t *p = pool.tail; p && n < batch; p = p->prev, n++)
        buf_flush_page(p);
    pthread_mutex_unlock(&pool.mutex);
    return n;
}

struct cleaner_args { long batch, interval_us; };

static void *page_cleaner_thread(void *arg)
{
    const struct cleaner_args *a = arg;
    struct timespec ts = {a->interval_us / 1000000, (a->interval_us % 1000000) * 1000};
    for (int pass = 0; pass < FLUSH_PASSES; pass++) {
        nanosleep(&ts, NULL);
        buf_flush_lru_tail(a->batch);
    }
    return NULL;
}

/* ---- transactions -------------------------------------------------------------- */
static page_t *buf_page_get(uint32_t no)
{
    pthread_mutex_lock(&pool.mutex);    /* move the page to the LRU head */
    page_t *p = &pool.pages[no % N_PAGES];
    lru_remove(p);
    lru_add_head(p);
    p->dirty = 1;
    pool.reads++;
    pthread_mutex_unlock(&pool.mutex);
    return p;
}

static uint64_t row_process(const page_t *p, int rows)
{
    uint64_t h = p->no;
    for (int r = 0; r < rows; r++)
        for (int k = 0; k < ROW_COST; k++)
            h = (h ^ (p->data[(r + k) % PAGE_WORDS] + (uint64_t)k)) * 0x9e3779b97f4a7c15ull;
    return h;
}

static uint64_t trx_execute(rng_t *r, int rows)
{
    uint64_t h = 0;
    for (int i = 0; i < 4; i++) {
        const page_t *p = buf_page_get((uint32_t)rng_below(r, N_PAGES));
        h += row_process(p, rows / 4 + (i < rows % 4));
    }
    return h;
}

static uint64_t serve_transactions(long n, long think_us, rng_t *r)
{
    uint64_t h = 0;
    struct timespec think = {think_us / 1000000, (think_us % 1000000) * 1000};
    for (long i = 0; i < n; i++) {
        uint64_t id = (uint64_t)i + 1;
        int rows = 80 + (int)rng_below(r, 41);
        if (vprof_req_start) vprof_req_start(id);
        if (vprof_req_work) vprof_req_work(id, (uint64_t)rows);
        h += trx_execute(r, rows);
        if (vprof_req_end) vprof_req_end(id);
        nanosleep(&think, NULL);
    }
    return h;
}

int main(int argc, char **argv)
{
    opt_t o[] = {
        {"transactions", "transactions run", 2000, 1, 1000000, 0},
        {"think-us", "pause between two transactions, µs", 150, 0, 1000000, 0},
        {"flush-batch", "pages flushed per page-cleaner pass", 100, 1, N_PAGES, 0},
        {"flush-interval-us", "pause before each page-cleaner pass, µs", 40000, 0, 10000000, 0},
    };
    opts_parse(argc, argv, o, NOPTS(o));
    rng_t r;
    rng_seed(&r, 17);
    pool_init(&r);
    struct cleaner_args ca = {opt_get(o, NOPTS(o), "flush-batch"),
                              opt_get(o, NOPTS(o), "flush-interval-us")};
    pthread_t t;
    if (pthread_create(&t, NULL, page_cleaner_thread, &ca)) { perror("pthread_create"); return 1; }
    rng_t tr;
    rng_seed(&tr, 42);
    sink = serve_transactions(opt_get(o, NOPTS(o), "transactions"),
                              opt_get(o, NOPTS(o), "think-us"), &tr);
    pthread_join(t, NULL);          /* the cleaner makes its FLUSH_PASSES passes */
    printf("pages %d, reads %llu, flushed %llu\n", N_PAGES, (unsigned long long)pool.reads,
           (unsigned long long)pool.flushed);
    return 0;
}
