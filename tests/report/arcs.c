/* Call-frequency evidence: insert() stops calling grow() in the buggy run
 * (a guard that no longer fires), and lookup() calls probe() far more often
 * per call (a fallback taken every time). Both decisions cost their own
 * function almost nothing. With a third argument, only batch() runs, over
 * a workload of that size: more calls of item() per call of batch(), in
 * proportion to the time. Results flow through return values, so that no
 * global differs between the runs. */
#include <stdio.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))

NOINLINE long grow(long i) { return i / 3; }

NOINLINE long insert(long i, long every)
{
    long x = i * 7;
    if (every && i % every == 0) x += grow(i);
    return x;
}

NOINLINE long probe(long k)
{
    long s = 0;
    for (long j = 0; j < 40; j++) s += k ^ j;
    return s;
}

NOINLINE long lookup(long k, long fallback)
{
    long s = probe(k);
    if (fallback)
        for (long r = 0; r < 8; r++) s += probe(k + r);
    return s;
}

static volatile long sink;

NOINLINE long item(long k)
{
    for (long j = 0; j < 40; j++) sink += k ^ j;   /* volatile: not folded */
    return sink;
}

/* A driver that calls item() once per element: a larger batch calls it
 * more often per call, in proportion to the work. */
NOINLINE long batch(long size)
{
    long s = 0;
    for (long k = 0; k < size; k++) s += item(k);
    return s;
}

int main(int argc, char **argv)
{
    long every = argc > 1 ? atol(argv[1]) : 100, fallback = argc > 2 ? atol(argv[2]) : 0;
    long size = argc > 3 ? atol(argv[3]) : 0;
    long acc = 0;
    if (size > 0) {             /* only batches: the workload's size is all that differs */
        for (long b = 0; b < 10; b++) acc += batch(size + b);
        printf("%ld\n", acc & 1);
        return 0;
    }
    for (long i = 0; i < 2000000; i++) {
        acc += insert(i, every);
        acc += lookup(i, fallback);
    }
    printf("%ld\n", acc & 1);
    return 0;
}
