/* threads.c - one CPU-time timer per thread, so every thread is sampled in
 * proportion to its own CPU time (vProf §7's sampling bias), and the
 * interposed pthread_create that gives new threads theirs.
 *
 * Each timer is created by the thread itself on CLOCK_THREAD_CPUTIME_ID and
 * delivers SIGPROF to that thread (SIGEV_THREAD_ID). pthread_create is
 * interposed so a new thread creates its timer before running its start
 * routine; a thread-specific-data destructor deletes it at thread exit.
 * POSIX timers are not inherited by fork (runtime.c's fork handler calls
 * vprof_thread_forget, then vprof_thread_start) nor kept across exec.
 * vprof's own threads are created without any of this
 * (vprof_internal_thread_create). */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "core.h"
#include "hooks.h"
#include "shell.h"

static __thread timer_t my_timer __attribute__((tls_model("initial-exec")));
static __thread int have_timer __attribute__((tls_model("initial-exec")));
static pthread_key_t exit_key;
static int key_ok;

typedef int (*create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
static create_fn real_create;

static void on_thread_exit(void *unused)
{
    (void)unused;
    vprof_thread_stop();
    vprof_core_thread_exit();
}

int vprof_threads_init(void)
{
    static int done;
    if (done)
        return 0;
    done = 1;
    if (pthread_key_create(&exit_key, on_thread_exit) == 0)
        key_ok = 1;
    return 0;
}

void vprof_thread_forget(void)
{
    have_timer = 0;             /* the parent's timer did not come along */
}

int vprof_thread_start(void)
{
    if (have_timer)
        return 0;
    vprof_core_thread_init();
    if (key_ok)
        pthread_setspecific(exit_key, (void *)1);
    struct sigevent sev;
    memset(&sev, 0, sizeof sev);
    sev.sigev_notify = SIGEV_THREAD_ID;
    sev.sigev_signo = SIGPROF;
    sev.sigev_value.sival_ptr = &vprof_sh.timer_magic;
    sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
    if (timer_create(CLOCK_THREAD_CPUTIME_ID, &sev, &my_timer) < 0) {
        vprof_warn("timer_create: %s (this thread is not sampled)", strerror(errno));
        return -1;
    }
    uint64_t ns = 1000000000ull / vprof_sh.hz;
    struct itimerspec its;
    its.it_interval.tv_sec = (time_t)(ns / 1000000000ull);
    its.it_interval.tv_nsec = (long)(ns % 1000000000ull);
    its.it_value = its.it_interval;
    if (timer_settime(my_timer, 0, &its, NULL) < 0) {
        timer_delete(my_timer);
        vprof_warn("timer_settime: %s (this thread is not sampled)", strerror(errno));
        return -1;
    }
    have_timer = 1;
    return 0;
}

void vprof_thread_stop(void)
{
    if (have_timer) {
        have_timer = 0;
        timer_delete(my_timer);
    }
}

struct start_args {
    void *(*fn)(void *);
    void *arg;
    int blocks_prof;
    uint32_t creator;           /* for the latency thread start event */
    uint64_t t0;
    void *site;
};

static void *start_wrapper(void *p)
{
    struct start_args a = *(struct start_args *)p;
    free(p);
    if (__atomic_load_n(&vprof_sh.state, __ATOMIC_ACQUIRE) == VPROF_ON) {
        vprof_signals_thread_start(a.blocks_prof);
        vprof_thread_start();
        if (vprof_latency_thread_start)
            vprof_latency_thread_start(a.creator, a.t0, (void *)a.fn, a.site);
    }
    return a.fn(a.arg);
}

static int resolve_create(void)
{
    if (!real_create)
        real_create = (create_fn)dlsym(RTLD_NEXT, "pthread_create");
    return real_create ? 0 : -1;
}

int vprof_internal_thread_create(pthread_t *t, const pthread_attr_t *attr,
                                 void *(*fn)(void *), void *arg)
{
    if (resolve_create() < 0)
        return EAGAIN;
    /* The new thread inherits this mask: all blocked, SIGPROF included
     * (libc's sigmask, not the program's view in signals.c). */
    sigset_t all, old;
    sigfillset(&all);
    vprof_real_sigmask(SIG_SETMASK, &all, &old);
    int rc = real_create(t, attr, fn, arg);
    vprof_real_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}

int pthread_create(pthread_t *t, const pthread_attr_t *attr,
                   void *(*fn)(void *), void *arg)
{
    if (resolve_create() < 0)
        return EAGAIN;
    if (__atomic_load_n(&vprof_sh.state, __ATOMIC_ACQUIRE) != VPROF_ON)
        return real_create(t, attr, fn, arg);
    struct start_args *a = malloc(sizeof *a);
    if (!a)
        return real_create(t, attr, fn, arg);
    a->fn = fn;
    a->arg = arg;
    a->blocks_prof = vprof_signals_program_blocks();
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    a->t0 = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    a->creator = (uint32_t)syscall(SYS_gettid);
    a->site = __builtin_return_address(0);
    int rc = real_create(t, attr, start_wrapper, a);
    if (rc)
        free(a);
    return rc;
}
