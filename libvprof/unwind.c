/* unwind.c - virtual unwinding for the tick: the CFI rule table (cfi.c)
 * for every frame it covers, libunwind for the others, and a mode that
 * runs both and compares them.
 *
 * A step with the table: look the frame's PC up (a binary search), compute
 * the CFA from a register, load the return address and the saved
 * callee-saved registers from the stack — direct loads when they lie on
 * the thread's stack above the interrupted stack pointer, guarded reads
 * otherwise. A step the table has no rule for (libc's signal trampoline,
 * PLT stubs, CFA expressions) is taken by libunwind, from a context made
 * of the registers known so far; the walk goes back to the table at the
 * next frame it covers. A frame in code whose unwind info libunwind could
 * only find by asking the dynamic loader (objects dlopen'ed after
 * start-up, code without CFI) ends the walk: see libunwind_may_step. */
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <link.h>
#include <string.h>

#include "cfi.h"
#include "memread.h"
#include "unwind.h"

/* Rows of the rule table, all objects: 16 bytes each. */
#define CFI_MAX_ROWS (4u << 20)

static int unwinder = VPROF_UNWINDER_CFI;
static int counting;
static uint64_t n_table_steps, n_unw_steps, n_checked, n_differ;    /* atomic */
static struct vprof_unwind_diff first_diff;
static int have_diff;

/* Frames whose PC lies outside [want_lo, want_lo + want_span) are handed to
 * the callback before the registers their callee saved are loaded: the
 * loads are done only if the walk goes on past them. Set to the
 * executable's text by vprof_unwind_build_table; everything until then. */
static uint64_t want_lo, want_span = UINT64_MAX;

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
    /* r8-r15 lie in the same order in both: one copy */
    _Static_assert(REG_R15 - REG_R8 == 7 && VPF_R15 - VPF_R8 == 7, "r8-r15 in order");
    __builtin_memcpy(&r->r[VPF_R8], &g[REG_R8], 8 * sizeof r->r[0]);
    r->r[VPF_RIP] = (uint64_t)g[REG_RIP];
    r->valid = (1u << 17) - 1;
    /* fpregs points at the FXSAVE area the kernel saved on the signal
     * frame; _xmm[] is 16 registers of 16 bytes. */
    r->xmm = uc->uc_mcontext.fpregs ?
             (const unsigned char *)uc->uc_mcontext.fpregs->_xmm : NULL;
}

/* In a caller only the callee-saved registers (and rsp, the CFA) are
 * restored by unwinding; the others hold whatever the callee left. These
 * are the registers a caller frame reports. */
static const struct { int unw; int dw; } saved_regs[] = {
    {UNW_X86_64_RBX, VPF_RBX}, {UNW_X86_64_RBP, VPF_RBP},
    {UNW_X86_64_RSP, VPF_RSP}, {UNW_X86_64_R12, VPF_R12},
    {UNW_X86_64_R13, VPF_R13}, {UNW_X86_64_R14, VPF_R14},
    {UNW_X86_64_R15, VPF_R15},
};
#define N_SAVED (sizeof saved_regs / sizeof saved_regs[0])
#define REPORTED ((1u << VPF_RBX) | (1u << VPF_RBP) | (1u << VPF_RSP) | (1u << VPF_R12) | \
                  (1u << VPF_R13) | (1u << VPF_R14) | (1u << VPF_R15))

/* libunwind finds a PC's unwind table with dl_iterate_phdr on every step,
 * bracketed by two sigprocmask calls: several system calls per frame. The
 * objects loaded at start-up can never be unloaded (dlclose of a DT_NEEDED
 * library is a no-op), so their .eh_frame_hdr search tables are registered
 * once as libunwind "dynamic" unwind info, which libunwind consults first
 * and without any system call. libunwind would find the info of objects
 * dlopen'ed later with dl_iterate_phdr: a tick never lets it (see
 * libunwind_may_step). 512 objects: more than any program we know of
 * loads at start-up; one beyond them is treated as loaded later. */
