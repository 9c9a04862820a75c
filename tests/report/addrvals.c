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

int main(int argc, char **argv)
{
    long k = argc > 1 ? atol(argv[1]) : 1000000;
    for (int r = 0; r < 40; r++) {
        stamp(2000000);
        work(k);
    }
    return 0;
}
