/* unwind.h - bounded virtual unwinding of the interrupted thread with
 * libunwind, yielding each caller's call-site PC and the registers that are
 * trustworthy in that frame. Async-signal-safe as far as libunwind's local
 * unwinder is (no malloc; its caches are preallocated). */
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

/* Unwinds up to max_depth callers of the frame described by uc, fewer
 * when fn says stop. */
void vprof_unwind(const ucontext_t *uc, unsigned max_depth,
                  vprof_frame_fn fn, void *arg);

/* An address inside libunwind's code (to recognise calls it makes). */
uintptr_t vprof_unwind_probe(void);

/* Registers of the interrupted frame (all general registers, rip, xmm). */
void vprof_regs_from_ucontext(const ucontext_t *uc, struct vprof_regs *r);

#endif
