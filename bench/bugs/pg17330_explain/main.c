/* A query engine that plans, executes and EXPLAINs (VERBOSE) join queries,
 * modelled on PostgreSQL bug 17330 ("EXPLAIN hangs for some query plans").
 *
 * Each query joins K relations in a left-deep tree of hash joins. The
 * executor builds a hash table per inner relation and probes it with the
 * outer rows. EXPLAIN VERBOSE prints every node's output columns; a join
 * node's columns refer to its children's columns (OUTER_VAR / INNER_VAR),
 * so printing a column means following the reference down to the scan
 * that produces it.
 *
 * The bug: resolve_special_varno() follows every reference chain from the
 * top each time, looking each step up with a linear get_tle_by_resno(),
 * instead of remembering what a child column resolved to. Printing all
 * columns then costs O(K^4) per query. A batch of 4-way joins (normal) is
 * instant; the same number of relations joined 40 at a time (buggy) makes
 * EXPLAIN dominate. gprof blames get_tle_by_resno; the chain walk that
 * should have been memoized is the root cause. */
#include "../common/corpus.h"

#define COLS_PER_REL  3
#define OUTER_VAR     (-1)
#define INNER_VAR     (-2)

typedef struct {
    int varno;           /* relation id, or OUTER_VAR / INNER_VAR */
    int varattno;        /* column, or resno in the child's target list */
    int resno;           /* position in this node's target list (1-based) */
} TargetEntry;

typedef enum { T_SeqScan, T_Hash, T_HashJoin } NodeTag;

typedef struct Plan {
    NodeTag      type;
    struct Plan *lefttree, *righttree;
    TargetEntry *tlist;
    int          tlist_len;
    int          relid;             /* scans */
    double       rows, cost;
#ifdef VPROF_CASE_FIX
    TargetEntry *memo;              /* what each column resolves to (resno 0: not yet) */
#endif
} Plan;

typedef struct { uint32_t key[2048]; int n; } Relation;

static Relation *relations;
static int n_relations;
static uint64_t explain_bytes, n_resolve_steps;

/* ---------------------------------------------------------------- planner */
static Plan *make_node(NodeTag t, Plan *l, Plan *r, int tlist_len)
{
    Plan *p = calloc(1, sizeof *p);
    if (!p) { perror("calloc"); exit(1); }
    p->type = t;
    p->lefttree = l;
    p->righttree = r;
    p->tlist_len = tlist_len;
    p->tlist = calloc((size_t)tlist_len, sizeof *p->tlist);
    if (!p->tlist) { perror("calloc"); exit(1); }
#ifdef VPROF_CASE_FIX
    p->memo = calloc((size_t)tlist_len, sizeof *p->memo);
    if (!p->memo) { perror("calloc"); exit(1); }
#endif
    return p;
}

static Plan *make_seqscan(int relid)
{
    Plan *p = make_node(T_SeqScan, NULL, NULL, COLS_PER_REL);
    p->relid = relid;
    for (int c = 0; c < COLS_PER_REL; c++)
        p->tlist[c] = (TargetEntry){ relid, c, c + 1 };
    p->rows = relations[relid].n;
    p->cost = p->rows * 0.01;
    return p;
}

static Plan *make_hash(Plan *scan)
{
    Plan *p = make_node(T_Hash, scan, NULL, scan->tlist_len);
    for (int i = 0; i < scan->tlist_len; i++)
        p->tlist[i] = (TargetEntry){ OUTER_VAR, i + 1, i + 1 };
    p->rows = scan->rows;
    p->cost = scan->cost + scan->rows * 0.02;
    return p;
}

