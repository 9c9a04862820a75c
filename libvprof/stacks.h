/* stacks.h - VPROF_STACKS: the call chain of every tick (return addresses,
 * the program's frames and its libraries'), into stacks.<id> (FORMATS.md
 * §7), for vprof-report --contexts (IntroPerf's calling-context analysis).
 *
 * Part of the sampling core: vprof_core_tick calls vprof_stacks_tick, so
 * both shells (libvprof and the glibc patch) record stacks; the session
 * (session.c) opens and closes the file. Everything named *_tick is
 * async-signal-safe: no allocation, no lock, bounded. */
#ifndef VPROF_STACKS_H
#define VPROF_STACKS_H

#include <stddef.h>
#include <stdint.h>
#include <ucontext.h>

#include "memread.h"
#include "vprof_format.h"

/* Creates the stack sample file on fd (owned from now on: closed once it
 * is mapped) for up to `frames` PCs per tick (1..VPF_STACKS_FRAMES_MAX)
 * and `capacity` ticks. text_lo/hi: the executable's run-time text, where
 * frames are followed by their frame pointers. 0, or -1 with err. */
int vprof_stacks_open(int fd, unsigned frames, uint64_t capacity, uint32_t hz,
                      uint64_t start_ns, uint64_t text_lo, uint64_t text_hi,
                      char *err, size_t errlen);

/* Records the interrupted thread's call chain; no-op without a file. */
void vprof_stacks_tick(const ucontext_t *uc, uint64_t now_ns, unsigned weight, uint32_t tid);

/* ---------- one unwind per tick ----------
 *
 * A tick that samples values unwinds its callers anyway (core.c, with the
 * rule table): the chain is taken from that walk instead of being walked
 * a second time. The core claims the tick's record (vprof_stacks_begin),
 * hands it every caller its walk finds, in order (vprof_stacks_add), and
 * says where its walk stopped (vprof_stacks_end), which completes the
 * chain from there - by frame pointers above a program frame, as the stack
 * walk would - and commits the record. The chain is the one the unwinder
 * finds alone (VPROF_UNWINDER=check compares the two on every tick); it is
 * the stack walk's own, or better: at the interrupted frame the rule table
 * knows where an epilogue has given up its frame pointer already. */
struct vprof_stack_walk {
    struct vpf_stack_rec *rec;  /* the tick's record */
    uint64_t *pc;               /* its PCs */
    unsigned n, max;
    uint8_t flags;
    int handoff;                /* the unwinder reached a program frame: */
    uint64_t rbp;               /* its frame pointer */
    uint64_t text_lo, text_hi;  /* the executable's text */
    /* the frame-pointer walk's (set up when it is needed, see fp_ready): the
     * thread's stack above the interrupted rsp, where loads are direct
     * (win_lo UINT64_MAX: none), and the guarded reads */
    uint64_t win_lo, win_hi;
    struct vprof_memread_ctx mem;
    unsigned steps;             /* callers found, stored or not */
    /* an unwind's frames so far (see note in stacks.c): the first library
     * frame below the last program frame (the thread's bottom, once the
     * walk has ended), and the one below the program frame before that
     * (in case the last is _start) */
    unsigned last_prog;
    int pending;                /* the frame after a program frame is next */
    uint64_t after_pc, prev_pc;
    unsigned after_at, prev_at;
};

/* Claims the tick's record and stores the interrupted PC; 0 when there is
 * none to fill (no file, or full: counted). */
int vprof_stacks_begin(struct vprof_stack_walk *w, const ucontext_t *uc);

/* Where the walk that fed vprof_stacks_add stopped. */
enum {
    VPROF_STK_ALONE,            /* nothing usable: the stack walk does it all */
    VPROF_STK_COMPLETE,         /* at the thread's bottom: the chain is whole */
    VPROF_STK_FROM_FP,          /* at a program frame: go on by its frame pointer */
    VPROF_STK_OUTERMOST,        /* at the thread's outermost frame: cut at its bottom */
};

/* The next caller (its call site, as the unwinder hands it). Frames past
 * the record's `max` are only counted. */
static inline void vprof_stacks_add(struct vprof_stack_walk *w, uint64_t pc)
{
    w->steps++;
    if (w->n < w->max)
        w->pc[w->n++] = pc;
}

/* Completes the chain (how: VPROF_STK_*; rbp: the last frame's frame
 * pointer for VPROF_STK_FROM_FP) and commits the record. */
void vprof_stacks_end(struct vprof_stack_walk *w, const ucontext_t *uc, int how, uint64_t rbp,
                      uint64_t now_ns, unsigned weight, uint32_t tid);

/* VPROF_UNWINDER=check: chains taken from another walk, compared with the
 * unwinder's alone (every frame, cut at the bottom) for the same tick; the
 * first difference, both chains. */
#define VPROF_STACKS_DIFF_FRAMES 16
struct vprof_stacks_check {
    uint64_t compared, differ;
    int have_diff;
    unsigned n_shared, n_alone;
    uint8_t flags_shared, flags_alone;
    uint64_t pcs_shared[VPROF_STACKS_DIFF_FRAMES], pcs_alone[VPROF_STACKS_DIFF_FRAMES];
};
void vprof_stacks_set_check(int on);
void vprof_stacks_check_counts(struct vprof_stacks_check *c);

/* After fork, in the child: forget the parent's file without touching it. */
void vprof_stacks_fork_child(void);

/* Normal exit (no tick may run during or after it): marks the file closed
 * cleanly and unmaps it; *records: ticks stored, *dropped: not stored
 * because the file was full. */
void vprof_stacks_close(uint64_t *records, uint64_t *dropped);

#endif
