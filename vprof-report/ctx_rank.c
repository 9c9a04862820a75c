/* ctx_rank.c - see ctx_rank.h. */
#include "ctx_rank.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "contexts_runs.h"
#include "demangle.h"
#include "output.h"
#include "vprof_xalloc.h"

#define NONE UINT32_MAX

void vpr_mctx_free(struct vpr_mctx *c)
{
    if (!c) return;
    vpr_cnames_free(&c->nm);
    vpr_ctree_free(&c->t[0]);
    vpr_ctree_free(&c->t[1]);
    free(c->paths);
    for (int s = 0; s < 2; s++) { free(c->own[s]); free(c->inst[s]); free(c->incl[s]); }
    free(c->added);
    free(c->top);
    free(c->n_top);
    free(c->best_path);
    free(c);
}

static double per_run(const struct vpr_ctree *t, double x)
{
    return x / (t->runs ? (double)t->runs : 1);
}

/* Keeps the VPR_MCTX_TOP contexts of a function that added most. */
static void keep_top(struct vpr_fctx *top, size_t *n, const struct vpr_fctx *x)
{
    size_t k = *n < VPR_MCTX_TOP ? (*n)++ : VPR_MCTX_TOP;
    if (k == VPR_MCTX_TOP) {
        const struct vpr_fctx *last = &top[VPR_MCTX_TOP - 1];
        if (x->added < last->added || (x->added == last->added && x->own[1] <= last->own[1]))
            return;
        k = VPR_MCTX_TOP - 1;
    }
    while (k > 0 && (top[k - 1].added < x->added ||
                     (top[k - 1].added == x->added && top[k - 1].own[1] < x->own[1]))) {
        top[k] = top[k - 1];
        k--;
    }
    top[k] = *x;
}

/* Per function of the model: its contexts' own time, growth, best path. */
static void per_function(struct vpr_mctx *c, const struct vpr_model *m)
{
    const struct vpr_ctree *n = &c->t[0], *b = &c->t[1];
    double tot[2] = {0, 0};
    for (int s = 0; s < 2; s++)
        for (size_t v = 1; v < c->t[s].nn; v++) tot[s] += per_run(&c->t[s], c->t[s].n[v].own[c->est]);
    c->scale = tot[0] > 0 ? tot[1] / tot[0] : 0;
    c->n_f = m->n_f;
    for (int s = 0; s < 2; s++) {
        c->own[s] = vpf_xcalloc(m->n_f + 1, sizeof *c->own[s]);
        c->inst[s] = vpf_xcalloc(m->n_f + 1, sizeof *c->inst[s]);
    }
    c->added = vpf_xcalloc(m->n_f + 1, sizeof *c->added);
    c->top = vpf_xcalloc((m->n_f + 1) * VPR_MCTX_TOP, sizeof *c->top);
    c->n_top = vpf_xcalloc(m->n_f + 1, sizeof *c->n_top);
    c->best_path = vpf_xcalloc(m->n_f + 1, sizeof *c->best_path);
    /* context name -> model function */
    for (size_t i = 0; i < m->n_f; i++) vpr_cname(&c->nm, m->f[i].name);
    long *fof = vpf_xmalloc((c->nm.n + 1) * sizeof *fof);
    for (size_t k = 0; k < c->nm.n; k++) fof[k] = -1;
    for (size_t i = 0; i < m->n_f; i++) fof[vpr_cname(&c->nm, m->f[i].name)] = (long)i;
    /* the best rank of a path through each buggy node */
    size_t *node_rank = vpf_xcalloc(b->nn, sizeof *node_rank);
    for (size_t k = c->np; k-- > 0;)
        for (uint32_t v = c->paths[k].leaf; v != 0 && v != NONE; v = b->n[v].parent)
            node_rank[v] = k + 1;
    /* the samples through each function: its subtrees' leaf samples, from
     * its outermost nodes only (a recursive call's sample counts once) */
    for (int s = 0; s < 2; s++) {
        const struct vpr_ctree *t = &c->t[s];
        c->incl[s] = vpf_xcalloc(m->n_f + 1, sizeof *c->incl[s]);
        double *sub = vpf_xcalloc(t->nn + 1, sizeof *sub);
        for (size_t v = t->nn; v-- > 1;) {      /* children after their parents */
            sub[v] += (double)t->n[v].leaf;
            uint32_t p = t->n[v].parent;
            if (p != NONE && p < t->nn) sub[p] += sub[v];
        }
        for (size_t v = 1; v < t->nn; v++) {
            long fi = fof[t->n[v].f];
            if (fi < 0) continue;
            int outer = 1;
            for (uint32_t a = t->n[v].parent; a != 0 && a != NONE && outer; a = t->n[a].parent)
                outer = t->n[a].f != t->n[v].f;
            if (outer) c->incl[s][fi] += per_run(t, sub[v]);
        }
        free(sub);
    }
    uint32_t *eq = vpr_ctx_map(n, b), *back = vpr_ctx_map(b, n);
    for (size_t v = 1; v < b->nn; v++) {
        long fi = fof[b->n[v].f];
        if (fi < 0) continue;
        struct vpr_fctx x = {.node = (uint32_t)v, .path_rank = node_rank[v]};
        x.own[1] = per_run(b, b->n[v].own[c->est]);
        x.own[0] = eq[v] == NONE ? 0 : per_run(n, n->n[eq[v]].own[c->est]);
        x.added = x.own[1] - c->scale * x.own[0];
        if (x.added < 0) x.added = 0;
        c->own[1][fi] += x.own[1];
        c->own[0][fi] += x.own[0];
        c->added[fi] += x.added;
        c->inst[1][fi] += b->n[v].count;
        if (eq[v] != NONE) c->inst[0][fi] += n->n[eq[v]].count;
        if (node_rank[v] && (!c->best_path[fi] || node_rank[v] < c->best_path[fi]))
            c->best_path[fi] = node_rank[v];
        keep_top(&c->top[(size_t)fi * VPR_MCTX_TOP], &c->n_top[fi], &x);
    }
    for (size_t v = 1; v < n->nn; v++) {          /* contexts only the normal runs had */
        if (back[v] != NONE) continue;
        long fi = fof[n->n[v].f];
        if (fi < 0) continue;
        c->own[0][fi] += per_run(n, n->n[v].own[c->est]);
        c->inst[0][fi] += n->n[v].count;
    }
    free(eq);
    free(back);
    free(node_rank);
    free(fof);
}

