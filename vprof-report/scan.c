/* scan.c - streaming pass over the value samples of one process.
 *
 * The values file is mapped (vpf_values_open) and read once, front to back;
 * memory depends on the number of variables and threads, not on the number
 * of samples: each sample updates bounded reservoirs, exact min/max ranges,
 * per-PC counters (bounded by the code size) and per-(variable, thread)
 * state for the delta and processing-cost dimensions.
 *
 * Variable-based cost: the runtime records, on one tick, several samples at
 * one PC (one per accessible variable) and at the callers' PCs (virtual
 * unwinding). Samples with the same (thread, tick, PC) count once, and each
 * distinct one adds 1/hz seconds to the function holding the PC, so a caller
 * inherits its callees' ticks through the unwound samples. */
#include "scan.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "arcs.h"
#include "discount.h"
#include "hist_assign.h"
#include "vprof_xalloc.h"

/* per (var, tid): last sample, for deltas and runs of unchanged values */
struct vt_state {
    uint64_t key;               /* var << 32 | tid, 0 = empty slot */
    uint64_t last_raw, run_pc, start_ns, last_ns;
    uint16_t start_tick, last_tick;
    uint8_t used, changed;
};

/* per tid: the (tick, PCs) of the current tick, for distinct-PC counting:
 * room for every frame a tick can sample (VPROF_UNWIND's maximum of 64
 * callers, the tick's own frame, and some slack); a PC that found no room
 * would count once per variable sampled there */
#define TICK_PCS_MAX 72
struct t_state {
    uint32_t tid;
    uint16_t tick;
    uint8_t used, npcs;
    uint64_t pcs[TICK_PCS_MAX];
};

/* blame pass: per tid, the frames of its current tick */
#define BLAME_DEPTH 16
struct b_frame { long f, var; double score; };
struct b_tick {
    uint32_t tid;
    uint16_t tick;
    uint8_t used;
    double w;
    unsigned n;                 /* frames seen: depths 0..n-1 (gaps: f = -1) */
    struct b_frame fr[BLAME_DEPTH];
};

struct scan_ctx {
    struct vpr_model *m;
    int blame;                  /* the blame pass (vpr_blame_process) */
    int hist_only;              /* a --hist-* run: costs only */
    struct b_tick *bt;
    size_t bt_n, bt_cap;
    int side;
    size_t run;
    uint64_t bias;
    unsigned hz;
    const struct vpf_layout *lay;
    size_t *var_of_id;          /* layout id -> model var + 1 (0 unknown) */
    size_t n_ids;
    int *var_float;             /* model var -> value is IEEE double bits */
    struct vt_state *vt;
    size_t vt_cap, vt_n;
    struct t_state *ts;
    size_t ts_cap, ts_n, ts_last;
    uint64_t cache_lo, cache_hi;
    long cache_f;
    uint64_t *var_ticks;        /* per function: distinct (tid, tick, PC) */
    size_t n_var_ticks;
};

static size_t pc_slot(uint64_t pc, size_t cap)
{
    return (size_t)((pc * 0x9e3779b97f4a7c15ull) >> 24) & (cap - 1);
}

/* Counts an out-of-range observation at pc: a small hash per variable and
 * dimension, since a global can be sampled at thousands of PCs. */
