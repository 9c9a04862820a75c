/* A waiter busy-waits for a budget that a cheap helper computes from the
 * queue, chosen against a constant (vprof's @from lines through a choice:
 * `budget = q->pending ? spin_budget(q) : 0`). With the buggy gap the
 * helper's answer is 1000 times larger: burn() spends the time,
 * wait_round() holds the answer, spin_budget(), inlined and never sampled,
 * decided it. */
#include <stdio.h>
#include <stdlib.h>

struct queue { long pending, gap; };

static volatile unsigned long sink;
static unsigned long total;

static __attribute__((noinline)) void burn(long n)
{
    for (long i = 0; i < n; i++) sink += (unsigned long)i;
}

/* the rest of the program: the same work in both runs, so the waits are
 * not the whole run */
static __attribute__((noinline)) unsigned long checksum(long n)
{
    unsigned long h = 5381;
    for (long i = 0; i < n; i++) h = h * 33 + (unsigned long)i;
    return h;
}

static long spin_budget(const struct queue *q)
{
    return q->gap * 8;
}

static __attribute__((noinline)) void wait_round(struct queue *q)
{
    long budget = q->pending ? spin_budget(q) : 0;
    burn(budget);
    total += (unsigned long)budget;
}

int main(int argc, char **argv)
{
    struct queue q = {1, argc > 1 ? atol(argv[1]) : 3};
    long rounds = argc > 2 ? atol(argv[2]) : 1000;
    for (long r = 0; r < rounds; r++)
        wait_round(&q);
    printf("%lu %lu\n", total, checksum(300000000));
    return 0;
}
