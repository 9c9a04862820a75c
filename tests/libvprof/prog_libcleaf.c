/* A program whose hot leaf is in libc: level3 -> level2 -> sort_it ->
 * qsort (libc, about log2(N) + 2 frames deep) -> cmp. Almost every tick
 * lands in libc's sort or in cmp, below the libc frames, so the callers
 * whose variables matter (r3 in level3, r2 in level2, n in sort_it) are
 * 3 program frames up but 15 or more frames up in all.
 *   prog ROUNDS */
#include <stdio.h>
#include <stdlib.h>

#define N 16384
static int buf[N];
static volatile long sink;

static int cmp(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

__attribute__((noinline)) void sort_it(int *a, size_t n)
{
    qsort(a, n, sizeof *a, cmp);
    sink += a[n / 2];
}

__attribute__((noinline)) void level2(int reps)
{
    for (int r2 = 0; r2 < reps; r2++) {
        for (int i = 0; i < N; i++)
            buf[i] = (int)((unsigned)(i + r2) * 2654435761u >> 7);
        sort_it(buf, N);
    }
}

__attribute__((noinline)) void level3(int rounds)
{
    for (int r3 = 0; r3 < rounds; r3++)
        level2(4);
}

int main(int argc, char **argv)
{
    level3(argc > 1 ? atoi(argv[1]) : 20);
    printf("done %ld\n", sink);
    return 0;
}
