/* core.c - the sampling core: metadata, tables, value samples per tick. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core.h"
#include "memread.h"
#include "stacks.h"
#include "unwind.h"
#include "value_read.h"
#include "vartable.h"

static struct {
    int have_values;            /* metadata loaded and tables built */
    int values_open;            /* sample file mapped */
    struct vpf_meta meta;
    struct vprof_vartable vt;
    struct vpf_recfile_w rec;
    uint64_t addr_bias;         /* added to ADDR locations (PIE) */
    /* The settings (its pointers are not kept: meta_path, build_id and the
     * safe ranges are used by vprof_core_init only). */
    struct vprof_core_config cfg;
    uint64_t ticks, cut, overdue;   /* atomic */
} core;

static __thread pid_t my_tid __attribute__((tls_model("initial-exec")));
static __thread uint16_t my_tick __attribute__((tls_model("initial-exec")));
/* When this thread's last tick ended (about: its last look at the clock),
 * and whether it ran long (a quarter of the timer period or more). */
static __thread uint64_t my_last_end __attribute__((tls_model("initial-exec")));
static __thread int my_last_long __attribute__((tls_model("initial-exec")));

uint64_t vprof_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void hex(char *dst, const uint8_t *b, size_t n)
{
    static const char d[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        dst[2 * i] = d[b[i] >> 4];
        dst[2 * i + 1] = d[b[i] & 15];
    }
    dst[2 * n] = 0;
}

int vprof_core_init(const struct vprof_core_config *cfg, char *err, size_t errlen)
{
    vpf_err e;
    memset(&core, 0, sizeof core);
    core.cfg = *cfg;
    vprof_unwind_init();
    vprof_memread_clear_safe();
    for (int i = 0; i < cfg->n_safe; i++)
        vprof_memread_add_safe(cfg->safe_lo[i], cfg->safe_hi[i]);
    vprof_memread_force_pipe(cfg->read_pipe);
    if (!cfg->meta_path)
        return 0;
    if (vpf_meta_load(cfg->meta_path, &core.meta, &e) < 0) {
        snprintf(err, errlen, "%s", e.msg);
        return -1;
    }
    const struct vpf_meta_header *h = &core.meta.hdr;
    if (h->build_id_len && (h->build_id_len != cfg->build_id_len ||
                            memcmp(h->build_id, cfg->build_id, h->build_id_len))) {
        char want[65], have[65];
        hex(want, h->build_id, h->build_id_len);
        hex(have, cfg->build_id ? cfg->build_id : (const uint8_t *)"", cfg->build_id_len);
        snprintf(err, errlen, "%s: offset 32: build-id %s does not match the executable's (%s)",
                 cfg->meta_path, want, have[0] ? have : "none");
        vpf_meta_free(&core.meta);
        return -1;
    }
    char why[256];
    if (vprof_vartable_build(&core.vt, &core.meta, cfg->load_bias, cfg->text_lo,
                             cfg->text_hi, cfg->table_div, cfg->max_elems,
                             why, sizeof why) < 0) {
        snprintf(err, errlen, "%s: offset 0: %s", cfg->meta_path, why);
        vpf_meta_free(&core.meta);
        return -1;
    }
    core.addr_bias = (h->flags & VPF_META_F_RELATIVE) ? cfg->load_bias : 0;
    core.have_values = 1;
    return 1;
}

int vprof_core_open_values(int fd, uint64_t capacity, uint32_t hz,
                           uint64_t start_ns, char *err, size_t errlen)
{
    vpf_err e;
    if (!core.have_values)
        return -1;
    if (vpf_recfile_create(fd, VPF_VALUES_MAGIC, VPF_VALUES_VERSION,
                           sizeof(struct vpf_value_rec), capacity, &core.rec, &e) < 0) {
        snprintf(err, errlen, "%s", e.msg);
        close(fd);
        return -1;
    }
    /* The mapping outlives the descriptor; closing it now means a program
     * that closes or reuses descriptors can never make us write through a
     * stale one. */
    close(fd);
    core.rec.fd = -1;
    struct vpf_values_header *vh = (struct vpf_values_header *)core.rec.base;
    vh->start_ns = start_ns;
    vh->hz = hz;
    __atomic_store_n(&core.values_open, 1, __ATOMIC_RELEASE);
    return 0;
}

const struct vpf_meta *vprof_core_meta(void)
{
    return core.have_values ? &core.meta : NULL;
}