static void add_out(struct vpr_var *v, int d, uint64_t pc)
{
    size_t cap = v->out_ix_cap[d];
    if (cap) {
        for (size_t h = pc_slot(pc, cap); v->out_ix[d][h]; h = (h + 1) & (cap - 1))
            if (v->out[d][v->out_ix[d][h] - 1].pc == pc) {
                v->out[d][v->out_ix[d][h] - 1].n++;
                return;
            }
    }
    v->out[d] = vpf_grow(v->out[d], &v->cap_out[d], v->n_out[d] + 1, sizeof *v->out[d]);
    v->out[d][v->n_out[d]++] = (struct vpr_pccount){pc, 1};
    if (2 * v->n_out[d] > cap) {                    /* rebuild, twice as big */
        cap = cap ? 2 * cap : 16;
        while (2 * v->n_out[d] > cap) cap *= 2;
        free(v->out_ix[d]);
        v->out_ix[d] = vpf_xcalloc(cap, sizeof *v->out_ix[d]);
        v->out_ix_cap[d] = cap;
        for (size_t i = 0; i < v->n_out[d]; i++) {
            size_t h = pc_slot(v->out[d][i].pc, cap);
            while (v->out_ix[d][h]) h = (h + 1) & (cap - 1);
            v->out_ix[d][h] = (uint32_t)(i + 1);
        }
    } else {
        size_t h = pc_slot(pc, cap);
        while (v->out_ix[d][h]) h = (h + 1) & (cap - 1);
        v->out_ix[d][h] = (uint32_t)v->n_out[d];
    }
}

/* One observation of dimension d; pc is link-time (or run-time in libs). */
static void dim_add(struct scan_ctx *c, struct vpr_var *v, int d, double x,
                    uint64_t pc)
{
    v->n[c->side][d]++;
    vpr_res_add(&v->res[c->side][d], x);
    if (c->side == VPR_NORMAL) {
        if (v->lo[d] > v->hi[d]) v->lo[d] = v->hi[d] = x;
        else if (x < v->lo[d]) v->lo[d] = x;
        else if (x > v->hi[d]) v->hi[d] = x;
        return;
    }
    if (v->blo[d] > v->bhi[d]) v->blo[d] = v->bhi[d] = x;
    else if (x < v->blo[d]) v->blo[d] = x;
    else if (x > v->bhi[d]) v->bhi[d] = x;
    if (v->lo[d] > v->hi[d] || x < v->lo[d] || x > v->hi[d]) {
        v->n_outside[d]++;
        add_out(v, d, pc);
    }
}

static double to_double(uint64_t raw, int kind, int is_float)
{
    if (is_float) { double x; memcpy(&x, &raw, 8); return x; }
    if (kind == VPF_KIND_SINT || kind == VPF_KIND_PTR_BASIC) return (double)(int64_t)raw;
    return (double)raw;
}

/* A value whose 64 bits lie where x86-64 Linux places randomized
 * user-space mappings - position-independent executables and their heap
 * (0x55..-0x56..), shared libraries and mmap (0x7f..), the stack (0x7ffc..)
 * - is an address: a pointer kept in an integer, or the stack garbage an
 * uninitialized variable (an out-parameter read before the callee writes
 * it) holds; as a double it is a denormal no computation produces. It
 * changes with ASLR from run to run, so comparing it across runs finds
 * "anomalies" in every run pair. Counters and sizes do not reach 2^46.3;
 * wall clocks in ms are below, in us or ns above; a monotonic clock in ns
 * passes through between 24 and 39 hours of uptime (left out then, which
 * costs nothing: a clock differs between any two runs); a random 64-bit
 * hash lands there once in 350,000 samples. --no-address-filter: never. */
static int address_like(const struct scan_ctx *c, uint64_t raw)
{
    return c->m->o->addr_filter && raw >= 0x500000000000ull && raw < 0x800000000000ull;
}

/* Run length in ticks from start to last, inclusive. The tick field keeps
 * 16 bits; the time stamps resolve the wrap for runs longer than 65536. */
static double run_ticks(const struct vt_state *s, unsigned hz)
{
    uint64_t d16 = (uint16_t)(s->last_tick - s->start_tick);
    if (hz && s->last_ns > s->start_ns) {
        double est = (double)(s->last_ns - s->start_ns) * hz / 1e9;
        if (est > 32768.0 + (double)d16)
            d16 += 65536ull * (uint64_t)floor((est - (double)d16) / 65536.0 + 0.5);
    }
    return (double)d16 + 1.0;
}

