/* A log service whose worker pool is too small for its log writer, modelled
 * on wPerf's ZooKeeper and HDFS NameNode findings (paper 003, §5.1): the
 * handlers log each request and wait until it is durable; the log writer
 * seals and writes whatever the handlers have queued as one batch, so a
 * batch can never hold more requests than there are handlers.
 *
 * Each worker (worker_main) takes requests from a shared counter, encodes
 * one (encode_request: CPU), queues its record (log_submit) and waits until
 * the writer has made it durable (log_wait_durable). The writer
 * (writer_main) waits for records, seals the batch (seal_batch: a fixed
 * per-batch cost, like a page checksum, plus a little per record), writes
 * it to the log file and wakes the workers. The disk is fast: a write into
 * the page cache.
 *
 * The bug: pool_start() starts --workers threads, and the batch size is
 * bounded by that number. With 8 workers (normal) a batch carries up to 8
 * records; with 2 (buggy) at most 2, so the writer seals 4x as many batches
 * and the workers wait for it while it does. Nothing is CPU-saturated: the
 * workers wait for the writer, the writer waits for the workers - the
 * wait-for graph has a knot, worker_main <-> writer_main, and gprof ranks
 * the sealing and encoding loops. */
#include "../../../bugs/common/corpus.h"
#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#define MAX_WORKERS 64
#define SEAL_WORDS  4096            /* fixed cost of a batch */

static struct {
    pthread_mutex_t lock;
    pthread_cond_t work, durable;   /* writer waits on work, workers on durable */
    long queued, sealed, batches;   /* records queued so far, made durable */
    int done;
} log_q = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER,
           0, 0, 0, 0};

static long next_request, n_requests, encode_work;
static pthread_mutex_t req_lock = PTHREAD_MUTEX_INITIALIZER;
static int log_fd;
static uint64_t checksum_all, encoded_all;

static uint64_t encode_request(long id)
{
    uint64_t x = (uint64_t)id * 0x9e3779b97f4a7c15ULL + 1, h = 0;
    for (long i = 0; i < encode_work; i++) {    /* xorshift, in line: no calls */
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        h = (h ^ x) * 1099511628211ULL;
    }
    return h;
}

static long take_request(void)
{
    pthread_mutex_lock(&req_lock);
    long id = next_request < n_requests ? next_request++ : -1;
    pthread_mutex_unlock(&req_lock);
    return id;
}

/* Queues one record; returns its sequence number. */
static long log_submit(void)
{
    pthread_mutex_lock(&log_q.lock);
    long seq = ++log_q.queued;
    pthread_cond_signal(&log_q.work);
    pthread_mutex_unlock(&log_q.lock);
    return seq;
}

static void log_wait_durable(long seq)
{
    pthread_mutex_lock(&log_q.lock);
    while (log_q.sealed < seq)
        pthread_cond_wait(&log_q.durable, &log_q.lock);
    pthread_mutex_unlock(&log_q.lock);
}

static void *worker_main(void *arg)
{
    uint64_t *mine = arg;
    long id;
    while ((id = take_request()) >= 0) {
        *mine ^= encode_request(id);
        log_wait_durable(log_submit());
    }
    return NULL;
}

/* Seals a batch of n records: a fixed cost per batch plus a little per record. */
static uint64_t seal_batch(long first, long n)
{
    static uint64_t page[SEAL_WORDS];
    uint64_t h = (uint64_t)first;
    for (int pass = 0; pass < 6; pass++)
        for (int i = 0; i < SEAL_WORDS; i++) {
            page[i] = page[i] * 6364136223846793005ULL + (uint64_t)(i + n);
            h ^= page[i] >> 17;
        }
    return h;
}

/* Appends the batch's log record to the log page; a full page goes to the
 * file (the disk is fast and written a page at a time). */
static char log_page[4096];
static size_t log_used;

static void flush_page(void)
{
    if (log_used && write(log_fd, log_page, log_used) != (ssize_t)log_used) {
        perror("log write");
        exit(1);
    }
    log_used = 0;
}

static void write_batch(long first, long n, uint64_t seal)
{
    if (log_used + 64 > sizeof log_page) flush_page();
    log_used += (size_t)snprintf(log_page + log_used, 64, "%ld %ld %016llx\n", first, n,
                                 (unsigned long long)seal);
}

static void *writer_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&log_q.lock);
    for (;;) {
        while (log_q.queued == log_q.sealed && !log_q.done)
            pthread_cond_wait(&log_q.work, &log_q.lock);
        if (log_q.queued == log_q.sealed && log_q.done) break;
        long first = log_q.sealed + 1, upto = log_q.queued;
        pthread_mutex_unlock(&log_q.lock);
        uint64_t seal = seal_batch(first, upto - first + 1);
        write_batch(first, upto - first + 1, seal);
        checksum_all ^= seal;
        pthread_mutex_lock(&log_q.lock);
        log_q.sealed = upto;
        log_q.batches++;
        pthread_cond_broadcast(&log_q.durable);
    }
    pthread_mutex_unlock(&log_q.lock);
    return NULL;
}

/* Starts the pool; the batch the writer can form is bounded by its size. */
static int pool_start(pthread_t *t, uint64_t *acc, int workers)
{
    int n = workers;                /* FIX: size the pool for the batch (>= 8 here) */
    for (int i = 0; i < n; i++)
        if (pthread_create(&t[i], NULL, worker_main, &acc[i])) return -1;
    return n;
}

int main(int argc, char **argv)
{
    opt_t o[] = {
        {"workers", "worker threads (the log batch is bounded by this)", 8, 1, MAX_WORKERS, 0},
        {"requests", "requests to serve", 2000, 1, 10000000, 0},
        {"encode", "encoding work per request (PRNG steps)", 40000, 0, 100000000, 0},
        {"tmpfs", "1: the log lives in /dev/shm (a fast disk), 0: in the working directory", 0, 0, 1, 0},
    };
    opts_parse(argc, argv, o, NOPTS(o));
    n_requests = opt_get(o, NOPTS(o), "requests");
    encode_work = opt_get(o, NOPTS(o), "encode");
    char path[64];
    snprintf(path, sizeof path, "%swaits_pool_writer.%ld.log",
             opt_get(o, NOPTS(o), "tmpfs") ? "/dev/shm/" : "", (long)getpid());
    log_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (log_fd < 0) { perror(path); return 1; }
    pthread_t writer, t[MAX_WORKERS];
    uint64_t acc[MAX_WORKERS] = {0};
    pthread_create(&writer, NULL, writer_main, NULL);
    int n = pool_start(t, acc, (int)opt_get(o, NOPTS(o), "workers"));
    if (n < 0) { fprintf(stderr, "pthread_create failed\n"); return 1; }
    for (int i = 0; i < n; i++) {
        pthread_join(t[i], NULL);
        encoded_all ^= acc[i];
    }
    pthread_mutex_lock(&log_q.lock);
    log_q.done = 1;
    pthread_cond_signal(&log_q.work);
    pthread_mutex_unlock(&log_q.lock);
    pthread_join(writer, NULL);
    flush_page();
    close(log_fd);
    unlink(path);
    printf("requests %ld durable %ld encoded %016llx\n", n_requests, log_q.sealed,
           (unsigned long long)encoded_all);
    return 0;
}
