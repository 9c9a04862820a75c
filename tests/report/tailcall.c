/* A decision behind a sibling call: maybe_flush() ends in `return
 * flush(n)` (a `jmp flush` at -O2), so gmon records flush()'s calls as
 * made by maybe_flush's caller, add_item(). The buggy run's guard flushes
 * every item instead of every 64th. t_arcs.sh checks the changed rate is
 * maybe_flush's evidence, not add_item's. */
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))

static volatile long sink;

NOINLINE long flush(long n)
{
    for (long j = 0; j < 40; j++) sink += n ^ j;
    return sink;
}

NOINLINE long maybe_flush(long n, long every)
{
    if (n % every == 0) return flush(n);
    return n;
}

NOINLINE long add_item(long i, long every)
{
    for (long j = 0; j < 40; j++) sink += i * j;        /* the item's own work */
    return maybe_flush(i, every);
}

int main(int argc, char **argv)
{
    long every = argc > 1 ? atol(argv[1]) : 64;
    long s = 0;
    for (long i = 0; i < 300000; i++) s += add_item(i, every > 0 ? every : 1);
    sink = s;
    return 0;
}
