/* PostgreSQL's autovacuum launcher forking one worker per database, each
 * vacuuming the tables its statistics say need it, modelled on the
 * PostgreSQL 14 commit "Speed up rechecking if relation needs to be
 * vacuumed or analyze in autovacuum" (Tatsuhito Kasahara; reported by Jim
 * Nasby: workers "stuck" in table_recheck_autovac() with 40% of the time in
 * hash_search_with_hash_value).
 *
 * The statistics collector writes every table's counters to a stats file.
 * A worker reads it (pgstat_read_statsfiles: one hash insert per entry),
 * builds the list of tables to vacuum, and before vacuuming each one
 * rechecks that it still needs it (table_recheck_autovac).
 *
 * The bug: every recheck forces a refresh of the statistics, i.e. re-reads
 * and re-hashes the whole stats file, so a worker's pass costs
 * O(tables^2) hash operations. With 1,000 tables per database (normal) it
 * is noise; with 2,000 (buggy) the workers spend their time re-reading
 * statistics. gprof blames the hash table (and sees no time in the forked
 * workers at all); the recheck that refreshes every time is the root cause
 * (the fix reuses the statistics already read). Built with gcc and
 * vprof-meta. */
#define _GNU_SOURCE
#include "../common/corpus.h"
#include <fcntl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define STATS_FILE "pgstat.stat"

typedef struct {
    uint32_t dboid, tableoid;
    int64_t n_live_tuples, n_dead_tuples, changes_since_analyze;
    int64_t last_autovac_time;         /* µs since the epoch */
} PgStat_StatTabEntry;

typedef struct HashEntry {
    PgStat_StatTabEntry tab;
    struct HashEntry *next;
} HashEntry;

typedef struct {
    HashEntry **buckets;
    long nbuckets, nentries;
    HashEntry *pool;
} HTAB;

static HTAB *pgStatTabHash;            /* the worker's snapshot */
static int64_t stats_read_time;        /* when the snapshot was read */
static int64_t autovac_start_time;
static double autovacuum_vac_scale = 0.2;
static long autovacuum_vac_thresh = 50;
static uint64_t n_stats_reads;

