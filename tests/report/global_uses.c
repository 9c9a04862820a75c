/* Globals that differ between the runs. `mode` and `opts.level` are used
 * only by configure(): with the schema's @uses lines the report must not
 * hand their anomaly to work(), the hot function that merely runs while
 * they are readable. `cfg.limit` is read by work() itself: a member's
 * `@uses` line names its base, `cfg`, and that must still match. */
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))

int mode;
struct opts { long level; } opts;
struct cfg { long limit; } cfg;
volatile long sink;

NOINLINE void configure(int m)
{
    mode = m;
    opts.level = 100 * m;
    cfg.limit = 1000L * m;
}

NOINLINE long over(long s, long limit)
{
    return s > limit;
}

NOINLINE long work(long n)
{
    long s = 0;
    for (long i = 0; i < n; i++) {
        s += (i * i) % 7;
        if (i % 4096 == 0) s += over(s, cfg.limit);
    }
    return s;
}

int main(int argc, char **argv)
{
    configure(argc > 1 ? atoi(argv[1]) : 1);
    sink = work(120000000L);
    return 0;
}
