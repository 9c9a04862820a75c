/* ctxprog.c - known call chains for VPROF_STACKS (t_contexts_runs.sh): a
 * three-deep chain, a qsort comparator (a library calling back into the
 * program), a thread, ticks inside libc (memset), recursion deeper than
 * the recorded frames, and (with "buggy") a path the normal run lacks.
 * "forever" spins until killed; "fork" runs the chain in a child too. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

volatile long sink;
static long scale = 1;

__attribute__((noinline)) void c_spin(long n) { for (long i = 0; i < n; i++) sink += i; }
__attribute__((noinline)) void b_mid(long n) { c_spin(n); sink++; }
__attribute__((noinline)) void a_top(long n) { b_mid(n); sink++; }

__attribute__((noinline)) int cmp_int(const void *x, const void *y)
{
    for (int i = 0; i < 20; i++) sink += i;     /* a comparator worth sampling */
    return *(const int *)x - *(const int *)y;
}
__attribute__((noinline)) void sorter(int n)
{
    int *v = malloc(sizeof *v * (size_t)n);
    for (int r = 0; r < 4 * (int)scale; r++) {
        for (int i = 0; i < n; i++) v[i] = (i * 7919) % n;
        qsort(v, (size_t)n, sizeof *v, cmp_int);
    }
    free(v);
}

static char big[1 << 20];
__attribute__((noinline)) void filler(int n) { for (int i = 0; i < n; i++) memset(big, i, sizeof big); sink += big[7]; }

__attribute__((noinline)) long rec(int d) { if (!d) { c_spin(20000000); return 0; } return rec(d - 1) + 1; }

__attribute__((noinline)) void worker_spin(long n) { for (long i = 0; i < n; i++) sink ^= i; }
static void *thread_main(void *a) { worker_spin((long)a); return NULL; }

/* Buggy only: at least `ms` of this thread's CPU time in c_spin, whatever
 * the machine's speed - a fixed count took 321 ms on one machine and 39 ms
 * on a faster one, within the run-to-run noise of the common path. */
__attribute__((noinline)) void extra(long ms)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
    do {
        c_spin(2000000);
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    } while ((t.tv_sec - t0.tv_sec) * 1000L + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "normal";
    int buggy = !strcmp(mode, "buggy");
    if (!strcmp(mode, "forever"))
        for (;;) a_top(10000000);
    if (!strcmp(mode, "fork")) {
        pid_t c = fork();
        a_top(60000000);
        if (c > 0) waitpid(c, NULL, 0);
        return 0;
    }
    pthread_t t;
    pthread_create(&t, NULL, thread_main, (void *)60000000L);
    a_top(60000000);
    sorter(100000);
    filler(800);
    sink += rec(60);
    if (buggy) extra(300);
    pthread_join(t, NULL);
    return 0;
}
