/* model.c - construction of the model: one function per ELF symbol of the
 * executable (same index), pseudo-functions for shared libraries, and the
 * variable table keyed by (file, function, name) so that runs with
 * different variable ids still meet. */
#include "model.h"
#include "ctx_rank.h"
#include "latency.h"
#include "vprof_xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void find_clones(struct vpr_model *m);

const char *const vpr_dim_name[VPR_N_DIMS] = {"value", "delta",
                                              "processing-cost"};

/* is_lib: a pseudo-function "[libfoo.so]" (sym -1) */
static size_t add_func(struct vpr_model *m, const char *name, long sym, int is_lib)
{
    m->f = vpf_grow(m->f, &m->cap_f, m->n_f + 1, sizeof *m->f);
    struct vpr_func *f = &m->f[m->n_f];
    memset(f, 0, sizeof *f);
    f->name = vpf_xstrdup(name);
    f->sym = sym;
    f->is_lib = is_lib;
    f->var = -1;
    f->blame_var = -1;
    f->guard_of = -1;
    f->producer_of = -1;
    f->state_of = -1;
    f->size_of = -1;
    f->link_of = f->link_from = -1;
    for (int k = 0; k < 4; k++) f->host[k] = -1;
    f->arc.to = -1;
    f->dim = -1;
    for (int s = 0; s < 2; s++) {
        size_t n = m->n_runs[s] + m->n_hruns[s] ? m->n_runs[s] + m->n_hruns[s] : 1;
        f->pc_sec[s] = vpf_xcalloc(n, sizeof(double));
        f->var_sec[s] = vpf_xcalloc(n, sizeof(double));
    }
    if (sym >= 0 && m->lines) {
        const char *file;
        unsigned line;
        if (vpr_lines_lookup(m->lines, m->sym.syms[sym].lo, &file, &line) == 0) {
            f->file = file;
            f->line = line;
        }
    }
    return m->n_f++;
}

/* At -O2 a static function's whole body can live inside its callers'
 * symbols: its PC time, its variables and the loops it runs would all read
 * as the caller's, and the function the bug is in is never ranked. Every
 * function the DWARF names as an inlined subroutine becomes a function of
 * its own: the one of its symbol when it also has an out-of-line copy (both
 * copies are the same source), else a pseudo-function without a symbol.
 * The scan then gives each PC to the functions inlined there as well
 * (vpr_model_inline_chain), as virtual unwinding gives a tick to physical
 * callers. */
static void add_inlined_funcs(struct vpr_model *m)
{
    size_t n_ids = vpr_lines_n_strings(m->lines), n = vpr_lines_n_inlined(m->lines);
    if (!n) return;
    m->inl_f = vpf_xcalloc(n_ids, sizeof *m->inl_f);
    for (size_t i = 0; i < n_ids; i++) m->inl_f[i] = -2;      /* -2: not seen yet */
    for (size_t i = 0; i < n; i++) {        /* by start address: the first is the lowest */
        uint64_t lo;
        uint32_t id;
        const char *name, *linkage;
        vpr_lines_inlined_range(m->lines, i, &lo, &id, &name, &linkage);
        if (m->inl_f[id] != -2) {
            struct vpr_func *f = m->inl_f[id] >= (long)m->sym.n ? &m->f[m->inl_f[id]] : NULL;
            const char *file;
            unsigned line;
            /* where it is: the first line any copy starts at (a copy's
             * first address may have no line row) */
            if (f && vpr_lines_lookup(m->lines, lo, &file, &line) == 0 &&
                (!f->file || (!strcmp(file, f->file) && line < f->line))) {
                f->file = file;
                f->line = line;
            }
            continue;
        }
        long s = linkage ? vpr_model_func_by_name(m, linkage) : -1;
        if (s < 0) s = vpr_model_func_by_name(m, name);
        if (s >= 0) { m->inl_f[id] = s; continue; }
        size_t fi = add_func(m, linkage ? linkage : name, -1, 0);
        struct vpr_func *f = &m->f[fi];
        f->inl_only = 1;
        f->src_name = linkage ? vpf_xstrdup(name) : NULL;
        const char *file;
        unsigned line;
        if (vpr_lines_lookup(m->lines, lo, &file, &line) == 0) {
            f->file = file;
            f->line = line;
        }
        m->inl_f[id] = (long)fi;
    }
}

