/* lat_emit.c - events from application threads (shims, request API): each
 * registered thread has a single-producer/single-consumer ring in its slot;
 * the scanner thread drains the rings into the file (LDB §3.1: per-thread
 * buffers and a logger, so threads never contend on the file's counter).
 * A thread that is not registered, or whose ring is full, or that is already
 * inside vl_emit (a signal handler interrupted it), writes into the file
 * directly: the file's claim is lock-free and async-signal-safe too. */
#include <unistd.h>

#include "lat_rt.h"

void vl_emit(uint8_t kind, uint64_t start_ns, uint64_t dur_ns, uint64_t func,
             uint64_t site, uint32_t other_tid, uint32_t generation)
{
    struct vl_tls *t = &__vprof_lat_tls;
    struct vl_slot *s = vl_self();
    struct vpf_latency_rec r = {
        .start_ns = start_ns, .duration_ns = dur_ns, .func = func, .site = site,
        .tid = s ? (uint32_t)s->tid : 0, .other_tid = other_tid,
        .generation = generation, .kind = kind, .flags = 0,
    };
    if (!s) {
        r.tid = (uint32_t)gettid();
        vl_file_put(&r);
        return;
    }
    if (!t->in_emit) {
        t->in_emit = 1;
        uint32_t head = s->head;
        uint32_t tail = __atomic_load_n(&s->tail, __ATOMIC_ACQUIRE);
        if (head - tail < VL_RING) {
            s->ring[head & (VL_RING - 1)] = r;
            __atomic_store_n(&s->head, head + 1, __ATOMIC_RELEASE);
            t->in_emit = 0;
            return;
        }
        t->in_emit = 0;
    }
    vl_file_put(&r);
}

void vl_drain(struct vl_slot *s)
{
    uint32_t tail = s->tail;
    uint32_t head = __atomic_load_n(&s->head, __ATOMIC_ACQUIRE);
    while (tail != head) {
        vl_file_put(&s->ring[tail & (VL_RING - 1)]);
        tail++;
    }
    __atomic_store_n(&s->tail, tail, __ATOMIC_RELEASE);
}
