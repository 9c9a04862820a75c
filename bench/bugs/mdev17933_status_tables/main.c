/* A database server with a monitoring agent polling SHOW STATUS, modelled on
 * MariaDB MDEV-17933 ("checking the server status takes >10 seconds with
 * 3M tables").
 *
 * Clients run point queries against many tables (index lookups, row
 * decoding). A monitoring agent sends SHOW GLOBAL STATUS every so often;
 * srv_export_innodb_status() fills the status variables.
 *
 * The bug: one status variable (the dictionary's memory size) is computed
 * by walking every table and every index of the data dictionary while
 * holding dict_sys.mutex, on every SHOW STATUS. With a few thousand tables
 * (normal) nobody notices; with tens of thousands (buggy) status polling
 * costs more than the queries. gprof blames the per-index size function and
 * the row lookups; the status export that walks the whole dictionary is
 * the root cause (the fix keeps a running total). */
#include "../common/corpus.h"

#define INDEXES_PER_TABLE 3
#define ROWS_PER_TABLE    64
#define N_STATUS_VARS     40

typedef struct {
    uint32_t keys[ROWS_PER_TABLE];      /* sorted */
    uint32_t n_fields, n_uniq;
    uint64_t stat_n_leaf_pages, stat_index_size;
    char     name[24];
} dict_index_t;

typedef struct dict_table {
    char          name[48];
    dict_index_t  indexes[INDEXES_PER_TABLE];
    uint64_t      rows[ROWS_PER_TABLE];
    uint32_t      n_cols;
    uint64_t      n_rows_read;
    struct dict_table *next;            /* dict_sys.table_LRU */
} dict_table_t;

static struct {
    dict_table_t *tables;               /* the array behind the LRU list */
    dict_table_t *table_LRU;
    long          n_tables;
    int           mutex_owner;          /* 1 while "held" */
    uint64_t      mutex_waits;
#ifdef VPROF_CASE_FIX
    uint64_t      size;                 /* running dictionary size */
#endif
} dict_sys;

static uint64_t export_vars[N_STATUS_VARS];
static uint64_t srv_stats_rows_read, srv_stats_queries;

/* --------------------------------------------------------- dictionary */
static void mutex_enter_dict(void)
{
    if (dict_sys.mutex_owner)
        dict_sys.mutex_waits++;
    dict_sys.mutex_owner = 1;
}

static void mutex_exit_dict(void)
{
    dict_sys.mutex_owner = 0;
}

static uint64_t dict_table_get_mem_size(const dict_table_t *t);

static void dict_create_tables(long n, rng_t *r)
{
    dict_sys.tables = calloc((size_t)n, sizeof *dict_sys.tables);
    if (!dict_sys.tables) { perror("calloc"); exit(1); }
    dict_sys.n_tables = n;
    for (long i = n - 1; i >= 0; i--) {
        dict_table_t *t = &dict_sys.tables[i];
        snprintf(t->name, sizeof t->name, "shop_%ld/orders_%ld", i % 97, i);
        t->n_cols = 4 + (uint32_t)(i % 12);
        uint32_t base = (uint32_t)rng_below(r, 1000);
        for (int k = 0; k < ROWS_PER_TABLE; k++)
            t->rows[k] = (uint64_t)base * 31 + (uint64_t)k;
        for (int x = 0; x < INDEXES_PER_TABLE; x++) {
            dict_index_t *ix = &t->indexes[x];
            snprintf(ix->name, sizeof ix->name, x ? "idx_%d" : "PRIMARY", x);
            for (int k = 0; k < ROWS_PER_TABLE; k++)
                ix->keys[k] = base + (uint32_t)(k * (x + 1));
            ix->n_fields = 1 + (uint32_t)x;
            ix->n_uniq = x == 0;
            ix->stat_n_leaf_pages = 1 + (uint64_t)(i % 5);
            ix->stat_index_size = 2 + (uint64_t)(i % 7);
        }
        t->next = dict_sys.table_LRU;
        dict_sys.table_LRU = t;
#ifdef VPROF_CASE_FIX
        dict_sys.size += dict_table_get_mem_size(t);   /* the running total */
#endif
    }
}

/* Memory one index takes: name, field descriptors, statistics arrays. */
static uint64_t dict_index_get_mem_size(const dict_index_t *ix)
{
    uint64_t size = sizeof *ix + strlen(ix->name) + 1;
    for (uint32_t f = 0; f < ix->n_fields; f++)
        size += 48 + 8 * (uint64_t)(f + 1);
    for (int k = 0; k < ROWS_PER_TABLE; k += 8)
        size += ix->keys[k] & 1;
    return size + ix->stat_n_leaf_pages * 16;
}