int vpr_mctx_load(struct vpr_model *m, const struct vpr_side sides[2], const char *exe_path,
                  const char *exe_override, char *note, size_t notelen, char *err, size_t errlen)
{
    m->ctx = NULL;
    note[0] = 0;
    size_t runs = 0, with = 0;
    for (int s = 0; s < 2; s++)
        for (size_t k = 0; k < sides[s].n; k++) {
            runs++;
            for (size_t p = 0; p < sides[s].runs[k].n; p++)
                if (sides[s].runs[k].procs[p].stacks_path) { with++; break; }
        }
    if (!with) return 0;          /* runs of an older runtime, or VPROF_STACKS=0 */
    if (with < runs) {
        snprintf(note, notelen, "only %zu of the %zu runs have stack samples (stacks.<id>): "
                 "calling contexts left out", with, runs);
        return 0;
    }
    struct vpr_mctx *c = vpf_xcalloc(1, sizeof *c);
    vpr_ctree_init(&c->t[0]);
    vpr_ctree_init(&c->t[1]);
    c->est = VPR_CTX_CONSERVATIVE;
    struct vpr_csyms sy = {.exe = &m->sym, .exe_path = exe_path, .exe_override = exe_override,
                           .exe_lines = m->o->inline_funcs ? m->lines : NULL,
                           .force = m->o->force};
    for (int s = 0; s < 2; s++)
        for (size_t k = 0; k < sides[s].n; k++) {
            size_t nfiles;
            if (vpr_ctx_load_run(&sides[s].runs[k], &c->t[s], &c->nm, &sy, VPR_CLOCK_CPU,
                                 &nfiles, err, errlen) < 0) {
                vpr_csyms_free(&sy);
                vpr_mctx_free(c);
                return -1;
            }
        }
    vpr_csyms_free(&sy);
    vpr_ctree_normalize(&c->t[0]);
    vpr_ctree_normalize(&c->t[1]);
    c->paths = vpr_ctx_rank(&c->t[0], &c->t[1], c->est, &c->np);
    per_function(c, m);
    m->ctx = c;
    return 0;
}

