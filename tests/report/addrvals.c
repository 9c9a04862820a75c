/* addrvals - a variable that holds an address (tests/report/t_address_values.sh):
 * stamp's `tag` is its frame's address kept in an integer, so ASLR gives it
 * another value in every run, while stamp does the same work in both;
 * work's loop bound is the real difference between the runs. */
#include <stdlib.h>

volatile long sink;

__attribute__((noinline)) void stamp(long n)
{
    long tag = (long)__builtin_frame_address(0);
    for (long i = 0; i < n; i++) sink += i ^ tag;
}

__attribute__((noinline)) void work(long n)
{
    for (long i = 0; i < n; i++) sink += i;
}

/* stamp one frame deeper: tag alternates between two addresses, so it
 * changes within a run (a variable constant in a run gives no
 * processing-cost sample, and tag would have no dimension left) */
__attribute__((noinline)) void stamp_deeper(long n)
{
    stamp(n);
    sink++;
}

int main(int argc, char **argv)
{
    long k = argc > 1 ? atol(argv[1]) : 1000000;
    for (int r = 0; r < 40; r++) {
        if (r % 2) stamp_deeper(2000000);
        else stamp(2000000);
        work(k);
    }
    return 0;
}