static Plan *make_hashjoin(Plan *outer, Plan *inner_hash)
{
    int n = outer->tlist_len + inner_hash->tlist_len;
    Plan *p = make_node(T_HashJoin, outer, inner_hash, n);
    for (int i = 0; i < outer->tlist_len; i++)
        p->tlist[i] = (TargetEntry){ OUTER_VAR, i + 1, i + 1 };
    for (int i = 0; i < inner_hash->tlist_len; i++)
        p->tlist[outer->tlist_len + i] =
            (TargetEntry){ INNER_VAR, i + 1, outer->tlist_len + i + 1 };
    p->rows = outer->rows;
    p->cost = outer->cost + inner_hash->cost + outer->rows * 0.01;
    return p;
}

/* Left-deep plan joining relations first .. first+k-1. */
static Plan *standard_planner(int first, int k)
{
    Plan *top = make_seqscan(first);
    for (int i = 1; i < k; i++)
        top = make_hashjoin(top, make_hash(make_seqscan(first + i)));
    return top;
}

static void free_plan(Plan *p)
{
    if (!p) return;
    free_plan(p->lefttree);
    free_plan(p->righttree);
    free(p->tlist);
#ifdef VPROF_CASE_FIX
    free(p->memo);
#endif
    free(p);
}

/* --------------------------------------------------------------- executor */
typedef struct { uint32_t *slots; int mask; } HashTable;

static void ExecHashBuild(HashTable *ht, const Relation *rel)
{
    int size = 1;
    while (size < rel->n * 2) size <<= 1;
    ht->mask = size - 1;
    ht->slots = calloc((size_t)size, sizeof *ht->slots);
    if (!ht->slots) { perror("calloc"); exit(1); }
    for (int i = 0; i < rel->n; i++) {
        uint32_t h = rel->key[i] * 2654435761u;
        while (ht->slots[h & (uint32_t)ht->mask]) h++;
        ht->slots[h & (uint32_t)ht->mask] = rel->key[i] + 1;
    }
}

static int ExecHashProbe(const HashTable *ht, uint32_t key)
{
    uint32_t h = key * 2654435761u;
    for (;;) {
        uint32_t v = ht->slots[h & (uint32_t)ht->mask];
        if (!v) return 0;
        if (v == key + 1) return 1;
        h++;
    }
}

/* Counts outer rows of the first relation that find a partner in every
 * joined relation (a semi-join chain, enough to exercise the probes). */
static long ExecutePlan(const Plan *p)
{
    if (p->type == T_SeqScan)
        return relations[p->relid].n;
    const Plan *scan = p->righttree->lefttree;
    HashTable ht;
    ExecHashBuild(&ht, &relations[scan->relid]);
    long outer_rows = ExecutePlan(p->lefttree), matched = 0;
    const Plan *leaf = p;
    while (leaf->type != T_SeqScan) leaf = leaf->lefttree;
    const Relation *outer = &relations[leaf->relid];
    for (int i = 0; i < outer->n; i++)
        matched += ExecHashProbe(&ht, outer->key[i]);
    free(ht.slots);
    return matched < outer_rows ? matched : outer_rows;
}

/* ---------------------------------------------------------------- EXPLAIN */
static const TargetEntry *get_tle_by_resno(const Plan *p, int resno)
{
    for (int i = 0; i < p->tlist_len; i++)     /* linear, as in PostgreSQL */
        if (p->tlist[i].resno == resno)
            return &p->tlist[i];
    return NULL;
}

/* Follows an OUTER_VAR / INNER_VAR reference down to the producing scan. */
#ifdef VPROF_CASE_FIX
static TargetEntry resolve_special_varno(const Plan *p, const TargetEntry *te);

/* Column RESNO of node P, resolved once and remembered. */
static TargetEntry resolve_child_column(const Plan *p, int resno)
{
    TargetEntry *m = &p->memo[resno - 1];
    if (m->resno == 0) {
        const TargetEntry *child = get_tle_by_resno(p, resno);
        if (!child) { fprintf(stderr, "EXPLAIN: dangling reference\n"); exit(3); }
        *m = resolve_special_varno(p, child);
        n_resolve_steps++;
    }
    return *m;
}