void vprof_core_thread_init(void)
{
    my_tid = (pid_t)syscall(SYS_gettid);
    pthread_attr_t a;
    void *lo;
    size_t sz;
    if (pthread_getattr_np(pthread_self(), &a) == 0) {
        if (pthread_attr_getstack(&a, &lo, &sz) == 0)
            vprof_memread_set_stack((uint64_t)(uintptr_t)lo, (uint64_t)(uintptr_t)lo + sz);
        pthread_attr_destroy(&a);
    }
}

void vprof_core_thread_exit(void)
{
    vprof_memread_thread_exit();
}

/* ---------- the tick ---------- */

/* A tick's cost must stay well under the timer period whatever the
 * metadata says: a thread-directed SIGPROF that is due again when the
 * handler returns is delivered before anything else, so a tick that costs
 * more than a period would starve the program and every process-wide
 * signal, SIGTERM included. So each tick has a budget of system-call reads
 * and of wall time. The memory reader counts those reads and looks at the
 * clock after each; the tick looks at it after every unwound frame and
 * every CLOCK_EVERY samples. */
#define CLOCK_EVERY 64

struct tick_ctx {
    uint64_t now;
    uint32_t countdown;         /* samples until the next look at the clock */
    uint32_t program_frames;    /* program callers above the leaf so far */
    int have_leaf;              /* the innermost program frame was seen */
    uint16_t tick;
    uint8_t weight;             /* FORMATS.md §3: flags bits 0-6 */
    struct vprof_memread_ctx mem;   /* also holds the budget and `cut` */
};

/* Looks at the clock; non-zero when the budget is spent (by time, or by
 * the reader's count: after that the reader refuses every read that needs
 * a system call, so at most CLOCK_EVERY cheap samples follow). */
static int clock_spent(struct tick_ctx *t)
{
    t->countdown = CLOCK_EVERY;
    if (t->mem.cut)
        return 1;
    t->mem.clock = vprof_mono_ns();
    if (t->mem.clock >= t->mem.deadline)
        t->mem.cut = 1;
    return t->mem.cut;
}

/* Descriptors carrying only a value kind: all the value reader needs from
 * the variable, without touching the metadata's descriptor array. */
static const struct vpf_var_desc kind_desc[] = {
    {.kind = 0}, {.kind = 1}, {.kind = 2}, {.kind = 3}, {.kind = 4}, {.kind = 5},
};

static void record(struct tick_ctx *t, const struct vprof_hot *h, uint64_t pc,
                   const struct vprof_regs *regs, unsigned depth)
{
    uint64_t val;
    const struct vpf_var_desc *v = h->kind < 6 ? &kind_desc[h->kind] : &kind_desc[1];
    int rc = vprof_read_value(&h->e, v, regs, core.addr_bias, vprof_memread, &t->mem, &val);
    if (rc != VPROF_READ_OK)
        return;                 /* faults are counted by the reader */
    struct vpf_value_rec *r = vpf_recfile_claim(&core.rec);
    if (!r)
        return;                 /* full: counted in the header's dropped */
    r->value = val;
    r->pc = pc;
    r->time_ns = t->now;
    r->var = h->e.var;
    r->tid = (uint32_t)my_tid;
    r->depth = (uint8_t)depth;
    r->tick = t->tick;
    r->entry = h->index;
    r->flags = t->weight;
    vpf_commit_flag(&r->flags);
}

struct frame_ctx {
    struct tick_ctx *t;
    uint64_t pc;
    const struct vprof_regs *regs;
    unsigned depth;
};

static int record_live(void *arg, const struct vprof_hot *h)
{
    struct frame_ctx *f = arg;
    record(f->t, h, f->pc, f->regs, f->depth);
    return --f->t->countdown == 0 && clock_spent(f->t);
}

/* Samples every variable live at pc with the given registers; non-zero
 * when the budget ended the walk. */
static int sample_frame(struct tick_ctx *t, uint64_t pc,
                        const struct vprof_regs *regs, unsigned depth)
{
    struct frame_ctx f = {t, pc, regs, depth};
    return vprof_vartable_live(&core.vt, pc, record_live, &f);
}

static int on_caller(void *arg, unsigned depth, uint64_t pc, const struct vprof_regs *regs)
{
    struct tick_ctx *t = arg;
    if (clock_spent(t))         /* the step itself may have been slow */
        return 1;
    if (pc < core.cfg.text_lo || pc >= core.cfg.text_hi)
        return 0;               /* libc, the mcount trampoline: no metadata */
    t->mem.rsp = regs->r[VPF_RSP];
    if (sample_frame(t, pc, regs, depth))
        return 1;
    /* The tick landed outside the program (libc, mcount): its innermost
     * program frame is the leaf, and the depth counts callers above it. */
    if (!t->have_leaf) {
        t->have_leaf = 1;
        return 0;
    }
    return ++t->program_frames >= core.cfg.unwind_depth && !core.cfg.unwind_all;
}

