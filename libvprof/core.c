/* core.c - the sampling core: metadata, tables, value samples per tick. */
#include <stddef.h>
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
    /* vt.always[0..n_batch): always-live entries read with one plain load
     * that cannot fail (ABS8 plans: the executable's globals). The first
     * frame a tick samples records them all, from this compact copy, as
     * the tick's global group: one claim, no per-entry dispatch, each read
     * once; later frames write a frame record instead (sample_frame). */
    uint32_t n_batch;
    struct batch_ent {
        uint64_t addr;
        uint64_t index_hi;      /* the entry index, shifted into its record word */
        uint32_t var;
        uint8_t ext, flags;     /* the plan's extension */
    } *batch;
    size_t batch_len;
    /* vt.always[n_batch..n_batch + n_fixed): the other always-live entries
     * whose value does not depend on the frame - a global behind a pointer
     * (read through it: on the heap, a read that needs a system call), a
     * constant - at most FIXED_MAX. They belong to the group too: read once
     * per tick, not once per frame sampled, their system calls made
     * together (read_fixed). */
    uint32_t n_fixed;
    /* The settings (its pointers are not kept: meta_path, build_id and the
     * safe ranges are used by vprof_core_init only). */
    struct vprof_core_config cfg;
    uint64_t ticks, cut, overdue;   /* atomic */
} core;

#define FIXED_MAX 64            /* see n_fixed */
#define FIXED_CHUNK 16          /* system-call reads of the fixed group made together */

static __thread pid_t my_tid __attribute__((tls_model("initial-exec")));
static __thread uint16_t my_tick __attribute__((tls_model("initial-exec")));
/* Until when this thread's ticks take no values: set by a long tick (a
 * quarter of the timer period or more) to its end plus what it took (at
 * most the tick budget, at least half a period); 0 = no such tick. */
static __thread uint64_t my_quiet_until __attribute__((tls_model("initial-exec")));

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

/* Moves the always-live entries that make up n_fixed behind the ABS8 ones. */
static void group_fixed(void)
{
    for (uint32_t k = core.n_batch; k < core.vt.n_always && core.n_fixed < FIXED_MAX; k++) {
        const struct vprof_plan *p = &core.vt.hot[core.vt.always[k]].plan;
        if ((p->op == VPROF_PLAN_MEM && p->reg == VPROF_PLAN_NONE) ||
            p->op == VPROF_PLAN_CONST) {
            uint32_t at = core.n_batch + core.n_fixed++, x = core.vt.always[at];
            core.vt.always[at] = core.vt.always[k];
            core.vt.always[k] = x;
        }
    }
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
    /* Static addresses inside the executable's segments (its globals) are
     * read with plain loads. */
    for (uint32_t i = 0; i < core.vt.n_entries; i++) {
        struct vprof_plan *p = &core.vt.hot[i].plan;
        if (p->op == VPROF_PLAN_MEM && vprof_memread_safe((uint64_t)p->off, p->size))
            vprof_plan_set_direct(p, vprof_memread_safe((uint64_t)p->off, 8));
    }
    /* the always-live ABS8 entries first: see n_batch */
    for (uint32_t k = 0; k < core.vt.n_always; k++)
        if (core.vt.hot[core.vt.always[k]].plan.op == VPROF_PLAN_ABS8) {
            uint32_t x = core.vt.always[core.n_batch];
            core.vt.always[core.n_batch++] = core.vt.always[k];
            core.vt.always[k] = x;
        }
    group_fixed();
    if (core.n_batch) {
        core.batch_len = core.n_batch * sizeof *core.batch;
        void *m = mmap(NULL, core.batch_len, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED) {
            core.n_batch = 0;   /* they go one by one */
            core.n_fixed = 0;
        } else {
            core.batch = m;
            for (uint32_t k = 0; k < core.n_batch; k++) {
                const struct vprof_hot *hh = &core.vt.hot[core.vt.always[k]];
                core.batch[k] = (struct batch_ent){(uint64_t)hh->plan.off,
                                                   (uint64_t)hh->index << 32, hh->var,
                                                   hh->plan.ext, hh->plan.flags};
            }
        }
    }
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
    vpf_recfile_populate(&core.rec);
    __atomic_store_n(&core.values_open, 1, __ATOMIC_RELEASE);
    return 0;
}

