/* Written for the vprof bug corpus by a helper that had not seen the corpus
 * (2026-11-28); not modelled on a real issue. The fix is the VPROF_CASE_FIX
 * variant; the line marked FIX is the bug. */
/*
 * digestd - batch ingest front-end feeding a pool of 4 digest workers.
 *
 * Input records arrive at a fixed rate (simulated network arrival); the main
 * thread decodes them (simulated wire decoding) and hands them to the workers
 * in batches of `batch` records through a bounded job queue.  Each worker
 * computes a keyed digest of its job and records the cost in a per-worker
 * histogram, which is folded into the global stats every `publish_every` jobs.
 * Idle workers busy-wait briefly for the next batch when batches arrive back
 * to back (saving a futex sleep/wake round trip), and block otherwise.
 *
 * usage: threadpool [-n jobs] [-b batch] [-S spin_max_us] [-r records_per_sec]
 *                   [-w work_rounds] [-d decode_rounds] [-P publish_every] [-s seed]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NWORKERS    4
#define HIST_BINS   4096
#define MAX_SPIN_SLICES 4   /* spin at most this many budgets before sleeping */

struct job {
    uint64_t id;
    uint64_t key;
    uint32_t rounds;
};

struct jobqueue {
    pthread_mutex_t lock;
    pthread_cond_t  nonempty, nonfull;
    struct job     *ring;
    size_t          head, count, cap;
    int             closed;
    uint64_t        last_push_ns;
    uint32_t        last_batch;        /* size of the most recent batch */
};

struct pool_cfg {
    long     njobs;
    int      batch;
    long     spin_max_us;
    long     rate;                     /* input records per second */
    long     publish_every;
    uint32_t work_rounds, decode_rounds;
    uint64_t seed;
};

struct global_stats {
    pthread_mutex_t lock;
    uint64_t hist[HIST_BINS];
    uint64_t jobs, digest_xor, publishes;
    uint64_t p50_bin, p99_bin;
};

struct worker {
    int                    id;
    pthread_t              thread;
    struct jobqueue       *q;
    struct global_stats   *gs;
    const struct pool_cfg *cfg;
    uint64_t               local_hist[HIST_BINS];
    uint64_t               local_jobs, local_xor;
    uint64_t               spin_timeouts;
};

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* corpus: always_inline, as its author meant it: the corpus builds with
 * -fno-inline, and 100 million calls through mcount made the -pg runs take
 * 4 to 7 times the CPU (normal run: 4.9 s instead of 0.7 s) */
static inline __attribute__((always_inline)) uint64_t mix64(uint64_t x)
{
    x ^= x >> 33; x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53ull;
    return x ^ (x >> 33);
}

/* ---- job queue ---------------------------------------------------------- */

static void queue_init(struct jobqueue *q, size_t cap)
{
    pthread_mutex_init(&q->lock, NULL);
    pthread_cond_init(&q->nonempty, NULL);
    pthread_cond_init(&q->nonfull, NULL);
    q->ring = calloc(cap, sizeof *q->ring);
    if (!q->ring) { perror("calloc"); exit(1); }
    q->cap = cap;
    q->head = q->count = 0;
    q->closed = 0;
    q->last_push_ns = now_ns();
}

static void queue_push_batch(struct jobqueue *q, const struct job *jobs, int n)
{
    pthread_mutex_lock(&q->lock);
    for (int i = 0; i < n; i++) {
        while (q->count == q->cap)
            pthread_cond_wait(&q->nonfull, &q->lock);
        q->ring[(q->head + q->count) % q->cap] = jobs[i];
        q->count++;
    }
    q->last_push_ns = now_ns();
    q->last_batch = (uint32_t)n;
    pthread_cond_broadcast(&q->nonempty);
    pthread_mutex_unlock(&q->lock);
}

static void queue_close(struct jobqueue *q)
{
    pthread_mutex_lock(&q->lock);
    q->closed = 1;
    pthread_cond_broadcast(&q->nonempty);
    pthread_mutex_unlock(&q->lock);
}

/*
 * How long an idle worker should busy-wait for the next batch before
 * blocking on the condition variable.  Spinning avoids a futex sleep/wake
 * round trip when the next batch is imminent, but is wasted CPU otherwise.
 * Records arrive at cfg->rate and are pushed a batch at a time, so the next
 * batch is expected last_batch / rate after the previous one.  Spin for that
 * long (plus slack) if it is within spin_max_us, else block right away.
 * Called with q->lock held.
 */