double vpr_mctx_ratio(const struct vpr_model *m, size_t i)
{
    const struct vpr_mctx *c = m->ctx;
    if (!c || i >= c->n_f || !(c->own[1][i] > 0)) return NAN;
    double r = 1.0 - c->added[i] / c->own[1][i];
    /* no growth is as normal as agreeing distributions: DefaultDiscount */
    if (r > m->o->default_discount) r = m->o->default_discount;
    return r < m->o->valid_discount ? 0 : r;
}

void vpr_mctx_discount(struct vpr_model *m, size_t i)
{
    struct vpr_func *f = &m->f[i];
    if (!m->ctx || m->o->ctx_discount == VPR_CTXD_OFF) return;
    if (f->disc != VPR_DISC_NONE && f->disc != VPR_DISC_HIST) return;
    if (m->o->ctx_discount == VPR_CTXD_NOVALUES &&
        (m->st[VPR_NORMAL].value_samples || m->st[VPR_BUGGY].value_samples))
        return;
    double r = vpr_mctx_ratio(m, i);
    if (isnan(r)) return;
    f->r = r;
    f->disc = VPR_DISC_CONTEXT;
}

void vpr_mctx_chain(const struct vpr_model *m, uint32_t node, size_t last, char *buf, size_t len)
{
    const struct vpr_mctx *c = m->ctx;
    uint32_t nodes[256];
    size_t k = vpr_ctx_path_nodes(&c->t[1], node, nodes, 256), from = k > last ? k - last : 0;
    size_t at = 0;
    buf[0] = 0;
    if (from && at < len) at += (size_t)snprintf(buf + at, len - at, "... > ");
    for (size_t j = from; j < k && at < len; j++) {
        char fit[120];
        vpr_dm_fit(fit, sizeof fit, c->nm.name[c->t[1].n[nodes[j]].f], 40, 0);
        at += (size_t)snprintf(buf + at, len - at, "%s%s", j > from ? " > " : "", fit);
    }
}

/* vprof's rank of function fi (1-based), 0 when it is not ranked. */
static size_t vprof_rank(const struct vpr_model *m, long fi)
{
    for (size_t k = 0; k < m->n_order; k++) if ((long)m->order[k] == fi) return k + 1;
    return 0;
}

/* The model function named like context function id, or -1. */
static long model_func(const struct vpr_model *m, const char *name)
{
    long s = vpr_sym_by_name(&m->sym, name);
    if (s >= 0 && (size_t)s < m->n_f && !strcmp(m->f[s].name, name)) return s;
    for (size_t i = 0; i < m->n_f; i++) if (!strcmp(m->f[i].name, name)) return (long)i;
    return -1;
}

int vpr_mctx_disagree(const struct vpr_model *m, struct vpr_mctx_disagree *d)
{
    memset(d, 0, sizeof *d);
    d->vprof_top = d->ctx_top = -1;
    const struct vpr_mctx *c = m->ctx;
    if (!c || !m->n_order) return 0;
    size_t top = m->order[0];
    uint32_t nodes[256];
    size_t k = 0;
    if (c->np && c->paths[0].cost > 0)
        k = vpr_ctx_path_nodes(&c->t[1], c->paths[0].leaf, nodes, 256);
    /* vprof's first on the top path (a caller whose decision made the
     * path's leaf hot: IntroPerf's own time leaves a caller nothing) is
     * no disagreement */
    int on_top_path = 0;
    for (size_t i = 0; i < k && !on_top_path; i++)
        on_top_path = model_func(m, c->nm.name[c->t[1].n[nodes[i]].f]) == (long)top;
    double r = vpr_mctx_ratio(m, top);
    if (!isnan(r) && r >= m->o->default_discount && !on_top_path) {
        d->vprof_top = (long)top;
        d->vprof_top_r = r;
    }
    if (k) {
        size_t hot = vpr_ctx_busiest(&c->t[1], nodes, k, c->est);
        long fi = model_func(m, c->nm.name[c->t[1].n[nodes[hot]].f]);
        size_t rank = fi >= 0 ? vprof_rank(m, fi) : 0;
        if (!rank || rank > vpr_n_shown(m)) {
            d->ctx_top = fi;
            d->ctx_top_rank = rank;
            d->ctx_top_node = nodes[hot];
        }
    }
    return d->vprof_top >= 0 || d->ctx_top >= 0 || d->ctx_top_node;
}

