/* Committing transactions with InnoDB's group commit and the binary log,
 * modelled on MySQL Bug #13669 ("Group commit is broken in 5.0"): with the
 * binary log enabled, InnoDB took prepare_commit_mutex in
 * innobase_xa_prepare() and released it only at the end of
 * innobase_commit(), so that transactions commit in the same order in the
 * binary log and in InnoDB's redo log. The mutex is held across three log
 * flushes (prepare, binlog, commit), so no two commits ever share a flush.
 * MariaDB 5.3 and MySQL 5.6 replaced it with binary-log group commit.
 *
 * Client threads run transactions (CPU work, then COMMIT). Without the
 * binary log (normal) a commit calls log_write_up_to(): the first thread
 * to arrive flushes the redo log for everyone waiting (group commit), the
 * others sleep on a condition variable. With it (buggy), every commit goes
 * through prepare, binlog write and commit under prepare_commit_mutex:
 * three flushes per transaction, one transaction at a time, while the
 * other threads wait for the mutex. The flushes are the disk (nanosleep):
 * the time is spent off the CPU, where PC sampling sees nothing. */
#define _GNU_SOURCE
#include "../common/corpus.h"
#include <pthread.h>
#include <time.h>

#define FLUSH_US  100                  /* one fsync of the log device */

/* The redo log: LSNs, a group-commit flusher. */
static struct {
    pthread_mutex_t mutex;
    pthread_cond_t flushed_cond;
    uint64_t lsn, flushed_lsn;
    int flushing;
} log_sys = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 8192, 8192, 0 };

/* The binary log: its own file and flush. */
static struct {
    pthread_mutex_t mutex;
    pthread_cond_t synced_cond;
    uint64_t bytes, synced_bytes;
    int syncing;
} binlog = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0 };

static __attribute__((unused)) pthread_mutex_t prepare_commit_mutex = PTHREAD_MUTEX_INITIALIZER;
static int opt_bin_log;
static uint64_t n_flushes, n_commits;  /* informative (stderr) */

/* --------------------------------------------------------------- disk */
static void os_file_flush(void)
{
    struct timespec ts = { 0, FLUSH_US * 1000L };
    nanosleep(&ts, NULL);
    __atomic_add_fetch(&n_flushes, 1, __ATOMIC_RELAXED);
}

/* ---------------------------------------------------------- redo log */
static uint64_t log_reserve_and_write(uint64_t len)
{
    pthread_mutex_lock(&log_sys.mutex);
    log_sys.lsn += len;
    uint64_t end = log_sys.lsn;
    pthread_mutex_unlock(&log_sys.mutex);
    return end;
}

/* Makes the log durable up to LSN: one thread flushes for all that wait. */
static void log_write_up_to(uint64_t lsn)
{
    pthread_mutex_lock(&log_sys.mutex);
    while (log_sys.flushed_lsn < lsn) {
        if (log_sys.flushing) {
            pthread_cond_wait(&log_sys.flushed_cond, &log_sys.mutex);
            continue;
        }
        log_sys.flushing = 1;
        uint64_t target = log_sys.lsn;      /* everything written so far */
        pthread_mutex_unlock(&log_sys.mutex);
        os_file_flush();
        pthread_mutex_lock(&log_sys.mutex);
        log_sys.flushed_lsn = target;
        log_sys.flushing = 0;
        pthread_cond_broadcast(&log_sys.flushed_cond);
    }
    pthread_mutex_unlock(&log_sys.mutex);
}

/* -------------------------------------------------------- binary log */
static uint64_t binlog_write(uint64_t len)
{
    pthread_mutex_lock(&binlog.mutex);
    binlog.bytes += len;
    uint64_t end = binlog.bytes;
    pthread_mutex_unlock(&binlog.mutex);
    return end;
}

static void binlog_sync_up_to(uint64_t pos)
{
    pthread_mutex_lock(&binlog.mutex);
    while (binlog.synced_bytes < pos) {
        if (binlog.syncing) {
            pthread_cond_wait(&binlog.synced_cond, &binlog.mutex);
            continue;
        }
        binlog.syncing = 1;
        uint64_t target = binlog.bytes;
        pthread_mutex_unlock(&binlog.mutex);
        os_file_flush();
        pthread_mutex_lock(&binlog.mutex);
        binlog.synced_bytes = target;
        binlog.syncing = 0;
        pthread_cond_broadcast(&binlog.synced_cond);
    }
    pthread_mutex_unlock(&binlog.mutex);
}

