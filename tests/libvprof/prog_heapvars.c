/* Globals behind pointers (t_heapvars.sh): g_p[i] points at a long that
 * holds 1000 + i, on the heap (a guarded read that needs a system call),
 * in the program's own data (a plain load), or nowhere: NULL (i % 5 == 4)
 * or a page that was unmapped (i % 7 == 3), whose reads fail. The CPU time
 * is spent two calls below main, so ticks sample several frames. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#define NP 80

long *volatile g_p[NP];
static long g_static[NP];
volatile long g_sink;

static void point(void)
{
    char *gone = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (gone == MAP_FAILED || munmap(gone, 4096) < 0)
        exit(1);
    for (int i = 0; i < NP; i++) {
        long *p;
        if (i % 5 == 4)
            p = NULL;
        else if (i % 7 == 3)
            p = (long *)(void *)(gone + 8 * (i % 64));
        else if (i % 11 == 5)
            p = &g_static[i];
        else
            p = malloc(64);
        if (p && !(i % 7 == 3))
            *p = 1000 + i;
        __atomic_signal_fence(__ATOMIC_SEQ_CST);    /* the value before the pointer */
        g_p[i] = p;
    }
}

__attribute__((noinline)) long spin(long n)
{
    long acc = 0;
    for (long i = 0; i < n; i++)
        acc = acc * 31 + (i ^ (acc >> 7));
    return acc;
}

__attribute__((noinline)) long middle(long reps, long n)
{
    long s = 0;
    for (long k = 0; k < reps; k++)
        s += spin(n + k);     /* (+ k: no call is elided) */
    return s;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 20;
    point();
    for (int r = 0; r < rounds; r++)
        g_sink += middle(10, 2000000 + r);
    printf("done %ld\n", (long)g_sink);
    return 0;
}
