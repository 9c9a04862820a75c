/* stacks.c - see stacks.h. How a tick's chain is walked, cheaply:
 *
 * - Inside the executable's text, by frame pointers: code built with -pg
 *   keeps %rbp as the frame pointer (gcc and clang both force it), so
 *   [rbp] is the caller's rbp and [rbp + 8] the return address - two
 *   guarded loads per frame, direct on the thread's own stack. A tick on
 *   the first instruction of a function (or of a PLT stub, or on its `ret`)
 *   has no frame of its own yet (or any more): its return address is at
 *   [rsp]; one on the `mov %rsp,%rbp` after `push %rbp` finds it at
 *   [rsp + 8]. The code bytes are read to tell.
 * - Outside it (libc, the mcount trampoline, other libraries: code without
 *   frame pointers), with the core's unwinder (unwind.h, libunwind and its
 *   tables) until the first frame in the program, whose rbp - restored by
 *   the unwinder, as callee-saved - continues the frame-pointer walk.
 * - When the frame-pointer walk leaves the program for a library (return
 *   address R outside the text), the frame above cannot be trusted: libc
 *   does not keep frame pointers. Either R is the bottom of the thread -
 *   main's caller __libc_start_call_main, a thread's start_thread - and the
 *   chain is complete, or a library called back into the program (qsort's
 *   comparator) and the rest of the chain is above library frames. The
 *   unwinder tells which, once per R: a table of what it found (TERM_SLOTS
 *   return addresses) lets later ticks stop at a bottom without it, and
 *   sends the ticks through callbacks to a full unwind. A chain that ends
 *   at a known bottom is cut there by both walks, so that every tick of a
 *   thread has the same bottom frame whichever walk recorded it.
 * - Frame pointers that do not look like a chain (misaligned, not above the
 *   previous one, unreadable) also fall back to the unwinder.
 *
 * Bounded: at most `frames` PCs; the unwinder's walks at most frames +
 * TAIL_MAX steps; guarded reads that need a system call at most SLOW_MAX per
 * tick. */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "memread.h"
#include "stacks.h"
#include "unwind.h"
#include "vprof_format.h"

#define TERM_SLOTS 64
#define TERM_PROBES 8
#define TAIL_MAX 16             /* unwinder steps past `frames` to find the bottom */
#define SLOW_MAX 4

static struct {
    int open;                   /* atomic: the file is mapped */
    struct vpf_recfile_w rec;
    unsigned frames;
    uint64_t text_lo, text_hi;
} st;

/* Return addresses where the frame-pointer walk left the program, and what
 * the unwinder found above them: TERM_BOTTOM, nothing of the program's but
 * the stack's last frame (_start); TERM_CALLBACK, more of the program. */
enum { TERM_UNKNOWN = 0, TERM_BOTTOM = 1, TERM_CALLBACK = 2 };
static uint64_t term_key[TERM_SLOTS];
static uint8_t term_val[TERM_SLOTS];

static int in_text(uint64_t a)
{
    return a >= st.text_lo && a < st.text_hi;
}

static size_t term_slot(uint64_t r, unsigned probe)
{
    return (size_t)(((r * 0x9e3779b97f4a7c15ull) >> 40) + probe) % TERM_SLOTS;
}

static int term_get(uint64_t r)
{
    for (unsigned i = 0; i < TERM_PROBES; i++) {
        size_t k = term_slot(r, i);
        uint64_t key = __atomic_load_n(&term_key[k], __ATOMIC_ACQUIRE);
        if (key == r)
            return __atomic_load_n(&term_val[k], __ATOMIC_ACQUIRE);
        if (!key)
            return TERM_UNKNOWN;
    }
    return TERM_UNKNOWN;
}

/* Lock-free: a slot is claimed by compare-and-swap on its key; its value
 * is published after (a reader that sees the key before it reads UNKNOWN
 * and simply unwinds). A full table learns nothing more. */
static void term_put(uint64_t r, int v)
{
    for (unsigned i = 0; i < TERM_PROBES; i++) {
        size_t k = term_slot(r, i);
        uint64_t key = __atomic_load_n(&term_key[k], __ATOMIC_ACQUIRE);
        if (!key && __atomic_compare_exchange_n(&term_key[k], &key, r, 0, __ATOMIC_ACQ_REL,
                                                __ATOMIC_ACQUIRE))
            key = r;
        if (key == r) {
            __atomic_store_n(&term_val[k], (uint8_t)v, __ATOMIC_RELEASE);
            return;
        }
    }
}

