/* An InnoDB-style buffer pool serving point lookups while reports scan a
 * big table, modelled on InnoDB's missing scan resistance: until the
 * midpoint insertion strategy (InnoDB Plugin 1.0.5 / MySQL 5.1.41,
 * innodb_old_blocks_pct and innodb_old_blocks_time; "Making the Buffer
 * Pool Scan Resistant" in the MySQL manual) a page read from disk went to
 * the head of the LRU list, so one table scan evicted the whole working
 * set.
 *
 * OLTP transactions look up rows on a hot set of pages; now and then a
 * report scans a large table page by page. Pages come from the buffer pool
 * (buf_page_get) or are read from disk (buf_read_page: read and verify the
 * checksum) into a frame freed from the LRU tail.
 *
 * The bug: buf_LRU_add_block() puts every newly read page at the young end
 * of the LRU list. A report that scans 1,000 pages (normal) leaves the hot
 * set of 2,400 pages in place in a pool of 4,000; one that scans 4,500
 * pages (buggy) pushes every hot page out, and the next transactions read
 * (and decrypt) the hot set from disk again, after every report. gprof blames the page read and the checksum; the insertion
 * policy, decided in a function that costs nothing, is the root cause (the
 * fix inserts new pages at the midpoint, 3/8 from the tail, and makes them
 * young only when accessed again later). */
#include "../common/corpus.h"

#define PAGE_SIZE        4096
#define OLD_RATIO_NUM    3             /* innodb_old_blocks_pct = 37 (3/8) */
#define OLD_RATIO_DEN    8

typedef struct buf_page {
    long page_no;                      /* -1: free */
    struct buf_page *prev, *next;      /* LRU: prev = towards the young end */
    struct buf_page *hash_next;
    int old;                           /* in the old sublist */
    long first_access;                 /* "time" (access counter) of the first access */
    uint8_t *frame;
} buf_page_t;

static struct {
    buf_page_t *pages;
    long n_pages, hash_size;
    buf_page_t **hash;
    buf_page_t *lru_head, *lru_tail, *lru_old;   /* lru_old: the midpoint */
    long lru_len, old_len;
    long now;                           /* access counter: the pool's clock */
    long n_free;                        /* pages[0 .. n_free) never used yet */
} buf_pool;

static uint64_t n_reads, n_oltp_misses;
static uint8_t disk_image[PAGE_SIZE];

/* ------------------------------------------------------------ the LRU */
static void lru_remove(buf_page_t *b)
{
    if (buf_pool.lru_old == b)
        buf_pool.lru_old = b->next;    /* the next page towards the tail is old too */
    if (b->prev) b->prev->next = b->next; else buf_pool.lru_head = b->next;
    if (b->next) b->next->prev = b->prev; else buf_pool.lru_tail = b->prev;
    b->prev = b->next = NULL;
    buf_pool.lru_len--;
    if (b->old) buf_pool.old_len--;
}

static void lru_add_head(buf_page_t *b)
{
    b->prev = NULL;
    b->next = buf_pool.lru_head;
    if (buf_pool.lru_head) buf_pool.lru_head->prev = b; else buf_pool.lru_tail = b;
    buf_pool.lru_head = b;
    b->old = 0;
    buf_pool.lru_len++;
}

#ifdef VPROF_CASE_FIX
/* Keeps lru_old at the point 3/8 of the list from the tail. */
static void lru_old_adjust(void)
{
    long want = buf_pool.lru_len * OLD_RATIO_NUM / OLD_RATIO_DEN;
    if (!buf_pool.lru_old) {
        buf_pool.lru_old = buf_pool.lru_tail;
        buf_pool.old_len = 0;
        for (buf_page_t *b = buf_pool.lru_tail; b; b = b->prev) {
            if (buf_pool.old_len >= want) break;
            b->old = 1;
            buf_pool.old_len++;
            buf_pool.lru_old = b;
        }
        return;
    }
    while (buf_pool.old_len < want && buf_pool.lru_old->prev) {
        buf_pool.lru_old = buf_pool.lru_old->prev;
        buf_pool.lru_old->old = 1;
        buf_pool.old_len++;
    }
    while (buf_pool.old_len > want + 1 && buf_pool.lru_old->next) {
        buf_pool.lru_old->old = 0;
        buf_pool.lru_old = buf_pool.lru_old->next;
        buf_pool.old_len--;
    }
}

