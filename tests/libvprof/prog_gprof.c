/* Deterministic call graph for the gprof compatibility test: direct calls,
 * recursion, calls through a function pointer, a callee reached from two
 * callers, and float arguments (which mcount must preserve). */
#include <stdio.h>

static volatile long sink;

__attribute__((noinline)) double scale(double x, float f) { return x * f; }
__attribute__((noinline)) long leaf(long i) { sink += i; return i & 7; }
__attribute__((noinline)) long fib(int n) { return n < 2 ? leaf(n) : fib(n - 1) + fib(n - 2); }
__attribute__((noinline)) long twice(long (*fn)(long), long v) { return fn(v) + fn(v + 1); }
__attribute__((noinline)) long mid(long n)
{
    long s = 0;
    for (long i = 0; i < n; i++)
        s += leaf(i) + twice(leaf, i);
    return s;
}
__attribute__((noinline)) long other(long n) { return leaf(n) + mid(n / 10); }

int main(void)
{
    double d = 1.0;
    long s = 0;
    for (int r = 0; r < 20; r++) {
        s += mid(500) + other(100) + fib(12);
        d = scale(d, 1.5f);
    }
    printf("%ld %.1f\n", s, d);
    return d == 3325.256730079651 ? 0 : 3;   /* 1.5^20: float args intact */
}
