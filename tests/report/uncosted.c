/* Functions the run calls but never samples: pick_size once, tiny three
 * times; work holds all the time. The report must still list them, after
 * the ranked functions, by calls (as gprof's flat profile does). often()
 * is inlined, known only by its counted (guarded) calls: gprof cannot list
 * it, so it follows them. */
#include <stdio.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))
static volatile long sink;

NOINLINE int pick_size(int n) { return n < 16 ? 16 : n; }
NOINLINE int tiny(int x) { return x + 1; }
static int ok(int k) { return k % 2 == 0; }
static void often(int k) { sink += k; }
NOINLINE void work(long n)
{
    for (long i = 0; i < n; i++) sink += i % 7;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000;
    int s = pick_size(argc);
    for (int k = 0; k < 3; k++) s = tiny(s);
    for (int k = 0; k < 100; k++)
        if (ok(k)) often(k);
    work(n);
    printf("%d\n", s > 0);
    return 0;
}
