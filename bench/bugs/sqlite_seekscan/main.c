/* An SQLite-like engine answering
 *   SELECT count(*) FROM edge WHERE node_to = ?1 AND node_from IN (...)
 * through an index on (node_to, node_from), modelled on SQLite 3.35's
 * OP_SeekScan ("scanning of the relevant range of the index but gives up
 * and falls back to doing a seek if the number of rows scanned grows too
 * large"; check-in dc4172e6b8: "adjust the number of steps run before
 * giving up based on the estimated number of comparisons needed to
 * perform a seek") and the forum reports of IN queries running hundreds
 * of times slower after 3.35 when sqlite_stat1 underestimated the rows.
 *
 * The planner (whereLoopAddBtreeIndex) estimates the rows per node_to from
 * sqlite_stat1. With few rows it codes each IN value as OP_SeekScan: step
 * the cursor forward from where the previous value left it, up to P1 rows,
 * before falling back to a binary-search seek (OP_SeekGE).
 *
 * The bug (this model's; SQLite's first cut sized the budget differently
 * too): P1 is the estimated number of rows in the table instead of the
 * cost of a seek (the table's LogEst / 10, about log2 of its rows), so the
 * "scan" never gives up and walks the whole node_to range for every query.
 * With statistics that match the data (normal) the planner seeks for each
 * IN value; with sqlite_stat1 from when each node had 20 edges (buggy: now
 * 2,000) it scans. gprof blames the record comparison and the cursor
 * step; the planner code that sized the budget, which ran once per
 * prepare, is the root cause. */
#include "../common/corpus.h"

typedef int16_t LogEst;
typedef struct { int32_t node_to, node_from; int64_t rowid; } IdxEntry;

/* The index "b-tree": sorted entries (a flat array stands in for pages). */
typedef struct { IdxEntry *a; long n; LogEst aiRowLogEst[2]; } Index;
typedef struct { const Index *idx; long pos; int eof; } BtCursor;

typedef struct { int32_t node_to, node_from; } UnpackedRecord;

typedef struct {
    int use_seekscan;                  /* WHERE_IN_SEEKSCAN */
    int nSeekScanSteps;                /* OP_SeekScan's P1 */
} WhereLoop;

typedef struct {
    const Index *idx;
    WhereLoop loop;
    int32_t node_to;
    const int32_t *in_list;
    int n_in;
    long count;
} Vdbe;

static Index edge_idx;
static int64_t *edge_weight;           /* the table: rowid -> weight */
static uint64_t n_compares;            /* informative */

/* ------------------------------------------------------------ LogEst */
static LogEst sqlite3LogEst(uint64_t x)
{
    LogEst y = 40;
    if (x < 8) { if (x < 2) return 0; while (x < 8) { y -= 10; x <<= 1; } }
    else { while (x > 255) { y += 40; x >>= 4; } while (x > 15) { y += 10; x >>= 1; } }
    static const LogEst a[] = { 0, 2, 3, 5, 6, 7, 8, 9 };
    return (LogEst)(a[x & 7] + y - 10);
}

static __attribute__((unused)) uint64_t sqlite3LogEstToInt(LogEst x)
{
    uint64_t n = (uint64_t)(x % 10);
    x /= 10;
    n = n >= 5 ? n - 2 : n >= 1 ? n - 1 : n;
    return x >= 3 ? (n + 8) << (x - 3) : (n + 8) >> (3 - x);
}

/* ------------------------------------------------------------- btree */
static int vdbeRecordCompareInt(const IdxEntry *e, const UnpackedRecord *r)
{
    n_compares++;
    if (e->node_to != r->node_to) return e->node_to < r->node_to ? -1 : 1;
    if (e->node_from != r->node_from) return e->node_from < r->node_from ? -1 : 1;
    return 0;
}

static int sqlite3VdbeRecordCompare(const IdxEntry *e, const UnpackedRecord *r)
{
    return vdbeRecordCompareInt(e, r);
}

/* Binary search: the cursor on the first entry >= R. */
static void sqlite3BtreeMovetoUnpacked(BtCursor *c, const UnpackedRecord *r)
{
    long lo = 0, hi = c->idx->n;
    while (lo < hi) {
        long mid = (lo + hi) / 2;
        if (sqlite3VdbeRecordCompare(&c->idx->a[mid], r) < 0) lo = mid + 1; else hi = mid;
    }
    c->pos = lo;
    c->eof = lo >= c->idx->n;
}

static int btreeNext(BtCursor *c)
{
    if (++c->pos >= c->idx->n) { c->eof = 1; return 1; }
    return 0;
}

static int sqlite3BtreeNext(BtCursor *c)
{
    return btreeNext(c);
}

/* ------------------------------------------------------------- VDBE */
static void vdbeSeekGE(BtCursor *c, const UnpackedRecord *r)
{
    sqlite3BtreeMovetoUnpacked(c, r);
}

/* OP_SeekScan: step forward up to P1 entries looking for R; give up and
 * let the following OP_SeekGE do a real seek. */
static int vdbeSeekScan(BtCursor *c, const UnpackedRecord *r, int p1)
{
    if (c->eof || c->pos < 0)
        return 0;
    for (int steps = 0; steps < p1; steps++) {
        int cmp = sqlite3VdbeRecordCompare(&c->idx->a[c->pos], r);
        if (cmp >= 0)
            return 1;                  /* at or past R: no seek needed */
        if (sqlite3BtreeNext(c))
            return 1;
    }
    return 0;
}

