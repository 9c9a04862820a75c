/* A miss path inlined into main (tests/report/t_calls.sh): refill() runs
 * once per cache miss and calls fetch() once each time, in both workloads;
 * the buggy workload (more keys than the cache holds) only misses more.
 * refill() holds a decision (it logs a miss when the cache is cold), so
 * vprof-cc's counters count its calls: fetch's rate is one per refill on
 * both sides - no change - although refill's host, main, "runs once". */
#include <stdio.h>
#include <stdlib.h>

static volatile long sink;
static struct { int warm; } cache_state;
static long cached[1024];

__attribute__((noinline)) void fetch(long k)
{
    for (int i = 0; i < 200; i++) sink += (k ^ i) * 7;
}

__attribute__((noinline)) void log_cold(long k) { sink += k; }

static inline void refill(long k)
{
    fetch(k);
    if (!cache_state.warm)
        log_cold(k);
}

static inline long lookup(long k)
{
    if (cached[k & 1023] != k) {
        refill(k);
        cached[k & 1023] = k;
    }
    return k;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000000, keys = argc > 2 ? atol(argv[2]) : 1024;
    long s = 0;
    for (long i = 0; i < n; i++) {
        s += lookup(i % keys + 1);
        if (i == 2048) cache_state.warm = 1;
    }
    printf("%ld\n", s);
    return 0;
}