/* ------------------------------------------------------------- InnoDB */
typedef struct { uint64_t id, undo_len, redo_len; } trx_t;

static int innobase_xa_prepare(trx_t *trx)
{
#ifdef VPROF_CASE_FIX
    (void)0;                           /* binlog group commit keeps the order */
#else
    pthread_mutex_lock(&prepare_commit_mutex); /* FIX: no prepare_commit_mutex: group-commit the binlog and keep the commit order with a queue (MariaDB 5.3 / MySQL 5.6) */
#endif
    uint64_t lsn = log_reserve_and_write(64 + trx->undo_len / 8);   /* prepare record */
    log_write_up_to(lsn);
    return 0;
}

static void innobase_commit(trx_t *trx)
{
    uint64_t lsn = log_reserve_and_write(trx->redo_len);
    log_write_up_to(lsn);
    if (opt_bin_log) {
#ifndef VPROF_CASE_FIX
        pthread_mutex_unlock(&prepare_commit_mutex);
#endif
    }
    __atomic_add_fetch(&n_commits, 1, __ATOMIC_RELAXED);
}

/* The server layer's two-phase commit between the binlog and InnoDB. */
static void ha_commit_trans(trx_t *trx)
{
    if (opt_bin_log) {
        innobase_xa_prepare(trx);
        uint64_t pos = binlog_write(trx->redo_len / 2 + 40);
        binlog_sync_up_to(pos);
    }
    innobase_commit(trx);
}

/* ------------------------------------------------------ the workload */
static uint64_t execute_statements(trx_t *trx)
{
    uint64_t h = trx->id * 0x9e3779b97f4a7c15ULL;
    for (int i = 0; i < 40000; i++)
        h = (h ^ (h >> 29)) * 0xbf58476d1ce4e5b9ULL + (uint64_t)i;
    trx->undo_len = 200 + h % 400;
    trx->redo_len = 300 + (h >> 20) % 900;
    return h;
}

typedef struct { int id; long n; uint64_t result; } client_t;

static void *client_thread(void *arg)
{
    client_t *c = arg;
    for (long i = 0; i < c->n; i++) {
        trx_t trx = { (uint64_t)c->id * 1000003 + (uint64_t)i, 0, 0 };
        c->result += execute_statements(&trx) >> 16;
        ha_commit_trans(&trx);
        CASE_PROGRESS("commits");
    }
    return NULL;
}

int main(int argc, char **argv)
{
    opt_t opts[] = {
        { "threads", "client threads",                     8, 1, 256, 0 },
        { "trx",     "transactions per thread",          250, 1, 10000000, 0 },
        { "log-bin", "binary log enabled (0/1)",           0, 0, 1, 0 },
    };
    opts_parse(argc, argv, opts, NOPTS(opts));
    int n = (int)opt_get(opts, NOPTS(opts), "threads");
    opt_bin_log = (int)opt_get(opts, NOPTS(opts), "log-bin");
    client_t *c = calloc((size_t)n, sizeof *c);
    pthread_t *t = calloc((size_t)n, sizeof *t);
    if (!c || !t) { perror("calloc"); return 1; }
    for (int i = 0; i < n; i++) {
        c[i] = (client_t){ i, opt_get(opts, NOPTS(opts), "trx"), 0 };
        if (pthread_create(&t[i], NULL, client_thread, &c[i])) { perror("pthread_create"); return 1; }
    }
    uint64_t result = 0;
    for (int i = 0; i < n; i++) {
        pthread_join(t[i], NULL);
        result += c[i].result;
    }
    printf("%d threads: %llu commits, redo lsn %llu, binlog %llu bytes, result %016llx\n", n,
           (unsigned long long)n_commits, (unsigned long long)log_sys.lsn,
           (unsigned long long)binlog.bytes, (unsigned long long)result);
    fprintf(stderr, "log flushes %llu\n", (unsigned long long)n_flushes);
    free(c);
    free(t);
    return 0;
}
