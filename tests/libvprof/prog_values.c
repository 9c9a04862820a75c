/* Value-truth program: every monitored variable only ever holds values the
 * test knows in advance.
 *   g_phase  global, only 1, 2 or 3
 *   i        loop variable of work(), in [0, N) (a register at -O2)
 *   k        loop variable of caller(), in [0, REPS); all CPU time is spent
 *            in work(), so k is only seen through virtual unwinding. */
#include <stdio.h>
#include <stdlib.h>

#define N 1000003
#define REPS 7

volatile int g_phase = 1;
volatile long g_calls;          /* makes work() impure: no call is elided */
static long data[4096];

__attribute__((noinline)) long work(long n)
{
    long acc = 0;
    g_calls++;
    for (long i = 0; i < n; i++)
        acc = acc * 31 + (data[i & 4095] ^ i);
    return acc;
}

__attribute__((noinline)) long caller(long reps, long n)
{
    long s = 0;
    for (long k = 0; k < reps; k++)
        s += work(n) ^ k;
    return s;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 30;
    long total = 0;
    for (int j = 0; j < 4096; j++)
        data[j] = j * 3 + argc;
    for (int r = 0; r < rounds; r++) {
        g_phase = 1 + r % 3;
        total += caller(REPS, N);
    }
    printf("%ld\n", total);
    return 0;
}
