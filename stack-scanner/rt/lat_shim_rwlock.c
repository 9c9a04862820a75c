/* lat_shim_rwlock.c - interposed reader-writer locks and barriers, the
 * futex-based primitives of glibc that the mutex, condition and semaphore
 * shims do not see (FORMATS.md §5.1, kinds 15 and 16; paper 003 §4.1 needs
 * every wait with its waker). With VPROF_LATENCY off each shim costs a load
 * and a branch.
 *
 * rwlock wait: a rdlock/wrlock (or the timed variants) whose try fails is
 *   timed; other_tid is the writer glibc records as holding the lock
 *   (__cur_writer, 0 while readers hold it), read just before blocking;
 *   generation 1 for a read lock, 2 for a write lock.
 * rwlock wake: pthread_rwlock_unlock leaves a waker note when a thread may
 *   sleep on the lock - glibc 2.25+ sets PTHREAD_RWLOCK_FUTEX_USED (2) in
 *   __wrphase_futex or __writers_futex before it sleeps there, and
 *   PTHREAD_RWLOCK_RWAITING (4) in __readers when readers sleep on
 *   __readers. A note missed because the layout differs only loses a wake
 *   event; it never invents one.
 * barrier wait: pthread_barrier_wait is timed; every arriving thread leaves
 *   a note first, so the note a waiter finds when it returns is the last
 *   arrival's: the thread that completed the round and released it. */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>

#include "lat_rt.h"
#include "lat_wake.h"

static int (*real_rdlock)(pthread_rwlock_t *);
static int (*real_wrlock)(pthread_rwlock_t *);
static int (*real_tryrdlock)(pthread_rwlock_t *);
static int (*real_trywrlock)(pthread_rwlock_t *);
static int (*real_timedrdlock)(pthread_rwlock_t *, const struct timespec *);
static int (*real_timedwrlock)(pthread_rwlock_t *, const struct timespec *);
static int (*real_rwunlock)(pthread_rwlock_t *);
static int (*real_barrier_wait)(pthread_barrier_t *);

void vl_rwlock_bind(void)
{
    real_wrlock = dlsym(RTLD_NEXT, "pthread_rwlock_wrlock");
    real_tryrdlock = dlsym(RTLD_NEXT, "pthread_rwlock_tryrdlock");
    real_trywrlock = dlsym(RTLD_NEXT, "pthread_rwlock_trywrlock");
    real_timedrdlock = dlsym(RTLD_NEXT, "pthread_rwlock_timedrdlock");
    real_timedwrlock = dlsym(RTLD_NEXT, "pthread_rwlock_timedwrlock");
    real_rwunlock = dlsym(RTLD_NEXT, "pthread_rwlock_unlock");
    real_barrier_wait = dlsym(RTLD_NEXT, "pthread_barrier_wait");
    __atomic_store_n(&real_rdlock, dlsym(RTLD_NEXT, "pthread_rwlock_rdlock"), __ATOMIC_RELEASE);
}

__attribute__((constructor(101))) static void shim_ctor(void)
{
    vl_rwlock_bind();
}

/* glibc's bits (nptl/pthread_rwlock_common.c, sysdeps/nptl/pthreadP.h). */
enum { RW_RWAITING = 4, RW_FUTEX_USED = 2 };

static inline int rw_has_waiters(pthread_rwlock_t *l)
{
    unsigned r = __atomic_load_n(&l->__data.__readers, __ATOMIC_RELAXED);
    unsigned wp = __atomic_load_n(&l->__data.__wrphase_futex, __ATOMIC_RELAXED);
    unsigned wf = __atomic_load_n(&l->__data.__writers_futex, __ATOMIC_RELAXED);
    return (r & RW_RWAITING) || ((wp | wf) & RW_FUTEX_USED);
}

/* The observed path (separate, so that the latency-off path stays a check
 * and a tail call). write: 1 for a write lock. */
