/* A query executor running SELECT count(*), sum(o.amount * c.weight)
 * FROM orders o JOIN customers c ON o.cust_id = c.id, modelled on the
 * PostgreSQL hash-join sizing problem fixed in 9.5 by "Increase the number
 * of buckets during a hash join" (ExecHashIncreaseNumBuckets, Tomas
 * Vondra; before it, the bucket count was fixed when the hash table was
 * created, from the planner's row estimate).
 *
 * The executor is PostgreSQL's shape: a plan tree of nodes pulled one
 * tuple at a time through ExecProcNode (Agg <- HashJoin <- SeqScan, Hash
 * <- SeqScan), a hash table built from the inner relation and probed with
 * each outer tuple, join clauses evaluated by an expression evaluator.
 *
 * The bug: ExecChooseHashTableSize() sizes the bucket array once, from the
 * planner's estimate of the inner relation (pg_class.reltuples, as of the
 * last ANALYZE), and ExecHashTableInsert() never grows it. When the
 * customers table has grown 20-fold since ANALYZE (buggy), the same
 * 120,000 customers go into 8,192 buckets and every probe walks a chain of
 * ~15 tuples; with fresh statistics (normal) chains hold about one.
 * gprof blames the bucket scan; the insert that never checks the load is
 * the root cause (9.5's fix: grow nbuckets when the load passes
 * NTUP_PER_BUCKET). */
#include "../common/corpus.h"

#define NTUP_PER_BUCKET  1
#define MIN_BUCKETS      1024

typedef struct { int32_t cust_id; int32_t amount; } OrderRow;
typedef struct { int32_t id; int32_t weight; } CustomerRow;

/* A tuple slot: what ExecProcNode returns (NULL pointer = no more rows). */
typedef struct { int32_t values[4]; int natts; } TupleTableSlot;

typedef struct HashJoinTupleData {
    struct HashJoinTupleData *next;
    uint32_t hashvalue;
    TupleTableSlot tuple;
} HashJoinTupleData;

typedef struct {
    int nbuckets;
    HashJoinTupleData **buckets;
    double totalTuples;
    HashJoinTupleData *pool;           /* dense allocation of all tuples */
    long pool_used;
} HashJoinTableData;

typedef enum { T_SeqScan, T_Hash, T_HashJoin, T_Agg } NodeTag;

typedef struct PlanState {
    NodeTag type;
    struct PlanState *lefttree, *righttree;
    double plan_rows;                  /* the planner's estimate */
    /* SeqScan */
    const void *rel;
    long rel_rows, pos;
    int relkind;                       /* 0 orders, 1 customers */
    TupleTableSlot slot;
    /* Hash / HashJoin */
    HashJoinTableData *hashtable;
    TupleTableSlot *outer;
    HashJoinTupleData *cur_tuple;
    uint32_t cur_hashvalue;
    int cur_bucket, joinkey_outer, joinkey_inner;
    TupleTableSlot result;
    /* Agg */
    long count;
    int64_t sum;
    int done;
} PlanState;

static uint64_t n_bucket_steps;        /* informative, on stderr */

/* ---------------------------------------------------------- expressions */
static uint32_t hash_uint32(uint32_t k)
{
    k ^= k >> 16; k *= 0x85ebca6bU;
    k ^= k >> 13; k *= 0xc2b2ae35U;
    return k ^ (k >> 16);
}

static int int4eq(int32_t a, int32_t b)
{
    return a == b;
}

/* The join clause o.cust_id = c.id, evaluated on a matched pair. */
static int ExecQual(const TupleTableSlot *outer, int ko, const TupleTableSlot *inner, int ki)
{
    return int4eq(outer->values[ko], inner->values[ki]);
}

/* ------------------------------------------------------------- seq scan */
static TupleTableSlot *ExecSeqScan(PlanState *ps)
{
    if (ps->pos >= ps->rel_rows)
        return NULL;
    if (ps->relkind == 0) {
        const OrderRow *r = (const OrderRow *)ps->rel + ps->pos++;
        ps->slot.values[0] = r->cust_id;
        ps->slot.values[1] = r->amount;
    } else {
        const CustomerRow *r = (const CustomerRow *)ps->rel + ps->pos++;
        ps->slot.values[0] = r->id;
        ps->slot.values[1] = r->weight;
    }
    ps->slot.natts = 2;
    return &ps->slot;
}

static TupleTableSlot *ExecProcNode(PlanState *ps);

/* ----------------------------------------------------------- hash table */
/* Sizes the bucket array from the planner's row estimate. */
static int ExecChooseHashTableSize(double ntuples)
{
    double dbuckets = ntuples / NTUP_PER_BUCKET;
    int nbuckets = MIN_BUCKETS;
    while (nbuckets < dbuckets && nbuckets < (1 << 30))
        nbuckets <<= 1;
    return nbuckets;
}