int vprof_stacks_open(int fd, unsigned frames, uint64_t capacity, uint32_t hz,
                      uint64_t start_ns, uint64_t text_lo, uint64_t text_hi,
                      char *err, size_t errlen)
{
    vpf_err e;
    if (frames < 1 || frames > VPF_STACKS_FRAMES_MAX) {
        snprintf(err, errlen, "%u frames: not in 1..%u", frames, VPF_STACKS_FRAMES_MAX);
        close(fd);
        return -1;
    }
    if (vpf_recfile_create(fd, VPF_STACKS_MAGIC, VPF_STACKS_VERSION, VPF_STACK_REC_SIZE(frames),
                           capacity, &st.rec, &e) < 0) {
        snprintf(err, errlen, "%s", e.msg);
        close(fd);
        return -1;
    }
    close(fd);                  /* the mapping outlives it (as values.<id>) */
    st.rec.fd = -1;
    struct vpf_stacks_header *h = (struct vpf_stacks_header *)st.rec.base;
    h->start_ns = start_ns;
    h->frames = frames;
    h->hz = hz;
    st.frames = frames;
    st.text_lo = text_lo;
    st.text_hi = text_hi;
    __atomic_store_n(&st.open, 1, __ATOMIC_RELEASE);
    return 0;
}

/* ---------- the tick ---------- */

struct walk {
    uint64_t *pc;               /* the record's PCs */
    unsigned n, max;
    uint8_t flags;
    int handoff;                /* the unwinder reached a program frame: */
    uint64_t rbp;               /* its frame pointer */
    struct vprof_memread_ctx mem;
    /* a full unwind: the first library frame below the last program frame
     * (the thread's bottom, once the walk has ended), and the one below
     * the program frame before that (in case the last is _start) */
    unsigned steps, last_prog;
    int pending;                /* the frame after a program frame is next */
    uint64_t after_pc, prev_pc;
    unsigned after_at, prev_at;
};

enum { FP_END, FP_LEFT, FP_BAD };

/* Follows the chain from frame pointer fp (whose frame's return address
 * comes next). FP_LEFT: the last PC stored is a return into a library. */
static int fp_walk(struct walk *w, uint64_t fp)
{
    uint64_t floor = w->mem.rsp;
    while (w->n < w->max) {
        uint64_t fr[2];
        if ((fp & 7) || fp < floor || vprof_memread(&w->mem, fp, fr, sizeof fr) < 0)
            return FP_BAD;
        if (!fr[1])
            return FP_END;
        w->pc[w->n++] = fr[1] - 1;
        if (!in_text(fr[1]))
            return FP_LEFT;
        if (fr[0] <= fp)
            return fr[0] ? FP_BAD : FP_END;
        floor = fp + 16;
        fp = fr[0];
    }
    w->flags |= VPF_STK_TRUNCATED;
    return FP_END;
}

/* Where the return address of a function interrupted at pc lies when its
 * frame is not (yet, or any more) set up: 0 = its frame is set up, 1 =
 * [rsp] (first instruction, PLT stub, jump to the GOT, ret), 2 = [rsp + 8]
 * (after push %rbp). The executable's text is always readable (its
 * segments are the reader's safe ranges). */
static int frameless_at(struct walk *w, uint64_t pc)
{
    uint8_t c[4];
    if (vprof_memread(&w->mem, pc, c, sizeof c) < 0)
        return 0;
    if (c[0] == 0x55 || c[0] == 0xc3 || (c[0] == 0xf3 && c[1] == 0xc3) ||
        (c[0] == 0xf3 && c[1] == 0x0f && c[2] == 0x1e && c[3] == 0xfa) ||   /* endbr64 */
        (c[0] == 0xff && c[1] == 0x25) || (c[0] == 0xf2 && c[1] == 0xff && c[2] == 0x25))
        return 1;
    if (c[0] == 0x48 && c[1] == 0x89 && c[2] == 0xe5)                       /* mov %rsp,%rbp */
        return 2;
    return 0;
}

/* The unwinder's frames until the first one in the program. */
static int to_program(void *arg, unsigned depth, uint64_t pc, const struct vprof_regs *regs)
{
    (void)depth;
    struct walk *w = arg;
    w->pc[w->n++] = pc;
    if (in_text(pc) && (regs->valid & (1u << VPF_RBP))) {
        w->handoff = 1;
        w->rbp = regs->r[VPF_RBP];
        return 1;
    }
    return w->n >= w->max;
}

/* Frame `step` of a full unwind: tracks the library frame below the last
 * program frame. */
static void note(struct walk *w, unsigned step, uint64_t pc)
{
    if (in_text(pc)) {
        w->prev_pc = w->after_pc;
        w->prev_at = w->after_at;
        w->after_pc = 0;
        w->pending = 1;
        w->last_prog = step;
    } else if (w->pending) {
        w->after_pc = pc;
        w->after_at = step;
        w->pending = 0;
    }
}

/* Every frame the unwinder finds (past `max`, only noted). */
static int all_frames(void *arg, unsigned depth, uint64_t pc, const struct vprof_regs *regs)
{
    (void)depth;
    (void)regs;
    struct walk *w = arg;
    w->steps++;
    if (w->n < w->max)
        w->pc[w->n++] = pc;
    note(w, w->steps, pc);
    return 0;
}

/* The whole chain by the unwinder, cut at the thread's bottom: the library
 * frame that called the outermost program function (main, a start
 * routine; the stack's very last frame, _start, does not count), which
 * the table learns. r: the return address the frame-pointer walk left the
 * program by (0: none); when it is not the bottom, a library called back
 * into the program there. */
