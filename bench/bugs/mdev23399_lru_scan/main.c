/* A buffer pool under an update-heavy workload from several threads,
 * modelled on MariaDB MDEV-23399 (the vProf paper's Figure 5).
 *
 * Worker threads look pages up in a shared buffer pool and update rows in
 * them, so pages become dirty. On a miss, buf_LRU_get_free_block() needs a
 * free frame: it takes buf_pool.mutex, tries the free list, then asks
 * buf_LRU_scan_and_free_block() to evict a clean page near the LRU tail.
 * Only clean pages can be evicted; a page-cleaner step makes some clean every
 * so often.
 *
 * The bug: when the bounded tail scan finds nothing, the retry passes
 * scan_all = (n_iterations > 0) and walks the WHOLE LRU list while holding
 * the mutex, although on an update-heavy pool it is all dirty; only after
 * that does the thread flush one page itself. The other threads spin in
 * mutex_enter()/ut_delay() meanwhile. With a data set that fits the pool
 * (normal) nothing is evicted; with one larger than the pool (buggy) every
 * other miss scans the full list. gprof blames ut_delay and the per-page
 * check; the caller that chose to scan everything is the root cause. */
#include "../common/corpus.h"
#include <pthread.h>

#define PAGE_ROWS      48     /* rows per page */
#define SCAN_THRESHOLD 100    /* pages the bounded tail scan looks at */
#define CLEANER_EVERY  96     /* misses between two page-cleaner batches */
#define CLEANER_BATCH  48     /* pages one cleaner batch writes */
#define SPIN_ROUNDS    30

typedef struct buf_page {
    struct buf_page *lru_prev, *lru_next;   /* prev = towards head (young) */
    struct buf_page *hash_next;
    long     page_no;                       /* -1 when free */
    int      dirty, fix_count;
    uint32_t rows[PAGE_ROWS];
} buf_page_t;

static struct {
    pthread_mutex_t mutex;
    buf_page_t  *frames;
    long         n_frames;
    buf_page_t  *free_list;
    buf_page_t  *lru_head, *lru_tail;
    buf_page_t **page_hash;
    long         hash_size;
    int          try_LRU_scan;
    uint64_t     n_misses, n_evicted, n_flushed, n_full_scans, lru_scanned;
} buf_pool;

static uint32_t disk_checksum;   /* protected by buf_pool.mutex */

/* ---- the mutex with spinning, as InnoDB's mutex_enter ------------------- */
static volatile uint64_t ut_delay_sink;

static void ut_delay(unsigned n)
{
    for (unsigned i = 0; i < n * 50; i++)
        ut_delay_sink += i;
}

static void mutex_enter(pthread_mutex_t *m)
{
    for (int i = 0; i < SPIN_ROUNDS; i++) {
        if (pthread_mutex_trylock(m) == 0)
            return;
        ut_delay(6);
    }
    pthread_mutex_lock(m);
}

static void mutex_exit(pthread_mutex_t *m)
{
    pthread_mutex_unlock(m);
}

/* ---- LRU list and page hash (callers hold the mutex) ------------------- */
static void lru_remove(buf_page_t *b)
{
    if (b->lru_prev) b->lru_prev->lru_next = b->lru_next; else buf_pool.lru_head = b->lru_next;
    if (b->lru_next) b->lru_next->lru_prev = b->lru_prev; else buf_pool.lru_tail = b->lru_prev;
    b->lru_prev = b->lru_next = NULL;
}

static void lru_add_head(buf_page_t *b)
{
    b->lru_prev = NULL;
    b->lru_next = buf_pool.lru_head;
    if (buf_pool.lru_head) buf_pool.lru_head->lru_prev = b; else buf_pool.lru_tail = b;
    buf_pool.lru_head = b;
}

static long hash_fold(long page_no)
{
    return (long)(((uint64_t)page_no * 0x9e3779b97f4a7c15ULL) >> 20) % buf_pool.hash_size;
}

static buf_page_t *page_hash_get(long page_no)
{
    for (buf_page_t *b = buf_pool.page_hash[hash_fold(page_no)]; b; b = b->hash_next)
        if (b->page_no == page_no)
            return b;
    return NULL;
}

static void page_hash_insert(buf_page_t *b)
{
    long h = hash_fold(b->page_no);
    b->hash_next = buf_pool.page_hash[h];
    buf_pool.page_hash[h] = b;
}

static void page_hash_remove(buf_page_t *b)
{
    buf_page_t **pp = &buf_pool.page_hash[hash_fold(b->page_no)];
    while (*pp != b)
        pp = &(*pp)->hash_next;
    *pp = b->hash_next;
}

/* ---- I/O: "writing" and "reading" a page image ------------------------- */
static uint32_t page_checksum(const buf_page_t *b)
{
    uint32_t c = 2166136261u;
    for (int i = 0; i < PAGE_ROWS; i++)
        for (int k = 0; k < 4; k++)
            c = (c ^ ((b->rows[i] >> (8 * k)) & 0xff)) * 16777619u;
    return c;
}

