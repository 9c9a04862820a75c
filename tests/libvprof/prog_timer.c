/* Tick-rate program: g_phase is sampled at every tick (handmeta's global
 * entry), so the (tid, tick) pairs of the values file are the ticks.
 *   prog spin MS          burn MS ms of CPU; prints "cpu_ms C" (the process's)
 *   prog uneven N MS      N threads, thread i burning (i + 1) x MS ms;
 *                         prints "thread TID CPU_MS" for each
 *   prog forkexec MS      fork: the child burns MS ms, then execs itself
 *                         as "spin MS"; the parent burns MS ms and waits */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

volatile int g_phase = 1;
static volatile long sink;
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;

static double cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* The clock is read every ~million iterations: reading the thread's CPU
 * clock is a system call, and a tick only counts in the program's own code. */
__attribute__((noinline)) void burn(double ms)
{
    double end = cpu_ms() + ms;
    while (cpu_ms() < end)
        for (int i = 0; i < 1000000; i++)
            sink += i;
}

static void *thread_main(void *arg)
{
    burn(*(double *)arg);
    pthread_mutex_lock(&out_lock);
    printf("thread %ld %.3f\n", (long)syscall(SYS_gettid), cpu_ms());
    pthread_mutex_unlock(&out_lock);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    if (!strcmp(argv[1], "spin")) {
        burn(atof(argv[2]));
        struct timespec ts;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
        printf("cpu_ms %.3f\n", ts.tv_sec * 1e3 + ts.tv_nsec / 1e6);
    } else if (!strcmp(argv[1], "uneven") && argc > 3) {
        int n = atoi(argv[2]);
        double ms[64];
        pthread_t t[64];
        for (int i = 0; i < n && i < 64; i++) {
            ms[i] = (i + 1) * atof(argv[3]);
            if (pthread_create(&t[i], NULL, thread_main, &ms[i]))
                return 1;
        }
        for (int i = 0; i < n && i < 64; i++)
            pthread_join(t[i], NULL);
    } else if (!strcmp(argv[1], "forkexec")) {
        pid_t p = fork();
        if (p < 0)
            return 1;
        if (p == 0) {
            burn(atof(argv[2]));
            execl("/proc/self/exe", argv[0], "spin", argv[2], (char *)NULL);
            _exit(3);
        }
        burn(atof(argv[2]));
        int st;
        if (waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st))
            return 1;
    } else {
        return 2;
    }
    fflush(stdout);
    return 0;
}