static struct vt_state *vt_get(struct scan_ctx *c, uint64_t key)
{
    if (2 * (c->vt_n + 1) > c->vt_cap) {
        size_t oc = c->vt_cap;
        struct vt_state *old = c->vt;
        c->vt_cap = oc ? 2 * oc : 1024;
        c->vt = vpf_xcalloc(c->vt_cap, sizeof *c->vt);
        for (size_t i = 0; i < oc; i++) {
            if (!old[i].key) continue;
            size_t h = (old[i].key * 0x9e3779b97f4a7c15ull) >> 20 & (c->vt_cap - 1);
            while (c->vt[h].key) h = (h + 1) & (c->vt_cap - 1);
            c->vt[h] = old[i];
        }
        free(old);
    }
    size_t h = (key * 0x9e3779b97f4a7c15ull) >> 20 & (c->vt_cap - 1);
    while (c->vt[h].key && c->vt[h].key != key) h = (h + 1) & (c->vt_cap - 1);
    if (!c->vt[h].key) { c->vt[h].key = key; c->vt_n++; }
    return &c->vt[h];
}

static struct t_state *ts_get(struct scan_ctx *c, uint32_t tid)
{
    /* samples of one tick come together: try the last thread first */
    if (c->ts_last < c->ts_n && c->ts[c->ts_last].tid == tid) return &c->ts[c->ts_last];
    for (size_t i = 0; i < c->ts_n; i++)
        if (c->ts[i].tid == tid) { c->ts_last = i; return &c->ts[i]; }
    c->ts = vpf_grow(c->ts, &c->ts_cap, c->ts_n + 1, sizeof *c->ts);
    c->ts_last = c->ts_n;
    struct t_state *t = &c->ts[c->ts_n++];
    memset(t, 0, sizeof *t);
    t->tid = tid;
    return t;
}

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* Function holding run-time pc: the executable's symbols after removing
 * the load bias; else the shared library mapping it, by name. */
static long func_of(struct scan_ctx *c, uint64_t pc, uint64_t *link)
{
    uint64_t a = pc - c->bias;
    *link = a;
    if (a >= c->cache_lo && a < c->cache_hi) return c->cache_f;
    long s = vpr_sym_find(&c->m->sym, a);
    if (s >= 0) {
        c->cache_lo = c->m->sym.syms[s].lo;
        c->cache_hi = c->m->sym.syms[s].hi;
        c->cache_f = s;
        return s;
    }
    *link = pc;
    for (size_t i = 0; i < c->lay->n_maps; i++) {
        const struct vpf_layout_map *mp = &c->lay->maps[i];
        if (pc >= mp->lo && pc < mp->hi && mp->path && strcmp(mp->path, c->lay->exe)) {
            char nm[300];
            snprintf(nm, sizeof nm, "[%s]", base_name(mp->path));
            return (long)vpr_model_lib_func(c->m, nm);
        }
    }
    return (long)vpr_model_lib_func(c->m, "[unknown]");
}

static size_t vf_slot(uint64_t key, size_t cap)
{
    return (size_t)((key * 0x9e3779b97f4a7c15ull) >> 20) & (cap - 1);
}

/* Records that global variable vi was sampled in function f (a hash set
 * over the whole model: a global may be sampled in thousands of functions). */
static void note_func(struct vpr_model *m, size_t vi, long f)
{
    uint64_t key = (uint64_t)(vi + 1) << 32 | (uint32_t)f;
    if (2 * (m->vf_n + 1) > m->vf_cap) {
        size_t oc = m->vf_cap;
        uint64_t *old = m->vf_set;
        m->vf_cap = oc ? 2 * oc : 1024;
        m->vf_set = vpf_xcalloc(m->vf_cap, sizeof *m->vf_set);
        for (size_t i = 0; i < oc; i++) {
            if (!old[i]) continue;
            size_t h = vf_slot(old[i], m->vf_cap);
            while (m->vf_set[h]) h = (h + 1) & (m->vf_cap - 1);
            m->vf_set[h] = old[i];
        }
        free(old);
    }
    size_t h = vf_slot(key, m->vf_cap);
    for (; m->vf_set[h]; h = (h + 1) & (m->vf_cap - 1))
        if (m->vf_set[h] == key) return;
    m->vf_set[h] = key;
    m->vf_n++;
    struct vpr_var *v = &m->v[vi];
    v->funcs = vpf_grow(v->funcs, &v->cap_funcs, v->n_funcs + 1, sizeof *v->funcs);
    v->funcs[v->n_funcs++] = f;
}

