/* threads.c - one CPU-time timer per thread, so every thread is sampled in
 * proportion to its own CPU time (vProf §7's sampling bias), and the
 * interposed pthread_create that gives new threads theirs.
 *
 * The timer is a software task-clock perf event of the thread (the
 * thread's CPU time, kept by a high-resolution timer: VPROF_HZ is
 * delivered as asked, 10 kHz included) that signals SIGPROF to that thread
 * on each overflow (O_ASYNC, F_SETSIG, F_SETOWN_EX with F_OWNER_TID).
 * Where perf events are not allowed (perf_event_paranoid,
 * seccomp, containers) or VPROF_TIMER=posix, it is a POSIX timer on
 * CLOCK_THREAD_CPUTIME_ID delivering SIGPROF to that thread
 * (SIGEV_THREAD_ID), which the kernel only checks at its own tick (~250
 * Hz). Either way the thread creates its own. pthread_create is
 * interposed so a new thread creates its timer before running its start
 * routine; a thread-specific-data destructor deletes it at thread exit.
 * POSIX timers are not inherited by fork (runtime.c's fork handler calls
 * vprof_thread_forget, then vprof_thread_start) nor kept across exec.
 * vprof's own threads are created without any of this
 * (vprof_internal_thread_create). */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
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
/* The thread's perf-event descriptor + 1 (0: none), so that the zeroed TLS
 * of a new thread means "none". */
static __thread int my_perf __attribute__((tls_model("initial-exec")));
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

/* A task-clock event of the calling thread, period ns, disabled; -1 with
 * errno when the kernel refuses. User time only: what the kernel allows
 * unprivileged processes (perf_event_paranoid 2), and an overflow can then
 * only happen while the thread runs its own code, so a SIGPROF can never
 * be pending across execve, where the new image's default disposition
 * would kill it (system time is not sampled; gprof's ITIMER_PROF samples
 * it, at the user PC it returns to). */
static int perf_open(uint64_t ns)
{
    struct perf_event_attr pa;
    memset(&pa, 0, sizeof pa);
    pa.size = sizeof pa;
    pa.type = PERF_TYPE_SOFTWARE;
    pa.config = PERF_COUNT_SW_TASK_CLOCK;
    pa.sample_period = ns;
    pa.disabled = 1;
    pa.wakeup_events = 1;
    pa.exclude_hv = 1;
    pa.exclude_kernel = 1;
    long fd = syscall(SYS_perf_event_open, &pa, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    return fd >= 0 ? (int)fd : -1;
}

/* Signals SIGPROF to this very thread on every overflow (POLL_IN), then
 * enables it. No ring buffer and no per-tick system call: re-arming with
 * PERF_EVENT_IOC_REFRESH each period cost about 50 µs a tick here. */
static int perf_arm(int fd)
{
    struct f_owner_ex owner = {F_OWNER_TID, (pid_t)syscall(SYS_gettid)};
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_ASYNC) < 0 || fcntl(fd, F_SETSIG, SIGPROF) < 0 ||
        fcntl(fd, F_SETOWN_EX, &owner) < 0 || ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) < 0)
        return -1;
    return 0;
}

static uint64_t period_ns(void)
{
    return 1000000000ull / (vprof_sh.hz ? vprof_sh.hz : 1);
}

void vprof_timer_choose(void)
{
    vprof_sh.timer_kind = VPROF_TIMER_POSIX;
    if (vprof_cfg.timer == VPROF_TIMER_POSIX)
        return;
    int fd = perf_open(period_ns());
    if (fd >= 0) {
        close(fd);
        vprof_sh.timer_kind = VPROF_TIMER_PERF;
    } else if (vprof_cfg.timer == VPROF_TIMER_PERF) {
        vprof_warn("VPROF_TIMER=perf: perf_event_open: %s; using POSIX CPU-time timers",
                   strerror(errno));
    }
}

const char *vprof_timer_name(void)
{
    return vprof_sh.timer_kind == VPROF_TIMER_PERF ? "perf" : "posix";
}

int vprof_thread_perf_fd(void)
{
    return my_perf - 1;
}

void vprof_thread_forget(void)
{
    /* the parent's timer did not come along; its perf descriptor did, and
     * measures the parent's thread: not ours to keep */
    if (my_perf)
        close(my_perf - 1);
    my_perf = 0;
    have_timer = 0;
}

/* The thread's perf-event tick; -1 when the kernel refuses it. */
static int start_perf(void)
{
    int fd = perf_open(period_ns());
    if (fd < 0)
        return -1;
    my_perf = fd + 1;
    if (perf_arm(fd) < 0) {
        my_perf = 0;
        close(fd);
        return -1;
    }
    return 0;
}

int vprof_thread_start(void)
{
    if (have_timer)
        return 0;
    vprof_core_thread_init();
    if (key_ok)
        pthread_setspecific(exit_key, (void *)1);
    if (vprof_sh.timer_kind == VPROF_TIMER_PERF) {
        if (start_perf() == 0) {
            have_timer = 1;
            return 0;
        }
        vprof_warn("perf_event_open: %s (this thread gets a POSIX CPU-time timer)",
                   strerror(errno));
    }
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
    uint64_t ns = period_ns();
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
        if (my_perf) {
            /* no overflow after the disable returns (user time only: none
             * while in the kernel), so no tick can find my_perf gone */
            int fd = my_perf - 1;
            ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
            my_perf = 0;
            close(fd);
        } else {
            timer_delete(my_timer);
        }
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