static int64_t GetCurrentTimestamp(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* ------------------------------------------------------------ dynahash */
static uint32_t tag_hash(uint32_t dboid, uint32_t tableoid)
{
    uint32_t h = dboid * 0x9e3779b1u ^ tableoid;
    h ^= h >> 15; h *= 0x2c1b3c6du;
    h ^= h >> 12; h *= 0x297a2d39u;
    return h ^ (h >> 15);
}

static HTAB *hash_create(long nelem)
{
    HTAB *h = calloc(1, sizeof *h);
    h->nbuckets = 1;
    while (h->nbuckets < nelem) h->nbuckets <<= 1;
    h->buckets = calloc((size_t)h->nbuckets, sizeof *h->buckets);
    h->pool = calloc((size_t)nelem, sizeof *h->pool);
    if (!h || !h->buckets || !h->pool) { perror("calloc"); exit(1); }
    return h;
}

static void hash_destroy(HTAB *h)
{
    if (!h) return;
    free(h->buckets);
    free(h->pool);
    free(h);
}

/* HASH_FIND (enter = 0) or HASH_ENTER (enter = 1). */
static HashEntry *hash_search_with_hash_value(HTAB *h, uint32_t dboid, uint32_t tableoid,
                                              uint32_t hashvalue, int enter)
{
    HashEntry **b = &h->buckets[hashvalue & (uint32_t)(h->nbuckets - 1)];
    for (HashEntry *e = *b; e; e = e->next)
        if (e->tab.tableoid == tableoid && e->tab.dboid == dboid)
            return e;
    if (!enter)
        return NULL;
    HashEntry *e = &h->pool[h->nentries++];
    e->next = *b;
    *b = e;
    return e;
}

/* ------------------------------------------------------------ pgstat */
static void pgstat_write_statsfiles(const PgStat_StatTabEntry *tabs, long n)
{
    int fd = open(STATS_FILE, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || write(fd, tabs, (size_t)n * sizeof *tabs) != (ssize_t)((size_t)n * sizeof *tabs)) {
        perror(STATS_FILE);
        exit(1);
    }
    close(fd);
}

static void pgstat_read_statsfiles(void)
{
    int fd = open(STATS_FILE, O_RDONLY);
    if (fd < 0) { perror(STATS_FILE); exit(1); }
    off_t size = lseek(fd, 0, SEEK_END);
    lseek(fd, 0, SEEK_SET);
    long n = (long)(size / (off_t)sizeof(PgStat_StatTabEntry));
    PgStat_StatTabEntry *buf = malloc((size_t)size);
    if (!buf || read(fd, buf, (size_t)size) != (ssize_t)size) { perror(STATS_FILE); exit(1); }
    close(fd);
    hash_destroy(pgStatTabHash);
    pgStatTabHash = hash_create(n);
    for (long i = 0; i < n; i++) {
        HashEntry *e = hash_search_with_hash_value(pgStatTabHash, buf[i].dboid, buf[i].tableoid,
                                                   tag_hash(buf[i].dboid, buf[i].tableoid), 1);
        e->tab = buf[i];
    }
    free(buf);
    stats_read_time = GetCurrentTimestamp();
    n_stats_reads++;
}

static __attribute__((unused)) void autovac_refresh_stats(void)
{
    pgstat_read_statsfiles();
}

static const PgStat_StatTabEntry *pgstat_fetch_stat_tabentry(uint32_t dboid, uint32_t tableoid)
{
    HashEntry *e = hash_search_with_hash_value(pgStatTabHash, dboid, tableoid,
                                               tag_hash(dboid, tableoid), 0);
    return e ? &e->tab : NULL;
}

/* ------------------------------------------------------- autovacuum */
static int relation_needs_vacanalyze(const PgStat_StatTabEntry *t)
{
    double vacthresh = (double)autovacuum_vac_thresh + autovacuum_vac_scale * (double)t->n_live_tuples;
    /* Recently vacuumed tables wait (the launcher's naptime). */
    if (t->last_autovac_time > autovac_start_time)
        return 0;
    return (double)t->n_dead_tuples > vacthresh;
}

static int table_recheck_autovac(uint32_t dboid, uint32_t tableoid)
{
#ifdef VPROF_CASE_FIX
    /* Reuse the statistics already read (they are newer than the list). */
#else
    autovac_refresh_stats(); /* FIX: use the snapshot already read; refresh only when it is older than the table list */
#endif
    const PgStat_StatTabEntry *t = pgstat_fetch_stat_tabentry(dboid, tableoid);
    return t && relation_needs_vacanalyze(t) && stats_read_time >= autovac_start_time;
}

/* Heap and index passes over the table's tuples. */
static int64_t t_live_plus_dead(int64_t dead) { return dead * 40; }

static uint64_t lazy_vacuum_rel(uint32_t tableoid, int64_t dead)
{
    uint64_t h = tableoid;
    for (int64_t i = 0; i < (t_live_plus_dead(dead)); i++)
        h = (h ^ (h >> 29)) * 0xbf58476d1ce4e5b9ULL;
    return h & 0xffff;
}

static uint64_t do_autovacuum(uint32_t dboid, long *vacuumed)
{
    autovac_start_time = GetCurrentTimestamp();
    pgstat_read_statsfiles();
    /* The list of tables to vacuum, from the first snapshot. */
    long cap = pgStatTabHash->nentries, n = 0;
    uint32_t *list = malloc((size_t)cap * sizeof *list);
    if (!list) { perror("malloc"); exit(1); }
    for (long i = 0; i < pgStatTabHash->nentries; i++) {
        const PgStat_StatTabEntry *t = &pgStatTabHash->pool[i].tab;
        if (t->dboid == dboid && relation_needs_vacanalyze(t))
            list[n++] = t->tableoid;
    }
    uint64_t h = 0;
    for (long i = 0; i < n; i++) {
        if (!table_recheck_autovac(dboid, list[i]))
            continue;
        const PgStat_StatTabEntry *t = pgstat_fetch_stat_tabentry(dboid, list[i]);
        h += lazy_vacuum_rel(list[i], t->n_dead_tuples);
        (*vacuumed)++;
    }
    free(list);
    return h;
}

static void AutoVacWorkerMain(uint32_t dboid, int pipe_wr)
{
    long vacuumed = 0;
    uint64_t h = do_autovacuum(dboid, &vacuumed);
    uint64_t msg[2] = { (uint64_t)vacuumed, h };
    if (write(pipe_wr, msg, sizeof msg) != (ssize_t)sizeof msg)
        _exit(3);
    fprintf(stderr, "worker for database %u: %llu stats reads\n", dboid,
            (unsigned long long)n_stats_reads);
}

int main(int argc, char **argv)
{
    opt_t opts[] = {
        { "databases", "databases (one worker each)",       2, 1, 64, 0 },
        { "tables",    "tables per database",            1000, 1, 10000000, 0 },
    };
    opts_parse(argc, argv, opts, NOPTS(opts));
    int ndb = (int)opt_get(opts, NOPTS(opts), "databases");
    long ntab = opt_get(opts, NOPTS(opts), "tables");

    /* The statistics collector's view: half the tables need a vacuum. */
    rng_t r;
    rng_seed(&r, 14000);
    long n = (long)ndb * ntab;
    PgStat_StatTabEntry *tabs = calloc((size_t)n, sizeof *tabs);
    if (!tabs) { perror("calloc"); return 1; }
    for (long i = 0; i < n; i++) {
        PgStat_StatTabEntry *t = &tabs[i];
        t->dboid = 16384 + (uint32_t)(i / ntab);
        t->tableoid = 20000 + (uint32_t)i;
        t->n_live_tuples = 1000 + (int64_t)rng_below(&r, 9000);
        t->n_dead_tuples = rng_below(&r, 2) ? t->n_live_tuples / 2 + 100 : 10;
    }
    pgstat_write_statsfiles(tabs, n);
    free(tabs);

    /* The launcher forks one worker per database. */
    int fds[2];
    if (pipe(fds) != 0) { perror("pipe"); return 1; }
    fflush(stdout);
    for (int d = 0; d < ndb; d++) {
        pid_t pid = fork();
        if (pid < 0) { perror("fork"); return 1; }
        if (pid == 0) {
            close(fds[0]);
            AutoVacWorkerMain(16384 + (uint32_t)d, fds[1]);
            exit(0);
        }
    }
    close(fds[1]);
    uint64_t vacuumed = 0, h = 0, msg[2];
    for (int d = 0; d < ndb; d++) {
        if (read(fds[0], msg, sizeof msg) != (ssize_t)sizeof msg) { fprintf(stderr, "worker died\n"); return 1; }
        vacuumed += msg[0];
        h += msg[1];
    }
    for (int d = 0; d < ndb; d++) {
        int st;
        if (wait(&st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) { fprintf(stderr, "worker failed\n"); return 1; }
    }
    unlink(STATS_FILE);
    printf("%d databases x %ld tables: %llu vacuumed, %016llx\n", ndb, ntab,
           (unsigned long long)vacuumed, (unsigned long long)h);
    return 0;
}