static void end_run(struct scan_ctx *c, struct vt_state *s)
{
    size_t vi = (size_t)(s->key >> 32) - 1;
    dim_add(c, &c->m->v[vi], VPR_DIM_PROC, run_ticks(s, c->hz), s->run_pc);
}

/* The tick's cost goes to one of its frames with anomalous evidence
 * (--blame), weighted by how anomalous that evidence is (1 - r). */
static void blame_flush(struct scan_ctx *c, struct b_tick *t)
{
    struct vpr_model *m = c->m;
    int pick = -1;
    double total = 0;
    for (unsigned d = 0; d < t->n; d++) {
        const struct b_frame *fr = &t->fr[d];
        if (fr->f < 0 || fr->score <= 0) continue;
        total += fr->score;
        switch (m->o->blame) {
        case VPR_BLAME_DEEPEST: if (pick < 0) pick = (int)d; break;
        case VPR_BLAME_SHALLOWEST: pick = (int)d; break;
        default:
            if (pick < 0 || fr->score > t->fr[pick].score) pick = (int)d;
        }
    }
    if (pick >= 0) {
        for (unsigned d = 0; d < t->n; d++) {
            const struct b_frame *fr = &t->fr[d];
            if (fr->f < 0 || fr->score <= 0) continue;
            double share = m->o->blame == VPR_BLAME_SPLIT ? fr->score / total
                                                          : (d == (unsigned)pick);
            if (share <= 0) continue;
            m->f[fr->f].blamed += t->w * share * fr->score;
            m->f[fr->f].blamed_raw += t->w * share;
            m->blame_vc[fr->var] += t->w * share * fr->score;
        }
    }
    t->n = 0;
}

static struct b_tick *bt_get(struct scan_ctx *c, uint32_t tid)
{
    for (size_t i = 0; i < c->bt_n; i++)
        if (c->bt[i].tid == tid) return &c->bt[i];
    c->bt = vpf_grow(c->bt, &c->bt_cap, c->bt_n + 1, sizeof *c->bt);
    struct b_tick *t = &c->bt[c->bt_n++];
    memset(t, 0, sizeof *t);
    t->tid = tid;
    return t;
}

/* Is this sample anomalous evidence for its frame's function f? Its
 * variable must be attributed to f and its test must have rejected; with
 * --blame-range, a value (or delta) must also lie outside the normal range. */
static double sample_score(struct scan_ctx *c, size_t vi, long f, double x, int basic)
{
    struct vpr_model *m = c->m;
    const struct vpr_var *v = &m->v[vi];
    if (v->dim < 0) return 0;
    enum vpr_dim_state st = v->st[v->dim];
    if (st != VPR_DS_DIFFERS && st != VPR_DS_NO_NORMAL) return 0;
    if (!vpr_attributed(m, vi, (size_t)f)) return 0;
    if (m->o->blame_range && v->dim == VPR_DIM_VALUE && basic &&
        v->lo[VPR_DIM_VALUE] <= v->hi[VPR_DIM_VALUE] &&
        x >= v->lo[VPR_DIM_VALUE] && x <= v->hi[VPR_DIM_VALUE])
        return 0;
    return (1.0 - v->r) * (v->spec > 0 ? v->spec : 1);
}