void vprof_core_tick(const ucontext_t *uc, uint64_t now_ns, unsigned weight)
{
    __atomic_fetch_add(&core.ticks, 1, __ATOMIC_RELAXED);
    if (!my_tid)                /* a thread we did not set up */
        my_tid = (pid_t)syscall(SYS_gettid);
    vprof_stacks_tick(uc, now_ns, weight, (uint32_t)my_tid);   /* VPROF_STACKS */
    if (!__atomic_load_n(&core.values_open, __ATOMIC_ACQUIRE))
        return;
    /* Due again less than half a period after a long tick ended: that
     * tick ate the period. Let the program run before sampling again.
     * (Short gaps after short ticks happen on a loaded machine, where a
     * signal can be delivered late: those ticks are sampled.) */
    if (my_last_long && now_ns - my_last_end < core.cfg.period_ns / 2) {
        __atomic_fetch_add(&core.overdue, 1, __ATOMIC_RELAXED);
        my_last_end = now_ns;
        my_last_long = 0;
        return;
    }
    struct tick_ctx t = {.now = now_ns, .countdown = CLOCK_EVERY, .tick = ++my_tick,
                         .weight = (uint8_t)(weight < 1 ? 1 : weight > VPF_WEIGHT_MAX ? VPF_WEIGHT_MAX
                                                                                      : weight)};
    t.mem.deadline = core.cfg.tick_budget_ns ? now_ns + core.cfg.tick_budget_ns : UINT64_MAX;
    t.mem.clock = now_ns;
    t.mem.slow_max = core.cfg.tick_reads;
    struct vprof_regs regs;
    vprof_regs_from_ucontext(uc, &regs);
    t.mem.rsp = regs.r[VPF_RSP];
    t.have_leaf = regs.r[VPF_RIP] >= core.cfg.text_lo && regs.r[VPF_RIP] < core.cfg.text_hi;
    if (!sample_frame(&t, regs.r[VPF_RIP], &regs, 0) && core.cfg.unwind_depth)
        vprof_unwind(uc, core.cfg.unwind_depth + (core.cfg.unwind_all ? 0 : VPROF_UNWIND_OTHER),
                     on_caller, &t);
    if (t.mem.faults) {
        struct vpf_values_header *vh = (struct vpf_values_header *)core.rec.base;
        __atomic_fetch_add(&vh->faults, t.mem.faults, __ATOMIC_RELAXED);
    }
    if (t.mem.cut)
        __atomic_fetch_add(&core.cut, 1, __ATOMIC_RELAXED);
    my_last_end = t.mem.clock;
    my_last_long = t.mem.clock - now_ns >= core.cfg.period_ns / 4;
}

void vprof_core_fork_child(void)
{
    my_tid = (pid_t)syscall(SYS_gettid);
    vprof_memread_reset_pid();
    vprof_stacks_fork_child();
    __atomic_store_n(&core.ticks, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&core.cut, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&core.overdue, 0, __ATOMIC_RELAXED);
    if (core.values_open) {
        /* The parent's file stays the parent's: unmap our copy of the
         * shared mapping without truncating or flagging it. */
        core.values_open = 0;
        munmap(core.rec.base, core.rec.map_len);
        memset(&core.rec, 0, sizeof core.rec);
    }
}

void vprof_core_close(void)
{
    if (core.values_open) {
        __atomic_store_n(&core.values_open, 0, __ATOMIC_RELEASE);
        vpf_recfile_close(&core.rec, 1);
    }
}

void vprof_core_counts(struct vprof_core_counts *c)
{
    memset(c, 0, sizeof *c);
    c->ticks = __atomic_load_n(&core.ticks, __ATOMIC_RELAXED);
    c->cut = __atomic_load_n(&core.cut, __ATOMIC_RELAXED);
    c->overdue = __atomic_load_n(&core.overdue, __ATOMIC_RELAXED);
    if (core.values_open) {
        const struct vpf_values_header *vh = (const void *)core.rec.base;
        uint64_t n = __atomic_load_n(&vh->n_reserved, __ATOMIC_RELAXED);
        c->samples = n < vh->capacity ? n : vh->capacity;
        c->dropped = vh->dropped;
        c->faults = vh->faults;
    }
}
