/* Call-frequency evidence from an inlined copy: scan_phase() is inlined
 * into main (as -O2 does to a static function called once) and flushes its
 * batch through apply() whenever `limit` items are pending: every 10,000
 * items in the normal run, every item in the buggy one (a limit computed
 * as 0, MDEV-21826's shape). The call of apply() is an instruction of
 * main's symbol; the decision is scan_phase's. The items' own work
 * dominates both runs, so the workload's growth (bounded by the runs' CPU
 * times) stays small. t_arcs.sh checks that the
 * changed rate is scan_phase's evidence, per call of its host, main.
 * The buggy workload is an eighth of the normal one, so the workload's
 * growth is below 1; setup()'s unchanged calls of init_slot() (6 and 6)
 * must not look like more. */
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))

static volatile long sink;

NOINLINE long apply(long pending)
{
    for (long j = 0; j < 30 + pending; j++) sink += j;    /* a small fixed cost per flush */
    return sink;
}

static inline __attribute__((always_inline)) long scan_phase(long n, long limit)
{
    long s = 0, pending = 0;
    for (long i = 0; i < n; i++) {
        for (long j = 0; j < 60; j++) sink += i ^ j;      /* the items' own work */
        if (++pending >= limit) { s += apply(pending); pending = 0; }
    }
    return s + apply(pending);
}

/* Start-up work, the same in both runs: six slots set up one by one. */
NOINLINE void init_slot(long k) { sink += k; }
NOINLINE void setup(long k) { init_slot(k); }

int main(int argc, char **argv)
{
    long limit = argc > 1 ? atol(argv[1]) : 10000;
    long n = argc > 2 ? atol(argv[2]) : 400000;     /* buggy: a smaller workload */
    for (long k = 0; k < 6; k++) setup(k);
    sink = scan_phase(n > 0 ? n : 1, limit > 0 ? limit : 1);
    return 0;
}
