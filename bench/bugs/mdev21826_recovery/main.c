/* Crash recovery of a toy InnoDB-style redo log, modelled on MariaDB
 * MDEV-21826 (the vProf paper's Figure 1).
 *
 * Recovery reads the redo log in segments, parses the records into a hash
 * table keyed by page, and applies the hashed records to buffer-pool pages
 * whenever the hash table would exceed the memory it may use
 * (available_mem). Applying is expensive: it walks every hash cell, replays
 * records onto pages and flushes dirty pages with a checksum.
 *
 * The bug: recv_group_scan_log_recs() computes available_mem by subtracting
 * the free frames once per buffer-pool instance, although recv_sys_init()
 * already counted the frames of all instances. With one instance the result
 * is right; with three it is zero, so every scanned segment triggers a full
 * apply pass. gprof blames recv_apply_hashed_log_recs() and the checksum;
 * the cheap caller that computed the wrong bound is the root cause. */
#include "../common/corpus.h"

#define PAGE_SIZE      512u     /* bytes per page (scaled down) */
#define RSCAN_RECS     48       /* records read per log segment */
#define N_HASH_CELLS   2048     /* cells of the recovery hash table */
#define REC_MEM        64u      /* memory one hashed record costs */

typedef uint64_t lsn_t;

typedef struct {
    uint32_t space_id, page_no;
    uint16_t type, len;
    uint32_t payload;
    lsn_t    lsn;
} log_rec_t;

typedef struct recv_t {
    const log_rec_t *rec;
    struct recv_t   *next;
} recv_t;

typedef struct {
    uint8_t  data[PAGE_SIZE];
    uint32_t page_no;
    lsn_t    page_lsn;
    int      dirty;
} buf_page_t;

/* Global recovery state, as in InnoDB's recv_sys. */
static log_rec_t  *log_buf;
static size_t      log_n_recs;
static buf_page_t *buf_pool;
static size_t      buf_n_pages;
static long        srv_buf_pool_instances;
static size_t      recv_n_pool_free_frames;
static recv_t     *recv_hash[N_HASH_CELLS];
static recv_t     *recv_hash_tail[N_HASH_CELLS]; /* keeps records in LSN order */
static recv_t     *recv_pool;          /* preallocated hash nodes */
static size_t      recv_n_hashed;
static uint8_t    *disk;               /* flushed page images */
static uint64_t    n_flushes, n_applied, checksum_total;

static void log_generate(size_t n_recs, size_t n_pages)
{
    rng_t r;
    rng_seed(&r, 21826);
    log_buf = calloc(n_recs, sizeof *log_buf);
    if (!log_buf) { perror("calloc"); exit(1); }
    for (size_t i = 0; i < n_recs; i++) {
        log_rec_t *l = &log_buf[i];
        /* Hot set: most records hit a small group of pages, like a real
         * workload that updated a few indexes many times. */
        l->page_no  = (uint32_t)(rng_below(&r, 8) ? rng_below(&r, n_pages / 8)
                                                  : rng_below(&r, n_pages));
        l->space_id = l->page_no % 4;   /* page numbers are unique across spaces */
        l->type     = (uint16_t)(1 + rng_below(&r, 5));
        l->len      = (uint16_t)(8 + rng_below(&r, 48));
        l->payload  = (uint32_t)rng_next(&r);
        l->lsn      = 8192 + i * 64;
    }
    log_n_recs = n_recs;
}

static void buf_pool_init(size_t n_pages)
{
    buf_n_pages = n_pages;
    buf_pool = calloc(n_pages, sizeof *buf_pool);
    disk = calloc(n_pages, PAGE_SIZE);
    if (!buf_pool || !disk) { perror("calloc"); exit(1); }
    for (size_t i = 0; i < n_pages; i++)
        buf_pool[i].page_no = (uint32_t)i;
}

static size_t buf_pool_get_n_pages(void)
{
    return buf_n_pages;
}

/* Reserves a third of the whole pool (all instances together) for pages
 * that recovery reads while applying. */
