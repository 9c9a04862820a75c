/* memread.h - guarded reads of the profiled process's own memory, for use
 * inside the SIGPROF handler. A read whose address came from metadata or
 * from the program never faults: it either succeeds or returns -1. */
#ifndef VPROF_MEMREAD_H
#define VPROF_MEMREAD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

/* Ranges that are known to stay mapped and readable for the life of the
 * process (the executable's own PT_LOAD segments); reads inside one are
 * direct loads. Call once at start-up, before any tick. */
void vprof_memread_add_safe(uint64_t lo, uint64_t hi);
/* Whether [addr, addr + n) lies inside one of those ranges. */
int vprof_memread_safe(uint64_t addr, size_t n);
/* Forgets the ranges and (re)learns the pid: call first. */
void vprof_memread_clear_safe(void);

/* Per-thread stack window [lo, hi) (from pthread_getattr_np, outside the
 * handler); reads between the interrupted rsp and hi are direct. */
void vprof_memread_set_stack(uint64_t lo, uint64_t hi);

/* The calling thread's stack window (0, 0 when unknown). */
extern __thread uint64_t vprof_stack_lo __attribute__((tls_model("initial-exec")));
extern __thread uint64_t vprof_stack_hi __attribute__((tls_model("initial-exec")));

/* Below the interrupted stack pointer, the red zone may hold live data. */
#define VPROF_RED_ZONE 128

/* Whether [addr, addr + n) lies on the calling thread's stack between the
 * interrupted stack pointer rsp (minus the red zone) and the stack top:
 * memory that is mapped and stays so while the thread is stopped in its
 * handler. */
static inline int vprof_memread_on_stack(uint64_t rsp, uint64_t addr, size_t n)
{
    uint64_t hi = vprof_stack_hi;
    return hi && rsp >= vprof_stack_lo && rsp < hi && addr >= rsp - VPROF_RED_ZONE &&
           addr <= hi && n <= hi - addr;
}

/* The calling thread's stack above its interrupted stack pointer rsp, the
 * red zone included: [*lo, *hi], where a tick's loads are direct (see
 * vprof_memread_on_stack). 0, and nothing set, when rsp is not on the
 * thread's known stack. */
static inline int vprof_stack_window(uint64_t rsp, uint64_t *lo, uint64_t *hi)
{
    uint64_t top = vprof_stack_hi;
    if (!top || rsp < vprof_stack_lo || rsp < VPROF_RED_ZONE || rsp > top - 8)
        return 0;
    *lo = rsp - VPROF_RED_ZONE;
    *hi = top;
    return 1;
}

/* Always use the pipe fallback (VPROF_READ=pipe: tests and systems whose
 * seccomp filter kills rather than denies process_vm_readv). */
void vprof_memread_force_pipe(int on);

/* Must be called again in a fork child (process_vm_readv takes a pid). */
void vprof_memread_reset_pid(void);

/* Context for one tick: the interrupted thread's stack pointer, and the
 * tick's budget for reads that need a system call: at most slow_max of
 * them (0 = no limit), and none once CLOCK_MONOTONIC has passed deadline
 * (0 = none; looked at after each such read, which costs far more than
 * the look). A read past the budget is refused without a system call and
 * sets `cut`; it is not a fault. */
struct vprof_memread_ctx {
    uint64_t rsp;
    uint64_t faults;            /* reads that would have faulted */
    uint32_t slow, slow_max;    /* system-call reads made / allowed */
    uint64_t deadline, clock;   /* end of the budget; last look at the clock */
    int cut;                    /* budget spent */
};

/* vprof_mem_read_fn-compatible reader over the current process. */
int vprof_memread(void *ctx, uint64_t addr, void *dst, size_t n);

/* Whether a read of n bytes at addr needs a system call (see
 * vprof_memread; the stack window aside, which its caller knows better):
 * not in the executable's segments, not near NULL. */
int vprof_memread_needs_call(uint64_t addr, size_t n);

/* A guarded read that needs a system call, within the tick's budget: 0
 * when it may be made (counted in c->slow), -1 when the budget is spent
 * (c->cut set; refused, not a fault). */
static inline int vprof_memread_take(struct vprof_memread_ctx *c)
{
    if (c->cut || (c->slow_max && c->slow >= c->slow_max)) {
        c->cut = 1;
        return -1;
    }
    c->slow++;
    return 0;
}

/* n reads taken (vprof_memread_take) made together: remote[i] (address,
 * length) into local[i]; ok[i] = 1 when it was read, 0 when it would have
 * faulted (counted in c->faults). One process_vm_readv for them all, and
 * one more after each read that fails (the call stops there); where that
 * call is denied, one read at a time through the pipe. Looks at the clock
 * after each call (c->deadline). */
void vprof_memread_many(struct vprof_memread_ctx *c, const struct iovec *local,
                        const struct iovec *remote, unsigned n, uint8_t *ok);

/* Closes this thread's fallback pipe, if it made one (thread exit). */
void vprof_memread_thread_exit(void);

#endif