/* ---------- outputs ---------- */

/* One sentence per disagreement, into buf ("" when they agree). */
static void disagree_text(const struct vpr_model *m, char *buf, size_t len)
{
    struct vpr_mctx_disagree d;
    buf[0] = 0;
    if (!vpr_mctx_disagree(m, &d)) return;
    const struct vpr_mctx *c = m->ctx;
    size_t at = 0;
    char nm[200];                               /* names in their short form */
    if (d.vprof_top >= 0) {
        vpr_dm_fit(nm, sizeof nm, m->f[d.vprof_top].name, 60, 0);
        at += (size_t)snprintf(buf + at, len - at, "vprof ranks %s first, but its calling "
                               "contexts did not grow beyond the runs' proportions (%.3f of its "
                               "%.3f ms/run own time added; contexts' ratio %.2f).",
                               nm, c->added[d.vprof_top] / 1e6,
                               c->own[1][d.vprof_top] / 1e6, d.vprof_top_r);
    }
    if (d.ctx_top_node && at < len) {
        vpr_dm_fit(nm, sizeof nm, c->nm.name[c->t[1].n[d.ctx_top_node].f], 60, 0);
        if (at && at + 1 < len) { buf[at++] = ' '; buf[at] = 0; }
        if (d.ctx_top_rank)
            snprintf(buf + at, len - at, "The hottest function of the top calling context, %s, "
                     "is only rank %zu here.", nm, d.ctx_top_rank);
        else
            snprintf(buf + at, len - at, "The hottest function of the top calling context, %s, "
                     "is not in vprof's ranking%s.", nm,
                     d.ctx_top < 0 ? " (a function outside the program's symbols)" : "");
    }
}

/* Writes text wrapped at 80 columns, continuation lines indented. */
static void wrap(FILE *o, size_t col, size_t indent, const char *text)
{
    const char *p = text;
    while (*p) {
        size_t room = col < 80 ? 80 - col : 20, n = strlen(p);
        if (n <= room) { fputs(p, o); break; }
        size_t cut = room;
        while (cut > 0 && p[cut] != ' ') cut--;
        if (!cut) cut = room;
        fprintf(o, "%.*s\n%*s", (int)cut, p, (int)indent, "");
        p += cut;
        while (*p == ' ') p++;
        col = indent;
    }
    fputc('\n', o);
}

/* Its contexts hold no own time of it in the buggy runs (a function that
 * waits, a caller whose time is all its callees'): "0.000 of 0.000 ms
 * added" says nothing, so the verdict leaves the line out. Own time that
 * did not grow is said: that disagrees with a high rank. */
static int no_own_time(const struct vpr_mctx *c, size_t f)
{
    return c->own[1][f] < 500;          /* ns: 0.000 ms as printed */
}

void vpr_mctx_text_func(FILE *o, const struct vpr_model *m, size_t f)
{
    const struct vpr_mctx *c = m->ctx;
    if (!c || f >= c->n_f || !c->n_top[f] || no_own_time(c, f)) return;
    const struct vpr_fctx *t = &c->top[f * VPR_MCTX_TOP];
    char line[1200];
    size_t at = (size_t)snprintf(line, sizeof line, "contexts: %.3f of %.3f ms/run own time "
                                 "added beyond the runs' proportions", c->added[f] / 1e6,
                                 c->own[1][f] / 1e6);
    for (size_t k = 0; k < c->n_top[f] && at < sizeof line; k++) {
        char chain[600];
        vpr_mctx_chain(m, t[k].node, 4, chain, sizeof chain);
        at += (size_t)snprintf(line + at, sizeof line - at, "%s %+.3f in %s", k ? ";" : ":",
                               t[k].added / 1e6, chain);
        if (t[k].path_rank && at < sizeof line)
            at += (size_t)snprintf(line + at, sizeof line - at, " (path %zu)", t[k].path_rank);
    }
    fputs("    ", o);
    wrap(o, 4, 6, line);
}

