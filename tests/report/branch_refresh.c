/* tests/report/t_stack_raw.sh: handle() calls refresh() when stale() says
 * so - once in 1,000 calls normally, once in 20 in the buggy run - and
 * refresh's time is four calls below it, in leaf(); background() is the
 * same work in both runs. */
#include <stdlib.h>
volatile long sink;
__attribute__((noinline)) long leaf(long n) { long s = 0; for (long i = 0; i < n; i++) s += i ^ sink; return s; }
__attribute__((noinline)) long d3(long n) { return leaf(n) + 1; }
__attribute__((noinline)) long d2(long n) { return d3(n) + 1; }
__attribute__((noinline)) long d1(long n) { return d2(n) + 1; }
__attribute__((noinline)) long refresh(long n) { return d1(n) + 1; }
__attribute__((noinline)) long background(long n) { long s = 0; for (long i = 0; i < n; i++) s += i * sink; return s; }
__attribute__((noinline)) int stale(long i, long every) { return i % every == 0; }
__attribute__((noinline)) long handle(long i, long every)
{
    long r = i;
    if (stale(i, every))
        r += refresh(50000);
    return r;
}
int main(int argc, char **argv)
{
    long every = argc > 1 ? atol(argv[1]) : 1000, t = 0;
    for (long i = 0; i < 200000; i++)
        t += handle(i, every);
    sink = t + background(30000000);
    return 0;
}
