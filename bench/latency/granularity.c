/* granularity.c - LDB's microbenchmark (§6.1): one thread repeatedly builds
 * a chain of DEPTH instrumented frames by recursion, stays at the bottom
 * for PERIOD ns, and returns; the scanner polls meanwhile. Granularity is
 * the mean time between two successive valid looks at the thread (fast-path
 * looks, where nothing changed, plus consistent walks); the rest are
 * sequence-lock retries. Runs SECONDS, then prints the scanner's counters:
 * "granularity_ns G valid V fast F walks W retries R passes P". */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "lat_stats.h"

static volatile long sink;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline)) void frame(int depth, uint64_t period)
{
    if (depth > 1) {
        frame(depth - 1, period);
        sink++;
        return;
    }
    uint64_t t0 = now_ns();
    while (now_ns() - t0 < period)
        sink++;
}

int main(int argc, char **argv)
{
    int depth = argc > 1 ? atoi(argv[1]) : 20;
    uint64_t period = argc > 2 ? strtoull(argv[2], NULL, 10) : 1000;
    double secs = argc > 3 ? atof(argv[3]) : 1.0;
    struct vprof_latency_stats a, b;
    vprof_latency_stats(&a);
    uint64_t t0 = now_ns(), end = t0 + (uint64_t)(secs * 1e9);
    while (now_ns() < end)
        frame(depth, period);
    uint64_t t1 = now_ns();
    vprof_latency_stats(&b);
    uint64_t fast = b.fast - a.fast, walks = b.walks - a.walks, retries = b.retries - a.retries;
    uint64_t valid = fast + walks;
    printf("granularity_ns %.0f valid %llu fast %llu walks %llu retries %llu passes %llu\n",
           valid ? (double)(t1 - t0) / (double)valid : 0.0, (unsigned long long)valid,
           (unsigned long long)fast, (unsigned long long)walks, (unsigned long long)retries,
           (unsigned long long)(b.passes - a.passes));
    return 0;
}