void vpr_mctx_text_summary(FILE *o, const struct vpr_model *m)
{
    const struct vpr_mctx *c = m->ctx;
    if (!c) return;
    char head[300];
    snprintf(head, sizeof head, "Calling contexts (stack samples: normal %llu, buggy %llu; "
             "conservative estimate): the paths the buggy runs made hot, by the time they "
             "added, ms per run (vprof-report --contexts for all):",
             (unsigned long long)c->t[0].samples, (unsigned long long)c->t[1].samples);
    fputc('\n', o);
    wrap(o, 0, 0, head);
    for (size_t i = 0; i < c->np && i < 3 && c->paths[i].cost > 0; i++) {
        uint32_t nodes[256];
        size_t k = vpr_ctx_path_nodes(&c->t[1], c->paths[i].leaf, nodes, 256);
        size_t hot = vpr_ctx_busiest(&c->t[1], nodes, k, c->est);
        char chain[600], line[900];
        vpr_mctx_chain(m, c->paths[i].leaf, 5, chain, sizeof chain);
        const char *hn = k ? c->nm.name[c->t[1].n[nodes[hot]].f] : "-";
        long fi = model_func(m, hn);
        size_t rank = fi >= 0 ? vprof_rank(m, fi) : 0;
        char rk[40] = "not ranked";
        if (rank) snprintf(rk, sizeof rk, "vprof rank %zu", rank);
        char hot_name[200];                     /* a C++ name can fill the screen */
        vpr_dm_fit(hot_name, sizeof hot_name, hn, 60, 0);
        snprintf(line, sizeof line, "[%zu] %+.3f%s %s; hottest %s (%s)", i + 1,
                 c->paths[i].cost / 1e6, c->paths[i].is_new ? " new" : "", chain, hot_name, rk);
        fputs("  ", o);
        wrap(o, 2, 6, line);
    }
    char dis[1000];
    disagree_text(m, dis, sizeof dis);
    if (dis[0]) {
        char text[1100];
        snprintf(text, sizeof text, "The rankings disagree: %s", dis);
        wrap(o, 0, 0, text);
    } else if (c->np && c->paths[0].cost > 0) {
        wrap(o, 0, 0, "(The rankings agree: the top path's hottest function is among the "
             "functions shown, and the first function's contexts grew.)");
    } else {
        wrap(o, 0, 0, "(No calling context grew in the buggy runs.)");
    }
}

void vpr_mctx_json_func(FILE *o, const struct vpr_model *m, size_t f)
{
    const struct vpr_mctx *c = m->ctx;
    if (!c || f >= c->n_f) return;
    fputs(",\"contexts\":{\"ratio\":", o);
    vpr_jnum(o, vpr_mctx_ratio(m, f));
    fprintf(o, ",\"own_ms\":%.17g,\"normal_own_ms\":%.17g,\"added_ms\":%.17g,"
            "\"instances\":%llu,\"normal_instances\":%llu,\"best_path\":%zu,\"top\":[",
            c->own[1][f] / 1e6, c->own[0][f] / 1e6, c->added[f] / 1e6,
            (unsigned long long)c->inst[1][f], (unsigned long long)c->inst[0][f], c->best_path[f]);
    const struct vpr_fctx *t = &c->top[f * VPR_MCTX_TOP];
    for (size_t k = 0; k < c->n_top[f]; k++) {
        uint32_t nodes[256];
        size_t n = vpr_ctx_path_nodes(&c->t[1], t[k].node, nodes, 256);
        fputs(k ? ",{\"path\":[" : "{\"path\":[", o);
        for (size_t j = 0; j < n; j++) {
            if (j) fputc(',', o);
            vpr_jstr(o, vpr_dm(c->nm.name[c->t[1].n[nodes[j]].f]));
        }
        fprintf(o, "],\"own_ms\":%.17g,\"normal_own_ms\":%.17g,\"added_ms\":%.17g,"
                "\"path_rank\":%zu}", t[k].own[1] / 1e6, t[k].own[0] / 1e6, t[k].added / 1e6,
                t[k].path_rank);
    }
    fputs("]}", o);
}