static HashJoinTableData *ExecHashTableCreate(double inner_rows_estimate, long max_tuples)
{
    HashJoinTableData *ht = calloc(1, sizeof *ht);
    if (!ht) { perror("calloc"); exit(1); }
    ht->nbuckets = ExecChooseHashTableSize(inner_rows_estimate);
    ht->buckets = calloc((size_t)ht->nbuckets, sizeof *ht->buckets);
    ht->pool = calloc((size_t)max_tuples, sizeof *ht->pool);
    if (!ht->buckets || !ht->pool) { perror("calloc"); exit(1); }
    return ht;
}

#ifdef VPROF_CASE_FIX
/* 9.5: double the bucket array and re-link every tuple. */
static void ExecHashIncreaseNumBuckets(HashJoinTableData *ht)
{
    int nbuckets = ht->nbuckets * 2;
    HashJoinTupleData **b = calloc((size_t)nbuckets, sizeof *b);
    if (!b) { perror("calloc"); exit(1); }
    for (long i = 0; i < ht->pool_used; i++) {
        HashJoinTupleData *t = &ht->pool[i];
        int bucketno = (int)(t->hashvalue & (uint32_t)(nbuckets - 1));
        t->next = b[bucketno];
        b[bucketno] = t;
    }
    free(ht->buckets);
    ht->buckets = b;
    ht->nbuckets = nbuckets;
}
#endif

static void ExecHashTableInsert(HashJoinTableData *ht, const TupleTableSlot *slot, uint32_t hashvalue)
{
    HashJoinTupleData *t = &ht->pool[ht->pool_used++];
    t->tuple = *slot;
    t->hashvalue = hashvalue;
    int bucketno = (int)(hashvalue & (uint32_t)(ht->nbuckets - 1));
    t->next = ht->buckets[bucketno];
    ht->buckets[bucketno] = t;
    ht->totalTuples += 1;
#ifdef VPROF_CASE_FIX
    if (ht->totalTuples > (double)ht->nbuckets * NTUP_PER_BUCKET)
        ExecHashIncreaseNumBuckets(ht);
#endif
} /* FIX: grow nbuckets when totalTuples passes nbuckets * NTUP_PER_BUCKET */

static uint32_t ExecHashGetHashValue(const TupleTableSlot *slot, int key)
{
    return hash_uint32((uint32_t)slot->values[key]);
}

/* Hash node: pulls every inner tuple into the hash table. */
static void MultiExecHash(PlanState *hash, long max_tuples)
{
    hash->hashtable = ExecHashTableCreate(hash->plan_rows, max_tuples);
    TupleTableSlot *slot;
    while ((slot = ExecProcNode(hash->lefttree)) != NULL)
        ExecHashTableInsert(hash->hashtable, slot, ExecHashGetHashValue(slot, 0));
}

/* Does the bucket entry carry the probe's hash value? */
static int ExecHashTupleMatchesHash(const HashJoinTupleData *t, uint32_t hashvalue)
{
    n_bucket_steps++;
    return t->hashvalue == hashvalue;
}

/* Next tuple of the current bucket that satisfies the join clause. */
static HashJoinTupleData *ExecScanHashBucket(PlanState *hj)
{
    HashJoinTupleData *t = hj->cur_tuple ? hj->cur_tuple->next
                                         : hj->hashtable->buckets[hj->cur_bucket];
    for (; t; t = t->next)
        if (ExecHashTupleMatchesHash(t, hj->cur_hashvalue) &&
            ExecQual(hj->outer, hj->joinkey_outer, &t->tuple, hj->joinkey_inner))
            return hj->cur_tuple = t;
    return hj->cur_tuple = NULL;
}

static TupleTableSlot *ExecHashJoin(PlanState *hj)
{
    PlanState *hash = hj->righttree;
    if (!hash->hashtable)
        MultiExecHash(hash, hash->lefttree->rel_rows);
    hj->hashtable = hash->hashtable;
    for (;;) {
        if (hj->outer && ExecScanHashBucket(hj)) {
            hj->result.values[0] = hj->outer->values[0];
            hj->result.values[1] = hj->outer->values[1];
            hj->result.values[2] = hj->cur_tuple->tuple.values[1];
            hj->result.natts = 3;
            return &hj->result;
        }
        hj->outer = ExecProcNode(hj->lefttree);
        if (!hj->outer)
            return NULL;
        hj->cur_hashvalue = ExecHashGetHashValue(hj->outer, hj->joinkey_outer);
        hj->cur_bucket = (int)(hj->cur_hashvalue & (uint32_t)(hj->hashtable->nbuckets - 1));
        hj->cur_tuple = NULL;
    }
}

static void advance_aggregates(PlanState *agg, const TupleTableSlot *slot)
{
    agg->count++;
    agg->sum += (int64_t)slot->values[1] * slot->values[2];
}

static TupleTableSlot *ExecAgg(PlanState *agg)
{
    if (agg->done)
        return NULL;
    TupleTableSlot *slot;
    while ((slot = ExecProcNode(agg->lefttree)) != NULL)
        advance_aggregates(agg, slot);
    agg->done = 1;
    agg->result.values[0] = (int32_t)agg->count;
    agg->result.natts = 1;
    return &agg->result;
}

