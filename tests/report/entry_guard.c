/* A flush decision in the loop of an entry function (main here; a thread's
 * start routine alike): main flushes when needs_flush() says so, and with
 * the buggy limit it says so for every record. main has no recorded call,
 * so its calls have no rate; the @guard line makes its calls of flush() a
 * decision to test (--entry-guards). */
#include <stdio.h>
#include <stdlib.h>

static unsigned long sum;
static size_t used, flushes;

static __attribute__((noinline)) void flush(void)
{
    for (int r = 0; r < 4000; r++) sum ^= sum >> 3 ^ (unsigned long)r;
    flushes++;
    used = 0;
}

static __attribute__((noinline)) void encode(long i)
{
    for (int r = 0; r < 300; r++) sum = sum * 31 + (unsigned long)(i ^ r);
}

static int needs_flush(size_t limit)
{
    return used >= limit;
}

int main(int argc, char **argv)
{
    size_t limit = argc > 1 ? (size_t)atol(argv[1]) : 4096;
    for (long i = 0; i < 400000; i++) {
        encode(i);
        used += 64;
        if (needs_flush(limit))
            flush();
    }
    printf("%zu flushes %lu\n", flushes, sum & 0xff);
    return 0;
}