static void recv_sys_init(void)
{
    recv_n_pool_free_frames = buf_pool_get_n_pages() / 3;
    recv_pool = calloc(log_n_recs, sizeof *recv_pool);
    if (!recv_pool) { perror("calloc"); exit(1); }
    memset(recv_hash, 0, sizeof recv_hash);
    recv_n_hashed = 0;
}

static unsigned recv_fold(uint32_t space_id, uint32_t page_no)
{
    return (unsigned)((space_id * 2654435761u) ^ (page_no * 40503u)) % N_HASH_CELLS;
}

static void recv_add_to_hash_table(const log_rec_t *rec)
{
    recv_t *n = &recv_pool[recv_n_hashed++];
    unsigned cell = recv_fold(rec->space_id, rec->page_no);
    n->rec = rec;
    n->next = NULL;
    if (recv_hash[cell])
        recv_hash_tail[cell]->next = n;
    else
        recv_hash[cell] = n;
    recv_hash_tail[cell] = n;
}

/* Checksum of a page image (the costly, necessary part of every flush). */
static uint32_t buf_calc_page_crc32(const uint8_t *p)
{
    uint32_t c = 0xffffffffu;
    for (unsigned i = 0; i < PAGE_SIZE; i++) {
        c ^= p[i];
        for (int k = 0; k < 2; k++)
            c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
    }
    return ~c;
}

static void recv_apply_rec_to_page(buf_page_t *pg, const log_rec_t *rec)
{
    unsigned off = (rec->payload % (PAGE_SIZE - 64));
    for (unsigned i = 0; i < rec->len; i++)
        pg->data[off + i] ^= (uint8_t)(rec->payload >> (i & 24));
    pg->page_lsn = rec->lsn;
    pg->dirty = 1;
    n_applied++;
}

static void recv_recover_page(recv_t *list)
{
    for (recv_t *n = list; n; n = n->next) {
        buf_page_t *pg = &buf_pool[n->rec->page_no % buf_n_pages];
        /* Validate the page image before replaying onto it, as a real
         * recovery does after reading the page from disk. */
        if (buf_calc_page_crc32(pg->data) == 0xdeadbeefu)
            fprintf(stderr, "page %u: suspicious checksum\n", pg->page_no);
        if (pg->page_lsn < n->rec->lsn)
            recv_apply_rec_to_page(pg, n->rec);
    }
}

static void buf_flush_page(buf_page_t *pg)
{
    uint32_t crc = buf_calc_page_crc32(pg->data);
    memcpy(disk + (size_t)pg->page_no * PAGE_SIZE, pg->data, PAGE_SIZE);
    checksum_total += crc;
    pg->dirty = 0;
    n_flushes++;
}

/* Flushes every dirty page: a scan of the whole pool per apply pass. */
static void buf_flush_dirty_pages(void)
{
    for (size_t i = 0; i < buf_n_pages; i++)
        if (buf_pool[i].dirty)
            buf_flush_page(&buf_pool[i]);
}

/* Applies everything hashed so far: visits every cell, replays, flushes. */
static void recv_apply_hashed_log_recs(int last_batch)
{
    for (unsigned cell = 0; cell < N_HASH_CELLS; cell++) {
        if (recv_hash[cell]) {
            recv_recover_page(recv_hash[cell]);
            recv_hash[cell] = NULL;
        }
    }
    buf_flush_dirty_pages();
    /* The node pool is reused from the start after every pass; the last
     * batch keeps its count for the final report. */
    if (!last_batch)
        recv_n_hashed = 0;
}

/* Reads the next log segment: returns via *end_lsn how far it reached. */
static void log_read_log_seg(lsn_t *end_lsn, lsn_t start_lsn, lsn_t want_end)
{
    lsn_t log_end = log_n_recs ? log_buf[log_n_recs - 1].lsn + 64 : start_lsn;
    *end_lsn = want_end < log_end ? want_end : log_end;
}

static size_t lsn_to_index(lsn_t lsn)
{
    return lsn < 8192 ? 0 : (size_t)((lsn - 8192) / 64);
}

/* Parses records in [start, end) into the hash table until the memory
 * budget is used up. Returns the LSN where parsing stopped. */
