/* inlined - the hot loop is a static function the compiler inlines into
 * main at -O2 (tests/report/t_inlined.sh): its samples carry main's symbol,
 * and only DWARF's inlined-subroutine records say whose code they are. */
#include <stdlib.h>

volatile long sink;
long limit;                     /* the workload: differs between the runs */

static inline __attribute__((always_inline)) long spin_rows(long n)
{
    long s = 0;
    for (long i = 0; i < n; i++) s += i ^ sink;
    return s;
}

int main(int argc, char **argv)
{
    limit = argc > 1 ? atol(argv[1]) : 100000;
    long t = 0;
    for (int r = 0; r < 300; r++) t += spin_rows(limit);
    sink = t;
    return 0;
}
