/* A decision on one thread, its cost on another (t_count_links.sh): a
 * producer thread hands a file to a consumer thread through a channel when
 * job_due() says the file has waited long enough; the consumer hashes every
 * file it is handed. With a shorter wait (the buggy run's argument) the
 * producer hands over far more jobs: the cost is the consumer's (process,
 * called once per job), the decision the producer's - the only trace of it
 * on the producer's side is a call of chan_push made as many times. The
 * buggy run also runs longer (more ticks), so the producer's pushes per
 * tick grow only 3-fold (one every third tick, then every tick) while the
 * jobs grow 24-fold.
 *
 * Usage: queue_link WAIT_TICKS TICKS */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))
#define NFILES 64
#define QCAP 256

struct chan {
    int buf[QCAP];
    unsigned head, tail;
    int closed;
    pthread_mutex_t mu;
    pthread_cond_t cv;
};

struct producer {
    struct chan *jobs;
    int wait, ticks;
    int dirty[NFILES], since[NFILES];
};

static struct chan g_jobs = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
static volatile unsigned long sink;

NOINLINE void chan_push(struct chan *c, int v)
{
    pthread_mutex_lock(&c->mu);
    while (c->tail - c->head == QCAP) pthread_cond_wait(&c->cv, &c->mu);
    c->buf[c->tail++ % QCAP] = v;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
}

NOINLINE int chan_pop(struct chan *c, int *v)
{
    pthread_mutex_lock(&c->mu);
    while (c->tail == c->head && !c->closed) pthread_cond_wait(&c->cv, &c->mu);
    int ok = c->tail != c->head;
    if (ok) *v = c->buf[c->head++ % QCAP];
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
    return ok;
}

static void chan_close(struct chan *c)
{
    pthread_mutex_lock(&c->mu);
    c->closed = 1;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
}

/* Whether a file changed `age` ticks ago has waited long enough. */
NOINLINE int job_due(int age, int wait)
{
    return age >= wait;
}

NOINLINE void producer_tick(struct producer *p, int now)
{
    for (int i = 0; i < NFILES; i++) {
        if (!p->dirty[i] || !job_due(now - p->since[i], p->wait))
            continue;
        chan_push(p->jobs, now - p->since[i]);   /* the job carries the file's age */
        p->dirty[i] = 0;
    }
}

/* The watcher's own work each tick (reading the files' change stamps):
 * the run is not all the consumer's, so that no function holds it whole. */
NOINLINE unsigned long scan_stamps(int now)
{
    unsigned long s = (unsigned long)now;
    for (int k = 0; k < 8000; k++) s = s * 6364136223846793005ul + (unsigned long)k;
    return s;
}

static void *producer_main(void *arg)
{
    struct producer *p = arg;
    for (int now = 0; now < p->ticks; now++) {
        sink += scan_stamps(now);
        int f = (now * 7) % NFILES;     /* a file changes every tick */
        if (!p->dirty[f]) p->dirty[f] = 1, p->since[f] = now;
        producer_tick(p, now);
    }
    chan_close(p->jobs);
    return NULL;
}

/* Hashes a file of the given age: the work each job costs. */
NOINLINE unsigned long process(int age)
{
    unsigned long h = (unsigned long)age * 2654435761u;
    /* a young file is hashed with the quick-check salt: a value the run's
     * ages decide, live through the loop (sampled at every tick) */
    volatile unsigned long salt = age < 100 ? 7 : 3;
    for (int k = 0; k < 25000; k++) h = (h ^ (h >> 13)) * 1099511628211ul + k + salt;
    return h;
}

static void *consumer_main(void *arg)
{
    (void)arg;
    int job;
    while (chan_pop(&g_jobs, &job)) sink += process(job);
    return NULL;
}

int main(int argc, char **argv)
{
    static struct producer p;
    p.jobs = &g_jobs;
    p.wait = argc > 1 ? atoi(argv[1]) : 150;
    p.ticks = argc > 2 ? atoi(argv[2]) : 1000;
    pthread_t tp, tc;
    if (pthread_create(&tc, NULL, consumer_main, NULL) ||
        pthread_create(&tp, NULL, producer_main, &p))
        return 1;
    pthread_join(tp, NULL);
    pthread_join(tc, NULL);
    printf("%lu\n", sink & 1);
    return 0;
}
