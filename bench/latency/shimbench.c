/* shimbench.c - cost of the pthread shims: N uncontended
 * pthread_mutex_lock/unlock pairs. Built without the runtime (real glibc
 * calls) and with it (shims); run with VPROF_LATENCY off and on. Prints
 * "pairs N" and "ns T" (CPU time of the thread, best of 3). */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
volatile long sink;

static uint64_t cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    uint64_t best = UINT64_MAX;
    for (int r = 0; r < 3; r++) {
        uint64_t t0 = cpu_ns();
        for (long i = 0; i < n; i++) {
            pthread_mutex_lock(&m);
            sink++;
            pthread_mutex_unlock(&m);
        }
        uint64_t t = cpu_ns() - t0;
        if (t < best)
            best = t;
    }
    printf("pairs %ld\nns %llu\n", n, (unsigned long long)best);
    return 0;
}
