/* A limit decided off the hot stack: configure() stores it once, work()
 * reads it in its loop condition. Normal run: limit 50; buggy run: 5000.
 * The verdict of work must say where limit's value comes from. */
#include <stdio.h>
#include <stdlib.h>

long limit;                     /* read by work, written by configure */
static volatile long sink;

__attribute__((noinline)) static void configure(long n)
{
    limit = n;
}

__attribute__((noinline)) static void work(void)
{
    for (long i = 0; i < limit; i++)
        sink += i * 7 % 13;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 50;
    long rounds = argc > 2 ? atol(argv[2]) : 200000;
    configure(n);
    for (long r = 0; r < rounds; r++) work();
    printf("%ld\n", (long)(sink & 1));
    return 0;
}
