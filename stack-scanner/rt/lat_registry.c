/* lat_registry.c - per-thread state: the TLS head of the frame chain, the
 * entry slow path, and the registry of threads the scanner walks.
 *
 * A thread registers itself lazily (its first instrumented call, shim or
 * request event while VPROF_LATENCY=on): it claims a slot with a CAS, so
 * registration is async-signal-safe and needs no pthread_create hook. It
 * leaves through a pthread key destructor, which marks the slot DEAD and
 * waits until the scanner is not reading its stack (a Dekker handshake on
 * slot.state / slot.busy), so the stack is never freed under the scanner. */
#include <errno.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "lat_rt.h"

__thread struct vl_tls __vprof_lat_tls
    __attribute__((tls_model("initial-exec"), aligned(64)));

struct vl_slot vl_slots[VL_MAX_THREADS];
int vl_slots_hw;
uint64_t vl_n_registered, vl_n_full;

static pthread_key_t exit_key;
static int key_state;               /* 0 none, 1 creating, 2 ready, 3 failed */

static void thread_exit(void *arg)
{
    (void)arg;
    struct vl_tls *t = &__vprof_lat_tls;
    t->registered_once = 2;         /* never again in this thread */
    if (!t->slot)
        return;
    struct vl_slot *s = &vl_slots[t->slot - 1];
    s->death_ns = vl_now();
    __atomic_store_n(&s->state, VL_DEAD, __ATOMIC_SEQ_CST);
    while (__atomic_load_n(&s->busy, __ATOMIC_SEQ_CST))
        __builtin_ia32_pause();
    t->slot = 0;
}

/* The thread-exit key, created once (state 0 none, 1 being created, 2
 * made, 3 failed). Never waits for another thread creating it: that thread
 * registers now and this one at its next event (vl_self retries). A wait
 * could never end for a signal handler's event that interrupted the
 * creating thread, in a fork child whose creator stayed in the parent, or
 * for a real-time thread spinning on the creator's CPU. */
static int ensure_key(void)
{
    int expect = 0;
    if (__atomic_compare_exchange_n(&key_state, &expect, 1, 0, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE))
        __atomic_store_n(&key_state, pthread_key_create(&exit_key, thread_exit) ? 3 : 2,
                         __ATOMIC_RELEASE);
    return __atomic_load_n(&key_state, __ATOMIC_ACQUIRE) == 2;
}

/* Empty chain with the canary seeded into the generation counter. */
static void init_chain(struct vl_tls *t)
{
    if (!t->top)
        t->top = (struct vl_frame *)VL_SENTINEL;
    if ((t->gen >> VL_CANARY_SHIFT) != VL_CANARY)
        t->gen = (VL_CANARY << VL_CANARY_SHIFT) | (t->gen & VL_GEN_MASK);
}

static struct vl_slot *do_register(struct vl_tls *t)
{
    if (!ensure_key())
        return NULL;
    for (int i = 0; i < VL_MAX_THREADS; i++) {
        struct vl_slot *s = &vl_slots[i];
        int expect = VL_FREE;
        if (!__atomic_compare_exchange_n(&s->state, &expect, VL_CLAIMING, 0,
                                         __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
            continue;
        s->tid = (int)syscall(SYS_gettid);
        s->thread = pthread_self();
        s->tls = t;
        s->death_ns = 0;
        s->reg_ns = vl_now();       /* the scanner's "known empty" time */
        int hw = __atomic_load_n(&vl_slots_hw, __ATOMIC_RELAXED);
        while (hw < i + 1 &&
               !__atomic_compare_exchange_n(&vl_slots_hw, &hw, i + 1, 0,
                                            __ATOMIC_RELEASE, __ATOMIC_RELAXED))
            ;
        t->slot = i + 1;
        pthread_setspecific(exit_key, (void *)1);
        __atomic_store_n(&s->state, VL_LIVE, __ATOMIC_RELEASE);
        __atomic_add_fetch(&vl_n_registered, 1, __ATOMIC_RELAXED);
        return s;
    }
    __atomic_add_fetch(&vl_n_full, 1, __ATOMIC_RELAXED);
    return NULL;                    /* registry full: this thread is not traced */
}

struct vl_slot *vl_self(void)
{
    struct vl_tls *t = &__vprof_lat_tls;
    if (t->slot)
        return &vl_slots[t->slot - 1];
    if (!__atomic_load_n(&vl_recording, __ATOMIC_RELAXED) || t->internal ||
        t->registered_once == 2)
        return NULL;
    init_chain(t);
    t->registered_once = 1;
    return do_register(t);
}

/* Reads n bytes that may not be mapped, without faulting (a syscall: only
 * for rare paths). */
VL_HIDDEN int vl_safe_read(void *dst, const void *src, size_t n)
{
    struct iovec l = { dst, n }, r = { (void *)src, n };
    return syscall(SYS_process_vm_readv, (long)getpid(), &l, 1L, &r, 1L, 0L) == (long)n
               ? 0 : -1;
}

/* Called (through the register-saving trampoline in lat_slow.S) when an
 * instrumented function finds top <= its own record: the thread's first
 * instrumented call (top == NULL), or a chain left pointing at frames that
 * longjmp or an exception unwound. Dead records lie at or below the new
 * record, so they are skipped; anything that does not validate drops the
 * chain to empty rather than risk a loop. */
VL_HIDDEN struct vl_frame *vl_enter_slow(struct vl_frame *rec, struct vl_frame *top)
{
    struct vl_tls *t = &__vprof_lat_tls;
    int saved = errno;
    if (!top) {
        init_chain(t);
        vl_config_load();
        if (!t->registered_once && !t->internal) {
            if (__atomic_load_n(&vl_recording, __ATOMIC_RELAXED))
                vl_self();
            else
                t->registered_once = 1;
        }
        top = (struct vl_frame *)VL_SENTINEL;
    } else {
        for (int steps = 0; (uintptr_t)top != VL_SENTINEL && (uintptr_t)top <= (uintptr_t)rec;
             steps++) {
            struct vl_frame f;
            if (steps > 100000 || ((uintptr_t)top & 7) ||
                vl_safe_read(&f, top, sizeof f) < 0 ||
                (f.word >> VL_CANARY_SHIFT) != VL_CANARY ||
                ((uintptr_t)f.prev != VL_SENTINEL && (uintptr_t)f.prev <= (uintptr_t)top)) {
                top = (struct vl_frame *)VL_SENTINEL;
                break;
            }
            top = f.prev;
        }
    }
    rec->word = t->gen;             /* the seeded canary, if it was missing */
    errno = saved;
    return top;
}

void vl_registry_atfork_child(void)
{
    struct vl_tls *t = &__vprof_lat_tls;
    /* a key another thread of the parent was creating: the child's own
     * threads create it again (at worst one key leaks) */
    int creating = 1;
    __atomic_compare_exchange_n(&key_state, &creating, 0, 0, __ATOMIC_ACQ_REL,
                                __ATOMIC_RELAXED);
    for (int i = 0; i < VL_MAX_THREADS; i++) {
        struct vl_slot *s = &vl_slots[i];
        s->busy = 0;
        s->head = s->tail = 0;      /* the parent drains its own copy */
        if (t->slot == i + 1) {
            s->tid = (int)syscall(SYS_gettid);
            s->state = VL_LIVE;
        } else {
            s->state = VL_FREE;
        }
    }
}