int vpr_model_init(struct vpr_model *m, const struct vpr_opts *o,
                   const char *exe, size_t n_normal, size_t n_buggy,
                   size_t n_hist_normal, size_t n_hist_buggy,
                   char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    m->o = o;
    m->exe = exe;
    m->n_runs[VPR_NORMAL] = n_normal;
    m->n_runs[VPR_BUGGY] = n_buggy;
    m->n_hruns[VPR_NORMAL] = n_hist_normal;
    m->n_hruns[VPR_BUGGY] = n_hist_buggy;
    for (int s = 0; s < 2; s++)
        m->run_cpu[s] = vpf_xcalloc(m->n_runs[s] + m->n_hruns[s] + 1, sizeof(double));
    if (vpr_symtab_load(exe, &m->sym, err, errlen) < 0) return -1;
    m->lines = vpr_lines_load(exe);
    if (m->sym.schema) {
        vpf_err e;
        if (vpf_schema_parse(m->sym.schema, m->sym.schema_len, exe, &m->schema,
                             &e) == 0)
            m->has_schema = 1;
        else
            fprintf(stderr, "vprof-report: warning: .vprof_schema: %s "
                    "(basic blocks not shown)\n", e.msg);
    }
    for (size_t i = 0; i < m->sym.n; i++) add_func(m, m->sym.syms[i].name, (long)i, 0);
    find_clones(m);
    if (o->inline_funcs) add_inlined_funcs(m);
    return 0;
}

double vpr_program_time(const struct vpr_model *m, int s)
{
    double t = 0;
    for (size_t i = 0; i < m->n_f; i++) {
        if (vpr_is_plt(m, &m->f[i])) continue;
        for (size_t r = 0; r < m->n_runs[s]; r++) t += m->f[i].pc_sec[s][r];
    }
    return m->n_runs[s] ? t / (double)m->n_runs[s] : t;
}

size_t vpr_model_lib_func(struct vpr_model *m, const char *name)
{
    for (size_t i = m->sym.n; i < m->n_f; i++)
        if (strcmp(m->f[i].name, name) == 0) return i;
    return add_func(m, name, -1, 1);
}

/* The symbols gcc made of pieces of functions, for lookups by source name:
 * a variable's function is the source function's name, the symbol may be
 * "f.isra.0" (and there may be no "f" at all). */
static void find_clones(struct vpr_model *m)
{
    size_t cap = 0;
    for (size_t i = 0; i < m->sym.n; i++)
        if (vpr_sym_source_len(m->sym.syms[i].name) < strlen(m->sym.syms[i].name)) {
            m->clones = vpf_grow(m->clones, &cap, m->n_clones + 1, sizeof *m->clones);
            m->clones[m->n_clones++] = i;
        }
}

static int is_clone_of(const struct vpr_model *m, size_t sym, const char *name)
{
    const char *nm = m->sym.syms[sym].name;
    size_t n = vpr_sym_source_len(nm);
    return n == strlen(name) && !strncmp(nm, name, n);
}

void vpr_model_each_clone(const struct vpr_model *m, const char *name,
                          void (*fn)(void *ctx, size_t sym), void *ctx)
{
    for (size_t i = 0; i < m->n_clones; i++)
        if (is_clone_of(m, m->clones[i], name)) fn(ctx, m->clones[i]);
}