static uint64_t compute_spin_budget_ns(const struct jobqueue *q,
                                       const struct pool_cfg *cfg)
{
    if (q->last_batch == 0)
        return 0;
    uint64_t gap_us = (uint64_t)q->last_batch * 1000000u / (uint64_t)cfg->rate;
#ifdef VPROF_CASE_FIX
    if (gap_us > (uint64_t)cfg->spin_max_us)
#else
    if (gap_us > (uint64_t)cfg->spin_max_us * 1000u) /* FIX: gap_us and spin_max_us are both microseconds: drop the * 1000 */
#endif
        return 0;
    return (gap_us + gap_us / 8 + 1) * 1000u;
}

/* Busy-wait until the queue looks non-empty or the budget runs out. */
static int worker_spin_for_work(struct jobqueue *q, uint64_t budget_ns)
{
    uint64_t start = now_ns();
    for (unsigned iter = 1;; iter++) {
        if (__atomic_load_n(&q->count, __ATOMIC_ACQUIRE) != 0 ||
            __atomic_load_n(&q->closed, __ATOMIC_ACQUIRE))
            return 1;
        __builtin_ia32_pause();
        if ((iter & 63) == 0 && now_ns() - start > budget_ns)
            return 0;
    }
}

/* ---- stats -------------------------------------------------------------- */

static void stats_recompute_percentiles(struct global_stats *gs)
{
    uint64_t total = 0, acc = 0;
    for (int b = 0; b < HIST_BINS; b++) total += gs->hist[b];
    gs->p50_bin = gs->p99_bin = 0;
    for (int b = 0; b < HIST_BINS; b++) {
        acc += gs->hist[b];
        if (!gs->p50_bin && acc * 2 >= total) gs->p50_bin = (uint64_t)b;
        if (acc * 100 >= total * 99) { gs->p99_bin = (uint64_t)b; break; }
    }
}

/*
 * Fold this worker's local histogram into the global one.  The local
 * histogram is scanned without the global lock; the lock is taken only when
 * there is something to merge.
 */
static void worker_publish_stats(struct worker *w)
{
    static __thread uint16_t nz[HIST_BINS];
    int nnz = 0;
    for (int b = 0; b < HIST_BINS; b++)
        if (w->local_hist[b])
            nz[nnz++] = (uint16_t)b;
    if (nnz == 0 && w->local_jobs == 0)
        return;
    struct global_stats *gs = w->gs;
    pthread_mutex_lock(&gs->lock);
    for (int i = 0; i < nnz; i++) {
        gs->hist[nz[i]] += w->local_hist[nz[i]];
        w->local_hist[nz[i]] = 0;
    }
    gs->jobs += w->local_jobs;
    gs->digest_xor ^= w->local_xor;
    gs->publishes++;
    w->local_jobs = 0;
    w->local_xor = 0;
    stats_recompute_percentiles(gs);
    pthread_mutex_unlock(&gs->lock);
}

/* Wait until a job is available; returns 0 when the queue is closed. */
static int worker_next_job(struct worker *w, struct job *out)
{
    struct jobqueue *q = w->q;
    int slices = 0;
    pthread_mutex_lock(&q->lock);
    while (q->count == 0 && !q->closed) {
        uint64_t budget = slices < MAX_SPIN_SLICES ? compute_spin_budget_ns(q, w->cfg) : 0;
        if (budget == 0) {
            pthread_cond_wait(&q->nonempty, &q->lock);
            continue;
        }
        pthread_mutex_unlock(&q->lock);
        if (!worker_spin_for_work(q, budget)) {
            w->spin_timeouts++;
            slices++;
        }
        pthread_mutex_lock(&q->lock);
    }
    if (q->count == 0) {
        pthread_mutex_unlock(&q->lock);
        return 0;
    }
    *out = q->ring[q->head];
    q->head = (q->head + 1) % q->cap;
    q->count--;
    pthread_cond_signal(&q->nonfull);
    pthread_mutex_unlock(&q->lock);
    return 1;
}

/* ---- work --------------------------------------------------------------- */

static uint64_t compute_digest(uint64_t key, uint32_t rounds, uint32_t *cost)
{
    uint64_t h = key ^ 0x243f6a8885a308d3ull;
    uint32_t r;
    for (r = 0; r < rounds; r++) {
        h = mix64(h + r);
        if ((h & 0xfff) == 0x5a5)        /* early finish on a rare pattern */
            break;
    }
    *cost = r;
    return h;
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    struct job job;
    while (worker_next_job(w, &job)) {
        uint32_t cost;
        uint64_t d = compute_digest(job.key, job.rounds, &cost);
        uint64_t bin = (uint64_t)cost * HIST_BINS / (2u * w->cfg->work_rounds);
        w->local_hist[bin < HIST_BINS ? bin : HIST_BINS - 1]++;
        w->local_jobs++;
        w->local_xor ^= d + job.id;
        if ((long)w->local_jobs >= w->cfg->publish_every)
            worker_publish_stats(w);
    }
    worker_publish_stats(w);
    return NULL;
}

