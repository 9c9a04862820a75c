/* A global that differs between the runs but is used only by configure():
 * with the schema's @uses lines the report must not hand its anomaly to
 * work(), the hot function that merely runs while it is readable. */
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))

int mode;
volatile long sink;

NOINLINE void configure(int m)
{
    mode = m;
}

NOINLINE long work(long n)
{
    long s = 0;
    for (long i = 0; i < n; i++)
        s += (i * i) % 7;
    return s;
}

int main(int argc, char **argv)
{
    configure(argc > 1 ? atoi(argv[1]) : 1);
    sink = work(120000000L);
    return 0;
}
