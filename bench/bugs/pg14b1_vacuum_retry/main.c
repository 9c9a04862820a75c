/* VACUUM of a heap table while a replication slot holds back the xmin
 * horizon, modelled on the PostgreSQL 14 bug in which the vacuum process
 * failed to prune heap pages and retried them endlessly (the vProf paper's
 * Postgres-14b1 case, Table 1 b15).
 *
 * lazy_scan_prune() prunes a page with heap_page_prune(), which decides
 * what is removable with the GlobalVis horizon (this one respects
 * replication slots), and then rechecks each remaining tuple with
 * HeapTupleSatisfiesVacuum(). A tuple the recheck calls DEAD should have
 * been pruned, so the page is pruned again ("goto retry").
 *
 * The bug: the recheck uses vacrel->OldestXmin, which ignores the slot. When
 * a slot holds the horizon back (buggy), tuples deleted between the slot's
 * xmin and OldestXmin are "recently dead" for pruning but "dead" for the
 * recheck, and the page is pruned again and again until the slot's horizon
 * catches up (in PostgreSQL it never did). Without a slot (normal) both
 * horizons agree. gprof blames the pruning and page compaction; the wrong
 * horizon in lazy_scan_prune's recheck is the root cause. */
#include "../common/corpus.h"

#define TUPLES_PER_PAGE  64
#define TUPLE_DATA       24
#define DELETE_XIDS      400000   /* transactions that deleted rows */

typedef uint32_t TransactionId;

typedef enum { HEAPTUPLE_LIVE, HEAPTUPLE_RECENTLY_DEAD, HEAPTUPLE_DEAD } HTSV_Result;

typedef struct {
    TransactionId xmin, xmax;          /* xmax 0 = not deleted */
    int           used, hint_committed;
    uint8_t       data[TUPLE_DATA];
} HeapTuple;

typedef struct {
    HeapTuple tuples[TUPLES_PER_PAGE];
    int       n_tuples, all_visible;
    uint32_t  free_space;
} Page;

typedef struct {
    TransactionId OldestXmin;          /* horizon computed at vacuum start */
    TransactionId slot_xmin;           /* replication slot's xmin (0 = none) */
    TransactionId slot_catchup;        /* xids the slot consumer advances per refresh */
    long          pages_scanned, retries, tuples_removed, index_cleaned;
    uint64_t      fsm_hash;
} LVRelState;

static Page      *heap;
static long       n_pages;
static uint32_t  *index_keys;           /* a btree index over (page, slot) */
static long       n_index;

/* ------------------------------------------------------------ visibility */
static int TransactionIdPrecedes(TransactionId a, TransactionId b)
{
    return (int32_t)(a - b) < 0;
}

/* Every transaction of this workload committed; the first look at a tuple
 * pays for the commit-log lookup and sets the hint bit. */
static uint32_t clog_probe;

static int TransactionIdDidCommit(HeapTuple *t, TransactionId xid)
{
    if (!t->hint_committed) {
        uint32_t h = xid;
        for (int i = 0; i < 16; i++)
            h = h * 2654435761u + 1;     /* clog page lookup */
        clog_probe += h;
        t->hint_committed = 1;
    }
    return 1;
}

static HTSV_Result HeapTupleSatisfiesVacuumHorizon(HeapTuple *t, TransactionId horizon)
{
    if (!TransactionIdDidCommit(t, t->xmin))
        return HEAPTUPLE_LIVE;
    if (t->xmax == 0)
        return HEAPTUPLE_LIVE;
    if (TransactionIdPrecedes(t->xmax, horizon))
        return HEAPTUPLE_DEAD;
    return HEAPTUPLE_RECENTLY_DEAD;
}

static HTSV_Result HeapTupleSatisfiesVacuum(HeapTuple *t, TransactionId OldestXmin)
{
    return HeapTupleSatisfiesVacuumHorizon(t, OldestXmin);
}

/* The GlobalVis horizon: OldestXmin, held back by a replication slot. Each
 * refresh sees the slot consumer a little further along. */
static TransactionId GlobalVisTestHorizon(LVRelState *v)
{
    if (v->slot_xmin == 0)
        return v->OldestXmin;
    TransactionId h = v->slot_xmin;
    if (TransactionIdPrecedes(v->slot_xmin, v->OldestXmin))
        v->slot_xmin += v->slot_catchup;
    if (!TransactionIdPrecedes(v->slot_xmin, v->OldestXmin))
        v->slot_xmin = v->OldestXmin;
    return h;
}