/* Sleep until record `id` has arrived on the (simulated) input link. */
static void wait_for_arrival(uint64_t start_ns, long id, long rate)
{
    uint64_t due = start_ns + (uint64_t)id * 1000000000ull / (uint64_t)rate;
    if (now_ns() >= due)
        return;
    struct timespec ts = { (time_t)(due / 1000000000ull), (long)(due % 1000000000ull) };
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
}

/* Simulated wire decoding of one input record into a job. */
static struct job decode_record(uint64_t *state, uint64_t id, const struct pool_cfg *cfg)
{
    uint64_t x = *state;
    for (uint32_t i = 0; i < cfg->decode_rounds; i++)
        x = mix64(x ^ (id + i));
    *state = x;
    struct job j = { id, x, cfg->work_rounds / 2 + (uint32_t)(x % cfg->work_rounds) };
    return j;
}

static void parse_args(int argc, char **argv, struct pool_cfg *cfg)
{
    int opt;
    cfg->njobs = 300000; cfg->batch = 4096; cfg->spin_max_us = 10;
    cfg->rate = 200000;
    cfg->publish_every = 4096;
    cfg->work_rounds = 150; cfg->decode_rounds = 300; cfg->seed = 5;
    while ((opt = getopt(argc, argv, "n:b:S:r:w:d:P:s:")) != -1) {
        switch (opt) {
        case 'n': cfg->njobs = strtol(optarg, NULL, 10); break;
        case 'b': cfg->batch = atoi(optarg); break;
        case 'S': cfg->spin_max_us = strtol(optarg, NULL, 10); break;
        case 'r': cfg->rate = strtol(optarg, NULL, 10); break;
        case 'P': cfg->publish_every = strtol(optarg, NULL, 10); break;
        case 'w': cfg->work_rounds = (uint32_t)strtoul(optarg, NULL, 10); break;
        case 'd': cfg->decode_rounds = (uint32_t)strtoul(optarg, NULL, 10); break;
        case 's': cfg->seed = strtoull(optarg, NULL, 10); break;
        default:
            fprintf(stderr, "usage: %s [-n jobs] [-b batch] [-S spin_max_us] [-r rate] [-w work_rounds] "
                            "[-d decode_rounds] [-P publish_every] [-s seed]\n", argv[0]);
            exit(2);
        }
    }
    if (cfg->njobs <= 0 || cfg->batch <= 0 || cfg->batch > 65536 ||
        cfg->work_rounds == 0 || cfg->spin_max_us < 0 || cfg->rate <= 0 || cfg->publish_every <= 0) {
        fprintf(stderr, "invalid arguments\n");
        exit(2);
    }
}

int main(int argc, char **argv)
{
    struct pool_cfg cfg;
    parse_args(argc, argv, &cfg);

    struct jobqueue q;
    queue_init(&q, (size_t)cfg.batch * 4);
    struct global_stats *gs = calloc(1, sizeof *gs);
    struct worker *workers = calloc(NWORKERS, sizeof *workers);
    struct job *batch = malloc((size_t)cfg.batch * sizeof *batch);
    if (!gs || !workers || !batch) { perror("alloc"); return 1; }
    pthread_mutex_init(&gs->lock, NULL);

    for (int i = 0; i < NWORKERS; i++) {
        workers[i] = (struct worker){ .id = i, .q = &q, .gs = gs, .cfg = &cfg };
        if (pthread_create(&workers[i].thread, NULL, worker_main, &workers[i]) != 0) {
            perror("pthread_create");
            return 1;
        }
    }

    uint64_t state = cfg.seed * 0x9E3779B97F4A7C15ull + 1;
    uint64_t start = now_ns();
    for (long id = 0; id < cfg.njobs; ) {
        int n = 0;
        long last = id + cfg.batch < cfg.njobs ? id + cfg.batch : cfg.njobs;
        wait_for_arrival(start, last, cfg.rate);
        while (n < cfg.batch && id < cfg.njobs)
            batch[n++] = decode_record(&state, (uint64_t)id++, &cfg);
        queue_push_batch(&q, batch, n);
    }
    queue_close(&q);
    for (int i = 0; i < NWORKERS; i++)
        pthread_join(workers[i].thread, NULL);

    printf("jobs=%llu p50_bin=%llu p99_bin=%llu checksum=%016llx\n",
           (unsigned long long)gs->jobs, (unsigned long long)gs->p50_bin,
           (unsigned long long)gs->p99_bin, (unsigned long long)gs->digest_xor);
    uint64_t spins = 0;
    for (int i = 0; i < NWORKERS; i++) spins += workers[i].spin_timeouts;
    fprintf(stderr, "publishes=%llu spin_timeouts=%llu\n",
            (unsigned long long)gs->publishes, (unsigned long long)spins);
    free(batch); free(workers); free(gs); free(q.ring);
    return 0;
}
