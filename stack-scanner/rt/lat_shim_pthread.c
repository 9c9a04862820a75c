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
 * Only events at or above VPROF_WAIT_NS are recorded.
 *
 * Who woke whom (FORMATS.md §5.1, lat_wake.c): an unlock of a mutex with
 * waiters and a signal/broadcast of a condition with waiters leave a waker
 * note before the real call; a lock or condition wait that blocked writes a
 * wake event when it finds one. pthread_join: join wait, woken by the
 * joined thread (its tid from the registry). A new thread started through
 * libvprof's pthread_create writes a thread start event (creator, start
 * routine, call site). */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>

#include "hooks.h"
#include "lat_rt.h"
#include "lat_wake.h"

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
static int (*real_cond_signal)(pthread_cond_t *);
static int (*real_cond_broadcast)(pthread_cond_t *);
static int (*real_join)(pthread_t, void **);

/* The versioned lookup avoids glibc's pre-2.3.2 condition variables. */
static void *cond_sym(const char *name)
{
    void *p = dlvsym(RTLD_NEXT, name, "GLIBC_2.3.2");
    return p ? p : dlsym(RTLD_NEXT, name);
}

void vl_pthread_bind(void)
{
    real_cond_wait = cond_sym("pthread_cond_wait");
    real_cond_timedwait = cond_sym("pthread_cond_timedwait");
    real_cond_signal = cond_sym("pthread_cond_signal");
    real_cond_broadcast = cond_sym("pthread_cond_broadcast");
    real_join = dlsym(RTLD_NEXT, "pthread_join");
    real_trylock = dlsym(RTLD_NEXT, "pthread_mutex_trylock");
    real_unlock = dlsym(RTLD_NEXT, "pthread_mutex_unlock");
    __atomic_store_n(&real_lock, dlsym(RTLD_NEXT, "pthread_mutex_lock"), __ATOMIC_RELEASE);
}

__attribute__((constructor(101))) static void shim_ctor(void)
{
    vl_pthread_bind();
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
            if (t1 - t0 >= vl_cfg.wait_ns) {
                vl_emit(VPF_LAT_MUTEX_WAIT, t0, t1 - t0, (uint64_t)m, site, owner, 0);
                vl_wake_event((uint64_t)m, t0, t1, VPF_WAKE_MUTEX);
            }
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
    VL_ENSURE(real_lock, vl_pthread_bind);
    if (!vl_observing())
        return real_lock(m);
    return lock_observed(m, (uint64_t)__builtin_return_address(0) - 1);
}

int pthread_mutex_trylock(pthread_mutex_t *m)
{
    VL_ENSURE(real_trylock, vl_pthread_bind);
    int rc = real_trylock(m);
    if ((rc == 0 || rc == EOWNERDEAD) && vl_observing())
        hold_begin(m, vl_now(), (uint64_t)__builtin_return_address(0) - 1);
    return rc;
}

/* glibc's lock word says whether a thread sleeps on the mutex: 2 for the
 * normal, recursive, error-checking and adaptive kinds (lll_lock), the
 * FUTEX_WAITERS bit for robust and priority-inheritance ones. Priority-
 * protected mutexes (rare) are assumed contended. */
static inline int has_waiters(const pthread_mutex_t *m)
{
    int kind = __atomic_load_n(&m->__data.__kind, __ATOMIC_RELAXED);
    unsigned lw = (unsigned)__atomic_load_n(&m->__data.__lock, __ATOMIC_RELAXED);
    if (kind & 0x40)                    /* PTHREAD_MUTEX_PRIO_PROTECT_NP */
        return 1;
    if (kind & 0x30)                    /* robust or priority inheritance */
        return (lw & 0x80000000u) != 0;
    return lw > 1;
}

__attribute__((noinline)) static int unlock_observed(pthread_mutex_t *m, uint64_t usite)
{
    uint64_t site = 0, t0 = hold_end(m, &site);
    uint64_t t1 = vl_now();          /* the hold ends here, not after the wake-up */
    if (has_waiters(m))
        vl_wake_note((uint64_t)m, t1, usite);
    int rc = real_unlock(m);
    hold_report(m, t0, t1, site);
    return rc;
}

int pthread_mutex_unlock(pthread_mutex_t *m)
{
    VL_ENSURE(real_unlock, vl_pthread_bind);
    if (!vl_observing() || (!n_holds && !has_waiters(m)))
        return real_unlock(m);
    return unlock_observed(m, (uint64_t)__builtin_return_address(0) - 1);
}

__attribute__((noinline)) static int cond_observed(pthread_cond_t *c, pthread_mutex_t *m,
                                                   const struct timespec *abstime, uint64_t site)
{
    uint64_t hsite = 0, h0 = hold_end(m, &hsite);
    uint64_t t0 = vl_now();
    hold_report(m, h0, t0, hsite);
    int rc = abstime ? real_cond_timedwait(c, m, abstime) : real_cond_wait(c, m);
    uint64_t t1 = vl_now();
    if (t1 - t0 >= vl_cfg.wait_ns) {
        vl_emit(VPF_LAT_COND_WAIT, t0, t1 - t0, (uint64_t)c, site, 0, 0);
        if (rc != ETIMEDOUT)
            vl_wake_event((uint64_t)c, t0, t1, VPF_WAKE_COND);
    }
    hold_begin(m, t1, h0 ? hsite : site);
    return rc;
}

int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
    VL_ENSURE(real_cond_wait, vl_pthread_bind);
    if (!vl_observing())
        return real_cond_wait(c, m);
    return cond_observed(c, m, NULL, (uint64_t)__builtin_return_address(0) - 1);
}

