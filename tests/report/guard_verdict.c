/* A batch writer whose flush predicate compares against a limit computed
 * from its argument (vprof's @guard lines): with the buggy divisor the
 * limit is 0 and every record flushes its block. append() is where the
 * calls of flush_block change; blk_full(), inlined, is the decision. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char block[65536];
static size_t used, flushed;
static unsigned long sum;

static __attribute__((noinline)) void flush_block(void)
{
    for (size_t i = 0; i < used; i++) sum = sum * 31 + (unsigned char)block[i];
    for (int r = 0; r < 200; r++) sum ^= sum >> 7;
    flushed++;
    used = 0;
}

static int blk_full(size_t len, long div)
{
    size_t limit = (sizeof block / 1024 / (size_t)div) * 1024;
    return used + len > limit;
}

static __attribute__((noinline)) void append(const char *rec, size_t len, long div)
{
    if (blk_full(len, div))
        flush_block();
    memcpy(block + used, rec, len);
    used += len;
}

int main(int argc, char **argv)
{
    long div = argc > 1 ? atol(argv[1]) : 1;
    char rec[64];
    for (long i = 0; i < 400000; i++) {
        int n = snprintf(rec, sizeof rec, "record %ld %lu", i, sum & 0xff);
        append(rec, (size_t)n, div);
    }
    printf("%zu flushes\n", flushed);
    return 0;
}