static void blame_sample(struct scan_ctx *c, const struct vpf_value_rec *r, size_t vi, long f)
{
    struct b_tick *t = bt_get(c, r->tid);
    if (!t->used || t->tick != r->tick) {
        if (t->used) blame_flush(c, t);
        t->used = 1;
        t->tick = r->tick;
        t->w = c->hz ? (double)vpf_rec_weight(r->flags) / c->hz : 0;
    }
    unsigned d = r->depth < BLAME_DEPTH ? r->depth : BLAME_DEPTH - 1;
    while (t->n <= d) t->fr[t->n++] = (struct b_frame){-1, -1, 0};
    struct b_frame *fr = &t->fr[d];
    if (fr->f < 0) fr->f = f;
    if (fr->f != f) return;                 /* a second frame at one depth: keep the first */
    double x = to_double(r->value, c->m->v[vi].kind, c->var_float[vi]);
    double sc = sample_score(c, vi, f, x, c->m->v[vi].kind != VPF_KIND_PTR && isfinite(x));
    if (sc > fr->score) { fr->score = sc; fr->var = (long)vi; }
}

static void add_var_ticks(struct scan_ctx *c, long f, uint64_t w)
{
    if ((size_t)f >= c->n_var_ticks) {
        size_t old = c->n_var_ticks;
        c->var_ticks = vpf_grow(c->var_ticks, &c->n_var_ticks, (size_t)f + 1,
                                sizeof *c->var_ticks);
        memset(c->var_ticks + old, 0, (c->n_var_ticks - old) * sizeof *c->var_ticks);
    }
    c->var_ticks[f] += w;
}

/* Variable-based cost: each distinct (thread, tick, PC) adds the tick's
 * weight (timer periods, as the histogram) to the function holding the PC,
 * and to the functions inlined there (inl, n): their logical frames. */
static void count_tick(struct scan_ctx *c, const struct vpf_value_rec *r, long f,
                       const long *inl, size_t n)
{
    struct t_state *t = ts_get(c, r->tid);
    if (!t->used || t->tick != r->tick) { t->used = 1; t->tick = r->tick; t->npcs = 0; }
    for (unsigned i = 0; i < t->npcs; i++) if (t->pcs[i] == r->pc) return;
    if (t->npcs < TICK_PCS_MAX) t->pcs[t->npcs++] = r->pc;
    add_var_ticks(c, f, vpf_rec_weight(r->flags));
    for (size_t i = 0; i < n; i++) {
        add_var_ticks(c, inl[i], vpf_rec_weight(r->flags));
        if (inl[i] != f && f >= 0 && (size_t)f < c->m->sym.n)
            vpr_model_note_host(&c->m->f[inl[i]], f,
                                (double)vpf_rec_weight(r->flags) / (c->hz ? c->hz : 100));
    }
}

