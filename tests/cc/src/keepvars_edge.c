/* keepvars_edge.c - what --keep-vars must leave working (t_keepvars.sh):
 * setjmp/longjmp, varargs, a musttail call, a sibling call (still a jmp),
 * a naked function, long double, __int128. Prints one line of results. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static jmp_buf jb;
static int depth;

__attribute__((noinline)) static void jump(int k)
{
    if (k > 3)
        longjmp(jb, k);
}

int with_setjmp(int n)
{
    volatile int acc = 0;
    int k;
    if ((k = setjmp(jb)) != 0)
        return acc * 100 + k;
    for (int i = 0; i < n; i++) {
        acc += i;
        jump(i);
    }
    return acc;
}

int sum(int n, ...)
{
    va_list ap;
    va_start(ap, n);
    int s = 0;
    for (int i = 0; i < n; i++) {
        int v = va_arg(ap, int);
        if (v > 0)
            s += v;
    }
    va_end(ap);
    return s;
}

__attribute__((noinline)) int leaf(int x)
{
    return x * 3 + depth;
}

int tail(int x)
{
    int y = x + 1;
    if (y > 10)
        y -= 2;
    __attribute__((musttail)) return leaf(y);
}

/* ends in a sibling call: `jmp leaf` with and without --keep-vars */
int sib(int x)
{
    int y = x * 2;
    if (y > 5)
        y--;
    return leaf(y);
}

__attribute__((naked)) void naked_fn(void)
{
    __asm__("ret");
}

long double ld(long double a, int n)
{
    long double s = a;
    for (int i = 0; i < n; i++)
        if (s < 1e9L)
            s *= a;
    return s;
}

double dbl(double a, int n)
{
    double s = a;
    for (int i = 0; i < n; i++)
        if (s < 1e9)
            s *= a;
    return s;
}

__int128 wide(__int128 a, int n)
{
    for (int i = 0; i < n; i++)
        if (a > 0)
            a += i;
    return a;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 10;
    naked_fn();
    printf("%d %d %d %d %.3Lf %.3f %lld\n", with_setjmp(n), sum(4, 1, -2, 3, 4), tail(n),
           sib(n), ld(1.5L, n), dbl(1.5, n), (long long)wide(5, n));
    return 0;
}
