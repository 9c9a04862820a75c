/* unwind.h - bounded virtual unwinding of the interrupted thread, yielding
 * each caller's call-site PC and the registers that are trustworthy in that
 * frame: with a table of unwind rules compiled from the CFI at start-up
 * (cfi.h), and libunwind for frames the table does not cover (never for
 * a frame in code loaded after start-up: see VPROF_UNWIND_UNKNOWN).
 * Async-signal-safe as far as libunwind's local unwinder is (no malloc; its
 * caches are preallocated). */
#ifndef VPROF_UNWIND_H
#define VPROF_UNWIND_H

#include <stdint.h>
#include <ucontext.h>
#include "value_read.h"

/* Called for each caller frame: depth 1 is the interrupted function's
 * caller. pc is the call site (return address - 1). Returns 0 to go on to
 * the next caller, non-zero to stop the walk. */
typedef int (*vprof_frame_fn)(void *arg, unsigned depth, uint64_t pc,
                              const struct vprof_regs *regs);

/* Once at start-up: sets libunwind's caching policy. */
void vprof_unwind_init(void);

/* Once at start-up, outside any signal handler, by a process that will
 * unwind: compiles the rule table of the objects loaded now (a few
 * milliseconds for a program and libc; nothing in mode
 * VPROF_UNWINDER_LIBUNWIND). Without it every frame goes to libunwind.
 * [text_lo, text_hi): the executable's text. From then on a frame the
 * table unwinds to outside it (libc, other libraries) is handed to the
 * callback with only rip, rsp and the registers its callee did not save
 * valid: the saved ones are loaded only when the walk goes on past it
 * (check mode compares the registers such a frame gives, and all of the
 * next frame's). */
void vprof_unwind_build_table(uint64_t text_lo, uint64_t text_hi);

/* Which unwinder a tick uses (VPROF_UNWINDER): set before
 * vprof_unwind_init. count: keep the step counts of vprof_unwind_counts
 * (always kept in check mode). */
enum {
    VPROF_UNWINDER_CFI = 0,         /* the rule table, libunwind where it has no rule */
    VPROF_UNWINDER_LIBUNWIND = 1,   /* libunwind for every frame */
    VPROF_UNWINDER_CHECK = 2,       /* both, compared frame by frame; the table's frames used */
};
void vprof_unwind_set_mode(int mode, int count);

/* The first frame where the two unwinders disagreed (check mode): reg -1
 * when the PC, the set of known registers or the number of frames differ
 * (a and b then hold the frame counts when one walk was shorter). */
#define VPROF_UNWIND_DIFF_FRAMES 16
struct vprof_unwind_diff {
    unsigned depth;
    int reg;
    uint64_t pc_table, pc_libunwind;
    uint64_t v_table, v_libunwind;
    uint32_t valid_table, valid_libunwind;
    /* both walks of that tick: frame counts and their first PCs */
    unsigned n_table, n_libunwind;
    uint64_t pcs_table[VPROF_UNWIND_DIFF_FRAMES], pcs_libunwind[VPROF_UNWIND_DIFF_FRAMES];
    /* how the table walk took each step: T the table, U libunwind (no rule); lower
     * case when the frame's PC was the executing instruction; S a signal
     * trampoline (libunwind) */
    char path[VPROF_UNWIND_DIFF_FRAMES + 1];
};

struct vprof_unwind_counts {
    int mode;
    uint32_t objects, fdes, bad_fdes;   /* the rule table */
    uint64_t rows;
    uint64_t table_steps, unw_steps;    /* steps taken by each (when counted) */
    uint64_t unknown;                   /* walks that ended VPROF_UNWIND_UNKNOWN (always counted) */
    uint64_t checked, differ;           /* check mode: frames compared, differing */
    int have_diff;
    struct vprof_unwind_diff first;
};
void vprof_unwind_counts(struct vprof_unwind_counts *c);

/* Unwinds up to max_depth callers of the frame described by uc, fewer
 * when fn says stop. Returns VPROF_UNWIND_END when the walk ended because
 * the last frame handed to fn (or the interrupted one) is the outermost of
 * the thread - its CFI says it has no caller (_start, clone3), or its
 * return address is 0 -, VPROF_UNWIND_UNKNOWN when it stopped at a frame
 * (the last handed to fn, or the interrupted one) in code whose unwind
 * info was not known at start-up: a library dlopen'ed later, code without
 * CFI (libunwind would look it up with dl_iterate_phdr, which takes the
 * dynamic loader's lock, and a tick must never wait for that lock: the
 * stack is truncated there), and 0 otherwise: fn said stop, max_depth was
 * reached, or a frame could not be unwound. */
#define VPROF_UNWIND_END 1
#define VPROF_UNWIND_UNKNOWN 2
int vprof_unwind(const ucontext_t *uc, unsigned max_depth,
                 vprof_frame_fn fn, void *arg);

/* The same, for a caller that has read uc's registers already
 * (vprof_regs_from_ucontext) and the thread's stack window
 * (vprof_stack_window; win_hi 0: none): the walk uses *regs as its scratch
 * space (they are not the interrupted frame's any more when it returns). */
int vprof_unwind_regs(const ucontext_t *uc, struct vprof_regs *regs, uint64_t win_lo,
                      uint64_t win_hi, unsigned max_depth, vprof_frame_fn fn, void *arg);

/* Whether pc lies in the code of an object loaded at start-up (which is
 * never unloaded): facts learned about a return address there stay true. */
int vprof_unwind_permanent(uint64_t pc);

/* How a walk with the rule table steps from a caller frame at pc (as
 * handed to fn): CFA = register cfa_reg (DWARF number) + cfa_off, the
 * return address at CFA - 8; the same for every pc in [lo, hi). 0, or -1
 * when the table has no such rule there (libunwind would step it, or the
 * table is not in use). Async-signal-safe. */
struct vprof_unwind_rule {
    uint64_t lo, hi;
    int64_t cfa_off;
    unsigned cfa_reg;
};
int vprof_unwind_rule_at(uint64_t pc, struct vprof_unwind_rule *r);

/* An address inside libunwind's code (to recognise calls it makes). */
uintptr_t vprof_unwind_probe(void);

/* Registers of the interrupted frame (all general registers, rip, xmm). */
void vprof_regs_from_ucontext(const ucontext_t *uc, struct vprof_regs *r);

#endif