__attribute__((noinline)) static int rw_observed(pthread_rwlock_t *l, int write,
                                                 const struct timespec *abst, uint64_t site)
{
    int rc = write ? real_trywrlock(l) : real_tryrdlock(l);
    if (rc != EBUSY) {
        if (rc == 0) return 0;
        /* EDEADLK, EAGAIN (reader overflow)...: the real lock decides */
        return write ? (abst ? real_timedwrlock(l, abst) : real_wrlock(l))
                     : (abst ? real_timedrdlock(l, abst) : real_rdlock(l));
    }
    uint32_t writer = (uint32_t)__atomic_load_n(&l->__data.__cur_writer, __ATOMIC_RELAXED);
    uint64_t t0 = vl_now();
    rc = write ? (abst ? real_timedwrlock(l, abst) : real_wrlock(l))
               : (abst ? real_timedrdlock(l, abst) : real_rdlock(l));
    uint64_t t1 = vl_now();
    if (t1 - t0 >= vl_cfg.wait_ns) {
        int e = errno;
        vl_emit(VPF_LAT_RWLOCK_WAIT, t0, t1 - t0, (uint64_t)l, site, writer, write ? 2 : 1);
        if (rc == 0)
            vl_wake_event((uint64_t)l, t0, t1, VPF_WAKE_RWLOCK);
        errno = e;
    }
    return rc;
}

#define SITE ((uint64_t)__builtin_return_address(0) - 1)

int pthread_rwlock_rdlock(pthread_rwlock_t *l)
{
    VL_ENSURE(real_rdlock, vl_rwlock_bind);
    return vl_observing() ? rw_observed(l, 0, NULL, SITE) : real_rdlock(l);
}

int pthread_rwlock_wrlock(pthread_rwlock_t *l)
{
    VL_ENSURE(real_rdlock, vl_rwlock_bind);
    return vl_observing() ? rw_observed(l, 1, NULL, SITE) : real_wrlock(l);
}

int pthread_rwlock_timedrdlock(pthread_rwlock_t *l, const struct timespec *abst)
{
    VL_ENSURE(real_rdlock, vl_rwlock_bind);
    return vl_observing() ? rw_observed(l, 0, abst, SITE) : real_timedrdlock(l, abst);
}

int pthread_rwlock_timedwrlock(pthread_rwlock_t *l, const struct timespec *abst)
{
    VL_ENSURE(real_rdlock, vl_rwlock_bind);
    return vl_observing() ? rw_observed(l, 1, abst, SITE) : real_timedwrlock(l, abst);
}

int pthread_rwlock_unlock(pthread_rwlock_t *l)
{
    VL_ENSURE(real_rdlock, vl_rwlock_bind);
    if (vl_observing() && rw_has_waiters(l))
        vl_wake_note((uint64_t)l, vl_now(), SITE);
    return real_rwunlock(l);
}

__attribute__((noinline)) static int barrier_observed(pthread_barrier_t *b, uint64_t site)
{
    uint64_t t0 = vl_now();
    vl_wake_note((uint64_t)b, t0, site);        /* if this arrival is the last */
    int rc = real_barrier_wait(b);
    uint64_t t1 = vl_now();
    if (t1 - t0 >= vl_cfg.wait_ns) {
        int e = errno;
        vl_emit(VPF_LAT_BARRIER_WAIT, t0, t1 - t0, (uint64_t)b, site, 0, 0);
        /* a later note than this thread's own arrival: t0 + 1 */
        vl_wake_event((uint64_t)b, t0 + 1, t1, VPF_WAKE_BARRIER);
        errno = e;
    }
    return rc;
}

int pthread_barrier_wait(pthread_barrier_t *b)
{
    VL_ENSURE(real_rdlock, vl_rwlock_bind);
    return vl_observing() ? barrier_observed(b, SITE) : real_barrier_wait(b);
}