static void buf_flush_write_page(buf_page_t *b)
{
    disk_checksum ^= page_checksum(b);
    b->dirty = 0;
    buf_pool.n_flushed++;
}

static void buf_read_page(buf_page_t *b, long page_no)
{
    rng_t r;
    rng_seed(&r, (uint64_t)page_no * 7919 + 1);
    for (int i = 0; i < PAGE_ROWS; i++)
        b->rows[i] = (uint32_t)(i * 1000 + rng_below(&r, 1000));
    b->page_no = page_no;
    b->dirty = 0;
}

/* The page cleaner: writes the oldest dirty pages so they can be evicted. */
static void buf_flush_LRU_tail_batch(void)
{
    int n = 0;
    for (buf_page_t *b = buf_pool.lru_tail; b && n < CLEANER_BATCH; b = b->lru_prev)
        if (b->dirty && b->fix_count == 0) {
            buf_flush_write_page(b);
            n++;
        }
}

/* ---- eviction ---------------------------------------------------------- */
static int buf_page_can_relocate(const buf_page_t *b)
{
    return b->fix_count == 0 && !b->dirty && b->page_no >= 0;
}

static void buf_LRU_free_page(buf_page_t *b)
{
    lru_remove(b);
    page_hash_remove(b);
    b->page_no = -1;
    b->lru_next = buf_pool.free_list;
    buf_pool.free_list = b;
    buf_pool.n_evicted++;
}

static buf_page_t *buf_LRU_get_free_only(void)
{
    buf_page_t *b = buf_pool.free_list;
    if (b)
        buf_pool.free_list = b->lru_next;
    if (b)
        b->lru_next = NULL;
    return b;
}

/* Scans from the LRU tail for a clean page: at most SCAN_THRESHOLD pages,
 * or the whole list when scan_all is set. */
static int buf_LRU_scan_and_free_block(int scan_all)
{
    unsigned scanned = 0;
    for (buf_page_t *b = buf_pool.lru_tail;
         b && (scan_all || scanned < SCAN_THRESHOLD);
         ++scanned, b = b->lru_prev) {
        if (buf_page_can_relocate(b)) {
            buf_pool.lru_scanned += scanned;
            buf_LRU_free_page(b);
            return 1;
        }
    }
    buf_pool.lru_scanned += scanned;
    if (scan_all)
        buf_pool.n_full_scans++;
    return 0;
}

/* Flushes the LRU tail page itself so that it can be evicted. */
static int buf_flush_single_page_from_LRU(void)
{
    for (buf_page_t *b = buf_pool.lru_tail; b; b = b->lru_prev)
        if (b->fix_count == 0) {
            if (b->dirty)
                buf_flush_write_page(b);
            buf_LRU_free_page(b);
            return 1;
        }
    return 0;
}

/* Returns a free frame; takes and releases buf_pool.mutex itself. */
static buf_page_t *buf_LRU_get_free_block(void)
{
    unsigned n_iterations = 0;
    for (;;) {
        mutex_enter(&buf_pool.mutex);
        buf_page_t *block = buf_LRU_get_free_only();
        if (block) {
            mutex_exit(&buf_pool.mutex);
            return block;
        }
        int freed = 0;
        if (n_iterations || buf_pool.try_LRU_scan)
#ifdef VPROF_CASE_FIX
            freed = buf_LRU_scan_and_free_block(0);
#else
            freed = buf_LRU_scan_and_free_block(n_iterations > 0); /* FIX: never scan_all here; flush instead */
#endif
        if (!freed && n_iterations == 0)
            buf_pool.try_LRU_scan = 0;
        if (!freed && n_iterations > 0)
            buf_flush_single_page_from_LRU();
        if (freed)
            buf_pool.try_LRU_scan = 1;
        mutex_exit(&buf_pool.mutex);
        n_iterations++;
    }
}

/* ---- page access and the row workload ---------------------------------- */
static buf_page_t *buf_page_get(long page_no, int *missed)
{
    mutex_enter(&buf_pool.mutex);
    buf_page_t *b = page_hash_get(page_no);
    if (b) {
        b->fix_count++;
        lru_remove(b);
        lru_add_head(b);
        mutex_exit(&buf_pool.mutex);
        *missed = 0;
        return b;
    }
    mutex_exit(&buf_pool.mutex);

    buf_page_t *nb = buf_LRU_get_free_block();
    buf_read_page(nb, page_no);

    mutex_enter(&buf_pool.mutex);
    b = page_hash_get(page_no);      /* another thread may have read it */
    if (b) {
        nb->lru_next = buf_pool.free_list;
        nb->page_no = -1;
        buf_pool.free_list = nb;
    } else {
        b = nb;
        page_hash_insert(b);
        lru_add_head(b);
    }
    b->fix_count++;
    buf_pool.n_misses++;
    if (buf_pool.n_misses % CLEANER_EVERY == 0)
        buf_flush_LRU_tail_batch();
    mutex_exit(&buf_pool.mutex);
    *missed = 1;
    return b;
}

