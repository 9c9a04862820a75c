/* A program whose stacks exercise the unwinder: recursion of varying
 * depth, functions that keep values in callee-saved registers across
 * calls, frames sized at run time (alloca: the CFA follows rbp), a qsort
 * callback under libc's own frames, calls through a shared library built
 * without frame pointers (unwlib.c, when linked with -DWITH_LIB), and work
 * inside a SIGALRM handler (ticks there unwind through the signal
 * trampoline). t_unwinder.sh runs it with VPROF_UNWINDER=check.
 * Usage: prog_unwinder MS   (runs for MS ms of CPU time) */
#include <alloca.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

volatile long sink;
long g_counter;

#ifdef WITH_LIB
long unwlib_apply(long (*f)(long), long n);
#endif

__attribute__((noinline)) long leaf(long x)
{
    long s = 0;
    for (int i = 0; i < 40; i++)
        s += (x ^ i) * 3 + (s >> 3);
    return s;
}

/* five values live across calls: rbx, r12-r15 at -O2 */
__attribute__((noinline)) long saves(long a, long b, long c, long d, long e)
{
    long r = 0;
    for (int i = 0; i < 6; i++) {
        r += leaf(a + i) * b;
        a ^= r;
        b += c;
        c ^= d;
        d += e;
        e ^= r;
    }
    return r + a + b + c + d + e;
}

__attribute__((noinline)) long dyn(int n)
{
    char *p = alloca((size_t)n);
    memset(p, n, (size_t)n);
    return saves(p[0], p[n - 1], n, n * 2, n * 3);
}

static int cmp(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    sink += leaf(x);
    return (x > y) - (x < y);
}

__attribute__((noinline)) long sorter(int n)
{
    int *v = alloca(sizeof(int) * (size_t)n);
    for (int i = 0; i < n; i++)
        v[i] = (int)((g_counter * 7919 + i * 104729) % 1000);
    qsort(v, (size_t)n, sizeof(int), cmp);
    return v[0];
}

static long via_lib(long x)
{
    return leaf(x) + saves(x, x + 1, x + 2, x + 3, x + 4);
}

__attribute__((noinline)) long rec(int depth)
{
    if (depth == 0) {
        long s = dyn(16 + (int)(g_counter & 63)) + sorter(24);
#ifdef WITH_LIB
        s += unwlib_apply(via_lib, 3);
#else
        s += via_lib(3);
#endif
        return s;
    }
    return rec(depth - 1) + leaf(depth);
}

static void on_alarm(int sig)
{
    (void)sig;
    sink += rec(2);
}

static double cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
    double ms = argc > 1 ? atof(argv[1]) : 300;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval it = {{0, 2000}, {0, 2000}};
    setitimer(ITIMER_REAL, &it, NULL);
    double end = cpu_ms() + ms;
    while (cpu_ms() < end) {
        g_counter++;
        sink += rec(3 + (int)(g_counter % 6));
    }
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    printf("done %ld\n", g_counter);
    return 0;
}
