/* lat_shim_sem.c - interposed POSIX semaphores, a futex-based primitive
 * whose waits and wake-ups the mutex and condition shims do not see
 * (FORMATS.md §5.1). sem_wait/sem_timedwait first try sem_trywait; only a
 * wait that blocks is timed (semaphore wait event, VPROF_WAIT_NS and more)
 * and looks for the note of the sem_post that ended it. sem_post leaves a
 * note when a thread sleeps on the semaphore. With VPROF_LATENCY off each
 * shim costs a load and a branch. */
#include <dlfcn.h>
#include <errno.h>
#include <semaphore.h>

#include "lat_rt.h"
#include "lat_wake.h"

static int (*real_wait)(sem_t *);
static int (*real_timedwait)(sem_t *, const struct timespec *);
static int (*real_trywait)(sem_t *);
static int (*real_post)(sem_t *);

void vl_sem_bind(void)
{
    real_timedwait = dlsym(RTLD_NEXT, "sem_timedwait");
    real_trywait = dlsym(RTLD_NEXT, "sem_trywait");
    real_post = dlsym(RTLD_NEXT, "sem_post");
    __atomic_store_n(&real_wait, dlsym(RTLD_NEXT, "sem_wait"), __ATOMIC_RELEASE);
}

/* glibc's 64-bit semaphore (x86-64): value in the low 32 bits of the first
 * word, the number of sleeping waiters in the high 32. */
static inline int sem_has_waiters(sem_t *s)
{
    return (__atomic_load_n((const uint64_t *)s, __ATOMIC_RELAXED) >> 32) != 0;
}

__attribute__((noinline)) static int wait_observed(sem_t *s, const struct timespec *abst,
                                                   uint64_t site)
{
    int e = errno;
    if (real_trywait(s) == 0)
        return 0;
    errno = e;
    uint64_t t0 = vl_now();
    int rc = abst ? real_timedwait(s, abst) : real_wait(s);
    uint64_t t1 = vl_now();
    if (t1 - t0 >= vl_cfg.wait_ns) {
        e = errno;
        vl_emit(VPF_LAT_SEM_WAIT, t0, t1 - t0, (uint64_t)s, site, 0, 0);
        if (rc == 0)
            vl_wake_event((uint64_t)s, t0, t1, VPF_WAKE_SEM);
        errno = e;
    }
    return rc;
}

int sem_wait(sem_t *s)
{
    VL_ENSURE(real_wait, vl_sem_bind);
    if (!vl_observing())
        return real_wait(s);
    return wait_observed(s, NULL, (uint64_t)__builtin_return_address(0) - 1);
}

int sem_timedwait(sem_t *s, const struct timespec *abst)
{
    VL_ENSURE(real_wait, vl_sem_bind);
    if (!vl_observing())
        return real_timedwait(s, abst);
    return wait_observed(s, abst, (uint64_t)__builtin_return_address(0) - 1);
}

int sem_post(sem_t *s)
{
    VL_ENSURE(real_wait, vl_sem_bind);
    if (vl_observing() && sem_has_waiters(s))
        vl_wake_note((uint64_t)s, vl_now(), (uint64_t)__builtin_return_address(0) - 1);
    return real_post(s);
}