static void buf_page_release(buf_page_t *b, int modified)
{
    mutex_enter(&buf_pool.mutex);
    b->fix_count--;
    if (modified)
        b->dirty = 1;
    mutex_exit(&buf_pool.mutex);
}

/* Binary search for the row slot of a key inside a page (sorted rows). */
static int page_cur_search(const buf_page_t *b, uint32_t key)
{
    int lo = 0, hi = PAGE_ROWS - 1;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (b->rows[mid] < key) lo = mid + 1; else hi = mid;
    }
    return lo;
}

/* Updates one row in place, keeping the page sorted (the row work a
 * TPCC-like transaction does on every page it touches). */
static uint32_t row_upd_in_place(buf_page_t *b, uint32_t key)
{
    int slot = page_cur_search(b, key);
    uint32_t old = b->rows[slot];
    uint32_t lo = slot ? b->rows[slot - 1] : 0;
    uint32_t nv = old > lo + 1 ? old - 1 : old;
    b->rows[slot] = nv;
    uint32_t h = 0;
    for (int i = 0; i < PAGE_ROWS; i++)
        h = h * 31 + b->rows[i];
    return h;
}

typedef struct {
    int      id;
    long     accesses, dataset;
    uint64_t misses, result;
} worker_t;

static void *trx_worker(void *arg)
{
    worker_t *w = arg;
    rng_t r;
    rng_seed(&r, 23399 + (uint64_t)w->id);
    for (long i = 0; i < w->accesses; i++) {
        long page_no = (long)rng_below(&r, (uint64_t)w->dataset);
        int missed;
        buf_page_t *b = buf_page_get(page_no, &missed);
        w->misses += (uint64_t)missed;
        for (int k = 0; k < 24; k++)
            w->result += row_upd_in_place(b, (uint32_t)rng_below(&r, PAGE_ROWS * 1000));
        buf_page_release(b, 1);
    }
    return NULL;
}

static void buf_pool_create(long n_frames)
{
    pthread_mutex_init(&buf_pool.mutex, NULL);
    buf_pool.n_frames = n_frames;
    buf_pool.frames = calloc((size_t)n_frames, sizeof(buf_page_t));
    buf_pool.hash_size = n_frames * 2 + 1;
    buf_pool.page_hash = calloc((size_t)buf_pool.hash_size, sizeof(buf_page_t *));
    if (!buf_pool.frames || !buf_pool.page_hash) { perror("calloc"); exit(1); }
    for (long i = n_frames - 1; i >= 0; i--) {
        buf_pool.frames[i].page_no = -1;
        buf_pool.frames[i].lru_next = buf_pool.free_list;
        buf_pool.free_list = &buf_pool.frames[i];
    }
    buf_pool.try_LRU_scan = 1;
}

int main(int argc, char **argv)
{
    opt_t opts[] = {
        { "threads",  "worker threads",               2, 1, 64, 0 },
        { "accesses", "page accesses per thread", 50000, 1, 100000000, 0 },
        { "pool",     "buffer-pool frames",        1500, 16, 10000000, 0 },
        { "dataset",  "pages in the data set",     1400, 1, 100000000, 0 },
    };
    opts_parse(argc, argv, opts, NOPTS(opts));
    int n_threads = (int)opt_get(opts, NOPTS(opts), "threads");
    buf_pool_create(opt_get(opts, NOPTS(opts), "pool"));

    worker_t w[64];
    pthread_t tid[64];
    for (int i = 0; i < n_threads; i++) {
        w[i] = (worker_t){ .id = i, .accesses = opt_get(opts, NOPTS(opts), "accesses"),
                           .dataset = opt_get(opts, NOPTS(opts), "dataset") };
        if (pthread_create(&tid[i], NULL, trx_worker, &w[i]) != 0) {
            fprintf(stderr, "pthread_create failed\n");
            return 1;
        }
    }
    for (int i = 0; i < n_threads; i++)
        pthread_join(tid[i], NULL);

    /* Thread interleaving (and the eviction policy) decides which pages are
     * resident and what the page images hold, so stdout has only what does
     * not depend on either; the cache statistics go to stderr. */
    printf("%d threads, %ld accesses each\n", n_threads, opt_get(opts, NOPTS(opts), "accesses"));
    fprintf(stderr, "misses %llu, evicted %llu, flushed %llu, full LRU scans %llu\n",
            (unsigned long long)buf_pool.n_misses, (unsigned long long)buf_pool.n_evicted,
            (unsigned long long)buf_pool.n_flushed, (unsigned long long)buf_pool.n_full_scans);
    free(buf_pool.frames);
    free(buf_pool.page_hash);
    return 0;
}