/* ---------------------------------------------------------------- pruning */
/* Compacts the page after tuples were removed (moves tuple data). */
static uint32_t PageRepairFragmentation(Page *p)
{
    uint32_t free_space = 0;
    uint8_t scratch[TUPLE_DATA];
    for (int i = 0; i < p->n_tuples; i++) {
        if (!p->tuples[i].used) {
            free_space += TUPLE_DATA;
            continue;
        }
        memcpy(scratch, p->tuples[i].data, TUPLE_DATA);
        for (int k = 0; k < TUPLE_DATA; k++)
            p->tuples[i].data[k] = (uint8_t)(scratch[k] ^ (uint8_t)k);
        for (int k = 0; k < TUPLE_DATA; k++)
            p->tuples[i].data[k] = (uint8_t)(p->tuples[i].data[k] ^ (uint8_t)k);
    }
    return free_space;
}

static int heap_page_prune(Page *p, TransactionId horizon)
{
    int removed = 0;
    for (int i = 0; i < p->n_tuples; i++) {
        HeapTuple *t = &p->tuples[i];
        if (t->used && HeapTupleSatisfiesVacuumHorizon(t, horizon) == HEAPTUPLE_DEAD) {
            t->used = 0;
            removed++;
        }
    }
    p->free_space = PageRepairFragmentation(p);
    return removed;
}

/* Prunes one page, then checks what is left to decide about the
 * visibility map and which items the indexes must forget. */
static void lazy_scan_prune(LVRelState *v, Page *p)
{
retry:;
#ifdef VPROF_CASE_FIX
    TransactionId horizon = GlobalVisTestHorizon(v);
    v->tuples_removed += heap_page_prune(p, horizon);
#else
    v->tuples_removed += heap_page_prune(p, GlobalVisTestHorizon(v));
#endif
    int all_visible = 1;
    for (int i = 0; i < p->n_tuples; i++) {
        HeapTuple *t = &p->tuples[i];
        if (!t->used)
            continue;
#ifdef VPROF_CASE_FIX
        HTSV_Result res = HeapTupleSatisfiesVacuum(t, horizon);
#else
        HTSV_Result res = HeapTupleSatisfiesVacuum(t, v->OldestXmin); /* FIX: recheck with the horizon pruning used */
#endif
        if (res == HEAPTUPLE_DEAD) {
            v->retries++;
            goto retry;            /* pruning must have missed it: prune again */
        }
        if (res != HEAPTUPLE_LIVE)
            all_visible = 0;
    }
    p->all_visible = all_visible;
}

/* ------------------------------------------------------- index and maps */
static uint32_t *dead_items;            /* TIDs removed from the heap, sorted */
static long      n_dead_items, dead_items_cap;

static void dead_items_add(uint32_t tid)
{
    if (n_dead_items == dead_items_cap) {
        dead_items_cap = dead_items_cap ? dead_items_cap * 2 : 4096;
        dead_items = realloc(dead_items, (size_t)dead_items_cap * sizeof *dead_items);
        if (!dead_items) { perror("realloc"); exit(1); }
    }
    dead_items[n_dead_items++] = tid;
}

/* Is index entry TID one the heap pass removed? (binary search) */
static int lazy_tid_reaped(uint32_t tid)
{
    long lo = 0, hi = n_dead_items;
    while (lo < hi) {
        long mid = (lo + hi) / 2;
        if (dead_items[mid] < tid) lo = mid + 1; else hi = mid;
    }
    return lo < n_dead_items && dead_items[lo] == tid;
}

/* One pass over an index: drops the entries pointing at removed tuples. */
static long lazy_vacuum_one_index(uint32_t *keys, long n)
{
    long cleaned = 0, out = 0;
    for (long i = 0; i < n; i++) {
        if (lazy_tid_reaped(keys[i]))
            cleaned++;
        else
            keys[out++] = keys[i];
    }
    return cleaned;
}

static long lazy_vacuum_all_indexes(int n_indexes)
{
    long cleaned = 0;
    uint32_t *copy = malloc((size_t)n_index * sizeof *copy);
    if (!copy) { perror("malloc"); exit(1); }
    for (int k = 0; k < n_indexes; k++) {
        memcpy(copy, index_keys, (size_t)n_index * sizeof *copy);
        cleaned += lazy_vacuum_one_index(copy, n_index);
    }
    free(copy);
    return cleaned;
}