void vpr_mctx_json_summary(FILE *o, const struct vpr_model *m)
{
    const struct vpr_mctx *c = m->ctx;
    if (!c) return;
    fprintf(o, ",\"contexts\":{\"estimate\":\"conservative\",\"samples\":[%llu,%llu],"
            "\"truncated\":[%llu,%llu],\"scale\":%.17g,\"paths\":[",
            (unsigned long long)c->t[0].samples, (unsigned long long)c->t[1].samples,
            (unsigned long long)c->t[0].truncated, (unsigned long long)c->t[1].truncated,
            c->scale);
    for (size_t i = 0; i < c->np && i < 10; i++) {
        uint32_t nodes[256];
        size_t k = vpr_ctx_path_nodes(&c->t[1], c->paths[i].leaf, nodes, 256);
        size_t hot = vpr_ctx_busiest(&c->t[1], nodes, k, c->est);
        fprintf(o, "%s{\"rank\":%zu,\"cost_ms\":%.17g,\"new\":%s,\"functions\":[", i ? "," : "",
                i + 1, c->paths[i].cost / 1e6, c->paths[i].is_new ? "true" : "false");
        for (size_t j = 0; j < k; j++) {
            if (j) fputc(',', o);
            vpr_jstr(o, vpr_dm(c->nm.name[c->t[1].n[nodes[j]].f]));
        }
        const char *hn = k ? c->nm.name[c->t[1].n[nodes[hot]].f] : NULL;
        long fi = hn ? model_func(m, hn) : -1;
        fputs("],\"hottest\":", o);
        vpr_jstr(o, hn ? vpr_dm(hn) : NULL);
        fprintf(o, ",\"hottest_vprof_rank\":%zu}", fi >= 0 ? vprof_rank(m, fi) : 0);
    }
    char dis[1000];
    disagree_text(m, dis, sizeof dis);
    struct vpr_mctx_disagree d;
    vpr_mctx_disagree(m, &d);
    fputs("],\"disagree\":", o);
    vpr_jstr(o, dis[0] ? dis : NULL);
    fputs(",\"vprof_top_not_grown\":", o);
    vpr_jstr(o, d.vprof_top >= 0 ? vpr_dm(m->f[d.vprof_top].name) : NULL);
    fputs(",\"context_top_low\":", o);
    vpr_jstr(o, d.ctx_top_node ? vpr_dm(c->nm.name[c->t[1].n[d.ctx_top_node].f]) : NULL);
    fputs("}", o);
}

void vpr_mctx_html_func(FILE *o, const struct vpr_model *m, size_t f)
{
    const struct vpr_mctx *c = m->ctx;
    if (!c || f >= c->n_f || !c->n_top[f] || no_own_time(c, f)) return;
    fprintf(o, "<p class=\"contexts\">Calling contexts: %.3f of %.3f ms/run own time added "
            "beyond the runs' proportions</p>\n<ul class=\"contexts\">\n",
            c->added[f] / 1e6, c->own[1][f] / 1e6);
    const struct vpr_fctx *t = &c->top[f * VPR_MCTX_TOP];
    for (size_t k = 0; k < c->n_top[f]; k++) {
        char chain[1200];
        vpr_mctx_chain(m, t[k].node, 64, chain, sizeof chain);
        fprintf(o, "<li>%+.3f ms/run (own %.3f buggy, %.3f normal) in ", t[k].added / 1e6,
                t[k].own[1] / 1e6, t[k].own[0] / 1e6);
        vpr_html_esc(o, chain);
        if (t[k].path_rank) fprintf(o, " &mdash; <a href=\"#ctx%zu\">path %zu</a>", t[k].path_rank,
                                    t[k].path_rank);
        fputs("</li>\n", o);
    }
    fputs("</ul>\n", o);
}

void vpr_mctx_html_summary(FILE *o, const struct vpr_model *m)
{
    const struct vpr_mctx *c = m->ctx;
    if (!c) return;
    char dis[1000];
    disagree_text(m, dis, sizeof dis);
    fprintf(o, "<h2 id=\"contexts\">Calling contexts</h2>\n<p>Stack samples: normal %llu, "
            "buggy %llu (conservative estimate).", (unsigned long long)c->t[0].samples,
            (unsigned long long)c->t[1].samples);
    if (dis[0]) {
        fputs(" <b class=\"disagree\">The rankings disagree:</b> ", o);
        vpr_html_esc(o, dis);
    }
    fputs("</p>\n", o);
    struct vpr_ctx_view v = {{&c->t[0], &c->t[1]}, &c->nm, c->paths, c->np, c->est, 10};
    vpr_ctx_html_sections(o, &v);
}
