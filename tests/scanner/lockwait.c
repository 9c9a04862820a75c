/* lockwait.c - one thread holds a mutex for a known time inside
 * holder_scan() while three others block on it; then a condition-variable
 * wait of known length. Prints "holder TID", "mutex ADDR", "cond ADDR",
 * "holdfunc ADDR" for t_scanner.sh. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t cm = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static volatile int held, signalled;

static void ms_sleep(long ms)
{
    struct timespec ts = { 0, ms * 1000000 };
    nanosleep(&ts, NULL);
}

__attribute__((noinline)) void holder_scan(void)
{
    pthread_mutex_lock(&m);
    __atomic_store_n(&held, 1, __ATOMIC_SEQ_CST);
    ms_sleep(40);                         /* the long scan under the lock */
    pthread_mutex_unlock(&m);
}

static void *holder(void *arg)
{
    (void)arg;
    printf("holder %d\n", (int)gettid());
    fflush(stdout);
    holder_scan();
    return NULL;
}

__attribute__((noinline)) void waiter_path(void)
{
    pthread_mutex_lock(&m);
    pthread_mutex_unlock(&m);
}

static void *waiter(void *arg)
{
    (void)arg;
    while (!__atomic_load_n(&held, __ATOMIC_SEQ_CST))
        usleep(100);
    waiter_path();
    return NULL;
}

static void *signaller(void *arg)
{
    (void)arg;
    ms_sleep(15);
    pthread_mutex_lock(&cm);
    signalled = 1;
    pthread_cond_signal(&cv);
    pthread_mutex_unlock(&cm);
    return NULL;
}

int main(void)
{
    pthread_t h, w[3], s;
    printf("mutex %lx\ncond %lx\nholdfunc %lx\n", (unsigned long)(uintptr_t)&m,
           (unsigned long)(uintptr_t)&cv, (unsigned long)(uintptr_t)holder_scan);
    fflush(stdout);
    pthread_create(&h, NULL, holder, NULL);
    for (int i = 0; i < 3; i++)
        pthread_create(&w[i], NULL, waiter, NULL);
    pthread_join(h, NULL);
    for (int i = 0; i < 3; i++)
        pthread_join(w[i], NULL);

    pthread_create(&s, NULL, signaller, NULL);
    pthread_mutex_lock(&cm);
    while (!signalled)
        pthread_cond_wait(&cv, &cm);
    pthread_mutex_unlock(&cm);
    pthread_join(s, NULL);
    return 0;
}