long vpr_model_func_by_name(const struct vpr_model *m, const char *name)
{
    long s = vpr_sym_by_name(&m->sym, name), cold = -1;
    if (s >= 0) return s;
    for (size_t i = 0; i < m->n_clones; i++) {
        if (!is_clone_of(m, m->clones[i], name)) continue;
        if (!strstr(m->sym.syms[m->clones[i]].name + strlen(name), ".cold"))
            return (long)m->clones[i];
        if (cold < 0) cold = (long)m->clones[i];
    }
    if (cold >= 0) return cold;
    for (size_t i = m->sym.n; i < m->n_f; i++)
        if (m->f[i].inl_only && (!strcmp(m->f[i].name, name) ||
                                 (m->f[i].src_name && !strcmp(m->f[i].src_name, name))))
            return (long)i;
    return -1;
}

/* A sample's PC is looked up once per record: a direct-mapped cache of
 * the chains, as code has far fewer hot PCs than samples. */
#define ICACHE_SIZE 4096
#define ICHAIN_MAX VPR_INLINE_CHAIN_MAX
struct vpr_inl_cache { uint64_t pc; uint8_t used, n; long f[ICHAIN_MAX]; };

size_t vpr_model_inline_chain(struct vpr_model *m, uint64_t pc, long *out, size_t max)
{
    if (!m->inl_f) return 0;
    if (!m->icache) m->icache = vpf_xcalloc(ICACHE_SIZE, sizeof *m->icache);
    struct vpr_inl_cache *e = &m->icache[(pc * 0x9e3779b97f4a7c15ull) >> 52];
    if (!e->used || e->pc != pc) {
        uint32_t ids[ICHAIN_MAX];
        size_t n = vpr_lines_inline_chain(m->lines, pc, ids, ICHAIN_MAX);
        long own = vpr_sym_find(&m->sym, pc);
        e->pc = pc;
        e->used = 1;
        e->n = 0;
        for (size_t i = 0; i < n; i++) {
            long f = m->inl_f[ids[i]];
            /* the function itself (recursion inlined into itself) or a
             * function met twice is one frame already counted */
            int dup = f < 0 || f == own;
            for (size_t k = 0; k < e->n && !dup; k++) dup = e->f[k] == f;
            if (!dup) e->f[e->n++] = f;
        }
    }
    size_t n = e->n < max ? e->n : max;        /* the innermost ones */
    memcpy(out, e->f + (e->n - n), n * sizeof *out);
    return n;
}

void vpr_model_note_host(struct vpr_func *f, long sym, double credit)
{
    size_t k, low = 0;
    for (k = 0; k < 4 && f->host[k] != sym; k++)
        if (f->host[k] < 0 || f->host_sec[k] < f->host_sec[low]) low = k;
    if (k == 4) {                   /* a new host: an empty slot, or the least */
        k = low;
        if (f->host[k] >= 0) f->host_sec[k] = 0;
        f->host[k] = sym;
    }
    f->host_sec[k] += credit;
}

long vpr_model_host(const struct vpr_func *f)
{
    long best = -1;
    double most = 0;
    for (size_t k = 0; k < 4; k++)
        if (f->host[k] >= 0 && f->host_sec[k] > most) { most = f->host_sec[k]; best = f->host[k]; }
    return best;
}

long vpr_model_code_func(struct vpr_model *m, uint64_t pc, long f)
{
    long inl[ICHAIN_MAX];
    size_t n = vpr_model_inline_chain(m, pc, inl, ICHAIN_MAX);
    return n ? inl[n - 1] : f;
}

int vpr_model_pc_in(struct vpr_model *m, size_t fi, uint64_t pc)
{
    const struct vpr_func *f = &m->f[fi];
    if (f->is_lib) return 1;
    if (f->sym >= 0 && pc >= m->sym.syms[f->sym].lo && pc < m->sym.syms[f->sym].hi) return 1;
    long ch[ICHAIN_MAX];
    size_t n = vpr_model_inline_chain(m, pc, ch, ICHAIN_MAX);
    for (size_t i = 0; i < n; i++)
        if (ch[i] == (long)fi) return 1;
    return 0;
}

