/* callbench.c - call-heavy workload for the instrumentation cost: N calls
 * of a small noinline function, plus a recursive fib for a realistic mix of
 * short calls. Prints "calls N" and "ns T": the CPU time of the working
 * thread (CLOCK_THREAD_CPUTIME_ID, so that time the thread spends preempted
 * on a shared machine does not count; cache traffic caused by the scanner
 * does), best of REPS. Built twice by run.sh: plain, and with the latency
 * plugin. Usage: callbench [N [FIB [REPS]]] */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

volatile long sink;

__attribute__((noinline)) long f(long x) { return x * 3 + 1; }

__attribute__((noinline)) long fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 10000000;
    int fn = argc > 2 ? atoi(argv[2]) : 27;
    int reps = argc > 3 ? atoi(argv[3]) : 3;
    uint64_t best = UINT64_MAX;
    for (int r = 0; r < reps; r++) {
        uint64_t t0 = now_ns();
        long acc = 0;
        for (long i = 0; i < n; i++)
            acc += f(i);
        acc += fib(fn);
        sink = acc;
        uint64_t t = now_ns() - t0;
        if (t < best)
            best = t;
    }
    /* fib(n) makes 2*fib(n+1)-1 calls */
    long a = 0, b = 1;
    for (int i = 0; i < fn + 1; i++) {
        long c = a + b;
        a = b;
        b = c;
    }
    printf("calls %ld\nns %llu\n", n + 2 * a - 1, (unsigned long long)best);
    return 0;
}