static void lru_add_old(buf_page_t *b)
{
    buf_page_t *at = buf_pool.lru_old;
    if (!at) { lru_add_head(b); lru_old_adjust(); return; }
    b->prev = at;                       /* just after the midpoint, as InnoDB */
    b->next = at->next;
    if (at->next) at->next->prev = b; else buf_pool.lru_tail = b;
    at->next = b;
    b->old = 1;
    buf_pool.lru_len++;
    buf_pool.old_len++;
    lru_old_adjust();
}
#endif

/* Where a page just read from disk goes in the LRU list. */
static void buf_LRU_add_block(buf_page_t *b)
{
#ifdef VPROF_CASE_FIX
    lru_add_old(b);
#else
    lru_add_head(b); /* FIX: insert at the old-sublist midpoint (3/8 from the tail); make young only on a later access (innodb_old_blocks_time) */
#endif
}

/* On a hit: move the page to the young end if policy says so. */
static void buf_page_make_young_if_needed(buf_page_t *b)
{
#ifdef VPROF_CASE_FIX
    if (b->old && buf_pool.now - b->first_access < 64)
        return;                        /* accessed again right away: a scan */
#endif
    if (buf_pool.lru_head == b)
        return;
    lru_remove(b);
    lru_add_head(b);
#ifdef VPROF_CASE_FIX
    lru_old_adjust();
#endif
}

/* --------------------------------------------------------- page hash */
static buf_page_t *buf_page_hash_get(long page_no)
{
    for (buf_page_t *b = buf_pool.hash[page_no % buf_pool.hash_size]; b; b = b->hash_next)
        if (b->page_no == page_no)
            return b;
    return NULL;
}

static void hash_insert(buf_page_t *b)
{
    long h = b->page_no % buf_pool.hash_size;
    b->hash_next = buf_pool.hash[h];
    buf_pool.hash[h] = b;
}

static void hash_remove(buf_page_t *b)
{
    for (buf_page_t **p = &buf_pool.hash[b->page_no % buf_pool.hash_size]; *p; p = &(*p)->hash_next)
        if (*p == b) { *p = b->hash_next; return; }
}

/* ---------------------------------------------------------- disk I/O */
static uint32_t buf_calc_page_crc32(const uint8_t *p)
{
    uint32_t c = 0;
    for (int i = 0; i < PAGE_SIZE; i += 4)
        c = (c ^ (uint32_t)(p[i] | p[i + 1] << 8 | p[i + 2] << 16 | (uint32_t)p[i + 3] << 24)) * 0x01000193u;
    return c;
}

/* Tablespaces are encrypted (innodb_encrypt_tables): every page read from
 * disk is decrypted, the CPU part of a miss. */
static void fil_space_decrypt(uint8_t *frame, long page_no)
{
    uint64_t k = (uint64_t)page_no * 0x9e3779b97f4a7c15ULL;
    for (int round = 0; round < 6; round++)
        for (int i = 0; i < PAGE_SIZE; i += 8) {
            k = (k ^ (k >> 29)) * 0xbf58476d1ce4e5b9ULL;
            frame[i] ^= (uint8_t)k;
        }
}

static void buf_read_page(buf_page_t *b, long page_no)
{
    memcpy(b->frame, disk_image, PAGE_SIZE);
    fil_space_decrypt(b->frame, page_no);
    b->frame[0] = (uint8_t)page_no;
    if (buf_calc_page_crc32(b->frame) == 0xdeadbeefu)
        fprintf(stderr, "page %ld: bad checksum\n", page_no);
    b->page_no = page_no;
    n_reads++;
}

static buf_page_t *buf_LRU_get_free_block(void)
{
    if (buf_pool.n_free > 0)
        return &buf_pool.pages[--buf_pool.n_free];
    buf_page_t *victim = buf_pool.lru_tail;    /* evict the oldest */
    lru_remove(victim);
    hash_remove(victim);
    victim->page_no = -1;
    return victim;
}