#define MAX_OBJS 512
static unw_dyn_info_t objs[MAX_OBJS];
static int n_objs;
static uint64_t n_unknown;      /* walks stopped by libunwind_may_step: atomic */

static int add_object(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    (void)data;
    uint64_t lo, hi;
    const unsigned char *h;
    if (vprof_cfi_object_code(info, &lo, &hi, &h) < 0 || n_objs >= MAX_OBJS)
        return 0;
    /* .eh_frame_hdr: version 1, eh_frame_ptr, fde_count (udata4), then a
     * table of (initial location, FDE) pairs, datarel sdata4. */
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

/* libunwind's search of one table of unwind info, the function its lookup
 * of registered ("dynamic") info calls for our entries: exported by every
 * libunwind 1.x (remote unwinders use it) but declared in no header. */
int _ULx86_64_dwarf_search_unwind_table(unw_addr_space_t as, unw_word_t ip, unw_dyn_info_t *di,
                                        unw_proc_info_t *pi, int need_unwind_info, void *arg);

/* Whether ip lies in the code of an object registered at start-up. */
static int in_registered(uint64_t ip)
{
    for (int i = 0; i < n_objs; i++)
        if (ip >= objs[i].start_ip && ip < objs[i].end_ip)
            return 1;
    return 0;
}

/* Whether an FDE in the tables registered at start-up covers ip. */
static int registered_fde_at(uint64_t ip)
{
    for (int i = 0; i < n_objs; i++)
        if (ip >= objs[i].start_ip && ip < objs[i].end_ip) {
            unw_proc_info_t pi;
            return _ULx86_64_dwarf_search_unwind_table(unw_local_addr_space, ip, &objs[i],
                                                       &pi, 0, NULL) == 0;
        }
    return 0;
}

/* Whether libunwind can step the frame whose IP (the interrupted PC or a
 * return address) is ip without calling into the dynamic loader. When its
 * lookup of registered info finds nothing (code dlopen'ed after start-up,
 * code without CFI), libunwind falls back to dl_iterate_phdr, which takes
 * the loader's lock: a tick waiting for it waits with SIGPROF blocked, and
 * the thread holding it may be waiting for the ticked thread (a
 * dl_iterate_phdr callback taking the program's lock), or be the ticked
 * thread itself (interrupted inside dlopen, dlclose or dl_iterate_phdr,
 * half-way through taking or releasing it): the program hangs for good.
 * exact: ip is the executing instruction (the interrupted frame, or one
 * below a signal trampoline), which libunwind looks up as is; otherwise ip
 * is a return address and it looks up ip - 1, the call's last byte (its
 * use_prev_instr, which walk.exact and walk_libunwind track the same way:
 * the check mode of t_unwinder compares the frames that result). */
static int libunwind_may_step(uint64_t ip, int exact)
{
    return registered_fde_at(exact ? ip : ip - 1);
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

void vprof_unwind_build_table(uint64_t text_lo, uint64_t text_hi)
{
    if (unwinder == VPROF_UNWINDER_LIBUNWIND)
        return;
    vprof_cfi_build(CFI_MAX_ROWS);
    if (text_hi > text_lo) {
        want_lo = text_lo;
        want_span = text_hi - text_lo;
    }
}

void vprof_unwind_set_mode(int mode, int count)
{
    unwinder = mode;
    counting = count || mode == VPROF_UNWINDER_CHECK;
}

/* ---------- libunwind ---------- */

/* Fills a caller frame's report from a cursor; returns its IP (0: none). */
static uint64_t from_cursor(unw_cursor_t *cur, struct vprof_regs *r)
{
    unw_word_t ip = 0, v;
    memset(r, 0, sizeof *r);
    if (unw_get_reg(cur, UNW_REG_IP, &ip) < 0 || ip == 0)
        return 0;
    for (unsigned i = 0; i < N_SAVED; i++)
        if (unw_get_reg(cur, saved_regs[i].unw, &v) == 0) {
            r->r[saved_regs[i].dw] = v;
            r->valid |= 1u << saved_regs[i].dw;
        }
    r->r[VPF_RIP] = ip - 1;
    r->valid |= 1u << VPF_RIP;
    return ip;
}

/* Whether the frame at ip is a signal trampoline without CFI that says so
 * (libunwind recognises x86-64 Linux's rt_sigreturn sequence, mov $15,
 * %rax; syscall); only read where the code is known mapped. */
static int sigreturn_at(uint64_t ip)
{
    static const unsigned char seq[9] = {0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05};
    return (vprof_cfi_in_object(ip) || in_registered(ip)) &&
           (vprof_cfi_in_object(ip + sizeof seq - 1) || in_registered(ip + sizeof seq - 1)) &&
           !memcmp((const void *)(uintptr_t)ip, seq, sizeof seq);
}

/* The walk as it always was: libunwind for every frame. (Out of line, as
 * walk_check: vprof_unwind_regs stays a jump to walk_table.) */
static __attribute__((noinline)) int walk_libunwind(const ucontext_t *uc, unsigned max_depth,
                          vprof_frame_fn fn, void *arg)
{
    unw_cursor_t cur;
    if (unw_init_local2(&cur, (unw_context_t *)(uintptr_t)uc, UNW_INIT_SIGNAL_FRAME) < 0)
        return 0;
    int exact = 1;              /* the cursor's IP is the executing instruction */
    for (unsigned d = 1; d <= max_depth; d++) {
        unw_word_t at;
        if (unw_get_reg(&cur, UNW_REG_IP, &at) < 0)
            return 0;
        if (!libunwind_may_step(at, exact)) {
            __atomic_fetch_add(&n_unknown, 1, __ATOMIC_RELAXED);
            return VPROF_UNWIND_UNKNOWN;
        }
        /* the frame below a signal trampoline was interrupted, its PC is
         * exact: walk_table's rule, whose frames check mode compares with
         * libunwind's (asking unw_is_signal_frame here instead stopped
         * t_unwinder's walks below its SIGALRM handler) */
        exact = sigreturn_at(at);
        int rc = unw_step(&cur);
        if (rc <= 0)
            return rc == 0 ? VPROF_UNWIND_END : 0;
        struct vprof_regs r;
        uint64_t ip = from_cursor(&cur, &r);
        if (!ip)
            return VPROF_UNWIND_END;
        if (fn(arg, d, ip - 1, &r))
            return 0;
    }
    return 0;
}

/* ---------- the table, with libunwind for what it does not cover ---------- */

/* The frame being unwound. regs.r holds DWARF 0-15 and, in r[16], its IP
 * - 1: the PC reported for a caller (the call instruction's last byte);
 * a register without a rule keeps its value from the frame below, as in
 * libunwind, and `have` drops those with no value (DW_CFA_undefined).
 * regs.valid is what the frame reports: see REPORTED. */
struct walk {
    struct vprof_regs *regs;    /* the frame's (the caller's scratch space) */
    uint32_t have;
    int exact;                  /* the PC is the executing instruction (frame 0,
                                   or below a signal trampoline): looked up as is */
    /* the rule of the last step, whose saved registers are not loaded yet
     * (NULL: none pending): see restore */
    const struct vprof_cfi_rule *pend;
};


/* An 8-byte load from the stack: direct inside [lo, hi - 8] (hi >= 8;
 * lo = UINT64_MAX, hi = 8: none), guarded elsewhere. */
static inline int load(uint64_t lo, uint64_t hi, uint64_t addr, uint64_t *v)
{
    if (addr >= lo && addr <= hi - 8) {
        __builtin_memcpy(v, (const void *)(uintptr_t)addr, 8);
        return 0;
    }
    return vprof_memread(NULL, addr, v, 8);
}

/* One step with the table. 1: stepped to the caller; 0: no caller (the
 * outermost frame); -1: no rule here; -2: a signal trampoline (libunwind's
 * to step); -3: the stack cannot be read.
 * [lo, hi): the thread's stack above the interrupted stack pointer. */
/* Loads the registers the last step's frame saved, from its CFA (the
 * caller's rsp). 0, or -3 when the stack cannot be read. */
static inline int restore(struct walk *w, uint64_t lo, uint64_t hi)
{
    const struct vprof_cfi_rule *ru = w->pend;
    uint64_t *r = w->regs->r, cfa = r[VPF_RSP];
    w->pend = NULL;
    unsigned m = ru->saved;
    if (m == 1u << VPF_RBP) {   /* a frame-pointer frame: rbp alone */
        if (load(lo, hi, cfa + (uint64_t)(int64_t)ru->save[1] * 8, &r[VPF_RBP]) < 0)
            return -3;
    } else {
        for (; m; m &= m - 1) {
            unsigned reg = (unsigned)__builtin_ctz(m);
            int8_t k = ru->save[vprof_cfi_save_index[reg]];
            if (load(lo, hi, cfa + (uint64_t)(int64_t)k * 8, &r[reg]) < 0)
                return -3;
        }
    }
    w->have |= ru->saved & ~(uint32_t)ru->undef;
    return 0;
}

static inline int table_step(struct walk *w, uint64_t lo, uint64_t hi)
{
    uint64_t *r = w->regs->r;
    if (w->pend && restore(w, lo, hi) < 0)
        return -3;
    const struct vprof_cfi_rule *ru = vprof_cfi_find(r[16] + (unsigned)w->exact);
    if (!ru)
        return -1;
    if (ru->kind != VPROF_CFI_STEP)
        return ru->kind == VPROF_CFI_END ? 0 : -2;
    if (!(w->have & (1u << ru->cfa_reg)))
        return -1;
    uint64_t cfa = r[ru->cfa_reg] + (uint64_t)(int64_t)ru->cfa_off, ra;
    if (cfa <= r[VPF_RSP])
        return -1;              /* not a frame of ours to judge: libunwind's */
    if (load(lo, hi, cfa - 8, &ra) < 0)
        return -3;
    /* (a failed load ends the walk: the registers half restored are not
     * used again) The saved registers are loaded by restore: at once for
     * a frame in the executable, when the walk goes on for the others. */
    w->have &= ~(uint32_t)(ru->saved | ru->undef);
    w->pend = ru->saved ? ru : NULL;
    r[VPF_RSP] = cfa;
    r[16] = ra - 1;
    w->exact = 0;
    return ra ? 1 : 0;
}

static const int greg_of[17] = {
    REG_RAX, REG_RDX, REG_RCX, REG_RBX, REG_RSI, REG_RDI, REG_RBP, REG_RSP,
    REG_R8, REG_R9, REG_R10, REG_R11, REG_R12, REG_R13, REG_R14, REG_R15, REG_RIP,
};

/* A libunwind cursor at the walk's current frame. */
static int cursor_at(const struct walk *w, const ucontext_t *uc0, int first,
                     unw_cursor_t *cur)
{
    if (first)
        return unw_init_local2(cur, (unw_context_t *)(uintptr_t)uc0, UNW_INIT_SIGNAL_FRAME);
    ucontext_t uc;
    memset(&uc.uc_mcontext, 0, sizeof uc.uc_mcontext);
    for (int i = 0; i < 16; i++)
        uc.uc_mcontext.gregs[greg_of[i]] = (greg_t)w->regs->r[i];
    uc.uc_mcontext.gregs[REG_RIP] = (greg_t)(w->regs->r[16] + 1);
    return unw_init_local2(cur, (unw_context_t *)&uc, w->exact ? UNW_INIT_SIGNAL_FRAME : 0);
}

/* Check mode: how the table walk of this thread's checked tick took each
 * step (T: the table, U: libunwind, S: a signal trampoline; lower case
 * when the frame's PC was exact). */
static __thread char *trace __attribute__((tls_model("initial-exec")));

/* The walk from frame d on, whose table step gave rc (was_exact: the
 * frame's PC was exact before it): libunwind for the frames the table has
 * no rule for, the table for the others, check mode's trace. Out of line:
 * walk_table's own loop stays lean for the common walk, the table's all
 * the way. table: the table's steps so far. */
static __attribute__((noinline)) int
walk_on(const ucontext_t *uc, struct walk *w, uint64_t lo, uint64_t hi, unsigned d, int rc,
        int was_exact, unsigned max_depth, vprof_frame_fn fn, void *arg, unsigned table)
{
    int end = 0;
    unw_cursor_t cur;
    int live = 0;               /* cur is at the walk's current frame */
    unsigned unw = 0;
    char *tr = trace;
    for (;;) {
        if (__builtin_expect(tr != NULL, 0) && d <= VPROF_UNWIND_DIFF_FRAMES)
            tr[d - 1] = (char)((rc == -2 ? 'S' : rc < 0 ? 'U' : 'T') + (was_exact ? 32 : 0));
        if (rc == -3)
            break;
        if (__builtin_expect(rc < 0, 0)) {
            if (!libunwind_may_step(w->regs->r[16] + 1, w->exact)) {
                end = VPROF_UNWIND_UNKNOWN;
                __atomic_fetch_add(&n_unknown, 1, __ATOMIC_RELAXED);
                break;
            }
            if (!live && cursor_at(w, uc, d == 1, &cur) < 0)
                break;
            live = 1;
            /* The frame below a signal trampoline was interrupted: its PC
             * is exact (libunwind: use_prev_instr = 0 after an 'S' FDE or
             * the sigreturn code). */
            int sig = rc == -2 || sigreturn_at(w->regs->r[16] + 1);
            unw++;
            int st = unw_step(&cur);
            if (st <= 0) {
                end = st == 0 ? VPROF_UNWIND_END : 0;
                break;
            }
            unw_word_t ip = 0, v;
            if (unw_get_reg(&cur, UNW_REG_IP, &ip) < 0)
                break;
            if (ip == 0) {
                end = VPROF_UNWIND_END;
                break;
            }
            w->regs->r[16] = ip - 1;
            w->have = 1u << 16;
            for (unsigned i = 0; i < N_SAVED; i++)
                if (unw_get_reg(&cur, saved_regs[i].unw, &v) == 0) {
                    w->regs->r[saved_regs[i].dw] = v;
                    w->have |= 1u << saved_regs[i].dw;
                }
            w->exact = sig;
        } else if (rc == 0) {
            end = VPROF_UNWIND_END;
            break;
        } else {
            live = 0;
            table++;
            if (w->pend && w->regs->r[16] - want_lo < want_span && restore(w, lo, hi) < 0)
                break;
        }
        w->regs->valid = (w->have & REPORTED) | (1u << VPF_RIP);
        if (fn(arg, d, w->regs->r[16], w->regs) || ++d > max_depth)
            break;
        was_exact = w->exact;
        rc = table_step(w, lo, hi);
    }
    if (counting) {
        __atomic_fetch_add(&n_table_steps, table, __ATOMIC_RELAXED);
        __atomic_fetch_add(&n_unw_steps, unw, __ATOMIC_RELAXED);
    }
    return end;
}

/* regs: the interrupted frame's registers, as vprof_regs_from_ucontext
 * reads them from uc; the walk's scratch space from then on. */
static int walk_table(const ucontext_t *uc, struct vprof_regs *regs, uint64_t win_lo,
                      uint64_t win_hi, unsigned max_depth, vprof_frame_fn fn, void *arg)
{
    struct walk w;
    w.regs = regs;
    w.regs->r[16]--;             /* r[16] is always an IP - 1; exact says which */
    w.regs->xmm = NULL;
    w.have = (1u << 17) - 1;
    w.exact = 1;
    w.pend = NULL;
    uint64_t lo = win_lo, hi = win_hi;
    if (!hi) {
        lo = UINT64_MAX;        /* (hi - 8 must not wrap) */
        hi = 8;
    }
    unsigned table = 0;
    for (unsigned d = 1; d <= max_depth; d++) {
        int was_exact = w.exact;
        int rc = table_step(&w, lo, hi);
        if (rc != 1 || __builtin_expect(trace != NULL, 0))
            return walk_on(uc, &w, lo, hi, d, rc, was_exact, max_depth, fn, arg, table);
        table++;
        if (w.pend && w.regs->r[16] - want_lo < want_span && restore(&w, lo, hi) < 0)
            break;
        w.regs->valid = (w.have & REPORTED) | (1u << VPF_RIP);
        if (fn(arg, d, w.regs->r[16], w.regs))
            break;
    }
    if (counting)
        __atomic_fetch_add(&n_table_steps, table, __ATOMIC_RELAXED);
    return 0;
}

/* The thread's stack window for registers regs (0, 0: none). */
static void stack_window(const struct vprof_regs *regs, uint64_t *lo, uint64_t *hi)
{
    if (!vprof_stack_window(regs->r[VPF_RSP], lo, hi))
        *lo = *hi = 0;
}

/* ---------- both, compared (VPROF_UNWINDER=check) ---------- */

/* Frames compared per tick: VPROF_UNWIND's maximum (64) and the 32 other
 * frames a tick may step through. */
#define CHECK_MAX 96

struct frames {
    unsigned n;
    uint64_t pc[CHECK_MAX];
    struct vprof_regs r[CHECK_MAX];
};

static int collect(void *arg, unsigned depth, uint64_t pc, const struct vprof_regs *regs)
{
    struct frames *f = arg;
    (void)depth;
    if (f->n >= CHECK_MAX)
        return 1;
    f->pc[f->n] = pc;
    f->r[f->n] = *regs;
    f->n++;
    return 0;
}

static void note_diff(const char *path, unsigned depth, uint64_t pc_table, uint64_t pc_unw, int reg,
                      uint64_t v_table, uint64_t v_unw, uint32_t valid_table, uint32_t valid_unw,
                      const struct frames *a, const struct frames *b)
{
    if (__atomic_exchange_n(&have_diff, 1, __ATOMIC_ACQ_REL))
        return;
    first_diff = (struct vprof_unwind_diff){depth, reg, pc_table, pc_unw, v_table, v_unw,
                                            valid_table, valid_unw, .n_table = a->n,
                                            .n_libunwind = b->n};
    memcpy(first_diff.path, path, sizeof first_diff.path);
    for (unsigned i = 0; i < VPROF_UNWIND_DIFF_FRAMES; i++) {
        first_diff.pcs_table[i] = i < a->n ? a->pc[i] : 0;
        first_diff.pcs_libunwind[i] = i < b->n ? b->pc[i] : 0;
    }
}

static __attribute__((noinline)) int walk_check(const ucontext_t *uc, unsigned max_depth,
                      vprof_frame_fn fn, void *arg)
{
    /* ~30 KiB, neither on a signal stack nor in every thread's TLS: one
     * pair, taken by one tick at a time (a tick that finds it taken is
     * unwound with the table alone, unchecked). */
    static struct frames a, b;
    static int busy;
    struct vprof_regs regs;
    uint64_t lo, hi;
    vprof_regs_from_ucontext(uc, &regs);
    stack_window(&regs, &lo, &hi);
    if (__atomic_exchange_n(&busy, 1, __ATOMIC_ACQUIRE))
        return walk_table(uc, &regs, lo, hi, max_depth, fn, arg);
    unsigned depth = max_depth < CHECK_MAX ? max_depth : CHECK_MAX;
    static char path[VPROF_UNWIND_DIFF_FRAMES + 1];
    memset(path, 0, sizeof path);
    a.n = b.n = 0;
    trace = path;
    int end = walk_table(uc, &regs, lo, hi, depth, collect, &a);
    trace = NULL;
    walk_libunwind(uc, depth, collect, &b);
    unsigned n = a.n > b.n ? a.n : b.n, differ = 0;
    for (unsigned i = 0; i < n; i++) {
        int bad = 0;
        if (i >= a.n || i >= b.n) {
            note_diff(path, i + 1, i < a.n ? a.pc[i] : 0, i < b.n ? b.pc[i] : 0, -1, a.n, b.n, 0, 0, &a, &b);
            bad = 1;
        } else if (a.pc[i] != b.pc[i] ||
                   (a.r[i].valid != b.r[i].valid &&
                    /* a frame outside the executable may leave out the
                     * registers its callee saved (loaded only if the walk
                     * goes on: see want_lo); the rest must agree */
                    (a.pc[i] - want_lo < want_span || (a.r[i].valid & ~b.r[i].valid)))) {
            note_diff(path, i + 1, a.pc[i], b.pc[i], -1, 0, 0, a.r[i].valid, b.r[i].valid, &a, &b);
            bad = 1;
        } else {
            for (int k = 0; k < 17 && !bad; k++)
                if ((a.r[i].valid & (1u << k)) && a.r[i].r[k] != b.r[i].r[k]) {
                    note_diff(path, i + 1, a.pc[i], b.pc[i], k, a.r[i].r[k], b.r[i].r[k],
                              a.r[i].valid, b.r[i].valid, &a, &b);
                    bad = 1;
                }
        }
        differ += bad;
    }
    __atomic_fetch_add(&n_checked, n, __ATOMIC_RELAXED);
    __atomic_fetch_add(&n_differ, differ, __ATOMIC_RELAXED);
    unsigned i;
    for (i = 0; i < a.n && i < max_depth; i++)
        if (fn(arg, i + 1, a.pc[i], &a.r[i])) {
            end = 0;
            break;
        }
    __atomic_store_n(&busy, 0, __ATOMIC_RELEASE);
    return end;
}

int vprof_unwind_regs(const ucontext_t *uc, struct vprof_regs *regs, uint64_t win_lo,
                      uint64_t win_hi, unsigned max_depth, vprof_frame_fn fn, void *arg)
{
    if (max_depth == 0)
        return 0;
    switch (unwinder) {
    case VPROF_UNWINDER_LIBUNWIND:
        return walk_libunwind(uc, max_depth, fn, arg);
    case VPROF_UNWINDER_CHECK:
        return walk_check(uc, max_depth, fn, arg);
    default:
        return walk_table(uc, regs, win_lo, win_hi, max_depth, fn, arg);
    }
}

int vprof_unwind(const ucontext_t *uc, unsigned max_depth,
                 vprof_frame_fn fn, void *arg)
{
    struct vprof_regs regs;
    uint64_t lo = 0, hi = 0;
    if (max_depth == 0)
        return 0;
    if (unwinder == VPROF_UNWINDER_CFI) {
        vprof_regs_from_ucontext(uc, &regs);
        stack_window(&regs, &lo, &hi);
    }
    return vprof_unwind_regs(uc, &regs, lo, hi, max_depth, fn, arg);
}

int vprof_unwind_permanent(uint64_t pc)
{
    return vprof_cfi_in_object(pc);
}

int vprof_unwind_rule_at(uint64_t pc, struct vprof_unwind_rule *r)
{
    if (unwinder == VPROF_UNWINDER_LIBUNWIND)
        return -1;
    const struct vprof_cfi_rule *ru = vprof_cfi_find_span(pc, &r->lo, &r->hi);
    if (!ru || ru->kind != VPROF_CFI_STEP)
        return -1;
    r->cfa_reg = ru->cfa_reg;
    r->cfa_off = ru->cfa_off;
    return 0;
}

void vprof_unwind_counts(struct vprof_unwind_counts *c)
{
    struct vprof_cfi_stats s;
    vprof_cfi_get_stats(&s);
    memset(c, 0, sizeof *c);
    c->mode = unwinder;
    c->objects = s.objects;
    c->rows = s.rows;
    c->fdes = s.fdes;
    c->bad_fdes = s.bad_fdes;
    c->table_steps = __atomic_load_n(&n_table_steps, __ATOMIC_RELAXED);
    c->unw_steps = __atomic_load_n(&n_unw_steps, __ATOMIC_RELAXED);
    c->unknown = __atomic_load_n(&n_unknown, __ATOMIC_RELAXED);
    c->checked = __atomic_load_n(&n_checked, __ATOMIC_RELAXED);
    c->differ = __atomic_load_n(&n_differ, __ATOMIC_RELAXED);
    c->have_diff = __atomic_load_n(&have_diff, __ATOMIC_ACQUIRE);
    if (c->have_diff)
        c->first = first_diff;
}