int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m,
                           const struct timespec *abstime)
{
    VL_ENSURE(real_cond_timedwait, vl_pthread_bind);
    if (!vl_observing())
        return real_cond_timedwait(c, m, abstime);
    return cond_observed(c, m, abstime, (uint64_t)__builtin_return_address(0) - 1);
}

/* glibc (2.25+) counts a condition's waiters in __wrefs >> 3, and its own
 * signal and broadcast return at once when there are none. */
static inline int cond_has_waiters(const pthread_cond_t *c)
{
    return (__atomic_load_n(&c->__data.__wrefs, __ATOMIC_RELAXED) >> 3) != 0;
}

int pthread_cond_signal(pthread_cond_t *c)
{
    VL_ENSURE(real_cond_signal, vl_pthread_bind);
    if (vl_observing() && cond_has_waiters(c))
        vl_wake_note((uint64_t)c, vl_now(), (uint64_t)__builtin_return_address(0) - 1);
    return real_cond_signal(c);
}

int pthread_cond_broadcast(pthread_cond_t *c)
{
    VL_ENSURE(real_cond_broadcast, vl_pthread_bind);
    if (vl_observing() && cond_has_waiters(c))
        vl_wake_note((uint64_t)c, vl_now(), (uint64_t)__builtin_return_address(0) - 1);
    return real_cond_broadcast(c);
}

/* Threads started through libvprof's pthread_create, by pthread_t: their
 * tid and, once they have left, when (a thread-specific-data destructor),
 * so that a join names its waker even after the thread's registry slot was
 * recycled. Direct-mapped: a collision forgets the older thread. */
#define VL_SEEN 1024
struct seen { pthread_t th; uint64_t exit_ns; uint32_t tid; };
static struct seen seen[VL_SEEN];
static pthread_key_t exit_key;
static pthread_once_t exit_once = PTHREAD_ONCE_INIT;
static int exit_key_ok;

static inline struct seen *seen_of(pthread_t t)
{
    return &seen[((uint64_t)t * 0x9e3779b97f4a7c15ull) >> 54 & (VL_SEEN - 1)];
}

static void thread_left(void *arg)
{
    (void)arg;
    struct seen *e = seen_of(pthread_self());
    if (pthread_equal(e->th, pthread_self()))
        __atomic_store_n(&e->exit_ns, vl_now(), __ATOMIC_RELEASE);
}

static void make_exit_key(void)
{
    exit_key_ok = pthread_key_create(&exit_key, thread_left) == 0;
}

/* The tid of thread t and its exit time (0 if not yet known); 0 if the
 * thread was not seen starting. Falls back on the registry for the tid. */
static uint32_t tid_of(pthread_t t, uint64_t *exit_ns)
{
    struct seen *e = seen_of(t);
    *exit_ns = 0;
    if (pthread_equal(e->th, t)) {
        *exit_ns = __atomic_load_n(&e->exit_ns, __ATOMIC_ACQUIRE);
        return __atomic_load_n(&e->tid, __ATOMIC_RELAXED);
    }
    int hw = __atomic_load_n(&vl_slots_hw, __ATOMIC_ACQUIRE);
    for (int i = 0; i < hw; i++) {
        struct vl_slot *s = &vl_slots[i];
        int st = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);
        if ((st == VL_LIVE || st == VL_DEAD) && pthread_equal(s->thread, t))
            return (uint32_t)__atomic_load_n(&s->tid, __ATOMIC_RELAXED);
    }
    return 0;
}

__attribute__((noinline)) static int join_observed(pthread_t t, void **ret, uint64_t site)
{
    uint64_t death;
    uint32_t tid = tid_of(t, &death);
    uint64_t t0 = vl_now();
    int rc = real_join(t, ret);
    uint64_t t1 = vl_now();
    if (rc == 0 && t1 - t0 >= vl_cfg.wait_ns) {
        if (!tid || !death)
            tid = tid_of(t, &death);
        vl_emit(VPF_LAT_JOIN_WAIT, t0, t1 - t0, (uint64_t)t, site, tid, 0);
        if (tid) {
            if (death < t0 || death > t1)
                death = t1;                 /* exit time not known: the join's end */
            vl_emit(VPF_LAT_WAKE, death, t1 - death, (uint64_t)t, 0, tid, VPF_WAKE_JOIN);
        }
    }
    return rc;
}

int pthread_join(pthread_t t, void **ret)
{
    VL_ENSURE(real_join, vl_pthread_bind);
    if (!vl_observing())
        return real_join(t, ret);
    return join_observed(t, ret, (uint64_t)__builtin_return_address(0) - 1);
}

/* libvprof's pthread_create wrapper calls this first thing in the new
 * thread (hooks.h). */
void vprof_latency_thread_start(uint32_t creator, uint64_t t0, void *fn, void *site)
{
    if (!vl_observing())
        return;
    pthread_once(&exit_once, make_exit_key);
    if (exit_key_ok) {
        struct seen *e = seen_of(pthread_self());
        __atomic_store_n(&e->exit_ns, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&e->tid, (uint32_t)vl_self_tid(), __ATOMIC_RELAXED);
        __atomic_store_n(&e->th, pthread_self(), __ATOMIC_RELEASE);
        pthread_setspecific(exit_key, (void *)1);
    }
    uint64_t t1 = vl_now();
    vl_emit(VPF_LAT_THREAD_START, t0, t1 > t0 ? t1 - t0 : 0, (uint64_t)fn,
            site ? (uint64_t)site - 1 : 0, creator, 0);
}
