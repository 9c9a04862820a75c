/* clones - gcc -O2 makes "scan_table.constprop.0" and "work.constprop.0"
 * of functions always called with one constant argument
 * (tests/report/t_gcc_clones.sh): the symbols carry a suffix, the DWARF
 * and the variables the source name, and an unlikely error path may be
 * split into a ".cold" piece. */
#include <stdio.h>
#include <stdlib.h>

struct cfg { long limit, stride; };

static long __attribute__((noinline)) scan_table(const struct cfg *c, long n, int mode, long r)
{
    long s = 0;
    if (__builtin_expect(n < 0, 0)) {
        fprintf(stderr, "scan_table: negative size %ld\n", n);
        abort();
    }
    for (long i = 0; i < n; i += c->stride)
        s += ((i + r) * 2654435761u) % (mode ? 7 : 11);
    return s;
}

static long __attribute__((noinline)) work(long rounds, long n)
{
    struct cfg c = { .limit = n, .stride = 1 };
    long t = 0;
    for (long r = 0; r < rounds; r++) t += scan_table(&c, n, 1, r);
    return t;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000;
    printf("%ld\n", work(2000, n));
    return 0;
}