static lsn_t recv_parse_log_recs(lsn_t start, lsn_t end, size_t available_mem)
{
    size_t i = lsn_to_index(start), last = lsn_to_index(end);
    while (i < last && i < log_n_recs) {
        /* At least one record per segment, so recovery always progresses. */
        if ((recv_n_hashed + 1) * REC_MEM > available_mem && i > lsn_to_index(start))
            break;
        recv_add_to_hash_table(&log_buf[i]);
        i++;
    }
    return 8192 + (lsn_t)i * 64;
}

/* Returns true when the whole log has been scanned; *scanned_lsn is where
 * the next segment starts. When the hash table is full it sets
 * recv_apply_batch_needed and returns false: "apply, then scan on". */
static int recv_apply_batch_needed;

static int recv_scan_log_recs(size_t available_mem, lsn_t start, lsn_t end,
                              lsn_t *scanned_lsn)
{
    *scanned_lsn = recv_parse_log_recs(start, end, available_mem);
    if ((recv_n_hashed + 1) * REC_MEM > available_mem) {
        recv_apply_batch_needed = 1;
        return 0;
    }
    return lsn_to_index(*scanned_lsn) >= log_n_recs;
}

/* Scans the whole log from the checkpoint. The cost is in the callees; this
 * function only decides how often they run. */
static int recv_group_scan_log_recs(lsn_t ckpt_lsn)
{
#ifdef VPROF_CASE_FIX
    size_t available_mem = PAGE_SIZE * (buf_pool_get_n_pages() - recv_n_pool_free_frames);
#else
    /* BUG: recv_n_pool_free_frames already covers all instances. */
    size_t available_mem = PAGE_SIZE * (buf_pool_get_n_pages() - recv_n_pool_free_frames * (size_t)srv_buf_pool_instances); /* FIX: drop "* srv_buf_pool_instances" */
#endif
    lsn_t start_lsn = ckpt_lsn, end_lsn = ckpt_lsn, scanned_lsn = ckpt_lsn;
    int passes = 0;

    do {
        if (recv_apply_batch_needed) {
            recv_apply_hashed_log_recs(0);
            recv_apply_batch_needed = 0;
            passes++;
        }
        start_lsn = scanned_lsn;
        log_read_log_seg(&end_lsn, start_lsn, start_lsn + RSCAN_RECS * 64);
    } while (end_lsn != start_lsn &&
             !recv_scan_log_recs(available_mem, start_lsn, end_lsn, &scanned_lsn));

    recv_apply_hashed_log_recs(1);
    return passes + 1;
}

static uint64_t verify_disk(void)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < buf_n_pages * PAGE_SIZE; i += 61)
        h = (h ^ disk[i]) * 1099511628211ULL;
    return h;
}

int main(int argc, char **argv)
{
    opt_t opts[] = {
        { "records",   "redo records in the log",   160000, 1, 10000000, 0 },
        { "pages",     "buffer-pool pages in total",  3072, 3, 1000000, 0 },
        { "instances", "buffer-pool instances",          1, 1, 64, 0 },
    };
    opts_parse(argc, argv, opts, NOPTS(opts));
    size_t n_recs  = (size_t)opt_get(opts, NOPTS(opts), "records");
    size_t n_pages = (size_t)opt_get(opts, NOPTS(opts), "pages");
    srv_buf_pool_instances = opt_get(opts, NOPTS(opts), "instances");

    log_generate(n_recs, n_pages);
    buf_pool_init(n_pages);
    recv_sys_init();
    int passes = recv_group_scan_log_recs(8192);

    /* stdout: what recovery produced; stderr: how much work it took (the
     * fixed build must print the same stdout with far fewer passes). */
    printf("recovered %zu records, applied %llu, disk %016llx\n",
           n_recs, (unsigned long long)n_applied, (unsigned long long)verify_disk());
    fprintf(stderr, "%d apply passes, %llu page flushes, crc %llx\n", passes,
            (unsigned long long)n_flushes, (unsigned long long)checksum_total);
    free(log_buf); free(buf_pool); free(disk); free(recv_pool);
    return 0;
}
