/* lat_shim_pthread.c - interposed pthread_mutex_lock/trylock/unlock and
 * pthread_cond_wait/timedwait (LDB §3.3 synchronization events). With
 * VPROF_LATENCY off each costs one load and a branch before the real call.
 *
 * mutex wait: a lock that does not succeed at once (trylock fails) is timed;
 *   the event carries the owner's tid as glibc records it in the mutex
 *   (__data.__owner, set for every mutex type) just before blocking.
 * mutex hold: acquisition time is kept on a small per-thread stack and the
 *   hold is reported at unlock, after the real unlock (outside the critical
 *   section, as LDB does).
 * cond wait: the time inside pthread_cond_(timed)wait; the mutex's hold is
 *   split there, since the wait releases it.
 * Only events at or above VPROF_WAIT_NS are recorded. */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>

#include "lat_rt.h"

#define VL_HOLDS 16

struct hold { pthread_mutex_t *m; uint64_t t0, site; };
static __thread struct hold holds[VL_HOLDS] __attribute__((tls_model("initial-exec")));
static __thread int n_holds __attribute__((tls_model("initial-exec")));

static int (*real_lock)(pthread_mutex_t *);
static int (*real_trylock)(pthread_mutex_t *);
static int (*real_unlock)(pthread_mutex_t *);
static int (*real_cond_wait)(pthread_cond_t *, pthread_mutex_t *);
static int (*real_cond_timedwait)(pthread_cond_t *, pthread_mutex_t *,
                                  const struct timespec *);

static void resolve(void)
{
    /* The versioned lookup avoids glibc's pre-2.3.2 condition variables. */
    real_cond_wait = dlvsym(RTLD_NEXT, "pthread_cond_wait", "GLIBC_2.3.2");
    if (!real_cond_wait)
        real_cond_wait = dlsym(RTLD_NEXT, "pthread_cond_wait");
    real_cond_timedwait = dlvsym(RTLD_NEXT, "pthread_cond_timedwait", "GLIBC_2.3.2");
    if (!real_cond_timedwait)
        real_cond_timedwait = dlsym(RTLD_NEXT, "pthread_cond_timedwait");
    real_trylock = dlsym(RTLD_NEXT, "pthread_mutex_trylock");
    real_unlock = dlsym(RTLD_NEXT, "pthread_mutex_unlock");
    __atomic_store_n(&real_lock, dlsym(RTLD_NEXT, "pthread_mutex_lock"), __ATOMIC_RELEASE);
}

__attribute__((constructor(101))) static void shim_ctor(void)
{
    resolve();
}

#define ENSURE(fn) do { if (__builtin_expect(!fn, 0)) resolve(); } while (0)

/* True when this call should be observed. */
static inline int observing(void)
{
    return __builtin_expect(__atomic_load_n(&vl_recording, __ATOMIC_RELAXED), 0) &&
           !__vprof_lat_tls.internal;
}

static void hold_begin(pthread_mutex_t *m, uint64_t t0, uint64_t site)
{
    if (n_holds < VL_HOLDS)
        holds[n_holds++] = (struct hold){ m, t0, site };
}

/* Removes m's newest hold entry; its start time, or 0 if untracked. */
static uint64_t hold_end(pthread_mutex_t *m, uint64_t *site)
{
    for (int i = n_holds - 1; i >= 0; i--)
        if (holds[i].m == m) {
            uint64_t t0 = holds[i].t0;
            *site = holds[i].site;
            holds[i] = holds[--n_holds];
            return t0;
        }
    return 0;
}

static void hold_report(pthread_mutex_t *m, uint64_t t0, uint64_t t1, uint64_t site)
{
    if (t0 && t1 - t0 >= vl_cfg.wait_ns)
        vl_emit(VPF_LAT_MUTEX_HOLD, t0, t1 - t0, (uint64_t)m, site, 0, 0);
}

/* The observed paths live in separate functions so that the shims' fast
 * path (latency off) stays a check and a tail call, with no register saves. */
__attribute__((noinline)) static int lock_observed(pthread_mutex_t *m, uint64_t site)
{
    int rc = real_trylock(m);
    if (rc == EBUSY) {
        uint32_t owner = (uint32_t)__atomic_load_n(&m->__data.__owner, __ATOMIC_RELAXED);
        uint64_t t0 = vl_now();
        rc = real_lock(m);
        uint64_t t1 = vl_now();
        if (rc == 0 || rc == EOWNERDEAD) {
            if (t1 - t0 >= vl_cfg.wait_ns)
                vl_emit(VPF_LAT_MUTEX_WAIT, t0, t1 - t0, (uint64_t)m, site, owner, 0);
            hold_begin(m, t1, site);
        }
        return rc;
    }
    if (rc == 0 || rc == EOWNERDEAD) {
        hold_begin(m, vl_now(), site);
        return rc;
    }
    return real_lock(m);   /* EINVAL, EAGAIN...: let the real lock decide */
}

int pthread_mutex_lock(pthread_mutex_t *m)
{
    ENSURE(real_lock);
    if (!observing())
        return real_lock(m);
    return lock_observed(m, (uint64_t)__builtin_return_address(0) - 1);
}

int pthread_mutex_trylock(pthread_mutex_t *m)
{
    ENSURE(real_trylock);
    int rc = real_trylock(m);
    if ((rc == 0 || rc == EOWNERDEAD) && observing())
        hold_begin(m, vl_now(), (uint64_t)__builtin_return_address(0) - 1);
    return rc;
}

__attribute__((noinline)) static int unlock_observed(pthread_mutex_t *m)
{
    uint64_t site = 0, t0 = hold_end(m, &site);
    uint64_t t1 = vl_now();          /* the hold ends here, not after the wake-up */
    int rc = real_unlock(m);
    hold_report(m, t0, t1, site);
    return rc;
}

int pthread_mutex_unlock(pthread_mutex_t *m)
{
    ENSURE(real_unlock);
    if (!observing() || !n_holds)
        return real_unlock(m);
    return unlock_observed(m);
}

__attribute__((noinline)) static int cond_observed(pthread_cond_t *c, pthread_mutex_t *m,
                                                   const struct timespec *abstime, uint64_t site)
{
    uint64_t hsite = 0, h0 = hold_end(m, &hsite);
    uint64_t t0 = vl_now();
    hold_report(m, h0, t0, hsite);
    int rc = abstime ? real_cond_timedwait(c, m, abstime) : real_cond_wait(c, m);
    uint64_t t1 = vl_now();
    if (t1 - t0 >= vl_cfg.wait_ns)
        vl_emit(VPF_LAT_COND_WAIT, t0, t1 - t0, (uint64_t)c, site, 0, 0);
    hold_begin(m, t1, h0 ? hsite : site);
    return rc;
}

int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
    ENSURE(real_cond_wait);
    if (!observing())
        return real_cond_wait(c, m);
    return cond_observed(c, m, NULL, (uint64_t)__builtin_return_address(0) - 1);
}

int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m,
                           const struct timespec *abstime)
{
    ENSURE(real_cond_timedwait);
    if (!observing())
        return real_cond_timedwait(c, m, abstime);
    return cond_observed(c, m, abstime, (uint64_t)__builtin_return_address(0) - 1);
}