static buf_page_t *buf_page_get(long page_no, int *missed)
{
    buf_pool.now++;
    buf_page_t *b = buf_page_hash_get(page_no);
    if (b) {
        buf_page_make_young_if_needed(b);
        *missed = 0;
        return b;
    }
    b = buf_LRU_get_free_block();
    buf_read_page(b, page_no);
    b->first_access = buf_pool.now;
    hash_insert(b);
    buf_LRU_add_block(b);
    *missed = 1;
    return b;
}

/* ---------------------------------------------------------- workload */
static uint64_t row_lookup(long page_no, uint32_t key)
{
    int missed;
    buf_page_t *b = buf_page_get(page_no, &missed);
    n_oltp_misses += (uint64_t)missed;
    uint64_t h = key;
    for (int i = 0; i < 8; i++)
        h = h * 31 + b->frame[(key + (uint32_t)i * 97) % PAGE_SIZE];
    return h;
}

static uint64_t report_scan(long first_page, long n)
{
    uint64_t sum = 0;
    int missed;
    for (long p = 0; p < n; p++) {
        buf_page_t *b = buf_page_get(first_page + p, &missed);
        sum += b->frame[p % PAGE_SIZE];
        buf_page_get(first_page + p, &missed);     /* the next rows of the page */
    }
    return sum;
}

int main(int argc, char **argv)
{
    opt_t opts[] = {
        { "pool",       "buffer pool pages",                   4000, 16, 10000000, 0 },
        { "hot",        "pages of the OLTP working set",       2400, 1, 10000000, 0 },
        { "scan-pages", "pages a report scans",                1000, 0, 100000000, 0 },
        { "rounds",     "rounds of transactions + one report",    6, 1, 100000, 0 },
        { "lookups",    "row lookups per round",               60000, 1, 100000000, 0 },
    };
    opts_parse(argc, argv, opts, NOPTS(opts));
    buf_pool.n_pages = opt_get(opts, NOPTS(opts), "pool");
    buf_pool.hash_size = buf_pool.n_pages * 2 + 1;
    buf_pool.pages = calloc((size_t)buf_pool.n_pages, sizeof *buf_pool.pages);
    buf_pool.hash = calloc((size_t)buf_pool.hash_size, sizeof *buf_pool.hash);
    uint8_t *frames = calloc((size_t)buf_pool.n_pages, PAGE_SIZE);
    if (!buf_pool.pages || !buf_pool.hash || !frames) { perror("calloc"); return 1; }
    for (long i = 0; i < buf_pool.n_pages; i++) {
        buf_pool.pages[i].page_no = -1;
        buf_pool.pages[i].frame = frames + i * PAGE_SIZE;
    }
    buf_pool.n_free = buf_pool.n_pages;
    for (int i = 0; i < PAGE_SIZE; i++)
        disk_image[i] = (uint8_t)(i * 13 + 7);
    /* The pool is warm: full of pages of earlier work. */
    for (long i = 0; i < buf_pool.n_pages; i++) {
        int missed;
        buf_page_get(3000000 + i, &missed);
    }
    n_reads = 0;
    long hot = opt_get(opts, NOPTS(opts), "hot");
    long scan = opt_get(opts, NOPTS(opts), "scan-pages");
    rng_t r;
    rng_seed(&r, 5141);
    uint64_t h = 0, s = 0;
    for (long round = 0; round < opt_get(opts, NOPTS(opts), "rounds"); round++) {
        for (long q = 0; q < opt_get(opts, NOPTS(opts), "lookups"); q++)
            h = h * 31 + row_lookup((long)rng_below(&r, (uint64_t)hot), (uint32_t)rng_next(&r));
        s += report_scan(1000000, scan);
    }
    printf("rounds of OLTP and reports over %ld pages: rows %016llx, report %llu\n", scan,
           (unsigned long long)h, (unsigned long long)s);
    fprintf(stderr, "pages read %llu\noltp_misses=%llu\n", (unsigned long long)n_reads,
            (unsigned long long)n_oltp_misses);
    return 0;
}
