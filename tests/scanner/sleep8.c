/* sleep8.c - 8 threads each call napper() 5 times; napper sleeps a known
 * time (20..34 ms). The program measures each call itself (around the call, outside the
 * instrumented function) and prints "truth TID DURATION_NS" lines in call
 * order, and "func napper ADDR", for t_scanner.sh to compare with the
 * scanner's events. */
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

__attribute__((noinline)) void napper(long ns)
{
    struct timespec ts = { 0, ns };
    nanosleep(&ts, NULL);
}

static void *worker(void *arg)
{
    long idx = (long)arg;
    uint64_t d[5];
    for (int i = 0; i < 5; i++) {
        uint64_t t0 = now_ns();
        napper(20000000 + idx * 2000000);   /* 20..34 ms */
        d[i] = now_ns() - t0;
    }
    pthread_mutex_lock(&out);
    for (int i = 0; i < 5; i++)
        printf("truth %d %llu\n", (int)gettid(), (unsigned long long)d[i]);
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