uint32_t vprof_core_refused(void)
{
    return core.have_values ? core.vt.n_refused : 0;
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
#define CLOCK_FRAMES 4
/* Guarded reads that need a system call (a variable on the heap, behind a
 * pointer) cost one each: half a microsecond or more, which made a tick of
 * redis-server, with a hundred of them, 60-70 us. The group's are read
 * once per tick (n_fixed); the others are queued as the tick finds them
 * and made TICK_BATCH at a time with one process_vm_readv
 * (vprof_memread_many), their records written after. */
#define TICK_BATCH 16

struct tick_ctx {
    uint64_t now;
    uint64_t tail;              /* a record's flags (weight, committed) and tick, in
                                   their record word (FORMATS.md §3) */
    uint64_t tid_hi;            /* the thread id, shifted into a record's var|tid word */
    uint64_t win_lo, win_hi;    /* the stack above the interrupted rsp: direct loads */
    uint32_t countdown;         /* samples until the next look at the clock */
    uint32_t program_frames;    /* program callers above the leaf so far */
    uint8_t have_leaf;          /* the innermost program frame was seen */
    uint8_t group;              /* the tick's global group: GROUP_* (0: not yet) */
    /* where the walk left the program: the first library frame above the
     * last program frame (pc 0: none yet), the same above the program
     * frame before it, and the last frame seen (see learn_bottom) */
    uint8_t after_prog;         /* the last frame was a program frame */
    uint8_t last_prog;
    uint8_t probe;              /* sampling is done: walking on to learn about probe_pc */
    uint8_t exit_depth, prev_exit_depth, last_depth;    /* (depths are < 256) */
    uint8_t prog_depth;
    uint8_t max_depth;          /* the walk's limit */
    uint64_t exit_pc, prev_exit_pc, last_pc;
    uint64_t prog_pc;           /* the last program frame */
    uint64_t probe_pc;          /* a library frame (see learn_bottom) */
    struct vprof_memread_ctx mem;   /* also holds the budget and `cut` */
    /* The tick's stack record, filled along the walk (NULL: none). The
     * walk ends at the thread's bottom (stk_done), or where stk_rbp says:
     * a program frame's frame pointer (0: the last frame was not one). */
    struct vprof_stack_walk *stk;
    uint64_t stk_rbp;
    uint8_t stk_done;
    /* Reads that need a system call, queued (n_pend of them) to be made
     * together (flush_reads), and what their records need. */
    uint32_t n_pend;
    struct pending {
        const struct vprof_hot *h;
        uint64_t pc, tail;
        uint64_t addr;
    } pend[TICK_BATCH];
};
_Static_assert(64 + VPROF_UNWIND_OTHER < 256, "a walk's depths fit in a byte (VPROF_UNWIND <= 64)");
/* vprof_core_tick sets every field of both one by one: a new field must
 * be set there too */
_Static_assert(sizeof(struct tick_ctx) == 176 + TICK_BATCH * 32 &&
               sizeof(struct vprof_memread_ctx) == 48,
               "tick_ctx and vprof_memread_ctx: set every field in vprof_core_tick "
               "(pend: the first n_pend)");

enum { GROUP_WRITTEN = 1, GROUP_EMPTY = 2 };   /* tick_ctx.group */

/* Whether a read at addr needs a system call: not on the stack above the
 * interrupted rsp, nor in the executable's segments, nor near NULL. */
static inline int needs_call(const struct tick_ctx *t, uint64_t addr, size_t n)
{
    return !(addr >= t->win_lo && addr <= t->win_hi && n <= t->win_hi - addr) &&
           vprof_memread_needs_call(addr, n);
}

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

/* Descriptors carrying only a value kind: all the general value reader
 * needs from the variable, without touching the metadata's descriptors. */
static const struct vpf_var_desc kind_desc[] = {
    {.kind = 0}, {.kind = 1}, {.kind = 2}, {.kind = 3}, {.kind = 4}, {.kind = 5},
};

/* The tick's memory reader: on the thread's stack above the interrupted
 * stack pointer a plain load; anything else is vprof_memread's (direct in
 * the executable's segments, guarded elsewhere, within the budget). */
static inline int tick_read(void *ctx, uint64_t addr, void *dst, size_t n)
{
    struct tick_ctx *t = ctx;
    if (addr >= t->win_lo && addr <= t->win_hi && n <= t->win_hi - addr) {
        const void *src = (const void *)(uintptr_t)addr;
        switch (n) {
        case 1: __builtin_memcpy(dst, src, 1); break;
        case 2: __builtin_memcpy(dst, src, 2); break;
        case 4: __builtin_memcpy(dst, src, 4); break;
        default: __builtin_memcpy(dst, src, 8); break;
        }
        return 0;
    }
    return vprof_memread(&t->mem, addr, dst, n);
}

_Static_assert(offsetof(struct vpf_value_rec, var) == 24 &&
               offsetof(struct vpf_value_rec, tid) == 28 &&
               offsetof(struct vpf_value_rec, depth) == 32 &&
               offsetof(struct vpf_value_rec, flags) == 33 &&
               offsetof(struct vpf_value_rec, tick) == 34 &&
               offsetof(struct vpf_value_rec, entry) == 36 &&
               sizeof(struct vpf_value_rec) == 40, "value record layout (FORMATS.md §3)");

/* Claims n records; returns the first and how many fit (the rest are
 * counted in the header's dropped). */
static inline struct vpf_value_rec *claim(uint32_t n, uint32_t *fit)
{
    struct vpf_rec_header *fh = (struct vpf_rec_header *)core.rec.base;
    uint64_t i = __atomic_fetch_add(&fh->n_reserved, n, __ATOMIC_RELAXED);
    *fit = i >= core.rec.capacity ? 0 :
           core.rec.capacity - i < n ? (uint32_t)(core.rec.capacity - i) : n;
    if (*fit < n)
        __atomic_fetch_add(&fh->dropped, n - *fit, __ATOMIC_RELAXED);
    return (struct vpf_value_rec *)(core.rec.base + VPF_HEADER_SIZE) + i;
}

/* Fills one record; last: its last 8 bytes (depth, flags, tick and entry),
 * stored last, the committed bit with them: the release store that
 * publishes the record (vpf_commit_flag). */
static inline __attribute__((always_inline)) void
put(struct vpf_value_rec *r, uint64_t value, uint64_t pc, uint64_t now, uint64_t var_tid,
    uint64_t last)
{
    r->value = value;
    r->pc = pc;
    r->time_ns = now;
    __builtin_memcpy(&r->var, &var_tid, 8);
    __atomic_store_n((uint64_t *)(void *)&r->depth, last, __ATOMIC_RELEASE);
}

/* Makes the queued reads and writes the records of those that succeeded. */
static void flush_reads(struct tick_ctx *t)
{
    uint32_t n = t->n_pend, m = 0, fit;
    struct iovec local[TICK_BATCH], remote[TICK_BATCH];
    uint64_t raw[TICK_BATCH];
    uint8_t ok[TICK_BATCH];
    if (!n || n > TICK_BATCH)
        return;
    t->n_pend = 0;
    for (uint32_t i = 0; i < n; i++) {
        raw[i] = 0;
        local[i] = (struct iovec){&raw[i], t->pend[i].h->plan.size};
        remote[i] = (struct iovec){(void *)(uintptr_t)t->pend[i].addr, t->pend[i].h->plan.size};
    }
    vprof_memread_many(&t->mem, local, remote, n, ok);
    for (uint32_t i = 0; i < n; i++)
        m += ok[i];
    if (!m)
        return;
    struct vpf_value_rec *r = claim(m, &fit), *end = r + fit;
    for (uint32_t i = 0; i < n && r < end; i++) {
        const struct pending *p = &t->pend[i];
        if (ok[i])
            put(r++, vprof_plan_extend(&p->h->plan, raw[i]), p->pc, t->now,
                p->h->var | t->tid_hi, p->tail | (uint64_t)p->h->index << 32);
    }
}

/* Queues a read that needs a system call, within the tick's budget. */
static void queue_read(struct tick_ctx *t, const struct vprof_hot *h, uint64_t pc,
                       uint64_t tail, uint64_t addr)
{
    if (vprof_memread_take(&t->mem) < 0)
        return;                 /* the budget is spent (not a fault) */
    t->pend[t->n_pend++] = (struct pending){h, pc, tail, addr};
    if (t->n_pend == TICK_BATCH)
        flush_reads(t);
}

/* tail: the record's last 8 bytes but the entry, for this frame: depth,
 * flags (weight, committed) and tick. */
static inline __attribute__((always_inline)) void
record(struct tick_ctx *t, const struct vprof_hot *h, uint64_t pc,
       const struct vprof_regs *regs, uint64_t tail)
{
    uint64_t val;
    int rc;
    if (h->plan.op == VPROF_PLAN_REG) {     /* (most locals, at -O2: first) */
        rc = vprof_plan_reg(&h->plan, regs, &val);
    } else if (h->plan.op == VPROF_PLAN_MEM && !(h->plan.flags & VPROF_PLAN_DIRECT)) {
        uint64_t addr, raw = 0;
        if (vprof_plan_locate(&h->plan, regs, tick_read, t, &addr) != VPROF_READ_OK)
            return;
        if (needs_call(t, addr, h->plan.size)) {
            queue_read(t, h, pc, tail, addr);
            return;
        }
        if (tick_read(t, addr, &raw, h->plan.size) < 0)
            return;
        val = vprof_plan_extend(&h->plan, raw);
        rc = VPROF_READ_OK;
    } else if (__builtin_expect(h->plan.op != VPROF_PLAN_GENERAL, 1))
        rc = vprof_plan_read(&h->plan, regs, tick_read, t, &val);
    else
        rc = vprof_read_value(&core.meta.entries[h->index],
                              h->kind < 6 ? &kind_desc[h->kind] : &kind_desc[1],
                              vpf_meta_expr(&core.meta, &core.meta.entries[h->index]), regs,
                              core.addr_bias, vprof_memread, &t->mem, &val);
    if (rc != VPROF_READ_OK)
        return;                 /* faults are counted by the reader */
    /* vpf_recfile_claim, with the record size known */
    struct vpf_rec_header *fh = (struct vpf_rec_header *)core.rec.base;
    uint64_t i = __atomic_fetch_add(&fh->n_reserved, 1, __ATOMIC_RELAXED);
    if (i >= core.rec.capacity) {
        __atomic_fetch_add(&fh->dropped, 1, __ATOMIC_RELAXED);
        return;                 /* full: counted in the header's dropped */
    }
    put((struct vpf_value_rec *)(core.rec.base + VPF_HEADER_SIZE) + i, val, pc, t->now,
        h->var | t->tid_hi, tail | (uint64_t)h->index << 32);
}

struct frame_ctx {
    struct tick_ctx *t;
    uint64_t pc;
    const struct vprof_regs *regs;
    uint64_t tail;
};

static inline __attribute__((always_inline)) int record_live(void *arg, const struct vprof_hot *h)
{
    struct frame_ctx *f = arg;
    record(f->t, h, f->pc, f->regs, f->tail);
    return --f->t->countdown == 0 && clock_spent(f->t);
}

/* A record's depth, flags and tick word at this depth (entry 0). */
static inline uint64_t rec_tail(const struct tick_ctx *t, unsigned depth)
{
    return t->tail | (uint8_t)depth;
}

/* A frame record: the tick's global group again, at this frame. Non-zero
 * when the budget ended the walk. */
static inline __attribute__((always_inline)) int
frame_record(struct tick_ctx *t, uint64_t pc, uint64_t tail)
{
    uint32_t fit;
    struct vpf_value_rec *r = claim(1, &fit);
    if (fit)
        put(r, 0, pc, t->now, VPF_VAR_FRAME | t->tid_hi, tail);
    return --t->countdown == 0 && clock_spent(t);
}

/* Reads the fixed entries of the group (n_fixed): val[k] and ok[k] for
 * vt.always[n_batch + k]. Through a global pointer, the value is mostly on
 * the heap: those reads are made FIXED_CHUNK at a time, with one system
 * call. */
static void read_fixed(struct tick_ctx *t, uint64_t *val, uint8_t *ok)
{
    static const struct vprof_regs none;    /* (their plans use no register) */
    for (uint32_t k0 = 0; k0 < core.n_fixed; k0 += FIXED_CHUNK) {
        struct iovec local[FIXED_CHUNK], remote[FIXED_CHUNK];
        uint32_t at[FIXED_CHUNK], m = 0;
        uint8_t got[FIXED_CHUNK];
        for (uint32_t k = k0; k < core.n_fixed && k < k0 + FIXED_CHUNK; k++) {
            const struct vprof_plan *p = &core.vt.hot[core.vt.always[core.n_batch + k]].plan;
            uint64_t addr;
            ok[k] = 0;
            if (p->op == VPROF_PLAN_CONST || (p->flags & VPROF_PLAN_DIRECT) ||
                vprof_plan_locate(p, &none, tick_read, t, &addr) != VPROF_READ_OK ||
                !needs_call(t, addr, p->size)) {
                ok[k] = vprof_plan_read(p, &none, tick_read, t, &val[k]) == VPROF_READ_OK;
                continue;       /* (a pointer read twice, in memory that needs no call) */
            }
            if (vprof_memread_take(&t->mem) < 0)
                continue;       /* the budget is spent (not a fault) */
            val[k] = 0;
            local[m] = (struct iovec){&val[k], p->size};
            remote[m] = (struct iovec){(void *)(uintptr_t)addr, p->size};
            at[m++] = k;
        }
        if (!m)
            continue;
        vprof_memread_many(&t->mem, local, remote, m, got);
        for (uint32_t j = 0; j < m; j++) {
            const struct vprof_plan *p = &core.vt.hot[core.vt.always[core.n_batch + at[j]]].plan;
            ok[at[j]] = got[j];
            val[at[j]] = vprof_plan_extend(p, val[at[j]]);
        }
    }
}

/* The n_batch globals' records from r on (a plain load each), up to end. */
static inline __attribute__((always_inline)) struct vpf_value_rec *
put_batch(struct vpf_value_rec *r, struct vpf_value_rec *end, uint64_t pc, uint64_t now,
          uint64_t tid_hi, uint64_t tail)
{
    const struct batch_ent *b = core.batch;
    if (end - r > core.n_batch)
        end = r + core.n_batch;
    for (; r < end; r++, b++) {
        uint64_t raw;
        __builtin_memcpy(&raw, (const void *)(uintptr_t)b->addr, 8);
        put(r, vprof_extend(raw, b->ext, b->flags), pc, now, b->var | tid_hi,
            tail | b->index_hi);
    }
    return r;
}

/* write_group with fixed entries: they are read first, and the records of
 * those read are claimed with the globals'. */
static __attribute__((noinline)) uint32_t
write_group_fixed(struct tick_ctx *t, uint64_t pc, uint64_t tail)
{
    uint32_t n = core.n_batch, m = 0, fit;
    uint64_t val[FIXED_MAX];
    uint8_t ok[FIXED_MAX];
    read_fixed(t, val, ok);
    for (uint32_t k = 0; k < core.n_fixed; k++)
        m += ok[k];
    if (!n && !m)
        return 0;
    struct vpf_value_rec *r = claim(n + m, &fit), *end = r + fit;
    r = put_batch(r, end, pc, t->now, t->tid_hi, tail);
    for (uint32_t k = 0; k < core.n_fixed && r < end; k++) {
        const struct vprof_hot *h = &core.vt.hot[core.vt.always[n + k]];
        if (ok[k])
            put(r++, val[k], pc, t->now, h->var | t->tid_hi, tail | (uint64_t)h->index << 32);
    }
    return n + m;
}

/* Writes the tick's global group at the first frame it samples (tail: that
 * frame's, the group bit set): the n_batch globals and the fixed entries
 * read. Returns the records it wrote. */
static inline __attribute__((always_inline)) uint32_t
write_group(struct tick_ctx *t, uint64_t pc, uint64_t tail)
{
    if (core.n_fixed)
        return write_group_fixed(t, pc, tail);
    uint32_t fit;
    struct vpf_value_rec *r = claim(core.n_batch, &fit);
    put_batch(r, r + fit, pc, t->now, t->tid_hi, tail);
    return core.n_batch;
}

/* Samples every variable live at pc with the given registers; non-zero
 * when the budget ended the walk. The globals (and the other entries of
 * the group, n_fixed) are read and written once per tick, as the tick's
 * global group, at the first frame sampled; every later frame gets a frame
 * record that stands for the group's samples at that frame (FORMATS.md §3,
 * version 2). */
static int sample_frame(struct tick_ctx *t, uint64_t pc,
                        const struct vprof_regs *regs, unsigned depth)
{
    struct frame_ctx f = {t, pc, regs, rec_tail(t, depth)};
    if (pc < core.vt.text_lo || pc >= core.vt.text_hi)
        return 0;
    uint32_t n = core.n_batch + core.n_fixed;
    if (t->group == GROUP_WRITTEN) {
        if (frame_record(t, pc, f.tail))
            return 1;
    } else if (n && !t->group) {
        t->group = write_group(t, pc, f.tail | VPF_DEPTH_GROUP) ? GROUP_WRITTEN : GROUP_EMPTY;
        if (t->countdown <= n) {
            if (clock_spent(t))
                return 1;
        } else {
            t->countdown -= n;
        }
    }
    return vprof_vartable_live_from(&core.vt, pc, n, record_live, &f);
}

/* ---------- the bottom of a thread's stack ----------
 *
 * Above main, a thread's stack holds only libc's start-up frames
 * (__libc_start_call_main, __libc_start_main) and _start; above a thread's
 * start routine, start_thread and clone3. A walk that has sampled main
 * would step through them all for nothing but _start's globals. So the
 * walks learn, per return address where they leave the program for a
 * library, whether it is the thread's bottom - where the walk leaves the
 * program for the last time: a return into __libc_start_call_main or
 * start_thread - and what lies above it: nothing the tick samples, or one
 * program frame, the outermost (_start), at a known depth offset, where
 * nothing but the global group is live. A walk that leaves the program
 * through a known bottom stops there and writes that frame's record
 * without stepping to it: the same samples, fewer steps.
 *
 * What is learned comes from walks that reached the thread's outermost
 * frame (VPROF_UNWIND_END), not cut short. A walk whose depth ends at a
 * program frame X with a library frame C below it that is not known yet
 * walks on without sampling to learn about C (a probe): the outermost
 * frame right after X makes C a bottom (X is _start); another program
 * frame, a known bottom, or library frames up to the outermost one, make
 * C a callback site (qsort's, below a comparator) - known as such, it is
 * not probed again. A bottom whose outer frame has more than the global
 * group live is known too, as a place to walk on from. Only return
 * addresses in code loaded at start-up (never unloaded) are learned. */
#define BOTTOM_SLOTS 64
#define BOTTOM_PROBES 8
enum {
    BOT_BOTTOM = 1,             /* stop here */
    BOT_WALK = 2,               /* walk on: a callback site, or a bottom whose
                                   outer frame has more than the group to sample */
};
static struct bottom {
    uint64_t key;               /* the return address (atomic; 0: free) */
    uint64_t outer_pc;          /* BOT_BOTTOM: the program frame above it (0: none) */
    uint32_t outer_off;         /* its depth minus the bottom's */
    uint32_t kind;              /* atomic: BOT_*, 0 while being written */
} bottoms[BOTTOM_SLOTS];

static size_t bottom_slot(uint64_t r, unsigned probe)
{
    return (size_t)(((r * 0x9e3779b97f4a7c15ull) >> 40) + probe) % BOTTOM_SLOTS;
}

/* What is known about return address r: its entry (kind BOT_*), or NULL. */
static const struct bottom *bottom_get(uint64_t r)
{
    for (unsigned i = 0; i < BOTTOM_PROBES; i++) {
        const struct bottom *b = &bottoms[bottom_slot(r, i)];
        uint64_t key = __atomic_load_n(&b->key, __ATOMIC_ACQUIRE);
        if (key == r)
            return __atomic_load_n(&b->kind, __ATOMIC_ACQUIRE) ? b : NULL;
        if (!key)
            return NULL;
    }
    return NULL;
}

/* Lock-free: a slot is claimed by compare-and-swap on its key, its facts
 * published after. The first walk to learn about a return address
 * decides; a full table learns nothing more. */
static void bottom_put(uint64_t r, uint32_t kind, uint64_t outer_pc, uint32_t outer_off)
{
    if (!vprof_unwind_permanent(r - 1))
        return;
    for (unsigned i = 0; i < BOTTOM_PROBES; i++) {
        struct bottom *b = &bottoms[bottom_slot(r, i)];
        uint64_t key = __atomic_load_n(&b->key, __ATOMIC_ACQUIRE);
        if (!key && __atomic_compare_exchange_n(&b->key, &key, r, 0, __ATOMIC_ACQ_REL,
                                                __ATOMIC_ACQUIRE)) {
            b->outer_pc = outer_pc;
            b->outer_off = outer_off;
            __atomic_store_n(&b->kind, kind, __ATOMIC_RELEASE);
            return;
        }
        if (key == r)
            return;
    }
}

/* The program frames right below a known bottom (main, a start routine),
 * by the rule-table row their call sites lie in: a frame at a PC of that
 * row has its CFA where the row says, and when the return address there
 * is the bottom's, the walk would step to the bottom and stop. So it
 * stops at the frame itself, without the step, and writes the bottom's
 * outer frame record (depth: the frame's + 1 + the bottom's offset).
 * Learned when a walk stops at a bottom just above such a frame; lock-free
 * (a slot is claimed with an atomic add, published by `ready`). */
#define BOTTOM_FRAMES 8
static struct bottom_frame {
    uint64_t lo, span;          /* the row's PCs */
    int64_t cfa_off;
    uint64_t ret;               /* the bottom's return address */
    uint64_t outer_pc;          /* the bottom's outer frame (0: none) */
    uint32_t outer_off;         /* its depth minus this frame's */
    uint32_t cfa_reg;
    uint32_t ready;             /* atomic */
} bframes[BOTTOM_FRAMES];
static uint32_t n_bframes;      /* atomic: slots claimed */

/* Learns that the program frame at pc (depth d) lies right below the
 * bottom b, which was left at depth d + 1. */
static void bframe_put(uint64_t pc, const struct bottom *b)
{
    struct vprof_unwind_rule ru;
    if (vprof_unwind_rule_at(pc, &ru) < 0 || ru.hi - ru.lo < 2 || ru.cfa_reg > VPF_R15)
        return;
    uint32_t n = __atomic_load_n(&n_bframes, __ATOMIC_ACQUIRE);
    for (uint32_t i = 0; i < n && i < BOTTOM_FRAMES; i++)
        if (__atomic_load_n(&bframes[i].ready, __ATOMIC_ACQUIRE) && bframes[i].lo == ru.lo &&
            bframes[i].ret == b->key)
            return;             /* known (one being written may be learned twice) */
    uint32_t i = __atomic_fetch_add(&n_bframes, 1, __ATOMIC_ACQ_REL);
    if (i >= BOTTOM_FRAMES)
        return;
    struct bottom_frame *f = &bframes[i];
    f->lo = ru.lo;
    f->span = ru.hi - ru.lo;
    f->cfa_off = ru.cfa_off;
    f->cfa_reg = ru.cfa_reg;
    f->ret = b->key;
    f->outer_pc = b->outer_pc;
    f->outer_off = b->outer_off + 1;
    __atomic_store_n(&f->ready, 1, __ATOMIC_RELEASE);
}

/* Whether the program frame at pc (registers regs) lies right below a
 * known bottom; then its outer frame's record is written. */
static inline __attribute__((always_inline)) int
at_bottom_frame(struct tick_ctx *t, uint64_t pc, const struct vprof_regs *regs, unsigned depth)
{
    uint32_t n = __atomic_load_n(&n_bframes, __ATOMIC_ACQUIRE);
    for (uint32_t i = 0; i < n && i < BOTTOM_FRAMES; i++) {
        const struct bottom_frame *f = &bframes[i];
        /* pc and pc + 1 in the row: the rule holds whether pc is a call
         * site or (below a signal frame) the instruction before the one
         * that was interrupted */
        if (!__atomic_load_n(&f->ready, __ATOMIC_ACQUIRE) || pc - f->lo >= f->span - 1 ||
            !(regs->valid & (1u << f->cfa_reg)))
            continue;
        uint64_t cfa = regs->r[f->cfa_reg] + (uint64_t)f->cfa_off, ra;
        if (cfa <= regs->r[VPF_RSP] || cfa - 8 < t->win_lo || cfa > t->win_hi)
            continue;           /* (the walk decides) */
        __builtin_memcpy(&ra, (const void *)(uintptr_t)(cfa - 8), 8);
        if (ra != f->ret)
            continue;
        if (f->outer_pc && t->group == GROUP_WRITTEN && depth + f->outer_off <= t->max_depth)
            frame_record(t, f->outer_pc, rec_tail(t, depth + f->outer_off));
        if (t->stk) {
            vprof_stacks_add(t->stk, ra - 1);   /* the bottom: the chain is whole */
            t->stk_done = 1;
        }
        return 1;
    }
    return 0;
}

static int any_live(void *arg, const struct vprof_hot *h)
{
    (void)arg;
    (void)h;
    return 1;
}

/* After a walk that reached the thread's outermost frame. */
static void learn_bottom(const struct tick_ctx *t)
{
    uint64_t b = t->exit_pc, outer = 0;
    unsigned at = t->exit_depth, off = 0;
    int ok = 1;
    if (t->last_prog) {         /* the outermost frame is the program's: _start */
        b = t->prev_exit_pc;
        at = t->prev_exit_depth;
        outer = t->last_pc;
        off = t->last_depth - at;
        if (outer < core.vt.text_lo || outer >= core.vt.text_hi)
            outer = 0;          /* (no value is read there) */
        else if (vprof_vartable_live_from(&core.vt, outer, core.n_batch + core.n_fixed,
                                          any_live, NULL))
            ok = 0;             /* more than the global group to sample there */
    }
    if (b && !bottom_get(b + 1))
        bottom_put(b + 1, ok ? BOT_BOTTOM : BOT_WALK, outer, off);
    if (t->probe && t->probe_pc != b && !bottom_get(t->probe_pc + 1))
        bottom_put(t->probe_pc + 1, BOT_WALK, 0, 0);
}

static int on_caller(void *arg, unsigned depth, uint64_t pc, const struct vprof_regs *regs)
{
    struct tick_ctx *t = arg;
    int prog = pc >= core.cfg.text_lo && pc < core.cfg.text_hi;
    if (t->stk) {
        vprof_stacks_add(t->stk, pc);
        t->stk_rbp = prog && (regs->valid & (1u << VPF_RBP)) ? regs->r[VPF_RBP] : 0;
    }
    /* A step the unwinder's table takes costs less than a look at the
     * clock; one libunwind takes, a few microseconds: look every
     * CLOCK_FRAMES frames. */
    if ((depth % CLOCK_FRAMES) == 0 && clock_spent(t))
        return 1;
    if (__builtin_expect(t->probe, 0)) {
        /* past the sampled frames, to learn about probe_pc */
        const struct bottom *b = prog ? NULL : t->after_prog ? bottom_get(pc + 1) : NULL;
        if (prog || (b && b->kind == BOT_BOTTOM)) {
            bottom_put(t->probe_pc + 1, BOT_WALK, 0, 0);
            t->stk_done = !prog;
            return 1;
        }
    }
    t->last_pc = pc;
    t->last_depth = depth;
    if (!prog) {
        /* libc, the mcount trampoline: no metadata */
        t->last_prog = 0;
        if (!t->after_prog)
            return 0;
        t->after_prog = 0;
        t->exit_pc = pc;
        t->exit_depth = depth;
        const struct bottom *b = bottom_get(pc + 1);
        if (!b || b->kind != BOT_BOTTOM)
            return 0;
        /* the thread's bottom: what the rest of the walk would sample */
        if (b->outer_pc && t->group == GROUP_WRITTEN && depth + b->outer_off <= t->max_depth)
            frame_record(t, b->outer_pc, rec_tail(t, depth + b->outer_off));
        t->stk_done = 1;
        if (t->prog_depth + 1u == depth)
            bframe_put(t->prog_pc, b);
        return 1;
    }
    t->last_prog = t->after_prog = 1;
    t->prev_exit_pc = t->exit_pc;
    t->prev_exit_depth = t->exit_depth;
    t->exit_pc = 0;
    t->prog_pc = pc;
    t->prog_depth = depth;
    t->mem.rsp = regs->r[VPF_RSP];
    if (sample_frame(t, pc, regs, depth))
        return 1;
    /* The tick landed outside the program (libc, mcount): its innermost
     * program frame is the leaf, and the depth counts callers above it. */
    if (!t->have_leaf) {
        t->have_leaf = 1;
        return at_bottom_frame(t, pc, regs, depth);
    }
    if (++t->program_frames < core.cfg.unwind_depth || core.cfg.unwind_all)
        return at_bottom_frame(t, pc, regs, depth);
    /* The last frame to sample. Is the library frame below it, if any,
     * the thread's bottom (this frame _start)? Walk on to learn it. */
    if (t->prev_exit_pc && !bottom_get(t->prev_exit_pc + 1) &&
        vprof_unwind_permanent(t->prev_exit_pc)) {
        t->probe = 1;
        t->probe_pc = t->prev_exit_pc;
        return 0;
    }
    return 1;
}

/* How the tick's stack record goes on from where the values walk (rc:
 * what vprof_unwind_regs returned) stopped: VPROF_STK_*, *rbp for
 * VPROF_STK_FROM_FP. A walk the budget cut short leaves it to the stack
 * walk alone. */
static int stack_how(const struct tick_ctx *t, int rc, uint64_t *rbp)
{
    if (t->mem.cut)
        return VPROF_STK_ALONE;
    if (t->stk_done)
        return VPROF_STK_COMPLETE;
    if (rc == VPROF_UNWIND_END)
        return VPROF_STK_OUTERMOST;
    *rbp = t->stk_rbp;
    return t->stk_rbp ? VPROF_STK_FROM_FP : VPROF_STK_ALONE;
}

/* The tick's values: the interrupted frame's, then its callers' by
 * virtual unwinding, feeding stk (NULL: no stack record) the frames the
 * walk finds. Returns how stk is to be completed (stack_how). */
static int tick_values(const ucontext_t *uc, uint64_t now_ns, unsigned weight,
                       struct vprof_stack_walk *stk, uint64_t *stk_rbp)
{
    /* Due before a long tick's quiet time is over: that tick ate the
     * program's time. Let the program run as long as the tick took before
     * sampling again, so that values never take much more than half of a
     * thread's time whatever the metadata, the budget and the rate (at
     * 20 kHz a 500 us tick is ten periods: skipping only the next tick let
     * hostile metadata slow a program 30-60 fold). Short gaps after short
     * ticks happen on a loaded machine, where a signal can be delivered
     * late: those ticks are sampled. */
    if (now_ns < my_quiet_until) {
        __atomic_fetch_add(&core.overdue, 1, __ATOMIC_RELAXED);
        return VPROF_STK_ALONE;
    }
    uint64_t w = weight < 1 ? 1 : weight > VPF_WEIGHT_MAX ? VPF_WEIGHT_MAX : weight;
    /* every field set here, none twice (no zeroing of the whole) */
    struct tick_ctx t;
    struct vprof_regs regs;
    vprof_regs_from_ucontext(uc, &regs);
    uint64_t rsp = regs.r[VPF_RSP], rip = regs.r[VPF_RIP];
    t.now = now_ns;
    t.tail = (w | VPF_REC_COMMITTED) << 8 | (uint64_t)++my_tick << 16;
    t.tid_hi = (uint64_t)(uint32_t)my_tid << 32;
    if (!vprof_stack_window(rsp, &t.win_lo, &t.win_hi))
        t.win_lo = t.win_hi = 0;
    t.countdown = CLOCK_EVERY;
    t.program_frames = 0;
    t.have_leaf = rip >= core.cfg.text_lo && rip < core.cfg.text_hi;
    t.group = 0;
    t.after_prog = t.last_prog = t.have_leaf;
    t.probe = 0;
    t.exit_depth = t.prev_exit_depth = t.last_depth = t.prog_depth = 0;
    t.max_depth = (uint8_t)(core.cfg.unwind_depth + (core.cfg.unwind_all ? 0 : VPROF_UNWIND_OTHER));
    t.exit_pc = t.prev_exit_pc = t.probe_pc = 0;
    t.last_pc = t.prog_pc = rip;
    t.mem.rsp = rsp;
    t.mem.faults = 0;
    t.mem.slow = 0;
    t.mem.slow_max = core.cfg.tick_reads;
    t.mem.deadline = core.cfg.tick_budget_ns ? now_ns + core.cfg.tick_budget_ns : UINT64_MAX;
    t.mem.clock = now_ns;
    t.mem.cut = 0;
    t.stk = stk;
    t.stk_rbp = 0;
    t.stk_done = 0;
    t.n_pend = 0;
    int how = VPROF_STK_ALONE;
    if (!sample_frame(&t, regs.r[VPF_RIP], &regs, 0) && core.cfg.unwind_depth) {
        int rc = vprof_unwind_regs(uc, &regs, t.win_lo, t.win_hi, t.max_depth, on_caller, &t);
        if (rc == VPROF_UNWIND_END && !t.mem.cut)
            learn_bottom(&t);
        how = stack_how(&t, rc, stk_rbp);
    }
    if (t.n_pend)
        flush_reads(&t);
    if (t.mem.faults) {
        struct vpf_values_header *vh = (struct vpf_values_header *)core.rec.base;
        __atomic_fetch_add(&vh->faults, t.mem.faults, __ATOMIC_RELAXED);
    }
    if (t.mem.cut)
        __atomic_fetch_add(&core.cut, 1, __ATOMIC_RELAXED);
    vpf_recfile_populate_check(&core.rec);
    /* Wall time: a tick the scheduler preempted looks long. Beyond the
     * budget that is all it can be, and it must not cost more ticks than a
     * tick that spent its budget. (A tick that never looked at the clock
     * did nothing that could take long.) */
    if (t.mem.clock == now_ns) {
        my_quiet_until = 0;
        return how;
    }
    uint64_t took = t.mem.clock - now_ns, quiet = took;
    if (core.cfg.tick_budget_ns && quiet > core.cfg.tick_budget_ns)
        quiet = core.cfg.tick_budget_ns;
    if (quiet < core.cfg.period_ns / 2)
        quiet = core.cfg.period_ns / 2;
    my_quiet_until = took < core.cfg.period_ns / 4 ? 0 : t.mem.clock + quiet;
    return how;
}

void vprof_core_tick(const ucontext_t *uc, uint64_t now_ns, unsigned weight)
{
    __atomic_fetch_add(&core.ticks, 1, __ATOMIC_RELAXED);
    if (!my_tid)                /* a thread we did not set up */
        my_tid = (pid_t)syscall(SYS_gettid);
    /* VPROF_STACKS: the chain is recorded along the values walk when there
     * is one (one unwind, not two), by the stack walk alone otherwise */
    struct vprof_stack_walk sw;
    int stk = vprof_stacks_begin(&sw, uc);
    int how = VPROF_STK_ALONE;
    uint64_t rbp = 0;
    if (__atomic_load_n(&core.values_open, __ATOMIC_ACQUIRE))
        how = tick_values(uc, now_ns, weight, stk ? &sw : NULL, &rbp);
    if (stk)
        vprof_stacks_end(&sw, uc, how, rbp, now_ns, weight, (uint32_t)my_tid);
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