static TargetEntry resolve_special_varno(const Plan *p, const TargetEntry *te)
{
    if (te->varno != OUTER_VAR && te->varno != INNER_VAR)
        return *te;
    return resolve_child_column(te->varno == OUTER_VAR ? p->lefttree : p->righttree,
                                te->varattno);
}
#else
static TargetEntry resolve_special_varno(const Plan *p, const TargetEntry *te)
{
    TargetEntry cur = *te;
    while (cur.varno == OUTER_VAR || cur.varno == INNER_VAR) { /* FIX: memoize what each child column resolves to */
        p = cur.varno == OUTER_VAR ? p->lefttree : p->righttree;
        const TargetEntry *child = get_tle_by_resno(p, cur.varattno);
        if (!child) { fprintf(stderr, "EXPLAIN: dangling reference\n"); exit(3); }
        cur = *child;
        n_resolve_steps++;
    }
    return cur;
}
#endif

static void appendStringInfo_var(char *buf, size_t n, size_t *len, const TargetEntry *te)
{
    int w = snprintf(buf + *len, n - *len, "%sr%d.c%d", *len ? ", " : "", te->varno, te->varattno);
    if (w > 0 && *len + (size_t)w < n)
        *len += (size_t)w;
}

static void show_plan_tlist(const Plan *p)
{
    char buf[512];
    size_t len = 0;
    for (int i = 0; i < p->tlist_len; i++) {
        TargetEntry te = resolve_special_varno(p, &p->tlist[i]);
        appendStringInfo_var(buf, sizeof buf, &len, &te);
    }
    explain_bytes += len;
}

static void ExplainNode(const Plan *p, int depth)
{
    static const char *names[] = { "Seq Scan", "Hash", "Hash Join" };
    char line[96];
    int n = snprintf(line, sizeof line, "%*s->  %s  (cost=%.2f rows=%.0f)", depth * 2, "",
                     names[p->type], p->cost, p->rows);
    explain_bytes += (uint64_t)(n > 0 ? n : 0);
    show_plan_tlist(p);
    if (p->lefttree) ExplainNode(p->lefttree, depth + 1);
    if (p->righttree) ExplainNode(p->righttree, depth + 1);
}

static void ExplainOnePlan(const Plan *p)
{
    ExplainNode(p, 0);
}

/* ------------------------------------------------------------------ setup */
static void make_relations(int n, rng_t *r)
{
    n_relations = n;
    relations = calloc((size_t)n, sizeof *relations);
    if (!relations) { perror("calloc"); exit(1); }
    for (int i = 0; i < n; i++) {
        relations[i].n = 2048;
        for (int k = 0; k < relations[i].n; k++)
            relations[i].key[k] = (uint32_t)rng_below(r, 4096);
    }
}

int main(int argc, char **argv)
{
    opt_t opts[] = {
        { "joins",     "relations joined per query",        4, 2, 200, 0 },
        { "relations", "relations used over all queries", 4000, 2, 100000, 0 },
    };
    opts_parse(argc, argv, opts, NOPTS(opts));
    int k = (int)opt_get(opts, NOPTS(opts), "joins");
    int total = (int)opt_get(opts, NOPTS(opts), "relations");
    rng_t r;
    rng_seed(&r, 17330);
    make_relations(total, &r);

    long rows = 0;
    int queries = 0;
    for (int first = 0; first + k <= total; first += k, queries++) {
        Plan *plan = standard_planner(first, k);
        rows += ExecutePlan(plan);
        ExplainOnePlan(plan);
        free_plan(plan);
    }
    printf("%d queries of %d-way joins: %ld result rows, EXPLAIN %llu bytes\n",
           queries, k, rows, (unsigned long long)explain_bytes);
    fprintf(stderr, "%llu reference steps\n", (unsigned long long)n_resolve_steps);
    free(relations);
    return 0;
}
