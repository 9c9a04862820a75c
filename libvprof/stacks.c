/* stacks.c - see stacks.h. A tick that samples values takes its chain
 * from the values walk (vprof_stacks_begin/add/end) and only completes it
 * here; the others are walked here alone, cheaply:
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
    vpf_recfile_populate(&st.rec);      /* and ahead of the records: see there */
    __atomic_store_n(&st.open, 1, __ATOMIC_RELEASE);
    return 0;
}

/* ---------- the tick ---------- */

enum { FP_END, FP_LEFT, FP_BAD };

static int in_text(const struct vprof_stack_walk *w, uint64_t a)
{
    return a >= w->text_lo && a < w->text_hi;
}

/* n bytes at addr: a plain load on the thread's stack above the interrupted
 * stack pointer (the frame pointers' pairs, a return address at rsp),
 * guarded elsewhere. */
static inline int stack_load(struct vprof_stack_walk *w, uint64_t addr, void *dst, size_t n)
{
    if (addr >= w->win_lo && addr <= w->win_hi - n) {
        __builtin_memcpy(dst, (const void *)(uintptr_t)addr, n == 16 ? 16 : 8);
        return 0;
    }
    return vprof_memread(&w->mem, addr, dst, n);
}

/* Follows the chain from frame pointer fp (whose frame's return address
 * comes next). FP_LEFT: the last PC stored is a return into a library. */
