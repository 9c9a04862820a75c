/* unwind.c - register files from a signal context and from libunwind. */
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <link.h>
#include <string.h>

#include "unwind.h"

uintptr_t vprof_unwind_probe(void)
{
    return (uintptr_t)&unw_step;
}

void vprof_regs_from_ucontext(const ucontext_t *uc, struct vprof_regs *r)
{
    const greg_t *g = uc->uc_mcontext.gregs;
    r->r[VPF_RAX] = (uint64_t)g[REG_RAX];
    r->r[VPF_RDX] = (uint64_t)g[REG_RDX];
    r->r[VPF_RCX] = (uint64_t)g[REG_RCX];
    r->r[VPF_RBX] = (uint64_t)g[REG_RBX];
    r->r[VPF_RSI] = (uint64_t)g[REG_RSI];
    r->r[VPF_RDI] = (uint64_t)g[REG_RDI];
    r->r[VPF_RBP] = (uint64_t)g[REG_RBP];
    r->r[VPF_RSP] = (uint64_t)g[REG_RSP];
    r->r[VPF_R8] = (uint64_t)g[REG_R8];
    r->r[VPF_R9] = (uint64_t)g[REG_R9];
    r->r[VPF_R10] = (uint64_t)g[REG_R10];
    r->r[VPF_R11] = (uint64_t)g[REG_R11];
    r->r[VPF_R12] = (uint64_t)g[REG_R12];
    r->r[VPF_R13] = (uint64_t)g[REG_R13];
    r->r[VPF_R14] = (uint64_t)g[REG_R14];
    r->r[VPF_R15] = (uint64_t)g[REG_R15];
    r->r[VPF_RIP] = (uint64_t)g[REG_RIP];
    r->valid = (1u << 17) - 1;
    /* fpregs points at the FXSAVE area the kernel saved on the signal
     * frame; _xmm[] is 16 registers of 16 bytes. */
    r->xmm = uc->uc_mcontext.fpregs ?
             (const unsigned char *)uc->uc_mcontext.fpregs->_xmm : NULL;
}

/* In a caller only the callee-saved registers (and rsp, the CFA) are
 * restored by unwinding; the others hold whatever the callee left. */
static const struct { int unw; int dw; } saved_regs[] = {
    {UNW_X86_64_RBX, VPF_RBX}, {UNW_X86_64_RBP, VPF_RBP},
    {UNW_X86_64_RSP, VPF_RSP}, {UNW_X86_64_R12, VPF_R12},
    {UNW_X86_64_R13, VPF_R13}, {UNW_X86_64_R14, VPF_R14},
    {UNW_X86_64_R15, VPF_R15},
};

/* libunwind finds a PC's unwind table with dl_iterate_phdr on every step,
 * bracketed by two sigprocmask calls: several system calls per frame. The
 * objects loaded at start-up can never be unloaded (dlclose of a DT_NEEDED
 * library is a no-op), so their .eh_frame_hdr search tables are registered
 * once as libunwind "dynamic" unwind info, which libunwind consults first
 * and without any system call. Objects dlopen'ed later still take
 * libunwind's ordinary path. */
#define MAX_OBJS 64
static unw_dyn_info_t objs[MAX_OBJS];
static int n_objs;

static int add_object(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    (void)data;
    const ElfW(Phdr) *eh = NULL;
    uint64_t lo = UINT64_MAX, hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_GNU_EH_FRAME)
            eh = ph;
        else if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
            if (info->dlpi_addr + ph->p_vaddr < lo) lo = info->dlpi_addr + ph->p_vaddr;
            if (info->dlpi_addr + ph->p_vaddr + ph->p_memsz > hi)
                hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
        }
    }
    if (!eh || hi <= lo || n_objs >= MAX_OBJS)
        return 0;
    /* .eh_frame_hdr: version 1, eh_frame_ptr, fde_count (udata4), then a
     * table of (initial location, FDE) pairs, datarel sdata4. */
    const unsigned char *h = (const unsigned char *)(info->dlpi_addr + eh->p_vaddr);
    if (h[0] != 1 || h[2] != 0x03 /* udata4 */ || h[3] != 0x3b /* datarel|sdata4 */ ||
        (h[1] & 0x0f) != 0x0b /* sdata4 */)
        return 0;
    uint32_t fde_count;
    memcpy(&fde_count, h + 8, 4);
    unw_dyn_info_t *di = &objs[n_objs++];
    memset(di, 0, sizeof *di);
    di->format = UNW_INFO_FORMAT_REMOTE_TABLE;
    di->start_ip = lo;
    di->end_ip = hi;
    di->u.rti.name_ptr = (unw_word_t)info->dlpi_name;
    di->u.rti.segbase = (unw_word_t)h;
    di->u.rti.table_data = (unw_word_t)(h + 12);
    di->u.rti.table_len = (unw_word_t)fde_count * 8 / sizeof(unw_word_t);
    _U_dyn_register(di);
    return 0;
}

void vprof_unwind_init(void)
{
    static int done;
    if (done)
        return;
    done = 1;
    /* Per-thread caches where libunwind was built with them (Debian's falls
     * back to the global cache, whose lock is cheap here: see signals.c on
     * sigprocmask inside a tick). */
    unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
    dl_iterate_phdr(add_object, NULL);
}

void vprof_unwind(const ucontext_t *uc, unsigned max_depth,
                  vprof_frame_fn fn, void *arg)
{
    unw_cursor_t cur;
    if (max_depth == 0)
        return;
    if (unw_init_local2(&cur, (unw_context_t *)(uintptr_t)uc, UNW_INIT_SIGNAL_FRAME) < 0)
        return;
    for (unsigned d = 1; d <= max_depth; d++) {
        if (unw_step(&cur) <= 0)
            return;
        unw_word_t ip = 0, v;
        if (unw_get_reg(&cur, UNW_REG_IP, &ip) < 0 || ip == 0)
            return;
        struct vprof_regs r;
        memset(&r, 0, sizeof r);
        for (unsigned i = 0; i < sizeof saved_regs / sizeof saved_regs[0]; i++)
            if (unw_get_reg(&cur, saved_regs[i].unw, &v) == 0) {
                r.r[saved_regs[i].dw] = v;
                r.valid |= 1u << saved_regs[i].dw;
            }
        r.r[VPF_RIP] = ip - 1;
        r.valid |= 1u << VPF_RIP;
        if (fn(arg, d, ip - 1, &r))
            return;
    }
}
