/* A set kept as an array, searched linearly before each insert
 * (tests/report/t_loop_first.sh): add_unique() loops `i < s->n`. The
 * buggy input puts 64 items in a set where the normal one puts 8: s->n, a
 * condition (the loop's bound), takes larger values, and so does i, the
 * loop's own variable - the same work on more data (scalability), not a
 * condition that decides wrongly. */
#include <stdio.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))
struct set { unsigned n; int v[128]; };
static struct set S;
static volatile long sink;

NOINLINE int same(int a, int b)
{
    sink++;
    return a == b;
}

NOINLINE int add_unique(struct set *s, int x)
{
    for (unsigned i = 0; i < s->n; i++)
        if (same(s->v[i], x)) return 0;
    s->v[s->n++] = x;
    return 1;
}

int main(int argc, char **argv)
{
    int items = argc > 1 ? atoi(argv[1]) : 8;
    long rounds = 16000000L / ((long)items * items);
    long added = 0;
    for (long r = 0; r < rounds; r++) {
        S.n = 0;
        for (int k = 0; k < items; k++) added += add_unique(&S, k * 7 + (int)(r & 1));
    }
    printf("%ld\n", added > 0 ? 1L : 0L);
    return 0;
}
