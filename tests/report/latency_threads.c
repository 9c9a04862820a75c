/* Worker threads whose start routine lives as long as the run: a longer
 * buggy run must not make the start routine a latency culprit. The slow
 * part is step(), which the buggy run calls with more work. Two workers,
 * not more: on a 2-core machine under load, eight made every call's wall
 * latency mostly preemption, in both runs alike (step's latency test said
 * "same" and worker tied it on CPU evidence: one run in six). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))
static volatile long sink;
static long work;

NOINLINE void step(long n)
{
    for (long i = 0; i < n; i++) sink += i;
}

NOINLINE void *worker(void *arg)
{
    (void)arg;
    for (int r = 0; r < 800; r++) step(work);
    return NULL;
}

int main(int argc, char **argv)
{
    work = argc > 1 ? atol(argv[1]) : 20000;
    pthread_t t[2];
    for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, worker, NULL);
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    printf("%ld\n", sink > 0 ? 1L : 0L);
    return 0;
}