static TupleTableSlot *ExecProcNode(PlanState *ps)
{
    switch (ps->type) {
    case T_SeqScan:  return ExecSeqScan(ps);
    case T_HashJoin: return ExecHashJoin(ps);
    case T_Agg:      return ExecAgg(ps);
    case T_Hash:     break;
    }
    fprintf(stderr, "ExecProcNode: unexpected node %d\n", ps->type);
    exit(3);
}

/* ----------------------------------------------------- planner, portal */
static PlanState *make_node(NodeTag t, PlanState *l, PlanState *r, double rows)
{
    PlanState *p = calloc(1, sizeof *p);
    if (!p) { perror("calloc"); exit(1); }
    p->type = t;
    p->lefttree = l;
    p->righttree = r;
    p->plan_rows = rows;
    return p;
}

static PlanState *make_seqscan(const void *rel, long rows, int relkind, double reltuples)
{
    PlanState *p = make_node(T_SeqScan, NULL, NULL, reltuples);
    p->rel = rel;
    p->rel_rows = rows;
    p->relkind = relkind;
    return p;
}

/* The planner only knows pg_class.reltuples from the last ANALYZE. */
static PlanState *standard_planner(const OrderRow *orders, long n_orders, const CustomerRow *cust,
                                   long n_cust, double cust_reltuples)
{
    PlanState *outer = make_seqscan(orders, n_orders, 0, (double)n_orders);
    PlanState *inner = make_seqscan(cust, n_cust, 1, cust_reltuples);
    PlanState *hash = make_node(T_Hash, inner, NULL, cust_reltuples);
    PlanState *hj = make_node(T_HashJoin, outer, hash, (double)n_orders);
    hj->joinkey_outer = 0;
    hj->joinkey_inner = 0;
    return make_node(T_Agg, hj, NULL, 1);
}

static void free_plan(PlanState *p)
{
    if (!p) return;
    free_plan(p->lefttree);
    free_plan(p->righttree);
    if (p->hashtable && p->type == T_Hash) {
        free(p->hashtable->buckets);
        free(p->hashtable->pool);
        free(p->hashtable);
    }
    free(p);
}

static int64_t ExecutePlan(PlanState *top, long *count)
{
    TupleTableSlot *slot = ExecProcNode(top);
    *count = slot ? slot->values[0] : 0;
    return top->sum;
}

static int64_t ExecutorRun(PlanState *top, long *count)
{
    return ExecutePlan(top, count);
}

static int64_t PortalRun(PlanState *top, long *count)
{
    return ExecutorRun(top, count);
}

static int64_t exec_simple_query(const OrderRow *o, long no, const CustomerRow *c, long nc,
                                 double reltuples, long *count)
{
    PlanState *plan = standard_planner(o, no, c, nc, reltuples);
    int64_t sum = PortalRun(plan, count);
    free_plan(plan);
    return sum;
}

int main(int argc, char **argv)
{
    opt_t opts[] = {
        { "customers", "rows in customers (the inner relation)",       120000, 1, 50000000, 0 },
        { "orders",    "rows in orders (the outer relation)",          300000, 1, 500000000, 0 },
        { "reltuples", "customers rows as of the last ANALYZE",        120000, 1, 500000000, 0 },
        { "queries",   "times the query runs",                              2, 1, 1000, 0 },
    };
    opts_parse(argc, argv, opts, NOPTS(opts));
    long nc = opt_get(opts, NOPTS(opts), "customers");
    long no = opt_get(opts, NOPTS(opts), "orders");
    double reltuples = (double)opt_get(opts, NOPTS(opts), "reltuples");
    long queries = opt_get(opts, NOPTS(opts), "queries");

    rng_t r;
    rng_seed(&r, 95);
    CustomerRow *cust = malloc((size_t)nc * sizeof *cust);
    OrderRow *orders = malloc((size_t)no * sizeof *orders);
    if (!cust || !orders) { perror("malloc"); return 1; }
    for (long i = 0; i < nc; i++)
        cust[i] = (CustomerRow){ (int32_t)(i * 7 + 3), (int32_t)(1 + rng_below(&r, 9)) };
    for (long i = 0; i < no; i++)
        orders[i] = (OrderRow){ (int32_t)(rng_below(&r, (uint64_t)nc * 2) * 7 + 3),
                                (int32_t)(1 + rng_below(&r, 500)) };

    long count = 0;
    int64_t sum = 0;
    for (long q = 0; q < queries; q++)
        sum += exec_simple_query(orders, no, cust, nc, reltuples, &count);
    printf("%ld queries: count %ld, sum %lld\n", queries, count, (long long)sum);
    fprintf(stderr, "bucket entries examined %llu\n", (unsigned long long)n_bucket_steps);
    free(cust);
    free(orders);
    return 0;
}
