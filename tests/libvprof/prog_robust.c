/* Robustness program: threads, forks, wild pointers, long spins.
 *   prog threads N MS   N threads each burning MS ms of CPU
 *   prog fork N MS      N children each burning MS ms, parent waits
 *   prog spin MS        burn MS ms of CPU (for kill tests)
 *   prog exec MS        burn MS ms, then exec itself as "spin MS" (same pid)
 * g_phase only ever holds 1, 2 or 3; g_wild is a pointer nobody may follow;
 * g_heap leads to 42 on the heap (read through the guarded path). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

volatile int g_phase = 1;
long *volatile g_wild = (long *)0xdead0000;
long *volatile g_heap;          /* points at a heap word holding 42 */
static volatile long sink;

static double cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

__attribute__((noinline)) void burn(double ms)
{
    double end = cpu_ms() + ms;
    while (cpu_ms() < end)
        for (int i = 0; i < 1000; i++)
            sink += i;
}

static void *thread_main(void *arg)
{
    burn(*(double *)arg);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    long *h = malloc(sizeof *h);
    *h = 42;
    g_heap = h;
    double ms = argc > 3 ? atof(argv[3]) : atof(argv[2]);
    if (!strcmp(argv[1], "threads")) {
        int n = atoi(argv[2]);
        pthread_t t[256];
        for (int i = 0; i < n && i < 256; i++)
            if (pthread_create(&t[i], NULL, thread_main, &ms))
                return 1;
        g_phase = 2;
        for (int i = 0; i < n && i < 256; i++)
            pthread_join(t[i], NULL);
    } else if (!strcmp(argv[1], "fork")) {
        int n = atoi(argv[2]), bad = 0;
        for (int i = 0; i < n; i++) {
            pid_t p = fork();
            if (p < 0)
                return 1;
            if (p == 0) {
                g_phase = 3;
                burn(ms);
                exit(0);
            }
        }
        for (int i = 0; i < n; i++) {
            int st;
            if (wait(&st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
                bad++;
        }
        if (bad)
            return 1;
    } else if (!strcmp(argv[1], "exec")) {
        burn(ms);
        execl("/proc/self/exe", argv[0], "spin", argv[2], (char *)NULL);
        return 1;
    } else if (!strcmp(argv[1], "spin")) {
        g_phase = 2;
        burn(ms);
    } else {
        return 2;
    }
    printf("done\n");
    return 0;
}