static void RecordPageWithFreeSpace(LVRelState *v, long blkno, uint32_t space)
{
    v->fsm_hash = (v->fsm_hash * 1099511628211ULL) ^ ((uint64_t)blkno << 16) ^ space;
}

static void lazy_scan_heap(LVRelState *v, int n_indexes)
{
    for (long blk = 0; blk < n_pages; blk++) {
        lazy_scan_prune(v, &heap[blk]);
        for (int i = 0; i < heap[blk].n_tuples; i++)
            if (!heap[blk].tuples[i].used)
                dead_items_add((uint32_t)(blk * TUPLES_PER_PAGE + i));
        RecordPageWithFreeSpace(v, blk, heap[blk].free_space);
        v->pages_scanned++;
    }
    v->index_cleaned = lazy_vacuum_all_indexes(n_indexes);
}

/* ------------------------------------------------------------- workload */
static TransactionId build_table(long pages, rng_t *r)
{
    n_pages = pages;
    heap = calloc((size_t)pages, sizeof *heap);
    n_index = pages * TUPLES_PER_PAGE;
    index_keys = calloc((size_t)n_index, sizeof *index_keys);
    if (!heap || !index_keys) { perror("calloc"); exit(1); }
    TransactionId next_xid = 1000;
    for (long b = 0; b < pages; b++) {
        Page *p = &heap[b];
        p->n_tuples = TUPLES_PER_PAGE;
        for (int i = 0; i < TUPLES_PER_PAGE; i++) {
            HeapTuple *t = &p->tuples[i];
            t->used = 1;
            t->xmin = next_xid++;
            uint64_t bits = rng_next(r);
            for (int k = 0; k < TUPLE_DATA; k++)
                t->data[k] = (uint8_t)(bits >> (k % 8 * 8));
            index_keys[b * TUPLES_PER_PAGE + i] = (uint32_t)(b * TUPLES_PER_PAGE + i);
        }
    }
    /* Updates and deletes: a third of the rows get deleted by the next
     * DELETE_XIDS transactions. */
    for (long b = 0; b < pages; b++)
        for (int i = 0; i < TUPLES_PER_PAGE; i++)
            if (rng_below(r, 3) == 0)
                heap[b].tuples[i].xmax = next_xid + (TransactionId)rng_below(r, DELETE_XIDS);
    return next_xid + DELETE_XIDS;
}

int main(int argc, char **argv)
{
    opt_t opts[] = {
        { "pages",        "heap pages",                                15000, 1, 10000000, 0 },
        { "slot-lag",     "xids a replication slot lags behind (0 = no slot)", 0, 0, 1000000, 0 },
        { "slot-catchup", "xids the slot advances per horizon refresh",    1, 1, 1000000, 0 },
        { "indexes",      "indexes on the table",                          4, 0, 64, 0 },
    };
    opts_parse(argc, argv, opts, NOPTS(opts));
    rng_t r;
    rng_seed(&r, 14001);
    TransactionId next = build_table(opt_get(opts, NOPTS(opts), "pages"), &r);

    LVRelState v = {0};
    v.OldestXmin = next;
    long lag = opt_get(opts, NOPTS(opts), "slot-lag");
    v.slot_xmin = lag ? next - (TransactionId)lag : 0;
    v.slot_catchup = (TransactionId)opt_get(opts, NOPTS(opts), "slot-catchup");
    lazy_scan_heap(&v, (int)opt_get(opts, NOPTS(opts), "indexes"));

    long live = 0, visible = 0;
    for (long b = 0; b < n_pages; b++) {
        visible += heap[b].all_visible;
        for (int i = 0; i < TUPLES_PER_PAGE; i++)
            live += heap[b].tuples[i].used;
    }
    /* What VACUUM may remove depends on the slot: the buggy build "removes"
     * more only because its retries move the simulated slot forward (in
     * PostgreSQL the retries never ended), the fixed build keeps what the
     * slot still needs. So stdout has the work done, stderr the outcome. */
    printf("vacuumed %ld pages of %d tuples\n", v.pages_scanned, TUPLES_PER_PAGE);
    fprintf(stderr, "removed %ld, live %ld, all-visible %ld, retries %ld, index cleaned %ld\n",
            v.tuples_removed, live, visible, v.retries, v.index_cleaned);
    free(heap);
    free(index_keys);
    free(dead_items);
    return 0;
}
