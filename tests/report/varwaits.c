/* varwaits.c - requests that wait on the primitives other than a mutex or a
 * condition variable, each released by a helper thread that works first in a
 * function of its own (tests/report/t_variance_waits.sh):
 *   sem      the request posts a job and sem_waits; the helper runs
 *            sem_job() and sem_posts
 *   spin     the request spins on a flag (vprof_wait_begin/end); the helper
 *            runs spin_job() and sets the flag after vprof_wake
 *   rwlock   the helper write-locks, runs rw_job(), unlocks; the request
 *            read-locks once the helper holds the lock (it blocks)
 *   barrier  the request and the helper meet at a barrier; the helper runs
 *            barrier_job() first
 * Every 4th request of a kind waits for a long job (about 2 ms), the others
 * for a short one (about 0.2 ms): the variance of the latency is in the
 * helper's job, and vprof-report --variance must find it under the wait.
 * Usage: varwaits KIND N   (KIND: sem, spin, rwlock, barrier)             */
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vprof_latency.h"

static volatile unsigned long sink;

/* Busy work for about us microseconds (on-CPU, so the scanner sees it). */
static void spin_us(long us)
{
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    do {
        for (int i = 0; i < 200; i++) sink += (unsigned long)i * 2654435761u;
        clock_gettime(CLOCK_MONOTONIC, &b);
    } while ((b.tv_sec - a.tv_sec) * 1000000L + (b.tv_nsec - a.tv_nsec) / 1000 < us);
}

__attribute__((noinline)) void sem_job(long us) { spin_us(us); }
__attribute__((noinline)) void spin_job(long us) { spin_us(us); }
__attribute__((noinline)) void rw_job(long us) { spin_us(us); }
__attribute__((noinline)) void barrier_job(long us) { spin_us(us); }

static sem_t go, done;
static atomic_int flag;
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static pthread_barrier_t bar;
static sem_t held;
static int kind, n_req;
static long job_us(int i) { return i % 4 == 3 ? 2000 : 200; }

static void *helper(void *arg)
{
    (void)arg;
    for (int i = 0; i < n_req; i++) {
        sem_wait(&go);                  /* the request is about to wait */
        switch (kind) {
        case 0: sem_job(job_us(i)); sem_post(&done); break;
        case 1: spin_job(job_us(i)); vprof_wake(&flag); atomic_store(&flag, 1); break;
        case 2:
            pthread_rwlock_wrlock(&rw);
            sem_post(&held);
            rw_job(job_us(i));
            pthread_rwlock_unlock(&rw);
            break;
        case 3: barrier_job(job_us(i)); pthread_barrier_wait(&bar); break;
        }
    }
    return NULL;
}

__attribute__((noinline)) static void handle(int i)
{
    vprof_req_start((uint64_t)i + 1);
    switch (kind) {
    case 0: sem_post(&go); sem_wait(&done); break;
    case 1:
        sem_post(&go);
        vprof_wait_begin(&flag);
        while (!atomic_load(&flag)) sched_yield();     /* lets the helper run */
        vprof_wait_end(&flag);
        atomic_store(&flag, 0);
        break;
    case 2:
        sem_post(&go);
        sem_wait(&held);                /* the writer holds it now (no spinning:
                                           on a busy machine a spinning request
                                           would keep the writer off the CPU) */
        pthread_rwlock_rdlock(&rw);
        pthread_rwlock_unlock(&rw);
        break;
    case 3: sem_post(&go); pthread_barrier_wait(&bar); break;
    }
    vprof_req_end((uint64_t)i + 1);
}

int main(int argc, char **argv)
{
    static const char *kinds[] = {"sem", "spin", "rwlock", "barrier"};
    kind = -1;
    for (int k = 0; k < 4; k++)
        if (argc == 3 && !strcmp(argv[1], kinds[k])) kind = k;
    if (kind < 0 || (n_req = atoi(argv[2])) <= 0) {
        fprintf(stderr, "usage: varwaits sem|spin|rwlock|barrier N\n");
        return 2;
    }
    sem_init(&go, 0, 0);
    sem_init(&done, 0, 0);
    sem_init(&held, 0, 0);
    pthread_barrier_init(&bar, NULL, 2);
    pthread_t t;
    pthread_create(&t, NULL, helper, NULL);
    for (int i = 0; i < n_req; i++) {
        handle(i);
        spin_us(50);                    /* between requests */
    }
    pthread_join(t, NULL);
    printf("%d requests\n", n_req);
    return 0;
}