static void full_unwind(struct walk *w, const ucontext_t *uc, uint64_t r)
{
    w->n = 1;
    w->flags |= VPF_STK_UNWOUND;
    w->flags &= (uint8_t)~VPF_STK_TRUNCATED;
    w->steps = w->last_prog = w->after_at = w->prev_at = 0;
    w->after_pc = w->prev_pc = 0;
    w->pending = 0;
    note(w, 0, w->pc[0]);
    unsigned limit = w->max - 1 + TAIL_MAX;
    /* a walk stopped at code loaded after start-up did not reach the
     * bottom either: what lies below that frame is unknown */
    if (vprof_unwind(uc, limit, all_frames, w) == VPROF_UNWIND_UNKNOWN ||
        w->steps >= limit) {                    /* the bottom is beyond reach */
        w->flags |= VPF_STK_TRUNCATED;
        return;
    }
    uint64_t b = w->after_pc;
    unsigned at = w->after_at;
    if (w->last_prog == w->steps && w->steps) {  /* the last frame is _start */
        b = w->prev_pc;
        at = w->prev_at;
    }
    if (b) {
        if (term_get(b + 1) == TERM_UNKNOWN)
            term_put(b + 1, TERM_BOTTOM);
        if (at < w->max)
            w->n = at + 1;
    }
    if (r && r != b + 1 && term_get(r) == TERM_UNKNOWN)
        term_put(r, TERM_CALLBACK);
    if (w->n == w->max && w->steps + 1 > w->max && !(b && at < w->max))
        w->flags |= VPF_STK_TRUNCATED;
}

void vprof_stacks_tick(const ucontext_t *uc, uint64_t now_ns, unsigned weight, uint32_t tid)
{
    if (!__atomic_load_n(&st.open, __ATOMIC_ACQUIRE))
        return;
    struct vpf_stack_rec *rec = vpf_recfile_claim(&st.rec);
    if (!rec)
        return;                 /* full: counted in the header's dropped */
    const greg_t *g = uc->uc_mcontext.gregs;
    uint64_t rip = (uint64_t)g[REG_RIP], rsp = (uint64_t)g[REG_RSP], rbp = (uint64_t)g[REG_RBP];
    struct walk w;
    memset(&w, 0, sizeof w);
    w.pc = vpf_stack_pcs(rec);
    w.max = st.frames;
    w.mem.rsp = rsp;
    w.mem.slow_max = SLOW_MAX;
    w.pc[w.n++] = rip;
    int how = FP_BAD;
    if (in_text(rip)) {
        int at = frameless_at(&w, rip);
        uint64_t ret;
        if (!at) {
            how = fp_walk(&w, rbp);
        } else if (w.n < w.max && vprof_memread(&w.mem, rsp + 8 * (unsigned)(at - 1), &ret,
                                                sizeof ret) == 0 && ret) {
            w.pc[w.n++] = ret - 1;
            how = in_text(ret) ? fp_walk(&w, rbp) : FP_LEFT;
        }
    } else if (w.max > 1) {
        w.flags |= VPF_STK_UNWOUND;
        int rc = vprof_unwind(uc, w.max - 1, to_program, &w);
        how = w.handoff ? fp_walk(&w, w.rbp) : FP_END;
        if (!w.handoff && (w.n >= w.max || rc == VPROF_UNWIND_UNKNOWN))
            w.flags |= VPF_STK_TRUNCATED;
    } else {
        how = FP_END;
        w.flags |= VPF_STK_TRUNCATED;
    }
    if (how == FP_LEFT) {
        uint64_t r = w.pc[w.n - 1] + 1;
        if (term_get(r) != TERM_BOTTOM)
            full_unwind(&w, uc, r);
    } else if (how == FP_BAD) {
        full_unwind(&w, uc, 0);
    }
    rec->time_ns = now_ns;
    rec->tid = tid;
    rec->depth = (uint8_t)w.n;
    rec->weight = (uint8_t)(weight > 255 ? 255 : weight < 1 ? 1 : weight);
    rec->flags = w.flags;
    vpf_commit_flag(&rec->flags);
}

void vprof_stacks_fork_child(void)
{
    if (__atomic_load_n(&st.open, __ATOMIC_ACQUIRE)) {
        /* the parent's file stays the parent's: unmap our copy only */
        __atomic_store_n(&st.open, 0, __ATOMIC_RELEASE);
        munmap(st.rec.base, st.rec.map_len);
        memset(&st.rec, 0, sizeof st.rec);
    }
}

void vprof_stacks_close(uint64_t *records, uint64_t *dropped)
{
    *records = *dropped = 0;
    if (!__atomic_load_n(&st.open, __ATOMIC_ACQUIRE))
        return;
    const struct vpf_stacks_header *h = (const void *)st.rec.base;
    uint64_t n = __atomic_load_n(&h->n_reserved, __ATOMIC_RELAXED);
    *records = n < h->capacity ? n : h->capacity;
    *dropped = h->dropped;
    __atomic_store_n(&st.open, 0, __ATOMIC_RELEASE);
    vpf_recfile_close(&st.rec, 1);
}