static void one_sample(struct scan_ctx *c, const struct vpf_value_rec *r)
{
    size_t vi = r->var < c->n_ids ? c->var_of_id[r->var] : 0;
    if (!vi) {
        if (!c->hist_only && !c->blame) {
            c->m->st[c->side].unknown_var++;
            c->m->st[c->side].unknown_id = r->var;
        }
        return;
    }
    vi--;
    struct vpr_model *m = c->m;
    struct vpr_var *v = &m->v[vi];
    uint64_t link;
    long f = func_of(c, r->pc, &link);
    if (c->blame) { blame_sample(c, r, vi, f); return; }
    long inl[VPR_INLINE_CHAIN_MAX];
    /* a caller's PC is a return address: its call lies before it, and may
     * be the last instruction of the inlined copy that made it */
    size_t n_inl = (size_t)f < m->sym.n
                 ? vpr_model_inline_chain(m, r->depth ? link - 1 : link, inl,
                                          VPR_INLINE_CHAIN_MAX)
                 : 0;
    if (c->hist_only) { count_tick(c, r, f, inl, n_inl); return; }

    count_tick(c, r, f, inl, n_inl);
    if ((v->tags & VPF_TAG_GLOBAL) && (v->n_funcs == 0 || v->funcs[v->n_funcs - 1] != f))
        note_func(m, vi, f);
    for (size_t i = 0; i < n_inl && (v->tags & VPF_TAG_GLOBAL); i++)
        note_func(m, vi, inl[i]);

    /* value and delta need numbers: NaN and infinities of floating-point
     * variables only take part in the processing-cost dimension */
    double x = to_double(r->value, v->kind, c->var_float[vi]);
    int basic = v->kind != VPF_KIND_PTR && isfinite(x);
    if (basic && address_like(c, r->value)) {
        v->addr_like[c->side]++;
        basic = 0;
    }
    if (basic) dim_add(c, v, VPR_DIM_VALUE, x, link);

    struct vt_state *s = vt_get(c, (uint64_t)(vi + 1) << 32 | r->tid);
    if (!s->used) {
        s->used = 1;
        s->last_raw = r->value;
        s->start_tick = s->last_tick = r->tick;
        s->start_ns = s->last_ns = r->time_ns;
        s->run_pc = link;
        return;
    }
    if (s->last_tick == r->tick) return;    /* same tick, other frame */
    double prev = to_double(s->last_raw, v->kind, c->var_float[vi]);
    if (basic && isfinite(prev) && isfinite(x - prev) && !address_like(c, s->last_raw))
        dim_add(c, v, VPR_DIM_DELTA, x - prev, link);
    if (r->value != s->last_raw) {
        s->changed = 1;
        end_run(c, s);
        s->start_tick = r->tick;
        s->start_ns = r->time_ns;
    }
    s->last_raw = r->value;
    s->last_tick = r->tick;
    s->last_ns = r->time_ns;
    s->run_pc = link;
}

static int is_float_var(const struct vpr_var *v)
{
    if (v->kind == VPF_KIND_FLOAT) return 1;
    return v->kind == VPF_KIND_PTR_BASIC &&
           (strstr(v->type, "double") || strstr(v->type, "float"));
}

static void progress(const char *path, uint64_t i, uint64_t n)
{
    fprintf(stderr, "\rvprof-report: %s: %3d%%", path, (int)(100.0 * i / (n ? n : 1)));
}

