/* vprof-static-demo.c - the program the glibc-patch build links statically
 * with -pg against the patched libc.a: two globals whose values are known
 * at every moment, CPU time spent in a callee (work) while the variable of
 * interest lives in its caller (rounds), and optionally a forked child that
 * runs the same rounds again.
 *
 * usage: vprof-static-demo ROUNDS ITERATIONS [FORK [THREADS]]
 *   THREADS > 0: after the rounds, THREADS threads each call work() ROUNDS
 *   times (ITIMER_PROF ticks land in whichever thread is running). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

long demo_phase = 1;            /* 1 in the parent, 2 in a forked child */
long demo_round;                /* rounds()'s loop counter, 0..ROUNDS-1 */
volatile long demo_sink;

/* noipa: work() is pure, and gcc would otherwise call it once per run. */
__attribute__((noinline, noipa)) long work(long n)
{
    long s = 0;
    for (long i = 0; i < n; i++)
        s += (i * i) ^ (s >> 3);
    return s;
}

__attribute__((noinline, noipa)) void rounds(long n, long per)
{
    for (demo_round = 0; demo_round < n; demo_round++)
        demo_sink += work(per);
}

static long thread_rounds, thread_per;

static void *thread_main(void *arg)
{
    (void)arg;
    for (long r = 0; r < thread_rounds; r++)
        demo_sink += work(thread_per);
    return NULL;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 50;
    long per = argc > 2 ? atol(argv[2]) : 4000000;
    rounds(n, per);
    if (argc > 3 && atoi(argv[3])) {
        /* The child profiles on its own: its files, its timer, and call
         * counts of its own rounds only. */
        pid_t c = fork();
        if (c < 0) {
            perror("fork");
            return 1;
        }
        if (c == 0) {
            demo_phase = 2;
            rounds(n, per);
            return 0;
        }
        int st;
        if (waitpid(c, &st, 0) != c || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            fprintf(stderr, "vprof-static-demo: child failed\n");
            return 1;
        }
    }
    int nthreads = argc > 4 ? atoi(argv[4]) : 0;
    pthread_t t[16];
    if (nthreads > 16)
        nthreads = 16;
    thread_rounds = n;
    thread_per = per;
    for (int i = 0; i < nthreads; i++)
        if (pthread_create(&t[i], NULL, thread_main, NULL) != 0) {
            fprintf(stderr, "vprof-static-demo: pthread_create failed\n");
            return 1;
        }
    for (int i = 0; i < nthreads; i++)
        pthread_join(t[i], NULL);
    printf("sink parity %ld\n", demo_sink & 1);
    return 0;
}