static uint64_t dict_table_get_mem_size(const dict_table_t *t)
{
    uint64_t size = sizeof *t + strlen(t->name) + 1 + t->n_cols * 32u;
    for (int x = 0; x < INDEXES_PER_TABLE; x++)
        size += dict_index_get_mem_size(&t->indexes[x]);
    return size;
}

static __attribute__((unused)) uint64_t dict_sys_get_size(void)
{
    uint64_t size = 0;
    mutex_enter_dict();
    for (const dict_table_t *t = dict_sys.table_LRU; t; t = t->next)
        size += dict_table_get_mem_size(t);
    mutex_exit_dict();
    return size;
}

/* ------------------------------------------------------------- queries */
static int btr_search_key(const dict_index_t *ix, uint32_t key)
{
    int lo = 0, hi = ROWS_PER_TABLE - 1;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (ix->keys[mid] < key) lo = mid + 1; else hi = mid;
    }
    return lo;
}

static uint64_t row_sel_decode(const dict_table_t *t, int pos)
{
    uint64_t v = t->rows[pos];
    for (uint32_t c = 0; c < t->n_cols * 4; c++)
        v = (v ^ (v >> 17)) * 0xff51afd7ed558ccdULL + c;
    return v;
}

static uint64_t row_search_mvcc(dict_table_t *t, uint32_t key, int index_no)
{
    const dict_index_t *ix = &t->indexes[index_no];
    int pos = btr_search_key(ix, key);
    t->n_rows_read++;
    srv_stats_rows_read++;
    return row_sel_decode(t, pos);
}

static uint64_t handle_query(rng_t *r)
{
    dict_table_t *t = &dict_sys.tables[rng_below(r, (uint64_t)dict_sys.n_tables)];
    uint64_t h = 0;
    for (int i = 0; i < 8; i++)           /* a few rows per query */
        h ^= row_search_mvcc(t, t->indexes[0].keys[rng_below(r, ROWS_PER_TABLE)],
                             (int)rng_below(r, INDEXES_PER_TABLE));
    srv_stats_queries++;
    return h;
}

/* ---------------------------------------------------------- SHOW STATUS */
static void srv_export_innodb_status(void)
{
    for (int i = 0; i < N_STATUS_VARS - 1; i++)
        export_vars[i] = srv_stats_rows_read * (uint64_t)(i + 1) + srv_stats_queries;
#ifdef VPROF_CASE_FIX
    export_vars[N_STATUS_VARS - 1] = dict_sys.size;
#else
    export_vars[N_STATUS_VARS - 1] = dict_sys_get_size(); /* FIX: keep a running dict_sys size instead of walking all tables */
#endif
}

static uint64_t show_status(void)
{
    srv_export_innodb_status();
    uint64_t h = 0;
    char line[64];
    for (int i = 0; i < N_STATUS_VARS; i++) {
        int n = snprintf(line, sizeof line, "Innodb_var_%d\t%llu", i,
                         (unsigned long long)export_vars[i]);
        h = h * 131 + (uint64_t)n;
    }
    return h;
}

int main(int argc, char **argv)
{
    opt_t opts[] = {
        { "tables",       "tables in the data dictionary",           2000, 1, 10000000, 0 },
        { "queries",      "client queries",                        200000, 1, 100000000, 0 },
        { "status-every", "one SHOW STATUS per this many queries",   2000, 1, 100000000, 0 },
    };
    opts_parse(argc, argv, opts, NOPTS(opts));
    rng_t r;
    rng_seed(&r, 17933);
    dict_create_tables(opt_get(opts, NOPTS(opts), "tables"), &r);
    long n_q = opt_get(opts, NOPTS(opts), "queries");
    long every = opt_get(opts, NOPTS(opts), "status-every");
    uint64_t h = 0, st = 0;
    for (long q = 0; q < n_q; q++) {
        h ^= handle_query(&r);
        if (q % every == 0)
            st ^= show_status();
    }
    printf("%ld tables: %ld queries (%016llx), rows read %llu, dictionary %llu bytes, "
           "status %016llx\n", dict_sys.n_tables, n_q, (unsigned long long)h,
           (unsigned long long)srv_stats_rows_read,
           (unsigned long long)export_vars[N_STATUS_VARS - 1], (unsigned long long)st);
    free(dict_sys.tables);
    return 0;
}
