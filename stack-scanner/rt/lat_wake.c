/* lat_wake.c - who woke whom, found in the process (FORMATS.md §5.1).
 *
 * The kernel knows which thread woke which (wPerf reads it from
 * try_to_wake_up); a user-space runtime does not. So every waker leaves a
 * note - its tid, the time and its call site - in a small table keyed by
 * the object it releases (a mutex with waiters, a condition with waiters,
 * a semaphore, a pipe, an annotated address), and a thread that returns
 * from a wait on that object reads the note: a note left during the wait
 * names the waker. The table has one slot per hash of the object; each slot
 * is a sequence lock, so a reader never takes a torn note for a real one,
 * and a writer that finds the slot busy drops its note (the wait then has
 * no known waker - a wake event is lost, never invented).
 *
 * Also the annotation API of vprof.h for waits the OS does not see (spin
 * loops, busy waiting, paper 003 §4.1): vprof_wait_begin/end, vprof_wake. */
#include <sys/syscall.h>
#include <unistd.h>

#include "lat_wake.h"
#include "vprof_latency.h"

#define VL_NOTES 4096               /* power of two */

struct vl_note {
    uint64_t seq;                   /* odd while written */
    uint64_t obj, t, site;
    uint64_t tid;
};
static struct vl_note notes[VL_NOTES];

static inline struct vl_note *note_of(uint64_t obj)
{
    return &notes[(obj * 0x9e3779b97f4a7c15ull) >> 52 & (VL_NOTES - 1)];
}

uint32_t vl_self_tid(void)
{
    struct vl_slot *s = vl_self();
    return s ? (uint32_t)s->tid : (uint32_t)syscall(SYS_gettid);
}

void vl_wake_note(uint64_t obj, uint64_t t, uint64_t site)
{
    struct vl_note *n = note_of(obj);
    uint64_t q = __atomic_load_n(&n->seq, __ATOMIC_RELAXED);
    if ((q & 1) || !__atomic_compare_exchange_n(&n->seq, &q, q + 1, 0, __ATOMIC_ACQUIRE,
                                                __ATOMIC_RELAXED))
        return;                     /* another waker is writing this slot */
    __atomic_store_n(&n->obj, obj, __ATOMIC_RELAXED);
    __atomic_store_n(&n->t, t, __ATOMIC_RELAXED);
    __atomic_store_n(&n->site, site, __ATOMIC_RELAXED);
    __atomic_store_n(&n->tid, vl_self_tid(), __ATOMIC_RELAXED);
    __atomic_store_n(&n->seq, q + 2, __ATOMIC_RELEASE);
}

int vl_wake_event(uint64_t obj, uint64_t t0, uint64_t t1, uint32_t cls)
{
    struct vl_note *n = note_of(obj);
    for (int tries = 0; tries < 4; tries++) {
        uint64_t q = __atomic_load_n(&n->seq, __ATOMIC_ACQUIRE);
        if (q & 1)
            continue;
        uint64_t o = __atomic_load_n(&n->obj, __ATOMIC_RELAXED);
        uint64_t t = __atomic_load_n(&n->t, __ATOMIC_RELAXED);
        uint64_t site = __atomic_load_n(&n->site, __ATOMIC_RELAXED);
        uint64_t tid = __atomic_load_n(&n->tid, __ATOMIC_RELAXED);
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        if (__atomic_load_n(&n->seq, __ATOMIC_RELAXED) != q)
            continue;
        if (o != obj || t < t0 || t > t1)
            return 0;               /* no note from this wait */
        vl_emit(VPF_LAT_WAKE, t, t1 - t, obj, site, (uint32_t)tid, cls);
        return 1;
    }
    return 0;
}

/* ---- annotations (vprof_latency.h) ---- */

#define VL_ANNOT 8                  /* nested annotated waits per thread */
struct annot { uint64_t obj, t0, site; };
static __thread struct annot annots[VL_ANNOT] __attribute__((tls_model("initial-exec")));
static __thread int n_annots __attribute__((tls_model("initial-exec")));

static inline int annot_on(void)
{
    return __builtin_expect(__atomic_load_n(&vl_recording, __ATOMIC_RELAXED), 0) &&
           !__vprof_lat_tls.internal;
}

void vprof_wait_begin(const void *obj)
{
    if (!annot_on())
        return;
    if (n_annots < VL_ANNOT)
        annots[n_annots++] = (struct annot){ (uint64_t)obj, vl_now(),
                                             (uint64_t)__builtin_return_address(0) - 1 };
}

void vprof_wait_end(const void *obj)
{
    if (!annot_on())
        return;
    for (int i = n_annots - 1; i >= 0; i--) {
        if (annots[i].obj != (uint64_t)obj)
            continue;
        struct annot a = annots[i];
        annots[i] = annots[--n_annots];
        uint64_t t1 = vl_now();
        if (t1 - a.t0 >= vl_cfg.wait_ns) {
            vl_emit(VPF_LAT_ANNOT_WAIT, a.t0, t1 - a.t0, a.obj, a.site, 0, 0);
            vl_wake_event(a.obj, a.t0, t1, VPF_WAKE_ANNOT);
        }
        return;
    }
}

void vprof_wake(const void *obj)
{
    if (!annot_on())
        return;
    vl_wake_note((uint64_t)obj, vl_now(), (uint64_t)__builtin_return_address(0) - 1);
}