static void sqlite3VdbeExec(Vdbe *p)
{
    BtCursor c = { p->idx, -1, 0 };
    for (int i = 0; i < p->n_in; i++) {          /* the IN loop */
        UnpackedRecord r = { p->node_to, p->in_list[i] };
        if (!(p->loop.use_seekscan && vdbeSeekScan(&c, &r, p->loop.nSeekScanSteps)))
            vdbeSeekGE(&c, &r);
        if (!c.eof && sqlite3VdbeRecordCompare(&c.idx->a[c.pos], &r) == 0)
            p->count += edge_weight[c.idx->a[c.pos].rowid] > 0;   /* OP_AggStep */
    }
}

static int sqlite3Step(Vdbe *p) { sqlite3VdbeExec(p); return 101; /* SQLITE_DONE */ }
static int sqlite3_step(Vdbe *p) { return sqlite3Step(p); }

/* ---------------------------------------------------------- planner */
/* sqlite_stat1 for the index: "nRow nRowPerNodeTo" as of the last ANALYZE. */
static long stat1_rows_per_node;

static void whereLoopAddBtreeIndex(WhereLoop *w, const Index *idx, int n_in)
{
    LogEst nOut = sqlite3LogEst((uint64_t)stat1_rows_per_node);
    /* Few rows per node_to: scanning the range beats one seek per IN value. */
    w->use_seekscan = nOut < sqlite3LogEst((uint64_t)n_in) + 30;
#ifdef VPROF_CASE_FIX
    w->nSeekScanSteps = (idx->aiRowLogEst[0] + 9) / 10;
#else
    w->nSeekScanSteps = (int)sqlite3LogEstToInt(idx->aiRowLogEst[0]); /* FIX: (aiRowLogEst[0] + 9) / 10, the cost of a seek */
#endif
}

static void sqlite3_prepare(Vdbe *p, int32_t node_to, const int32_t *in, int n_in)
{
    memset(p, 0, sizeof *p);
    p->idx = &edge_idx;
    p->node_to = node_to;
    p->in_list = in;
    p->n_in = n_in;
    whereLoopAddBtreeIndex(&p->loop, &edge_idx, n_in);
}

static long sqlite3_exec(int32_t node_to, const int32_t *in, int n_in)
{
    Vdbe v;
    sqlite3_prepare(&v, node_to, in, n_in);
    sqlite3_step(&v);
    return v.count;
}

static long shell_exec(rng_t *r, int nodes, int32_t max_from, int n_in)
{
    int32_t in[256];
    int32_t node = (int32_t)rng_below(r, (uint64_t)nodes);
    for (int i = 0; i < n_in; i++)
        in[i] = (int32_t)((uint64_t)max_from * (uint64_t)(i + 1) / (uint64_t)(n_in + 1)
                          + rng_below(r, 50));
    return sqlite3_exec(node, in, n_in);
}

static int cmp_entry(const void *a, const void *b)
{
    const IdxEntry *x = a, *y = b;
    if (x->node_to != y->node_to) return x->node_to < y->node_to ? -1 : 1;
    return x->node_from < y->node_from ? -1 : x->node_from > y->node_from;
}

int main(int argc, char **argv)
{
    opt_t opts[] = {
        { "nodes",      "node_to values",                       100, 1, 100000, 0 },
        { "edges-per-node", "edges per node_to",               2000, 1, 1000000, 0 },
        { "stat1",      "rows per node_to in sqlite_stat1",    2000, 1, 100000000, 0 },
        { "queries",    "queries",                            10000, 1, 100000000, 0 },
        { "in",         "values in the IN list",                 20, 1, 256, 0 },
    };
    opts_parse(argc, argv, opts, NOPTS(opts));
    int nodes = (int)opt_get(opts, NOPTS(opts), "nodes");
    long per = opt_get(opts, NOPTS(opts), "edges-per-node");
    stat1_rows_per_node = opt_get(opts, NOPTS(opts), "stat1");
    long queries = opt_get(opts, NOPTS(opts), "queries");
    int n_in = (int)opt_get(opts, NOPTS(opts), "in");

    rng_t r;
    rng_seed(&r, 335);
    edge_idx.n = (long)nodes * per;
    edge_idx.a = malloc((size_t)edge_idx.n * sizeof *edge_idx.a);
    edge_weight = malloc((size_t)edge_idx.n * sizeof *edge_weight);
    if (!edge_idx.a || !edge_weight) { perror("malloc"); return 1; }
    int32_t max_from = (int32_t)(per * 4);
    for (long i = 0; i < edge_idx.n; i++) {
        edge_idx.a[i] = (IdxEntry){ (int32_t)(i / per), (int32_t)rng_below(&r, (uint64_t)max_from), i };
        edge_weight[i] = (int64_t)rng_below(&r, 4);
    }
    qsort(edge_idx.a, (size_t)edge_idx.n, sizeof *edge_idx.a, cmp_entry);
    edge_idx.aiRowLogEst[0] = sqlite3LogEst((uint64_t)edge_idx.n);
    edge_idx.aiRowLogEst[1] = sqlite3LogEst((uint64_t)stat1_rows_per_node);

    long total = 0;
    for (long q = 0; q < queries; q++)
        total += shell_exec(&r, nodes, max_from, n_in);
    printf("%ld edges, %ld queries: count %ld\n", edge_idx.n, queries, total);
    fprintf(stderr, "record compares %llu\n", (unsigned long long)n_compares);
    return 0;
}