static void rehash(struct vpr_model *m)
{
    free(m->vh);
    m->vh_cap = m->vh_cap ? 2 * m->vh_cap : 256;
    m->vh = vpf_xcalloc(m->vh_cap, sizeof *m->vh);
    for (size_t i = 0; i < m->n_v; i++) {
        struct vpr_var *v = &m->v[i];
        size_t h = vpf_var_key_hash(v->file, v->function, v->name) & (m->vh_cap - 1);
        while (m->vh[h]) h = (h + 1) & (m->vh_cap - 1);
        m->vh[h] = i + 1;
    }
}

size_t vpr_model_var(struct vpr_model *m, const struct vpf_layout_var *lv)
{
    if (2 * (m->n_v + 1) > m->vh_cap) rehash(m);
    uint64_t key = vpf_var_key_hash(lv->file, lv->function, lv->name);
    size_t h = key & (m->vh_cap - 1);
    while (m->vh[h]) {
        struct vpr_var *v = &m->v[m->vh[h] - 1];
        if (!strcmp(v->file, lv->file) && !strcmp(v->function, lv->function) &&
            !strcmp(v->name, lv->name))
            return m->vh[h] - 1;
        h = (h + 1) & (m->vh_cap - 1);
    }
    m->v = vpf_grow(m->v, &m->cap_v, m->n_v + 1, sizeof *m->v);
    struct vpr_var *v = &m->v[m->n_v];
    memset(v, 0, sizeof *v);
    v->file = vpf_xstrdup(lv->file);
    v->function = vpf_xstrdup(lv->function);
    v->name = vpf_xstrdup(lv->name);
    v->type = vpf_xstrdup(lv->type ? lv->type : "");
    v->line = lv->line;
    v->tags = lv->tags;
    if (!strcmp(lv->function, "#global")) v->tags |= VPF_TAG_GLOBAL;
    v->kind = lv->kind;
    v->size = lv->size;
    v->dim = -1;
    for (int s = 0; s < 2; s++)
        for (int d = 0; d < VPR_N_DIMS; d++)
            vpr_res_init(&v->res[s][d], m->o->reservoir,
                         key ^ ((uint64_t)(s * VPR_N_DIMS + d + 1) << 56));
    for (int d = 0; d < VPR_N_DIMS; d++) v->lo[d] = v->blo[d] = 1, v->hi[d] = v->bhi[d] = 0;
    m->vh[h] = m->n_v + 1;
    return m->n_v++;
}

void vpr_model_free(struct vpr_model *m)
{
    for (int s = 0; s < 2; s++) free(m->run_cpu[s]);
    for (size_t i = 0; i < m->n_f; i++) {
        struct vpr_func *f = &m->f[i];
        free(f->name);
        free(f->src_name);
        for (int s = 0; s < 2; s++) { free(f->pc_sec[s]); free(f->var_sec[s]); }
        for (size_t j = 0; j < f->n_loc; j++) free(f->loc[j].file);
        free(f->loc);
        free(f->vars);
    }
    free(m->f);
    for (size_t i = 0; i < m->n_v; i++) {
        struct vpr_var *v = &m->v[i];
        free(v->file); free(v->function); free(v->name); free(v->type);
        for (int d = 0; d < VPR_N_DIMS; d++) {
            vpr_res_free(&v->res[0][d]);
            vpr_res_free(&v->res[1][d]);
            free(v->out[d]);
            free(v->out_ix[d]);
        }
        free(v->funcs);
    }
    free(m->v);
    free(m->vh);
    free(m->vf_set);
    free(m->uses_h);
    free(m->attr_set);
    free(m->arcs);
    free(m->arc_h);
    for (size_t i = 0; i < m->n_libarcs; i++) free(m->libarcs[i].callee);
    free(m->libarcs);
    free(m->blame_vc);
    free(m->clones);
    free(m->inl_f);
    free(m->icache);
    vpr_lat_free(m->lat);
    vpr_mctx_free(m->ctx);
    free(m->order);
    vpr_lines_free(m->lines);
    if (m->has_schema) vpf_schema_free(&m->schema);
    vpr_symtab_free(&m->sym);
    memset(m, 0, sizeof *m);
}