static int fp_walk(struct vprof_stack_walk *w, uint64_t fp)
{
    uint64_t floor = w->mem.rsp;
    while (w->n < w->max) {
        uint64_t fr[2];
        if ((fp & 7) || fp < floor || stack_load(w, fp, fr, sizeof fr) < 0)
            return FP_BAD;
        if (!fr[1])
            return FP_END;
        w->pc[w->n++] = fr[1] - 1;
        if (!in_text(w, fr[1]))
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
 * (after push %rbp). The executable's text is mapped for the process's
 * life (and is executing): a plain load within it. */
static int frameless_at(struct vprof_stack_walk *w, uint64_t pc)
{
    uint8_t c[4];
    if (pc + sizeof c <= w->text_hi)
        __builtin_memcpy(c, (const void *)(uintptr_t)pc, sizeof c);
    else if (vprof_memread(&w->mem, pc, c, sizeof c) < 0)
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
    struct vprof_stack_walk *w = arg;
    w->pc[w->n++] = pc;
    if (in_text(w, pc) && (regs->valid & (1u << VPF_RBP))) {
        w->handoff = 1;
        w->rbp = regs->r[VPF_RBP];
        return 1;
    }
    return w->n >= w->max;
}

/* Tracks an unwind's frame `step` (its PC pc): see the walk's bottom fields. */
static void note(struct vprof_stack_walk *w, unsigned step, uint64_t pc)
{
    if (in_text(w, pc)) {
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
    struct vprof_stack_walk *w = arg;
    vprof_stacks_add(w, pc);
    note(w, w->steps, pc);
    return 0;
}

/* Forgets the callers: the chain back to the interrupted PC alone. */
static void restart(struct vprof_stack_walk *w)
{
    w->n = 1;
    w->steps = w->last_prog = w->after_at = w->prev_at = 0;
    w->after_pc = w->prev_pc = 0;
    w->pending = 0;
    note(w, 0, w->pc[0]);
}

/* Notes the chain's frames again: they are all stored (steps < max). */
static void renote(struct vprof_stack_walk *w)
{
    unsigned n = w->n;
    restart(w);
    for (w->n = 1; w->n < n; w->n++)
        note(w, ++w->steps, w->pc[w->n]);
}

/* After an unwind that reached the thread's outermost frame: the chain is
 * cut at the thread's bottom, the library frame that called the outermost
 * program function (main, a start routine; the stack's very last frame,
 * _start, does not count), which the table learns. r: the return address
 * the frame-pointer walk left the program by (0: none); when it is not
 * the bottom, a library called back into the program there. */
static void cut_at_bottom(struct vprof_stack_walk *w, uint64_t r)
{
    w->flags &= (uint8_t)~VPF_STK_TRUNCATED;
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

/* The whole chain by the unwinder, cut at the thread's bottom. */
static void full_unwind(struct vprof_stack_walk *w, const ucontext_t *uc, uint64_t r)
{
    restart(w);
    w->flags |= VPF_STK_UNWOUND;
    unsigned limit = w->max - 1 + TAIL_MAX;
    /* a walk stopped at code loaded after start-up did not reach the
     * bottom either: what lies below that frame is unknown */
    if (vprof_unwind(uc, limit, all_frames, w) == VPROF_UNWIND_UNKNOWN ||
        w->steps >= limit) {                    /* the bottom is beyond reach */
        w->flags |= VPF_STK_TRUNCATED;
        return;
    }
    cut_at_bottom(w, r);
}

/* After a frame-pointer walk that ended `how`: a chain that left the
 * program other than at a known bottom, or whose frame pointers broke, is
 * unwound in full. */
static void after_fp(struct vprof_stack_walk *w, const ucontext_t *uc, int how)
{
    if (how == FP_LEFT) {
        uint64_t r = w->pc[w->n - 1] + 1;
        if (term_get(r) != TERM_BOTTOM)
            full_unwind(w, uc, r);
    } else if (how == FP_BAD) {
        full_unwind(w, uc, 0);
    }
}

/* A walk over pcs[0..max) for the tick of uc, at its interrupted PC. */
static void walk_init(struct vprof_stack_walk *w, const ucontext_t *uc, uint64_t *pcs,
                      unsigned max)
{
    w->pc = pcs;
    w->max = max;
    w->n = 1;
    w->steps = 0;
    w->flags = 0;
    w->text_lo = st.text_lo;
    w->text_hi = st.text_hi;
    pcs[0] = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
}

/* Before the frame-pointer walk: its stack window and guarded reads. */
static void fp_ready(struct vprof_stack_walk *w, const ucontext_t *uc)
{
    uint64_t rsp = (uint64_t)uc->uc_mcontext.gregs[REG_RSP];
    if (!vprof_stack_window(rsp, &w->win_lo, &w->win_hi)) {
        w->win_lo = UINT64_MAX; /* (win_hi - 16 must not wrap) */
        w->win_hi = 16;
    }
    w->mem.rsp = rsp;
    w->mem.faults = 0;
    w->mem.slow = 0;
    w->mem.slow_max = SLOW_MAX;
    w->mem.deadline = w->mem.clock = 0;
    w->mem.cut = 0;
}

/* The chain by the stack walk alone, from the interrupted frame. */
static void walk_alone(struct vprof_stack_walk *w, const ucontext_t *uc)
{
    const greg_t *g = uc->uc_mcontext.gregs;
    uint64_t rip = (uint64_t)g[REG_RIP], rsp = (uint64_t)g[REG_RSP], rbp = (uint64_t)g[REG_RBP];
    int how = FP_BAD;
    restart(w);
    w->flags = 0;
    w->handoff = 0;
    fp_ready(w, uc);
    if (in_text(w, rip)) {
        int at = frameless_at(w, rip);
        uint64_t ret;
        if (!at) {
            how = fp_walk(w, rbp);
        } else if (w->n < w->max && stack_load(w, rsp + 8 * (unsigned)(at - 1), &ret,
                                                sizeof ret) == 0 && ret) {
            w->pc[w->n++] = ret - 1;
            how = in_text(w, ret) ? fp_walk(w, rbp) : FP_LEFT;
        }
    } else if (w->max > 1) {
        w->flags |= VPF_STK_UNWOUND;
        int rc = vprof_unwind(uc, w->max - 1, to_program, w);
        how = w->handoff ? fp_walk(w, w->rbp) : FP_END;
        if (!w->handoff && (w->n >= w->max || rc == VPROF_UNWIND_UNKNOWN))
            w->flags |= VPF_STK_TRUNCATED;
    } else {
        how = FP_END;
        w->flags |= VPF_STK_TRUNCATED;
    }
    after_fp(w, uc, how);
}

int vprof_stacks_begin(struct vprof_stack_walk *w, const ucontext_t *uc)
{
    if (!__atomic_load_n(&st.open, __ATOMIC_ACQUIRE))
        return 0;
    w->rec = vpf_recfile_claim(&st.rec);
    if (!w->rec)
        return 0;               /* full: counted in the header's dropped */
    walk_init(w, uc, vpf_stack_pcs(w->rec), st.frames);
    return 1;
}

/* ---------- VPROF_UNWINDER=check ---------- */

static int checking;
static uint64_t n_compared, n_differ;   /* atomic */
static struct vprof_stacks_check first_diff;
static int have_diff;                   /* atomic */

void vprof_stacks_set_check(int on)
{
    checking = on;
}

void vprof_stacks_check_counts(struct vprof_stacks_check *c)
{
    int have = __atomic_load_n(&have_diff, __ATOMIC_ACQUIRE) == 1;
    *c = have ? first_diff : (struct vprof_stacks_check){0};
    c->have_diff = have;
    c->compared = __atomic_load_n(&n_compared, __ATOMIC_RELAXED);
    c->differ = __atomic_load_n(&n_differ, __ATOMIC_RELAXED);
}

/* Unwinds the tick again, every frame by the unwinder, and compares the
 * chains (PCs, truncation): where the values walk stopped, the chain goes
 * on by frame pointers, which must find the frames the unwinder finds.
 * (Not the stack walk alone: from the interrupted frame it trusts the frame
 * pointer, which an epilogue past its `pop %rbp` has given up already; the
 * rule table knows.) One scratch chain, taken by one tick at a time (a tick
 * that finds it taken is not compared). */
static void check_chain(const struct vprof_stack_walk *w, const ucontext_t *uc)
{
    static uint64_t pcs[VPF_STACKS_FRAMES_MAX];
    static int busy;
    if (__atomic_exchange_n(&busy, 1, __ATOMIC_ACQUIRE))
        return;
    struct vprof_stack_walk a;
    walk_init(&a, uc, pcs, w->max);
    full_unwind(&a, uc, 0);
    int bad = a.n != w->n || ((a.flags ^ w->flags) & VPF_STK_TRUNCATED) ||
              memcmp(pcs, w->pc, w->n * sizeof *pcs);
    __atomic_fetch_add(&n_compared, 1, __ATOMIC_RELAXED);
    if (bad) {
        __atomic_fetch_add(&n_differ, 1, __ATOMIC_RELAXED);
        if (!__atomic_exchange_n(&have_diff, 2, __ATOMIC_ACQ_REL)) {
            first_diff.n_shared = w->n;
            first_diff.n_alone = a.n;
            first_diff.flags_shared = w->flags;
            first_diff.flags_alone = a.flags;
            for (unsigned i = 0; i < VPROF_STACKS_DIFF_FRAMES; i++) {
                first_diff.pcs_shared[i] = i < w->n ? w->pc[i] : 0;
                first_diff.pcs_alone[i] = i < a.n ? pcs[i] : 0;
            }
            __atomic_store_n(&have_diff, 1, __ATOMIC_RELEASE);
        }
    }
    __atomic_store_n(&busy, 0, __ATOMIC_RELEASE);
}

/* The chain from where the other walk stopped (how: not COMPLETE); returns
 * VPROF_STK_ALONE when it was walked alone after all. Out of line: the
 * complete chains, most of them, need none of it. */
static __attribute__((noinline)) int go_on(struct vprof_stack_walk *w, const ucontext_t *uc,
                                           int how, uint64_t rbp)
{
    switch (how) {
    case VPROF_STK_FROM_FP:
        fp_ready(w, uc);
        after_fp(w, uc, fp_walk(w, rbp));
        break;
    case VPROF_STK_OUTERMOST:
        if (w->steps < w->max) {
            renote(w);
            cut_at_bottom(w, 0);
            break;
        }
        /* (frames were not kept: rare) */
        /* fall through */
    default:
        walk_alone(w, uc);
        return VPROF_STK_ALONE;
    }
    w->flags |= VPF_STK_UNWOUND;
    return how;
}

void vprof_stacks_end(struct vprof_stack_walk *w, const ucontext_t *uc, int how, uint64_t rbp,
                      uint64_t now_ns, unsigned weight, uint32_t tid)
{
    if (how == VPROF_STK_COMPLETE) {
        if (w->steps + 1 > w->max)
            w->flags |= VPF_STK_TRUNCATED;
        w->flags |= VPF_STK_UNWOUND;
    } else {
        how = go_on(w, uc, how, rbp);
    }
    if (__builtin_expect(checking, 0) && how != VPROF_STK_ALONE)
        check_chain(w, uc);
    struct vpf_stack_rec *rec = w->rec;
    rec->time_ns = now_ns;
    rec->tid = tid;
    rec->depth = (uint8_t)w->n;
    rec->weight = (uint8_t)(weight > 255 ? 255 : weight < 1 ? 1 : weight);
    rec->flags = w->flags;
    vpf_commit_flag(&rec->flags);
    vpf_recfile_populate_check(&st.rec);
}

void vprof_stacks_tick(const ucontext_t *uc, uint64_t now_ns, unsigned weight, uint32_t tid)
{
    struct vprof_stack_walk w;
    if (vprof_stacks_begin(&w, uc))
        vprof_stacks_end(&w, uc, VPROF_STK_ALONE, 0, now_ns, weight, tid);
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
