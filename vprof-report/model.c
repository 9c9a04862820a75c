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

const char *const vpr_dim_name[VPR_N_DIMS] = {"value", "delta",
                                              "processing-cost"};

static size_t add_func(struct vpr_model *m, const char *name, long sym)
{
    m->f = vpf_grow(m->f, &m->cap_f, m->n_f + 1, sizeof *m->f);
    struct vpr_func *f = &m->f[m->n_f];
    memset(f, 0, sizeof *f);
    f->name = vpf_xstrdup(name);
    f->sym = sym;
    f->is_lib = sym < 0;
    f->var = -1;
    f->blame_var = -1;
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
    for (size_t i = 0; i < m->sym.n; i++) add_func(m, m->sym.syms[i].name, (long)i);
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
    return add_func(m, name, -1);
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
    for (size_t i = 0; i < m->n_f; i++) {
        struct vpr_func *f = &m->f[i];
        free(f->name);
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
    free(m->blame_vc);
    vpr_lat_free(m->lat);
    vpr_mctx_free(m->ctx);
    free(m->order);
    vpr_lines_free(m->lines);
    if (m->has_schema) vpf_schema_free(&m->schema);
    vpr_symtab_free(&m->sym);
    memset(m, 0, sizeof *m);
}
