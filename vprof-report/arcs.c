/* arcs.c - call-frequency evidence (arcs.h).
 *
 * gmon's arcs count, per (call site, callee), the calls made. Summed per
 * (caller function, callee function) over the main runs of each side, they
 * give the caller's rate: calls of the callee per call of the caller. Under
 * the normal runs' rate the buggy runs would make rate_n x calls_b calls;
 * the observed count is tested against that Poisson expectation, both
 * ways. A change counts when it is significant (p below --pvalue divided by
 * the number of arcs tested: many arcs are tested) and at least --arc-ratio
 * fold. Callers with fewer than --arc-min-calls calls on a side are left
 * out: for main or a thread's entry function, called once, a rate is just
 * the workload's size. An arc absent from the normal runs is taken to have
 * had half a call there (so a new arc needs several buggy calls and enough
 * normal calls of its caller to be significant). */
#include "vprof_xalloc.h"
#include "arcs.h"

#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static size_t arc_slot(uint64_t key, size_t cap)
{
    return (size_t)((key * 0x9e3779b97f4a7c15ull) >> 20) & (cap - 1);
}

static struct vpr_arc *arc_get(struct vpr_model *m, uint32_t from, uint32_t to)
{
    uint64_t key = (uint64_t)from << 32 | to;
    if (2 * (m->n_arcs + 1) > m->arc_hcap) {
        free(m->arc_h);
        m->arc_hcap = m->arc_hcap ? 2 * m->arc_hcap : 256;
        m->arc_h = vpf_xcalloc(m->arc_hcap, sizeof *m->arc_h);
        if (!m->arc_h) { m->arc_hcap = 0; return NULL; }
        for (size_t i = 0; i < m->n_arcs; i++) {
            uint64_t k = (uint64_t)m->arcs[i].from << 32 | m->arcs[i].to;
            size_t h = arc_slot(k, m->arc_hcap);
            while (m->arc_h[h]) h = (h + 1) & (m->arc_hcap - 1);
            m->arc_h[h] = i + 1;
        }
    }
    size_t h = arc_slot(key, m->arc_hcap);
    for (; m->arc_h[h]; h = (h + 1) & (m->arc_hcap - 1)) {
        struct vpr_arc *a = &m->arcs[m->arc_h[h] - 1];
        if (a->from == from && a->to == to) return a;
    }
    if (m->n_arcs == m->cap_arcs) {
        size_t nc = m->cap_arcs ? 2 * m->cap_arcs : 256;
        m->arcs = vpf_xrealloc(m->arcs, nc, sizeof *m->arcs);
        m->cap_arcs = nc;
    }
    struct vpr_arc *a = &m->arcs[m->n_arcs++];
    memset(a, 0, sizeof *a);
    a->from = from;
    a->to = to;
    m->arc_h[h] = m->n_arcs;
    return a;
}

void vpr_arcs_add(struct vpr_model *m, int side, const struct vpf_gmon *g, uint64_t bias)
{
    for (size_t i = 0; i < g->n_arcs; i++) {
        long f = vpr_sym_find(&m->sym, g->arcs[i].from_pc - bias);
        long s = vpr_sym_find(&m->sym, g->arcs[i].self_pc - bias);
        if (s < 0) continue;
        if (f == s) continue;                       /* recursion: not a call in */
        if (f < 0) { m->f[s].arc.calls[side] += g->arcs[i].count; continue; }  /* spontaneous */
        m->f[s].arc.calls[side] += g->arcs[i].count;
        struct vpr_arc *a = arc_get(m, (uint32_t)f, (uint32_t)s);
        if (a) a->count[side] += g->arcs[i].count;
    }
}

void vpr_arcs_analyse(struct vpr_model *m)
{
    const struct vpr_opts *o = m->o;
    double min_calls = o->arc_min_calls ? (double)o->arc_min_calls : 10;
    double k_ratio = o->arc_ratio > 1 ? o->arc_ratio : 4;
    size_t tested = 0;
    for (size_t i = 0; i < m->n_arcs; i++) {
        const struct vpr_arc *a = &m->arcs[i];
        const struct vpr_arcinfo *ci = &m->f[a->from].arc;
        if (ci->calls[0] >= min_calls && ci->calls[1] >= min_calls) tested++;
    }
    if (!tested) return;
    double alpha = o->pvalue / (double)tested;
    for (size_t i = 0; i < m->n_f; i++) { m->f[i].arc.to = -1; m->f[i].arc.p = NAN; }
    for (size_t i = 0; i < m->n_arcs; i++) {
        const struct vpr_arc *a = &m->arcs[i];
        struct vpr_arcinfo *ci = &m->f[a->from].arc;
        if (ci->calls[0] < min_calls || ci->calls[1] < min_calls) continue;
        double rate_n = (a->count[0] > 0 ? a->count[0] : 0.5) / ci->calls[0];
        double rate_b = a->count[1] / ci->calls[1];
        double lambda = rate_n * ci->calls[1];
        double k = a->count[1], p;
        int dir;
        if (k > lambda) {
            if (rate_b < k_ratio * rate_n) continue;
            p = gsl_cdf_poisson_Q((unsigned)(k - 1), lambda);      /* P(X >= k) */
            dir = 1;
        } else {
            if (rate_b * k_ratio > rate_n || a->count[0] <= 0) continue;
            p = gsl_cdf_poisson_P((unsigned)k, lambda);            /* P(X <= k) */
            dir = -1;
        }
        if (!(p < alpha)) continue;
        /* the most telling arc per caller: the smallest p, then the largest
         * change */
        double change = fabs(log((rate_b + 1e-12) / rate_n));
        if (ci->to < 0 || p < ci->p || (p == ci->p && change > ci->change)) {
            ci->change = change;
            ci->to = a->to;
            ci->count[0] = a->count[0];
            ci->count[1] = a->count[1];
            ci->expected = lambda;
            ci->p = p;
            ci->dir = dir;
        }
    }
}
