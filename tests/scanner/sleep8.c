/* sleep8.c - 8 threads each call napper() 5 times; napper sleeps a known
 * time (20..34 ms). The program measures each call itself (inside napper)
 * and prints "truth TID DURATION_NS START_NS GENERATION" lines in call order
 * (CLOCK_MONOTONIC, the clock of the events), and "func napper ADDR", for
 * t_scanner.sh to compare with the scanner's events. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t out = PTHREAD_MUTEX_INITIALIZER;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The truth is taken inside the instrumented function, so that time the
 * thread spends preempted just before the call or after it (on a loaded
 * machine, milliseconds) is outside both the truth and the record. */
/* The frame-chain head of the runtime (stack-scanner/rt/lat_abi.h): napper
 * reads its own generation number, which its latency event must carry. */
extern __thread struct { void *top; uint64_t gen; } __vprof_lat_tls;

__attribute__((noinline)) void napper(long ns, uint64_t *start, uint64_t *dur, uint32_t *gen)
{
    *gen = (uint32_t)__vprof_lat_tls.gen;   /* before any other call */
    struct timespec ts = { 0, ns };
    uint64_t t0 = now_ns();
    nanosleep(&ts, NULL);
    *dur = now_ns() - t0;
    *start = t0;
}

static void *worker(void *arg)
{
    long idx = (long)arg;
    uint64_t d[5], s[5];
    uint32_t g[5];
    for (int i = 0; i < 5; i++)
        napper(20000000 + idx * 2000000, &s[i], &d[i], &g[i]);   /* 20..34 ms */
    pthread_mutex_lock(&out);
    for (int i = 0; i < 5; i++)
        printf("truth %d %llu %llu %u\n", (int)gettid(), (unsigned long long)d[i],
               (unsigned long long)s[i], g[i]);
    pthread_mutex_unlock(&out);
    return NULL;
}

int main(void)
{
    pthread_t th[8];
    printf("func napper %lx\n", (unsigned long)(uintptr_t)napper);
    for (long i = 0; i < 8; i++)
        pthread_create(&th[i], NULL, worker, (void *)i);
    for (int i = 0; i < 8; i++)
        pthread_join(th[i], NULL);
    return 0;
}
