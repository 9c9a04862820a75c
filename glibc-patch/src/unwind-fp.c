/* unwind-fp.c - libvprof's unwinding interface (libvprof/unwind.h) for the
 * copy of the core inside glibc, as a frame-pointer walk instead of
 * libunwind.
 *
 * Why not libunwind: libc.so cannot depend on libunwind.so (which depends
 * on libc.so), and in a static link libunwind.a would have to come after
 * libc.a, which gcc's driver does not arrange. Code built with -pg (without
 * -mfentry) always keeps %rbp as a frame pointer on x86-64 (gcc and clang
 * both force it), so for the profiled program the chain [rbp] = caller's
 * rbp, [rbp+8] = return address is exact.
 *
 * What this gives up against libunwind: callers' callee-saved registers
 * other than rbp and rsp (a caller's variable held in rbx or r12-r15 reads
 * as "register unknown" and is skipped), and when the tick lands in code
 * without a frame (libc's own assembly, the first instructions of a
 * function) the first step goes to the caller's caller. Every memory read
 * is guarded (vprof_memread); a walk stops at the first frame that does not
 * look like one: frame pointer below the stack pointer, misaligned, more
 * than FP_MAX_FRAME above it, or a return address outside the executable's
 * text. Async-signal-safe: plain loads and, off the stack, one syscall. */
#include <string.h>

#include "memread.h"
#include "unwind.h"

#define FP_MAX_FRAME (8ull << 20)

/* Set by the glue (vprof-glibc.c) at start-up: the executable's text. */
extern unsigned long __vprof_fp_text_lo, __vprof_fp_text_hi;

void vprof_unwind_init(void)
{
    /* nothing to prepare: no tables, no caches */
}

/* TODO(libvprof): this is libvprof/unwind.c's function, which cannot be
 * compiled here because that file needs libunwind; it belongs in a
 * libunwind-free file of libvprof that both builds take. */
void vprof_regs_from_ucontext(const ucontext_t *uc, struct vprof_regs *r)
{
    static const int map[17] = {
        [VPF_RAX] = REG_RAX, [VPF_RDX] = REG_RDX, [VPF_RCX] = REG_RCX,
        [VPF_RBX] = REG_RBX, [VPF_RSI] = REG_RSI, [VPF_RDI] = REG_RDI,
        [VPF_RBP] = REG_RBP, [VPF_RSP] = REG_RSP, [VPF_R8] = REG_R8,
        [VPF_R9] = REG_R9, [VPF_R10] = REG_R10, [VPF_R11] = REG_R11,
        [VPF_R12] = REG_R12, [VPF_R13] = REG_R13, [VPF_R14] = REG_R14,
        [VPF_R15] = REG_R15, [VPF_RIP] = REG_RIP,
    };
    const greg_t *g = uc->uc_mcontext.gregs;
    for (int i = 0; i < 17; i++)
        r->r[i] = (uint64_t)g[map[i]];
    r->valid = (1u << 17) - 1;
    /* fpregs points at the FXSAVE area the kernel saved on the signal
     * frame; _xmm[] is 16 registers of 16 bytes. */
    r->xmm = uc->uc_mcontext.fpregs ?
             (const unsigned char *)uc->uc_mcontext.fpregs->_xmm : NULL;
}

/* Never VPROF_UNWIND_END: a chain that leaves the executable's text is
 * not followed, so the outermost frame is never known. */
int vprof_unwind(const ucontext_t *uc, unsigned max_depth,
                 vprof_frame_fn fn, void *arg)
{
    const greg_t *g = uc->uc_mcontext.gregs;
    uint64_t sp = (uint64_t)g[REG_RSP], fp = (uint64_t)g[REG_RBP];
    for (unsigned d = 1; d <= max_depth; d++) {
        uint64_t frame[2];
        if (fp < sp || fp - sp > FP_MAX_FRAME || (fp & 7))
            return 0;
        struct vprof_memread_ctx m = {.rsp = sp, .faults = 0};
        if (vprof_memread(&m, fp, frame, sizeof frame) < 0)
            return 0;
        uint64_t ret = frame[1];
        if (ret < __vprof_fp_text_lo || ret >= __vprof_fp_text_hi)
            return 0;
        sp = fp + 16;           /* the caller's rsp after the return */
        fp = frame[0];          /* the caller's rbp */
        struct vprof_regs r;
        memset(&r, 0, sizeof r);
        r.r[VPF_RSP] = sp;
        r.r[VPF_RBP] = fp;
        r.r[VPF_RIP] = ret - 1;
        r.valid = (1u << VPF_RSP) | (1u << VPF_RBP) | (1u << VPF_RIP);
        if (fn(arg, d, ret - 1, &r))
            return 0;
    }
    return 0;
}

int vprof_unwind_regs(const ucontext_t *uc, struct vprof_regs *regs, uint64_t win_lo,
                      uint64_t win_hi, unsigned max_depth, vprof_frame_fn fn, void *arg)
{
    (void)regs;                 /* the chain comes from uc's rbp */
    (void)win_lo;               /* (every read is vprof_memread's) */
    (void)win_hi;
    return vprof_unwind(uc, max_depth, fn, arg);
}

int vprof_unwind_permanent(uint64_t pc)
{
    (void)pc;
    return 0;                   /* nothing is learned (see vprof_unwind) */
}

int vprof_unwind_rule_at(uint64_t pc, struct vprof_unwind_rule *r)
{
    (void)pc;
    (void)r;
    return -1;                  /* no rule table */
}
