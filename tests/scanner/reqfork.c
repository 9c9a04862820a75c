/* reqfork.c - the request API across two threads (request 42 starts on the
 * main thread, is handed off with vprof_req_block and finished by a
 * worker), then a fork whose child records into its own latency file.
 * Prints "main TID", "worker TID", "child PID", "func child_work ADDR". */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "vprof_latency.h"

static void ms_sleep(long ms)
{
    struct timespec ts = { 0, ms * 1000000 };
    nanosleep(&ts, NULL);
}

__attribute__((noinline)) void stage(long ms) { ms_sleep(ms); }
__attribute__((noinline)) void child_work(void) { ms_sleep(40); }

static void *worker(void *arg)
{
    (void)arg;
    printf("worker %d\n", (int)gettid());
    fflush(stdout);
    ms_sleep(5);
    vprof_req_start(42);
    stage(3);
    vprof_req_end(42);
    return NULL;
}

int main(void)
{
    pthread_t w;
    printf("main %d\nfunc child_work %lx\n", (int)gettid(),
           (unsigned long)(uintptr_t)child_work);
    fflush(stdout);
    vprof_req_start(42);
    stage(2);
    vprof_req_block(42);
    pthread_create(&w, NULL, worker, NULL);
    pthread_join(w, NULL);

    pid_t c = fork();
    if (c == 0) {
        child_work();
        return 0;
    }
    printf("child %d\n", (int)c);
    fflush(stdout);
    int stt;
    waitpid(c, &stt, 0);
    return WIFEXITED(stt) && WEXITSTATUS(stt) == 0 ? 0 : 1;
}
