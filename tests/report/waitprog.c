/* waitprog - one wait of every kind the --waits events know, each with a
 * known waker (tests/report/t_waits_runtime.sh): a mutex held by holder_main
 * while waiter_main waits; a condition, a semaphore, a pipe and an
 * annotated spin loop, each released by main; fsync on a file; two joins.
 * Every wait lasts milliseconds, so VPROF_WAIT_NS (1 us) keeps them all. */
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "vprof.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t cm = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static sem_t sem;
static int ready, pfd[2];
static atomic_int flag, holding, locking, stage;

static void spin_ms(long ms)
{
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    do clock_gettime(CLOCK_MONOTONIC, &b);
    while ((b.tv_sec - a.tv_sec) * 1000L + (b.tv_nsec - a.tv_nsec) / 1000000 < ms);
}

static void nap_ms(long ms)
{
    struct timespec t = {0, ms * 1000000L};
    nanosleep(&t, NULL);
}

void *holder_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&lock);
    atomic_store(&holding, 1);
    while (!atomic_load(&locking)) nap_ms(1);
    spin_ms(20);                        /* the waiter waits for this */
    pthread_mutex_unlock(&lock);
    return NULL;
}

void *waiter_main(void *arg)
{
    (void)arg;
    while (!atomic_load(&holding)) nap_ms(1);
    atomic_store(&locking, 1);
    pthread_mutex_lock(&lock);          /* woken by holder_main */
    pthread_mutex_unlock(&lock);
    pthread_mutex_lock(&cm);
    atomic_store(&stage, 1);
    while (!ready) pthread_cond_wait(&cond, &cm);     /* woken by main */
    pthread_mutex_unlock(&cm);
    atomic_store(&stage, 2);
    sem_wait(&sem);                     /* main posts */
    char c;
    atomic_store(&stage, 3);
    if (read(pfd[0], &c, 1) != 1) abort();            /* main writes */
    atomic_store(&stage, 4);
    vprof_wait_begin(&flag);
    while (!atomic_load(&flag)) {}      /* main wakes */
    vprof_wait_end(&flag);
    nap_ms(60);                         /* main's join waits for this */
    return NULL;
}

/* Main releases each wait only once the waiter is in it (on a loaded
 * machine the waiter may run late). */
static void await_stage(int n)
{
    while (atomic_load(&stage) < n) nap_ms(1);
    nap_ms(5);
}

int main(int argc, char **argv)
{
    const char *file = argc > 1 ? argv[1] : "waitprog.dat";
    sem_init(&sem, 0, 0);
    if (pipe(pfd)) return 1;
    pthread_t h, w;
    pthread_create(&h, NULL, holder_main, NULL);
    pthread_create(&w, NULL, waiter_main, NULL);
    await_stage(1);
    pthread_mutex_lock(&cm);            /* the waiter is inside pthread_cond_wait */
    ready = 1;
    pthread_cond_signal(&cond);
    pthread_mutex_unlock(&cm);
    await_stage(2);
    sem_post(&sem);
    await_stage(3);
    if (write(pfd[1], "x", 1) != 1) return 1;
    await_stage(4);
    vprof_wake(&flag);
    atomic_store(&flag, 1);
    int fd = open(file, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    if (fd < 0) return 1;
    static char buf[1 << 16];
    for (int i = 0; i < 8; i++) {
        if (write(fd, buf, sizeof buf) != (ssize_t)sizeof buf) return 1;
        fsync(fd);
        nap_ms(2);
    }
    close(fd);
    pthread_join(w, NULL);
    pthread_join(h, NULL);
    puts("waitprog done");
    return 0;
}
