/* libunwind.h - a frame-pointer walk behind the few libunwind calls that
 * libvprof/unwind.c makes, so that unwind.c is compiled unchanged inside
 * glibc (see glibc-patch/README.md, "Unwinding inside libc").
 *
 * Why not the real libunwind: libc.so cannot depend on libunwind.so (which
 * depends on libc.so), and in a static link libunwind.a would have to come
 * after libc.a, which gcc's driver does not arrange. Code built with -pg
 * (without -mfentry) always keeps %rbp as a frame pointer on x86-64 (gcc
 * and clang both force it), so for the profiled program the chain
 * [rbp] = caller's rbp, [rbp+8] = return address is exact.
 *
 * What this gives up against libunwind: callers' callee-saved registers
 * other than rbp and rsp (a caller's variable held in rbx or r12-r15 reads
 * as "register unknown" and is skipped), and when the tick lands in code
 * without a frame (libc's own assembly, the first instructions of a
 * function) the first step goes to the caller's caller. Every memory read
 * is guarded (vprof_memread); a walk stops at the first frame that does not
 * look like one: frame pointer below the stack pointer, misaligned, more
 * than VPROF_FP_MAX_FRAME above it, or a return address outside the
 * executable's text. Async-signal-safe. */
#ifndef VPROF_FP_LIBUNWIND_H
#define VPROF_FP_LIBUNWIND_H

#include <stdint.h>
#include <ucontext.h>

#include "memread.h"

#define VPROF_FP_MAX_FRAME (8ul << 20)

typedef uint64_t unw_word_t;
typedef ucontext_t unw_context_t;
typedef struct { uint64_t ip, sp, fp; } unw_cursor_t;

/* libunwind's x86-64 register numbers (they equal the DWARF numbers). */
enum {
  UNW_X86_64_RAX, UNW_X86_64_RDX, UNW_X86_64_RCX, UNW_X86_64_RBX,
  UNW_X86_64_RSI, UNW_X86_64_RDI, UNW_X86_64_RBP, UNW_X86_64_RSP,
  UNW_X86_64_R8, UNW_X86_64_R9, UNW_X86_64_R10, UNW_X86_64_R11,
  UNW_X86_64_R12, UNW_X86_64_R13, UNW_X86_64_R14, UNW_X86_64_R15,
  UNW_X86_64_RIP,
  UNW_REG_IP = UNW_X86_64_RIP,
  UNW_REG_SP = UNW_X86_64_RSP,
};
enum { UNW_INIT_SIGNAL_FRAME = 1 };
enum { UNW_EUNSPEC = 1, UNW_EBADREG = 3 };

/* There are no caches to configure. */
typedef struct vprof_fp_addr_space *unw_addr_space_t;
#define unw_local_addr_space ((unw_addr_space_t) 0)
typedef enum
{
  UNW_CACHE_NONE, UNW_CACHE_GLOBAL, UNW_CACHE_PER_THREAD
} unw_caching_policy_t;

static inline int unw_set_caching_policy (unw_addr_space_t as,
                                          unw_caching_policy_t policy)
{
  (void) as;
  (void) policy;
  return 0;
}

/* Set by the glibc glue at start-up: the executable's text. */
extern unsigned long __vprof_fp_text_lo, __vprof_fp_text_hi;

static inline int unw_init_local2 (unw_cursor_t *c, unw_context_t *uc,
                                   int flags)
{
  (void) flags;
  const greg_t *g = uc->uc_mcontext.gregs;
  c->ip = (uint64_t) g[REG_RIP];
  c->sp = (uint64_t) g[REG_RSP];
  c->fp = (uint64_t) g[REG_RBP];
  return 0;
}

static inline int unw_step (unw_cursor_t *c)
{
  uint64_t fp = c->fp, frame[2];
  if (fp < c->sp || fp - c->sp > VPROF_FP_MAX_FRAME || (fp & 7))
    return 0;
  struct vprof_memread_ctx m = { .rsp = c->sp, .faults = 0 };
  if (vprof_memread (&m, fp, frame, sizeof frame) < 0)
    return -UNW_EUNSPEC;
  if (frame[1] < __vprof_fp_text_lo || frame[1] >= __vprof_fp_text_hi)
    return 0;
  c->ip = frame[1];
  c->sp = fp + 16;
  c->fp = frame[0];
  return 1;
}

static inline int unw_get_reg (unw_cursor_t *c, int reg, unw_word_t *v)
{
  switch (reg)
    {
    case UNW_X86_64_RIP: *v = c->ip; return 0;
    case UNW_X86_64_RSP: *v = c->sp; return 0;
    case UNW_X86_64_RBP: *v = c->fp; return 0;
    default: return -UNW_EBADREG;
    }
}

#endif