static int scan_values(struct scan_ctx *c, const struct vpr_proc *p,
                       char *err, size_t errlen)
{
    struct vpf_recfile_r rf;
    vpf_err e;
    if (vpf_values_open(p->values_path, &rf, &e) < 0) {
        snprintf(err, errlen, "%s", e.msg);
        return -1;
    }
    struct vpr_model *m = c->m;
    struct vpr_side_stats scratch, *st = c->blame || c->hist_only ? &scratch : &m->st[c->side];
    memset(&scratch, 0, sizeof scratch);
    st->values_files++;
    st->value_bytes += rf.map_len;
    st->dropped += vpf_values_hdr(&rf)->dropped;
    st->faults += vpf_values_hdr(&rf)->faults;
    c->hz = vpf_values_hdr(&rf)->hz ? vpf_values_hdr(&rf)->hz : p->layout.hz;
    if (!st->hz) st->hz = c->hz;

    const struct vpf_layout *lay = &p->layout;
    uint32_t max_id = 0;
    for (size_t i = 0; i < lay->n_vars; i++)
        if (lay->vars[i].id + 1 > max_id) max_id = lay->vars[i].id + 1;
    c->n_ids = max_id;
    c->var_of_id = vpf_xcalloc(max_id ? max_id : 1, sizeof *c->var_of_id);
    for (size_t i = 0; i < lay->n_vars; i++)
        c->var_of_id[lay->vars[i].id] = vpr_model_var(m, &lay->vars[i]) + 1;
    c->var_float = vpf_xcalloc(m->n_v ? m->n_v : 1, sizeof *c->var_float);
    for (size_t i = 0; i < m->n_v; i++) c->var_float[i] = is_float_var(&m->v[i]);

    int show = m->o->progress > 0 || (m->o->progress < 0 && isatty(2));
    const struct vpf_value_rec *recs = vpf_values_recs(&rf);
    uint64_t n = rf.n;
    /* One sequential pass: read ahead, and drop the pages already read
     * from our mapping every 4 MiB, so the resident size stays flat however
     * big the file is (the data stays in the page cache). A frame record
     * looks back at its tick's global group, a few records before it: the
     * pages dropped are a chunk behind (a page dropped is read again from
     * the page cache if it is needed after all). */
    const size_t chunk = 4u << 20;
    uintptr_t done = (uintptr_t)rf.base;
    madvise((void *)rf.base, rf.map_len, MADV_SEQUENTIAL);
    struct vpf_values_iter it;
    vpf_values_iter_init(&it, &rf);
    const struct vpf_value_rec *r;
    uint64_t i, next_look = 0;
    while ((r = vpf_values_next(&it, &i))) {
        st->value_samples++;
        one_sample(c, r);
        if (i >= next_look) {                   /* every 2.5 MiB */
            next_look = (i | 0xffff) + 1;
            if (show && (i & 0xfffff) < 0x10000) progress(p->values_path, i, n);
            uintptr_t upto = ((uintptr_t)&recs[i] & ~(uintptr_t)(4095)) - chunk;
            if ((uintptr_t)&recs[i] > done + 2 * chunk) {
                madvise((void *)done, upto - done, MADV_DONTNEED);
                done = upto;
            }
        }
    }
    st->uncommitted += it.uncommitted;
    vpf_values_iter_free(&it);
    if (show) { progress(p->values_path, n, n); fputc('\n', stderr); }
    if (c->blame) {
        for (size_t i = 0; i < c->bt_n; i++)
            if (c->bt[i].used) blame_flush(c, &c->bt[i]);
        vpf_recfile_close_r(&rf);
        return 0;
    }
    for (size_t f = 0; f < c->n_var_ticks && f < m->n_f && c->hz; f++)
        m->f[f].var_sec[c->side][c->run] += (double)c->var_ticks[f] / c->hz;
    /* Open stretches end here. One that began at the variable's first
     * sample in this thread (it never changed) lasted the thread's life
     * as far as the samples see: its length is the run's, which the buggy
     * workload makes longer whatever the code does, so a setting or an
     * input size constant in each run looked "stuck" once several runs a
     * side gave it several such samples (--no-run-constants, the
     * default). A stretch after a change - a loop variable that stopped
     * advancing - is kept. */
    for (size_t i = 0; i < c->vt_cap; i++)
        if (c->vt[i].key && c->vt[i].used && (c->vt[i].changed || m->o->run_constants))
            end_run(c, &c->vt[i]);
    vpf_recfile_close_r(&rf);
    return 0;
}

/* PC time of code inlined from another function is that function's own
 * (the innermost one inlined there), as if the compiler had not inlined it. */
struct hist_to_funcs { struct vpr_model *m; double *ticks; double rate; };

static void hist_to_func(void *ctx, size_t sym, uint64_t addr, double credit)
{
    struct hist_to_funcs *h = ctx;
    long g = vpr_model_code_func(h->m, addr, (long)sym);
    h->ticks[g] += credit;
    if (g != (long)sym) vpr_model_note_host(&h->m->f[g], (long)sym, credit / h->rate);
}

static int scan_gmon(struct scan_ctx *c, const struct vpr_proc *p, char *err,
                     size_t errlen)
{
    struct vpf_gmon g;
    vpf_err e;
    if (vpf_gmon_load(p->gmon_path, &g, &e) < 0) {
        snprintf(err, errlen, "%s", e.msg);
        return -1;
    }
    struct vpr_model *m = c->m;
    uint64_t bias = vpr_gmon_bias(&g, &m->sym, c->bias, 1);
    /* a gmon file of another program would give its time to ours */
    if (vpr_gmon_check(&g, bias, &m->sym, p->gmon_path, err, errlen) < 0) {
        vpf_gmon_free(&g);
        if (!m->o->force) return -1;
        if (!m->o->quiet)
            fprintf(stderr, "vprof-report: warning: %s; --force: its PC time is left out\n", err);
        if (!c->hist_only) m->st[c->side].gmon_skipped++;
        return 0;
    }
    size_t n_f = m->n_f;
    double *ticks = vpf_xcalloc(n_f ? n_f : 1, sizeof *ticks);
    unsigned rate = g.prof_rate ? g.prof_rate : (p->layout.hz ? p->layout.hz : 100);
    struct hist_to_funcs h = {m, ticks, rate};
    double assigned = vpr_hist_assign_each(&g, bias, &m->sym, hist_to_func, &h);
    if (!c->hist_only) {
        m->st[c->side].gmon_files++;
        m->st[c->side].gmon_ticks += assigned;
        m->st[c->side].gmon_arcs += g.n_arcs;
        vpr_arcs_add(m, c->side, &g, bias);
    }
    if (!m->st[c->side].hz) m->st[c->side].hz = rate;
    for (size_t i = 0; i < n_f; i++)
        m->f[i].pc_sec[c->side][c->run] += ticks[i] / rate;
    free(ticks);
    vpf_gmon_free(&g);
    return 0;
}

/* vprof-cc --calls' counts: the calls gmon cannot see (arcs.c). */
static int scan_calls(struct scan_ctx *c, const struct vpr_proc *p, char *err, size_t errlen)
{
    struct vpf_calls k;
    vpf_err e;
    if (vpf_calls_load(p->calls_path, &k, &e) < 0) {
        snprintf(err, errlen, "%s", e.msg);
        return -1;
    }
    vpr_arcs_add_counts(c->m, c->side, &k);
    c->m->st[c->side].calls_files++;
    vpf_calls_free(&k);
    return 0;
}

int vpr_scan_process(struct vpr_model *m, int side, size_t run,
                     const struct vpr_proc *p, char *err, size_t errlen)
{
    struct scan_ctx c;
    memset(&c, 0, sizeof c);
    c.m = m;
    c.side = side;
    c.run = run;
    c.lay = &p->layout;
    c.bias = m->sym.is_pie ? p->layout.load_bias : 0;
    c.hz = p->layout.hz;
    c.cache_f = -1;
    c.hist_only = run >= m->n_runs[side];
    if (!c.hist_only) m->st[side].procs++;
    if (p->layout.has_end && p->layout.hz)
        m->run_cpu[side][run] += (double)p->layout.ticks / p->layout.hz;
    int rc = 0;
    if (p->gmon_path) rc = scan_gmon(&c, p, err, errlen);
    if (rc == 0 && p->values_path) rc = scan_values(&c, p, err, errlen);
    if (rc == 0 && p->calls_path && !c.hist_only && m->o->call_counts)
        rc = scan_calls(&c, p, err, errlen);
    free(c.var_of_id);
    free(c.var_float);
    free(c.vt);
    free(c.ts);
    free(c.var_ticks);
    return rc;
}

int vpr_blame_process(struct vpr_model *m, size_t run, const struct vpr_proc *p,
                      char *err, size_t errlen)
{
    if (!p->values_path) return 0;
    struct scan_ctx c;
    memset(&c, 0, sizeof c);
    c.m = m;
    c.blame = 1;
    c.side = VPR_BUGGY;
    c.run = run;
    c.lay = &p->layout;
    c.bias = m->sym.is_pie ? p->layout.load_bias : 0;
    c.hz = p->layout.hz;
    c.cache_f = -1;
    if (!m->blame_vc) m->blame_vc = vpf_xcalloc(m->n_v ? m->n_v : 1, sizeof *m->blame_vc);
    int rc = scan_values(&c, p, err, errlen);
    free(c.var_of_id);
    free(c.var_float);
    free(c.vt);
    free(c.ts);
    free(c.bt);
    free(c.var_ticks);
    return rc;
}
