/* discount.c - the variable-discounter and hist-discounter (vProf §5.1).
 *
 * Per dimension: the k-sample Anderson-Darling test of normal vs buggy
 * samples; not rejected at --pvalue -> DefaultDiscount; rejected -> 1 -
 * Hellinger distance, or 0 when that is below ValidDiscount. A dimension
 * with buggy samples but no normal ones is anomalous (r = 0): the paper
 * treats a variable that only shows up in the buggy run as suspicious. (A
 * derived dimension that is empty on the normal side although the variable
 * has normal values counts as undefined, not anomalous.) When
 * the test is undefined (all values identical, fewer than 4 in all) the
 * distributions are taken as the same (DefaultDiscount). */
#include "discount.h"
#include "ctx_rank.h"
#include "demangle.h"

#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ad_test.h"
#include "hellinger.h"
#include "latency.h"
#include "source.h"
#include "pattern.h"
#include "writers.h"
#include "vprof_xalloc.h"

void vpr_dim_discount(const struct vpr_opts *o, double *normal, size_t nn,
                      double *buggy, size_t nb, enum vpr_dim_state *st,
                      double *r, double *p, double *stat, double *hell)
{
    *p = NAN; *stat = NAN; *hell = NAN;
    if (nb == 0) { *st = VPR_DS_NONE; *r = NAN; return; }
    /* A handful of buggy observations says nothing either way: one run of
     * an unchanged value, or a variable sampled once, must not decide. */
    if (nb < o->min_samples) { *st = VPR_DS_UNDEFINED; *r = o->default_discount; return; }
    if (nn == 0) { *st = VPR_DS_NO_NORMAL; *r = 0; *hell = 1; return; }
    double *s[2] = {normal, buggy};
    size_t n[2] = {nn, nb};
    struct vpr_ad_result ad;
    if (vpr_ad_ksamp(s, n, 2, &ad, NULL) < 0) {
        *st = VPR_DS_UNDEFINED;
        *r = o->default_discount;
        return;
    }
    *p = ad.pvalue;
    *stat = ad.statistic;
    if (ad.pvalue >= o->pvalue) {
        *st = VPR_DS_SAME;
        *r = o->default_discount;
        return;
    }
    *st = VPR_DS_DIFFERS;
    *hell = vpr_hellinger(normal, nn, buggy, nb, o->bins);   /* sorted by AD */
    *r = 1.0 - *hell;
    if (*r < o->valid_discount) *r = 0;
}

/* Rank of dimension d in the preference order (lower = preferred). */
static int dim_pref(const struct vpr_opts *o, int d)
{
    for (int i = 0; i < VPR_N_DIMS; i++)
        if (o->dim_order[i] == d) return i;
    return VPR_N_DIMS;
}

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Benjamini-Hochberg over every test of the report (each tested dimension of
 * each variable): with hundreds of variables, p < 0.05 rejects some by
 * chance alone. A rejection whose p-value is above the BH threshold at
 * --pvalue counts as "same" (DefaultDiscount). */
static void fdr_control(struct vpr_model *m)
{
    size_t n = 0;
    for (size_t i = 0; i < m->n_v; i++)
        for (int d = 0; d < VPR_N_DIMS; d++)
            if ((m->v[i].st[d] == VPR_DS_DIFFERS || m->v[i].st[d] == VPR_DS_SAME) &&
                !isnan(m->v[i].dim_p[d]))
                n++;
    if (!n) return;
    double *p = vpf_xmalloc(n * sizeof *p);
    if (!p) return;
    size_t k = 0;
    for (size_t i = 0; i < m->n_v; i++)
        for (int d = 0; d < VPR_N_DIMS; d++)
            if ((m->v[i].st[d] == VPR_DS_DIFFERS || m->v[i].st[d] == VPR_DS_SAME) &&
                !isnan(m->v[i].dim_p[d]))
                p[k++] = m->v[i].dim_p[d];
    qsort(p, n, sizeof *p, cmp_dbl);
    double thr = -1;
    for (size_t j = 0; j < n; j++)
        if (p[j] <= (double)(j + 1) / (double)n * m->o->pvalue) thr = p[j];
    free(p);
    for (size_t i = 0; i < m->n_v; i++)
        for (int d = 0; d < VPR_N_DIMS; d++) {
            struct vpr_var *v = &m->v[i];
            if (v->st[d] == VPR_DS_DIFFERS && v->dim_p[d] > thr) {
                v->st[d] = VPR_DS_SAME;
                v->dim_r[d] = m->o->default_discount;
            }
        }
}

void vpr_discount_vars(struct vpr_model *m)
{
    for (size_t i = 0; i < m->n_v; i++) {
        struct vpr_var *v = &m->v[i];
        v->r = NAN;
        v->dim = -1;
        /* pointers to non-basic types: processing cost only */
        int first = v->kind == VPF_KIND_PTR ? VPR_DIM_PROC : VPR_DIM_VALUE;
        for (int d = first; d < VPR_N_DIMS; d++) {
            struct vpr_reservoir *a = &v->res[VPR_NORMAL][d], *b = &v->res[VPR_BUGGY][d];
            /* A processing-cost sample is a whole stretch of ticks: four
             * stretches of 200 ticks (a loop index stuck for 800 ticks) are
             * 800 observations of it, not four (--min-samples). */
            const struct vpr_opts *o = m->o;
            struct vpr_opts ticks;
            if (d == VPR_DIM_PROC && b->n < o->min_samples) {
                double covered = 0;
                for (size_t k = 0; k < b->n; k++) covered += b->v[k];
                if (covered >= (double)o->min_samples) {
                    ticks = *o;
                    ticks.min_samples = 1;
                    o = &ticks;
                }
            }
            vpr_dim_discount(o, a->v, a->n, b->v, b->n, &v->st[d], &v->dim_r[d],
                             &v->dim_p[d], &v->dim_stat[d], &v->dim_h[d]);
            if (v->st[d] == VPR_DS_NONE) continue;
            /* The variable was seen in the normal run but too rarely to
             * form deltas or run lengths: that is no evidence of anomaly. */
            if (v->st[d] == VPR_DS_NO_NORMAL && d != first && v->res[VPR_NORMAL][first].n > 0) {
                v->st[d] = VPR_DS_UNDEFINED;
                v->dim_r[d] = m->o->default_discount;
                v->dim_h[d] = NAN;
            }
        }
    }
    if (m->o->fdr) fdr_control(m);
    for (size_t i = 0; i < m->n_v; i++) {
        struct vpr_var *v = &m->v[i];
        int first = v->kind == VPF_KIND_PTR ? VPR_DIM_PROC : VPR_DIM_VALUE;
        /* The lowest ratio decides; on equal ratios (several dimensions at
         * 0 after ValidDiscount, or all at DefaultDiscount) the preferred
         * dimension does, since it says more about the pattern: the
         * paper's artifact prefers processing cost, then delta, then value. */
        for (int d = first; d < VPR_N_DIMS; d++) {
            if (v->st[d] == VPR_DS_NONE) continue;
            if (v->dim < 0 || v->dim_r[d] < v->r ||
                (v->dim_r[d] == v->r && dim_pref(m->o, d) < dim_pref(m->o, v->dim))) {
                v->r = v->dim_r[d];
                v->dim = d;
            }
        }
    }
}

/* A global's base name: `dict_sys` for `dict_sys.n_tables` or
 * `cfg->limit`, which is how `@uses` lines name it. */
static size_t base_len(const char *name)
{
    size_t n = strcspn(name, ".-[");
    while (name[n] == '-' && name[n + 1] != '>') n += 1 + strcspn(name + n + 1, ".-[");
    return n;
}

static uint64_t use_key(const char *fn, const char *var, size_t bl)
{
    return vpf_hash_str(vpf_hash_mem(VPF_FNV_BASIS, var, bl) ^ 0xff, fn);
}

/* Does function fn use the global named name (by base name)? The schema's
 * `@uses` lines, looked up in a hash built on first use. */
static int global_used_by(struct vpr_model *m, const char *name, const char *fn)
{
    if (!m->has_schema) return 0;
    if (!m->uses_h) {
        size_t cap = 64;
        while (cap < 2 * m->schema.n_uses + 2) cap *= 2;
        m->uses_h = vpf_xcalloc(cap, sizeof *m->uses_h);
        m->uses_cap = cap;
        for (size_t i = 0; i < m->schema.n_uses; i++) {
            const struct vpf_schema_use *u = &m->schema.uses[i];
            size_t bl = base_len(u->variable);
            uint64_t k = use_key(u->function, u->variable, bl);
            size_t h = k & (cap - 1);
            while (m->uses_h[h]) h = (h + 1) & (cap - 1);
            m->uses_h[h] = i + 1;
        }
    }
    size_t bl = base_len(name);
    uint64_t k = use_key(fn, name, bl);
    for (size_t h = k & (m->uses_cap - 1); m->uses_h[h]; h = (h + 1) & (m->uses_cap - 1)) {
        const struct vpf_schema_use *u = &m->schema.uses[m->uses_h[h] - 1];
        if (!strcmp(u->function, fn) && base_len(u->variable) == bl &&
            !strncmp(u->variable, name, bl))
            return 1;
    }
    return 0;
}

/* Is variable a more anomalous than b? Lower ratio first; among equal
 * ratios (typically several at 0 after ValidDiscount) the larger Hellinger
 * distance of the deciding dimension, then a local of the function before a
 * global, then the name: deterministic, and the most specific evidence. */
/* A variable's ratio as evidence about one function: a global attributed to
 * k functions says 1/k as much about each (--specificity). */
static double eff_r(const struct vpr_var *v)
{
    double spec = v->spec > 0 ? v->spec : 1;
    return 1.0 - (1.0 - v->r) * spec;
}

static size_t min_side(size_t x, size_t y)
{
    return x < y ? x : y;
}

static int more_anomalous(const struct vpr_var *a, const struct vpr_var *b)
{
    double ra = eff_r(a), rb = eff_r(b);
    if (ra != rb) return ra < rb;
    double ha = a->dim >= 0 && !isnan(a->dim_h[a->dim]) ? a->dim_h[a->dim] : 0;
    double hb = b->dim >= 0 && !isnan(b->dim_h[b->dim]) ? b->dim_h[b->dim] : 0;
    if (ha != hb) return ha > hb;
    /* as far apart, on more evidence: the smaller side's observations (a
     * variable seen only in the buggy run has none to compare with) */
    size_t ea = a->dim >= 0 ? min_side(a->n[VPR_NORMAL][a->dim], a->n[VPR_BUGGY][a->dim]) : 0;
    size_t eb = b->dim >= 0 ? min_side(b->n[VPR_NORMAL][b->dim], b->n[VPR_BUGGY][b->dim]) : 0;
    if (ea != eb) return ea > eb;
    int ga = (a->tags & VPF_TAG_GLOBAL) != 0, gb = (b->tags & VPF_TAG_GLOBAL) != 0;
    if (ga != gb) return gb;
    return strcmp(a->name, b->name) < 0;
}

static void attach(struct vpr_func *f, size_t vi)
{
    for (size_t i = 0; i < f->n_vars; i++) if (f->vars[i] == vi) return;
    f->vars = vpf_grow(f->vars, &f->cap_vars, f->n_vars + 1, sizeof *f->vars);
    f->vars[f->n_vars++] = vi;
}

double vpr_hist_ratio(const size_t *rank_n, size_t n_normal,
                      const size_t *rank_b, size_t n_buggy, int window,
                      double valid, unsigned *h, unsigned *c)
{
    *h = *c = 0;
    for (size_t i = 0; i < n_normal; i++)
        for (size_t j = 0; j < n_buggy; j++) {
            if (rank_n[i] == SIZE_MAX && rank_b[j] == SIZE_MAX) continue;
            (*c)++;
            if (window < 0) {
                if (rank_n[i] < rank_b[j]) (*h)++;  /* ranks higher in normal */
            } else if (rank_n[i] != SIZE_MAX && rank_b[j] != SIZE_MAX &&
                       (rank_n[i] > rank_b[j] ? rank_n[i] - rank_b[j]
                                              : rank_b[j] - rank_n[i]) <= (size_t)window) {
                (*h)++;                               /* about the same rank */
            }
        }
    if (!*c) return 0;
    double r = (double)*h / *c;
    return r < valid ? 0 : r;
}

/* The rank window's flaw, in a program of a dozen functions: a step that
 * went from a quarter of the run to 84% of it rose two places (5th to 3rd,
 * below main and its caller) and counted as "the same rank", discount 1,
 * calibrated cost 0 (a re-sort after every document, inlined into its
 * caller at -O2, ranked 11th); a function that fell ten places counted as
 * anomalous. The share of the run is what a rank stands for; the ticks say
 * whether its growth is more than sampling noise. */
double vpr_hist_share_ratio(const double *cost_n, const double *tot_n, size_t n_normal,
                            const double *cost_b, const double *tot_b, size_t n_buggy,
                            double hz, double pvalue, double valid, unsigned *h,
                            unsigned *c)
{
    double sum = 0;
    *h = *c = 0;
    for (size_t i = 0; i < n_normal; i++)
        for (size_t j = 0; j < n_buggy; j++) {
            double kn = cost_n[i], kb = cost_b[j];
            if (!(kn > 0) && !(kb > 0)) continue;
            (*c)++;
            double added = kb - kn * (tot_n[i] > 0 ? tot_b[j] / tot_n[i] : 0);
            if (kb > 0 && added > 0) {
                double tn = round(kn * hz), tb = round(kb * hz);
                if (tn + tb > 1e9) {            /* keep the counts unsigned */
                    double k = 1e9 / (tn + tb);
                    tn = round(tn * k);
                    tb = round(tb * k);
                }
                double q = tot_b[j] / (tot_n[i] + tot_b[j]);
                /* P(X >= tb), X ~ Bin(tn + tb, q): its ticks in the buggy
                 * run if its share of each run were the same */
                double p = tb >= 1 && q > 0 && q < 1
                               ? gsl_cdf_binomial_Q((unsigned)tb - 1, q, (unsigned)(tn + tb))
                               : 0;
                if (p < pvalue) { sum += 1 - added / kb; continue; }
            }
            (*h)++;
            sum += 1;
        }
    if (!*c) return 0;
    double r = sum / *c;
    return r < valid ? 0 : r;
}

static int cmp_var_anomaly(const void *a, const void *b, void *ctx)
{
    const struct vpr_model *m = ctx;
    const struct vpr_var *x = &m->v[*(const size_t *)a], *y = &m->v[*(const size_t *)b];
    if (more_anomalous(x, y)) return -1;
    if (more_anomalous(y, x)) return 1;
    return 0;
}
static double raw_of(const struct vpr_func *f, int s, size_t r)
{
    return f->pc_sec[s][r] > f->var_sec[s][r] ? f->pc_sec[s][r] : f->var_sec[s][r];
}

/* which run of which side cmp_run_cost compares */
struct run_key { const struct vpr_model *m; int side; size_t run; };

static int cmp_run_cost(const void *a, const void *b, void *ctx)
{
    const struct run_key *k = ctx;
    const struct vpr_func *x = &k->m->f[*(const size_t *)a], *y = &k->m->f[*(const size_t *)b];
    double cx = raw_of(x, k->side, k->run), cy = raw_of(y, k->side, k->run);
    if (cx != cy) return cx > cy ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* Did f choose to do the work: is a loop or condition variable of it
 * anomalous, or does it call a callee more often per call? Not only the
 * deciding variable: that one is picked by dimension preference among
 * equals, and an argument passed down a call chain unchanged (a timestamp,
 * `now`) is as anomalous in every function of the chain. */
static int decides(const struct vpr_model *m, const struct vpr_func *f)
{
    if (f->disc == VPR_DISC_VARIABLE && f->var >= 0 && f->r < m->o->default_discount &&
        (m->v[f->var].tags & (VPF_TAG_LOOP | VPF_TAG_COND)))
        return 1;
    if (m->o->arcs && f->arc.to >= 0 && f->arc.dir > 0) return 1;
    for (size_t k = 0; k < f->n_vars; k++) {
        const struct vpr_var *v = &m->v[f->vars[k]];
        if ((v->tags & (VPF_TAG_LOOP | VPF_TAG_COND)) && v->dim >= 0 &&
            eff_r(v) < m->o->default_discount)
            return 1;
    }
    return 0;
}

static int cmp_final(const void *a, const void *b, void *ctx)
{
    const struct vpr_model *m = ctx;
    const struct vpr_func *x = &m->f[*(const size_t *)a], *y = &m->f[*(const size_t *)b];
    /* A library's code (libstdc++'s sort internals, an inline libc helper)
     * is where the time goes, never what the user changes: its caller in
     * the program inherits its cost and ranks by it. */
    if (m->o->library_last && x->system != y->system) return x->system - y->system;
    if (x->calibrated != y->calibrated) return x->calibrated > y->calibrated ? -1 : 1;
    /* Equal costs happen when one function's cost is all in another (a
     * caller and the callee it spends its time in, an inlined chain): the
     * one with an anomalous loop or condition, or more calls per call,
     * says where the program chose to do the work. */
    int dx = decides(m, x), dy = decides(m, y);
    if (dx != dy) return dy - dx;
    if (x->raw[VPR_BUGGY] != y->raw[VPR_BUGGY])
        return x->raw[VPR_BUGGY] > y->raw[VPR_BUGGY] ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* The unranked tail in gprof's flat-profile order: self (PC) time in the
 * buggy runs, then calls, then name. */
static int cmp_calls(const void *a, const void *b, void *ctx)
{
    const struct vpr_model *m = ctx;
    const struct vpr_func *x = &m->f[*(const size_t *)a], *y = &m->f[*(const size_t *)b];
    int px = vpr_is_plt(m, x), py = vpr_is_plt(m, y);
    if (px != py) return px - py;               /* the program's functions first */
    /* then those without a source line: the C runtime's start-up and
     * tear-down (`_start`, `__do_global_dtors_aux`, `frame_dummy`), code
     * built without -g - not where a user of the report edits */
    int nx = !x->file, ny = !y->file;
    if (nx != ny) return nx - ny;
    if (x->pc_cost[VPR_BUGGY] != y->pc_cost[VPR_BUGGY])
        return x->pc_cost[VPR_BUGGY] > y->pc_cost[VPR_BUGGY] ? -1 : 1;
    /* gprof lists symbols only: an inlined function known by its counted
     * calls alone comes after them */
    if (x->inl_only != y->inl_only) return x->inl_only ? 1 : -1;
    if (x->arc.calls[VPR_BUGGY] != y->arc.calls[VPR_BUGGY])
        return x->arc.calls[VPR_BUGGY] > y->arc.calls[VPR_BUGGY] ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* ranks[s][run][f]: rank of f in that run by raw cost, SIZE_MAX if absent */
static size_t **run_ranks(struct vpr_model *m, int s)
{
    size_t nr = m->n_runs[s] + m->n_hruns[s];       /* --hist-* runs too */
    size_t **rk = vpf_xcalloc(nr ? nr : 1, sizeof *rk);
    size_t *idx = vpf_xcalloc(m->n_f ? m->n_f : 1, sizeof *idx);
    for (size_t r = 0; r < nr; r++) {
        rk[r] = vpf_xcalloc(m->n_f, sizeof **rk);
        size_t k = 0;
        for (size_t i = 0; i < m->n_f; i++) {
            rk[r][i] = SIZE_MAX;
            if (raw_of(&m->f[i], s, r) > 0 && !vpr_is_plt(m, &m->f[i])) idx[k++] = i;
        }
        struct run_key key = {m, s, r};
        qsort_r(idx, k, sizeof *idx, cmp_run_cost, &key);
        for (size_t i = 0; i < k; i++) rk[r][idx[i]] = i;
    }
    free(idx);
    return rk;
}

/* The evidence of a function without variables: its rank across runs or
 * its calling contexts' growth, weaker than any other dimension's. */
static int weak_disc(const struct vpr_func *f)
{
    return f->disc == VPR_DISC_HIST || f->disc == VPR_DISC_CONTEXT;
}

/* The fourth dimension (latency.c): the function's call latencies, normal
 * vs buggy. Like a variable's dimension it can only lower the ratio (the
 * lowest dimension wins). When the distributions differ, the latency the
 * buggy run added to the function's calls (its summed call latency, wall
 * time with off-CPU included, minus the normal run's; means per run)
 * becomes its buggy raw cost if that exceeds the CPU-based one: a function
 * that waits in the buggy run then has a cost at all, and its callers,
 * whose frames contain the wait, rise with it. The difference, not the
 * buggy sum: any function that sleeps has a large summed wall time, and a
 * slight shift of its distribution must not make all of it a cost that
 * another dimension's evidence then leaves undiscounted. An undefined test
 * (too few calls, e.g. main) leaves the function alone. */
static void latency_dimension(struct vpr_model *m, size_t i)
{
    struct vpr_func *f = &m->f[i];
    if (!m->lat || i >= m->lat->n_f) return;
    const struct vpr_lfunc *lf = &m->lat->f[i];
    if (lf->st != VPR_DS_SAME && lf->st != VPR_DS_DIFFERS && lf->st != VPR_DS_NO_NORMAL)
        return;
    double added = lf->cost[VPR_BUGGY] - lf->cost[VPR_NORMAL];
    if (lf->st != VPR_DS_SAME && added > f->raw[VPR_BUGGY]) f->raw[VPR_BUGGY] = added;
    /* on a tie a variable keeps the decision: it names the variable and
     * gives the bug pattern; latency only says "it waits longer" */
    if (f->disc == VPR_DISC_NONE || lf->r < f->r ||
        (weak_disc(f) && lf->r <= f->r && lf->st != VPR_DS_SAME)) {
        f->r = lf->r;
        f->disc = VPR_DISC_LATENCY;
    }
}

/* v's evidence in dimension d settles the question whatever its sample
 * counts: every buggy observation outside the normal range, p at the
 * test's floor, a few observations a side. */
static int decisive(const struct vpr_var *v, int d)
{
    return v->dim_p[d] <= 0.001 && v->n_outside[d] == v->n[VPR_BUGGY][d] &&
           v->n[VPR_NORMAL][d] >= 5 && v->n[VPR_BUGGY][d] >= 5;
}

/* Call-frequency evidence (arcs.c, --arcs): a significant change in how
 * often it calls a callee per call is a decision of its own that changed.
 * More calls: the callee's buggy cost that the extra calls account for
 * becomes its cost if larger (its variable-based cost may be 0 when no
 * variable of it is readable at the call). Fewer calls: the cost is
 * elsewhere (what the skipped call would have prevented), so only the
 * evidence counts. */
static void arc_dimension(struct vpr_model *m, size_t i)
{
    struct vpr_func *f = &m->f[i];
    if (!m->o->arcs || f->arc.to < 0) return;
    if (f->arc.dir > 0 && f->arc.count[1] > 0) {
        const struct vpr_func *g = &m->f[f->arc.to];
        double share = g->arc.calls[1] > 0 ? f->arc.count[1] / g->arc.calls[1] : 0;
        double extra = 1.0 - f->arc.expected / f->arc.count[1];
        double cost = g->raw[VPR_BUGGY] * (share > 1 ? 1 : share) * (extra > 0 ? extra : 0);
        if (cost > f->raw[VPR_BUGGY]) f->raw[VPR_BUGGY] = cost;
    }
    /* a variable at 0 keeps the decision (it names a variable) unless its
     * evidence is thin (a handful of samples against a significant count
     * of calls); the hist-discounter's rank comparison is weaker evidence */
    int thin_var = 0;
    if (f->disc == VPR_DISC_VARIABLE && f->var >= 0 && f->dim >= 0) {
        const struct vpr_var *v = &m->v[f->var];
        size_t min_ev = m->o->min_evidence ? m->o->min_evidence : 20;
        thin_var = !decisive(v, f->dim) &&
                   (v->n[VPR_NORMAL][f->dim] < min_ev || v->n[VPR_BUGGY][f->dim] < min_ev);
    }
    if (f->disc == VPR_DISC_NONE || weak_disc(f) || 0 < f->r || thin_var) {
        f->r = 0;
        f->disc = VPR_DISC_ARC;
    }
}

/* The waits it made others sit through (latency.c, charge_owners): off-CPU
 * time on the same scale as its CPU time, with the waiting site's
 * distributions as evidence. */
static void lock_dimension(struct vpr_model *m, size_t i)
{
    struct vpr_func *f = &m->f[i];
    if (!m->lat || i >= m->lat->n_f) return;
    const struct vpr_lfunc *lf = &m->lat->f[i];
    if (lf->lock_cost <= 0) return;
    f->lock_cost = lf->lock_cost;
    f->raw[VPR_BUGGY] += lf->lock_cost;
    if (f->disc == VPR_DISC_NONE || lf->lock_r < f->r ||
        (weak_disc(f) && lf->lock_r <= f->r)) {
        f->r = lf->lock_r;
        f->disc = VPR_DISC_LOCK;
    }
}

static size_t attr_slot(uint64_t key, size_t cap)
{
    return (size_t)((key * 0x9e3779b97f4a7c15ull) >> 20) & (cap - 1);
}

/* Remembers that variable vi is attributed to function fi, for
 * vpr_attributed(): the blame pass asks it for every sample. */
static void note_attr(struct vpr_model *m, size_t vi, size_t fi)
{
    uint64_t key = (uint64_t)(vi + 1) << 32 | (uint32_t)fi;
    if (2 * (m->attr_n + 1) > m->attr_cap) {
        size_t oc = m->attr_cap;
        uint64_t *old = m->attr_set;
        m->attr_cap = oc ? 2 * oc : 1024;
        m->attr_set = vpf_xcalloc(m->attr_cap, sizeof *m->attr_set);
        for (size_t i = 0; i < oc; i++) {
            if (!old[i]) continue;
            size_t h = attr_slot(old[i], m->attr_cap);
            while (m->attr_set[h]) h = (h + 1) & (m->attr_cap - 1);
            m->attr_set[h] = old[i];
        }
        free(old);
    }
    size_t h = attr_slot(key, m->attr_cap);
    for (; m->attr_set[h]; h = (h + 1) & (m->attr_cap - 1))
        if (m->attr_set[h] == key) return;
    m->attr_set[h] = key;
    m->attr_n++;
    m->v[vi].n_attr++;
    attach(&m->f[fi], vi);
}

int vpr_attributed(const struct vpr_model *m, size_t vi, size_t fi)
{
    if (!m->attr_cap) return 0;
    uint64_t key = (uint64_t)(vi + 1) << 32 | (uint32_t)fi;
    for (size_t h = attr_slot(key, m->attr_cap); m->attr_set[h]; h = (h + 1) & (m->attr_cap - 1))
        if (m->attr_set[h] == key) return 1;
    return 0;
}

struct clone_attr { struct vpr_model *m; size_t vi; };

static void attr_clone(void *ctx, size_t sym)
{
    struct clone_attr *ca = ctx;
    note_attr(ca->m, ca->vi, sym);      /* a repeat is ignored */
}

/* --stack-raw: function i's raw cost is at least the ticks whose whole
 * stack holds it - the value samples' unwinding stops VPROF_UNWIND program
 * frames above the leaf, and a caller further up inherits none of them. */
static void raise_to_stacks(struct vpr_model *m, size_t i)
{
    if (!m->ctx || !m->ctx->incl[0] || i >= m->ctx->n_f) return;
    for (int s = 0; s < 2; s++) {
        double st = m->ctx->incl[s][i] / (m->st[s].hz ? m->st[s].hz : 100);
        if (st > m->f[i].raw[s]) m->f[i].raw[s] = st;
    }
}

void vpr_attribute(struct vpr_model *m)
{
    const struct vpr_opts *o = m->o;
    for (size_t i = 0; i < m->n_f; i++) {
        struct vpr_func *f = &m->f[i];
        for (int s = 0; s < 2; s++) {
            double pc = 0, var = 0, raw = 0;
            for (size_t r = 0; r < m->n_runs[s]; r++) {
                pc += f->pc_sec[s][r];
                var += f->var_sec[s][r];
                raw += raw_of(f, s, r);
            }
            double n = m->n_runs[s] ? (double)m->n_runs[s] : 1;
            f->pc_cost[s] = pc / n;
            f->var_cost[s] = var / n;
            f->raw[s] = raw / n;
        }
        if (o->stack_raw == VPR_STACK_RAW_ALL) raise_to_stacks(m, i);
    }
    /* variables -> functions: locals by their function's name; globals
     * (--globals) to the functions that sampled them and that the schema's
     * `@uses` lines say use them — a global is readable at every PC, so
     * being sampled in a function says nothing about it — or to every
     * function that sampled them (the paper's text), or to none. */
    for (size_t vi = 0; vi < m->n_v; vi++) {
        struct vpr_var *v = &m->v[vi];
        if (v->dim < 0) continue;
        if (v->tags & VPF_TAG_GLOBAL) {
            if (o->globals == VPR_GLOBALS_NONE) continue;
            /* a program without a schema (plain gcc -pg, vprof-meta --all)
             * has no @uses lines: the paper's rule is all there is */
            int sampled = o->globals == VPR_GLOBALS_SAMPLED || !m->has_schema;
            for (size_t k = 0; k < v->n_funcs; k++)
                if (sampled ||
                    global_used_by(m, v->name, m->f[v->funcs[k]].name))
                    note_attr(m, vi, (size_t)v->funcs[k]);
        } else {
            long s = vpr_model_func_by_name(m, v->function);
            if (s >= 0) note_attr(m, vi, (size_t)s);
            /* gcc's other pieces of the function (f.part.0 and f.cold,
             * f and f.constprop.0) run its code too */
            struct clone_attr ca = {m, vi};
            vpr_model_each_clone(m, v->function, attr_clone, &ca);
        }
    }
    for (size_t vi = 0; vi < m->n_v; vi++) {
        struct vpr_var *v = &m->v[vi];
        v->spec = 1;
        if (o->specificity && (v->tags & VPF_TAG_GLOBAL) && v->n_attr > 1)
            v->spec = 1.0 / (double)v->n_attr;
    }
    size_t **rk[2] = {run_ranks(m, VPR_NORMAL), run_ranks(m, VPR_BUGGY)};
    size_t hn = m->n_runs[0] + m->n_hruns[0], hb = m->n_runs[1] + m->n_hruns[1];
    size_t *rn = vpf_xcalloc(hn + 1, sizeof *rn);
    size_t *rb = vpf_xcalloc(hb + 1, sizeof *rb);
    /* each run's CPU time, what a share is of: its ticks (the layout
     * logs), or more if the PC samples or a function's cost say so (a
     * process killed before its log's end line; the histogram has no
     * library code, a function's cost does) */
    double *tot[2] = {vpf_xcalloc(hn + 1, sizeof(double)), vpf_xcalloc(hb + 1, sizeof(double))};
    double *cn = vpf_xcalloc(hn + 1, sizeof *cn), *cb = vpf_xcalloc(hb + 1, sizeof *cb);
    int by_share = o->hist_rule == VPR_HIST_SHARE;
    for (int s = 0; s < 2; s++)
        for (size_t r = 0; r < (s ? hb : hn); r++) {
            double pc = 0, top = 0;
            for (size_t k = 0; k < m->n_f; k++) {
                pc += m->f[k].pc_sec[s][r];
                top = fmax(top, raw_of(&m->f[k], s, r));
            }
            tot[s][r] = fmax(m->run_cpu[s][r], fmax(pc, top));
            if (!(tot[s][r] > 0)) by_share = 0;
        }
    double hz = m->st[VPR_BUGGY].hz ? m->st[VPR_BUGGY].hz : 100;
    for (size_t i = 0; i < m->n_f; i++) {
        struct vpr_func *f = &m->f[i];
        /* most anomalous first: the outputs list them in this order */
        if (f->n_vars > 1) qsort_r(f->vars, f->n_vars, sizeof *f->vars, cmp_var_anomaly, m);
        f->disc = VPR_DISC_NONE;
        f->r = 0;
        for (size_t k = 0; k < f->n_vars; k++) {
            struct vpr_var *v = &m->v[f->vars[k]];
            if (f->var < 0 || more_anomalous(v, &m->v[f->var])) {
                f->r = eff_r(v);
                f->var = (long)f->vars[k];
                f->dim = v->dim;
            }
            f->disc = VPR_DISC_VARIABLE;
        }
        if (f->disc == VPR_DISC_NONE && hn && hb && by_share) {
            for (size_t r = 0; r < hn; r++) cn[r] = raw_of(f, VPR_NORMAL, r);
            for (size_t r = 0; r < hb; r++) cb[r] = raw_of(f, VPR_BUGGY, r);
            f->r = vpr_hist_share_ratio(cn, tot[0], hn, cb, tot[1], hb, hz, o->pvalue,
                                        o->valid_discount, &f->hist_h, &f->hist_c);
            if (f->hist_c) f->disc = VPR_DISC_HIST;
            for (int s = 0; s < 2; s++) {
                double c = 0, t = 0;
                for (size_t r = 0; r < (s ? hb : hn); r++) { c += s ? cb[r] : cn[r]; t += tot[s][r]; }
                f->share[s] = t > 0 ? c / t : 0;
                f->share_ticks[s] = c * hz;
            }
        } else if (f->disc == VPR_DISC_NONE && hn && hb) {
            for (size_t r = 0; r < hn; r++) rn[r] = rk[0][r][i];
            for (size_t r = 0; r < hb; r++) rb[r] = rk[1][r][i];
            f->r = vpr_hist_ratio(rn, hn, rb, hb, o->hist_window,
                                  o->valid_discount, &f->hist_h, &f->hist_c);
            if (f->hist_c) f->disc = VPR_DISC_HIST;
        }
        vpr_mctx_discount(m, i);        /* calling contexts may stand in (ctx_rank.c) */
        f->cpu_raw = f->raw[VPR_BUGGY];
        latency_dimension(m, i);
        lock_dimension(m, i);
        arc_dimension(m, i);
    }
    for (int s = 0; s < 2; s++) {
        for (size_t r = 0; r < m->n_runs[s] + m->n_hruns[s]; r++) free(rk[s][r]);
        free(rk[s]);
    }
    free(rn);
    free(rb);
    free(cn);
    free(cb);
    free(tot[0]);
    free(tot[1]);
}

/* The cost the buggy runs added to a function beyond the normal runs'
 * proportions: its buggy cost minus its normal cost scaled by the ratio of
 * the runs' total CPU time (= total_b x (share_b - share_n)), at least 0.
 * main and a driver loop keep their share when the workload grows; the
 * functions the slowdown happens in gain share. */
static double added_cost(const struct vpr_func *f, double scale)
{
    double a = f->raw[VPR_BUGGY] - f->raw[VPR_NORMAL] * scale;
    return a > 0 ? a : 0;
}

/* The cost of the extra calls a function made: when it calls a callee
 * significantly more often per call than in the normal runs (arcs.c), the
 * calls beyond both the normal rate per call and the workload's growth (the
 * normal count x the growth below) cost what the callee's buggy calls cost on average. A
 * batch that calls more often because the workload is larger adds nothing;
 * a decision that calls an expensive callee more often than the workload
 * explains adds that cost, although its own share of the run (all of it,
 * for a caller near main) did not grow. */
static double arc_added(const struct vpr_model *m, const struct vpr_func *f)
{
    if (!m->o->arcs || f->arc.to < 0 || f->arc.dir <= 0 || f->arc.count[VPR_BUGGY] <= 0)
        return 0;
    const struct vpr_func *g = &m->f[f->arc.to];
    double share = g->arc.calls[VPR_BUGGY] > 0 ? f->arc.count[VPR_BUGGY] / g->arc.calls[VPR_BUGGY] : 0;
    double expected = f->arc.count[VPR_NORMAL] * m->arc_growth;     /* arcs.c */
    if (f->arc.expected > expected) expected = f->arc.expected;
    double extra = 1.0 - expected / f->arc.count[VPR_BUGGY];
    return extra > 0 ? g->raw[VPR_BUGGY] * (share > 1 ? 1 : share) * extra : 0;
}

/* Ranked by calibrated cost: functions the evidence leaves a cost to, and
 * those with call-frequency evidence (a decision can cost nothing itself).
 * The rest (discounted to nothing, or never sampled) follow in gprof's
 * order: when vprof cannot tell, a cost profiler's answer is the fallback. */
static int ranked(const struct vpr_model *m, const struct vpr_func *f)
{
    if (vpr_is_plt(m, f)) return 0;
    return f->calibrated > 0 || (m->o->arcs && f->arc.to >= 0);
}

/* f's calls of g on one side, summed over its arcs (any source but
 * dropped: one per host symbol of an inlined caller). */
static double arc_total(const struct vpr_model *m, size_t from, size_t to, int side)
{
    double n = 0;
    for (size_t k = 0; k < m->n_arcs; k++)
        if (m->arcs[k].src != VPR_ARC_DROPPED && m->arcs[k].from == from && m->arcs[k].to == to)
            n += m->arcs[k].count[side];
    return n;
}

/* Does f call g (on either side)? */
static int calls_fn(const struct vpr_model *m, uint32_t f, uint32_t g)
{
    return arc_total(m, f, g, VPR_NORMAL) > 0 || arc_total(m, f, g, VPR_BUGGY) > 0;
}

/* The roots by the stack scanner's measure: functions whose calls last
 * (nearly) their threads' whole lives on both sides (latency.c,
 * thread_cover) - main, a thread's start routine and the frames under it.
 * The scanner reads whole stacks, so no caller check is needed: the value
 * samples' unwinding may stop below such a function (its CPU-based cost
 * is then smaller than a callee's; `worker` in mdev24731_deadlock_detect),
 * the scanner's view does not. */
static void mark_latency_roots(struct vpr_model *m, double share)
{
    if (!m->lat || !m->lat->n_f || share <= 0) return;
    size_t n = m->lat->n_f < m->n_f ? m->lat->n_f : m->n_f;
    for (size_t i = 0; i < n; i++)
        if (!vpr_is_plt(m, &m->f[i]) && m->lat->f[i].thread_root) m->f[i].whole_run = 1;
}

/* The process's entry point (_start, the ELF entry) is a root whenever
 * the run has one: it holds main and so everything. Its cost from the
 * samples is a fraction of main's only because the unwinding seldom
 * reaches it, and kept by blend's rule it ranked above root causes
 * (memcached340_hash_expand, -fno-inline: 5th, on rank history). */
static void mark_entry_root(struct vpr_model *m)
{
    if (!m->sym.entry) return;
    int any = 0;
    for (size_t i = 0; i < m->n_f && !any; i++) any = m->f[i].whole_run;
    if (!any) return;
    long s = vpr_sym_find(&m->sym, m->sym.entry);
    if (s < 0) return;
    for (size_t i = 0; i < m->n_f; i++)
        if (m->f[i].sym == s && !m->f[i].inl_only) m->f[i].whole_run = 1;
}

/* The roots of the run: functions whose cost is at least `share` of the
 * largest function's on both sides - main, a thread's start routine, a
 * server's event loop. Everything the program does happens under them, in
 * the normal runs as in the buggy ones, so their share says nothing about
 * where the time went, and their loop counters differ whenever the
 * workload or the pace of any callee does (the driver loops that ranked
 * first in programs built with inlining). The largest function's cost
 * stands for the run's: variable-based costs do not compare with the PC
 * total (pg_fastpath_locks: main's is three times it). */
static double mark_whole_run(struct vpr_model *m, double share)
{
    double top[2] = {0, 0};
    for (size_t i = 0; i < m->n_f; i++) {
        m->f[i].whole_run = 0;
        if (vpr_is_plt(m, &m->f[i])) continue;
        if (m->f[i].raw[VPR_NORMAL] > top[VPR_NORMAL]) top[VPR_NORMAL] = m->f[i].raw[VPR_NORMAL];
        if (m->f[i].cpu_raw > top[VPR_BUGGY]) top[VPR_BUGGY] = m->f[i].cpu_raw;
    }
    if (share <= 0 || top[0] <= 0 || top[1] <= 0) return top[VPR_BUGGY];
    for (size_t i = 0; i < m->n_f; i++) {
        struct vpr_func *f = &m->f[i];
        f->whole_run = !vpr_is_plt(m, f) && f->raw[VPR_NORMAL] >= share * top[VPR_NORMAL] &&
                       f->cpu_raw >= share * top[VPR_BUGGY];
        /* main holds every tick of its thread on both sides; only the
         * unwinding's reach made its normal-side cost smaller (--main-root;
         * fresh_retrybackoff: 0.51 s against its callee's 0.61 s) */
        if (m->o->main_root && !f->whole_run && !f->inl_only && f->name &&
            !strcmp(f->name, "main") && f->cpu_raw >= share * top[VPR_BUGGY])
            f->whole_run = 1;
    }
    /* Only from the top: a function some caller of which is not a root
     * itself is one only because the ticks' unwinding stopped below that
     * caller (VPROF_UNWIND frames), not because the run passes through it
     * (mdev13498_cascade's root cause, the largest function of both runs
     * while main's cost is a third of it). A caller that it calls too is
     * recursion (ExecProcNode and the nodes it runs, Element::attach and
     * attachChildren), not a caller from above. */
    for (int changed = 1; changed;) {
        changed = 0;
        for (size_t i = 0; i < m->n_arcs; i++) {
            const struct vpr_arc *a = &m->arcs[i];
            if (a->src == VPR_ARC_DROPPED || a->from == a->to) continue;
            if (!(a->count[0] > 0 || a->count[1] > 0)) continue;
            if (m->f[a->to].whole_run && !m->f[a->from].whole_run &&
                !calls_fn(m, a->to, a->from)) {
                m->f[a->to].whole_run = 0;
                changed = 1;
            }
        }
    }
    mark_latency_roots(m, share);
    mark_entry_root(m);
    return top[VPR_BUGGY];
}

/* Does f have a cost or evidence of its own to show beside the roots: a
 * calibrated cost of 5% of the largest function's raw cost, or anomalous
 * evidence that is not thin (a deciding variable with --min-evidence
 * observations a side, as many calls seen by the stack scanner for a
 * latency decision, or changed call counts) - a cheap decision such as
 * lru.c's pick_victim, 0.3% of the run. A few stray ticks (the loader, a
 * signal) are neither. On the corpus floors of 0 to 5% rank the same
 * (bench/RESULTS.md, "The run's roots"). */
static int shows_own(const struct vpr_model *m, const struct vpr_func *f, double top)
{
    if (vpr_is_plt(m, f) || f->whole_run || !(f->calibrated > 0)) return 0;
    if (f->calibrated >= 0.05 * top) return 1;
    if (!(f->r < m->o->default_discount)) return 0;
    if (f->disc == VPR_DISC_ARC) return 1;
    size_t min_ev = m->o->min_evidence ? m->o->min_evidence : 20;
    if (f->disc == VPR_DISC_LATENCY) {         /* calls seen by the scanner */
        const struct vpr_ldist *d = &m->lat->f[f - m->f].d;
        return d->n[VPR_NORMAL] >= min_ev && d->n[VPR_BUGGY] >= min_ev;
    }
    if (f->disc != VPR_DISC_VARIABLE || f->var < 0 || f->dim < 0) return 0;
    const struct vpr_var *v = &m->v[f->var];
    return v->n[VPR_NORMAL][f->dim] >= min_ev && v->n[VPR_BUGGY][f->dim] >= min_ev;
}

/* The roots keep only what the buggy runs added in them - in their own
 * code (PC time beyond the runs' proportions), by their extra calls, by the
 * waits they made others sit through - when another function has a cost or
 * evidence of its own to show (shows_own): the proportional rest is the run
 * itself. When nothing else does (a program that is one loop under main),
 * the roots keep blend's cost and are no roots (whole_run 0): ranking the
 * run's stray ticks above them would be noise. */
static void keep_roots_to_added(struct vpr_model *m, double scale, double top)
{
    size_t roots = 0;
    int other = 0;
    for (size_t i = 0; i < m->n_f; i++) roots += m->f[i].whole_run != 0;
    for (size_t i = 0; i < m->n_f && roots && !other; i++) other = shows_own(m, &m->f[i], top);
    if (!other) {
        for (size_t i = 0; i < m->n_f; i++) m->f[i].whole_run = 0;
        return;
    }
    for (size_t i = 0; i < m->n_f; i++) {
        struct vpr_func *f = &m->f[i];
        if (!f->whole_run) continue;
        /* Only what was added in the root itself. What its callees
         * added beyond the proportions is theirs and ranks them; kept
         * here too (the root's inherited cost beyond the proportions) it
         * put the thread that spins over the function that set the spin
         * (httpd52914_worker_spin's listener_thread above
         * listener_poll_timeout) and main or a driver above cheap
         * decisions (go22950's poolCleanup, pg_fastpath_locks). Its call
         * latency is its thread's or the run's life: the symptom, not a
         * place; what it waited for is in the callees that waited, what
         * it made others wait is lock_cost. */
        f->added = 0;
        if (m->o->arcs_added) {
            double a = arc_added(m, f);
            if (a > f->added) f->added = a;
        }
        double pc = f->pc_cost[VPR_BUGGY] - f->pc_cost[VPR_NORMAL] * scale;
        if (pc > f->added) f->added = pc;
        if (f->lock_cost > f->added) f->added = f->lock_cost;
        f->calibrated = (1.0 - f->r) * f->added;
    }
}

/* Function `name` ranks right after function i (its calibrated cost just
 * below i's) unless it ranks higher already; returns its index when moved,
 * else -1. Not a function of the system's headers: a library's predicate or
 * producer (`std::vector`'s `_M_check_len`) is how the library works, not
 * the program's decision. */
static long rank_after(struct vpr_model *m, size_t i, const char *name)
{
    long y = vpr_model_func_by_name(m, name);
    if (y < 0 || (size_t)y == i || vpr_is_plt(m, &m->f[y]) || vpf_system_path(m->f[y].file))
        return -1;
    double c = nextafter(m->f[i].calibrated, 0);
    if (!(c > m->f[y].calibrated)) return -1;
    m->f[y].calibrated = c;
    return y;
}

/* A function with no values and no code time of its own - a dispatcher
 * whose cost is all its callees' (a pipeline stage that only calls the
 * validator) - has nothing to show but their time; when its callees'
 * evidence discounts them, its own lack of evidence must not outrank them
 * (a stage new in the buggy pipeline: 0% of the normal run, so its share
 * "grew"). It ranks just below its highest-ranked callee. Not one whose
 * only values are new (seen only in the buggy run, a function the normal
 * runs never ran): that cut both ways on the corpus - a new stage of the
 * workload, or the new path that is the bug (httpd54852_graceful 1 -> 2-3). */
static void cap_dispatchers(struct vpr_model *m)
{
    for (int pass = 0; pass < 2; pass++)        /* a chain of dispatchers */
        for (size_t i = 0; i < m->n_f; i++) {
            struct vpr_func *f = &m->f[i];
            if ((f->disc != VPR_DISC_HIST && f->disc != VPR_DISC_NONE) || !(f->calibrated > 0) ||
                f->pc_cost[VPR_BUGGY] > 0.1 * f->raw[VPR_BUGGY] || f->lock_cost > 0)
                continue;
            double cap = 0;
            for (size_t k = 0; k < m->n_arcs; k++) {
                const struct vpr_arc *a = &m->arcs[k];
                if (a->from != i || a->src == VPR_ARC_DROPPED || !(a->count[VPR_BUGGY] > 0) ||
                    a->to == i)
                    continue;
                if (m->f[a->to].calibrated > cap) cap = m->f[a->to].calibrated;
            }
            if (cap > 0 && f->calibrated >= cap) f->calibrated = nextafter(cap, 0);
        }
}

/* Does the schema call function y a pure predicate (`@predicate`: it
 * answers a truth value and changes nothing)? */
static int pure_predicate(const struct vpr_model *m, long y)
{
    const struct vpf_schema *s = &m->schema;
    for (size_t j = 0; j < s->n_froms; j++)
        if (s->froms[j].guard == 8 && vpr_model_func_by_name(m, s->froms[j].function) == y)
            return 1;
    return 0;
}

/* A caller whose calls of a callee changed made them when a predicate said
 * so (the schema's `@guard`: `if (block_needs_seal(w, len)) seal_block(w);`):
 * the predicate's answer is the decision, and a cheap predicate - inlined,
 * never sampled - has no cost of its own to rank by. It ranks right after
 * the caller. Not above it in general: the predicate may be a plain query
 * (a length, a lookup) and the decision the caller's (redis8668_brpop's
 * root cause went from 1st to 2nd that way: `if (dictFind(...))`). A pure
 * predicate (--pure-guards: a truth value computed from state, nothing
 * changed - `flush_due`, `block_needs_seal`) holds the decision itself and
 * its caller only acts on the answer: it ranks right above the caller.
 * What that costs: a caller passing it a wrong argument ranks second. */
static void rank_guards(struct vpr_model *m)
{
    for (size_t i = 0; i < m->n_f; i++) {
        const struct vpr_func *g = &m->f[i];
        if (!g->guard || !(g->calibrated > 0)) continue;
        long y = rank_after(m, i, g->guard->callee);
        if (y < 0) continue;
        m->f[y].guard_of = (long)i;
        if (m->o->pure_guards && m->has_schema && pure_predicate(m, y)) {
            m->f[y].calibrated = nextafter(m->f[i].calibrated, INFINITY);
            m->f[y].guard_above = 1;
        }
    }
}

/* A function decided by a local whose values are anomalous - a budget, a
 * delay, a size - that takes another function's answer (the schema's
 * `@from`: `budget = spinning ? spin_budget(q) : 0`): the answer is the
 * decision, and its maker - cheap, inlined, run once per wait - has no
 * cost of its own to rank by; the reader only spends what it was told to.
 * It ranks right after the reader, as a guard after its caller. Only for
 * the values themselves (value, delta): how long a value stays unchanged
 * is the reader's loop's pace, not the producer's doing. Only on evidence
 * that is decisive or not thin: --min-evidence buggy observations, and as
 * many normal ones or none at all (a budget the normal run never spun on:
 * the answer that made it spin is the decision), not a handful (a hash
 * code sampled 8 times). Only for a number (a budget, a size, a level, a
 * flag): a returned pointer is where something is - a buffer lpAppend()
 * reallocated - and what it points to is not the producer's choice. Not
 * for an entry function (no caller in the program: main, a thread's start
 * routine): its locals are what the run was asked to do (`n = opt_get(o,
 * "rows", 1000)`), and the two workloads differ by design. */
static void rank_producers(struct vpr_model *m)
{
    if (!m->has_schema) return;
    const struct vpf_schema *s = &m->schema;
    uint64_t min_ev = m->o->min_evidence ? m->o->min_evidence : 20;
    for (size_t i = 0; i < m->n_f; i++) {
        const struct vpr_func *f = &m->f[i];
        /* decided by the local, or by changed calls with the local its most
         * anomalous variable (the value that made the branch change) */
        if (!(f->calibrated > 0) || f->var < 0 ||
            (f->disc != VPR_DISC_VARIABLE && f->disc != VPR_DISC_ARC))
            continue;
        const struct vpr_var *v = &m->v[f->var];
        int d = f->disc == VPR_DISC_VARIABLE ? f->dim : v->dim;
        if ((d != VPR_DIM_VALUE && d != VPR_DIM_DELTA) || !(v->r < m->o->default_discount))
            continue;
        if (!f->inl_only && !(f->arc.calls[VPR_BUGGY] > 0) && !(f->arc.ccalls[VPR_BUGGY] > 0))
            continue;
        uint64_t nn = v->n[VPR_NORMAL][d], nb = v->n[VPR_BUGGY][d];
        if (!v->name || !v->function || (v->tags & VPF_TAG_GLOBAL) ||
            v->kind == VPF_KIND_PTR || v->kind == VPF_KIND_PTR_BASIC ||
            (!decisive(v, d) && (nb < min_ev || (nn > 0 && nn < min_ev))))
            continue;
        for (size_t k = 0; k < s->n_froms; k++) {
            const struct vpf_schema_from *r = &s->froms[k];
            if (r->guard || strcmp(r->function, v->function) || strcmp(r->variable, v->name) ||
                (v->file && !vpr_same_path(r->file, v->file)))
                continue;
            long y = rank_after(m, i, r->callee);
            if (y >= 0) m->f[y].producer_of = (long)i;
        }
    }
}

/* A caller whose calls of a callee changed made them when a branch on a
 * global or member said so (the schema's `@guardstate`: `if (!c->valid)
 * rebuild(c);`, `if (hash_items > limit) expand();`): the state held
 * otherwise in the buggy run, and what set it is where the decision was
 * made - an invalidation run on every update, a counter or a flag written
 * elsewhere, none of it on the stack of the calls that cost. Its writers
 * rank right after the caller, as a predicate does; not the callee (it
 * writes the state as its effect: rebuild sets valid) nor the caller
 * itself. Only a state few functions write (--state-writers): a member
 * every function of a module stores into says nothing about where. */
static double call_growth(const struct vpr_func *f)
{
    return (f->arc.calls[VPR_BUGGY] + 1) / (f->arc.calls[VPR_NORMAL] + 1);
}

/* A writer to place and the state line it writes. */
struct placed { long y; const struct vpf_schema_from *via; };

static int cmp_growth(const void *a, const void *b, void *ctx)
{
    const struct vpr_model *m = ctx;
    long ya = ((const struct placed *)a)->y, yb = ((const struct placed *)b)->y;
    double x = call_growth(&m->f[ya]), y = call_growth(&m->f[yb]);
    if (x != y) return x > y ? -1 : 1;
    return strcmp(m->f[ya].name, m->f[yb].name);
}

/* Is w[a] the first of w's lines in its function (the schema lists a
 * writer once per store)? */
static int first_in_function(const struct vpr_writer *w, long a)
{
    for (long b = 0; b < a; b++)
        if (!strcmp(w[a].function, w[b].function)) return 0;
    return 1;
}

/* The writers of one state that f's changed calls branched on, into ys
 * (at most cap, not those already there); 0 when more than max functions
 * write it (a member every function stores into says nothing about where). */
static size_t state_writers(struct vpr_model *m, size_t i, const struct vpf_schema_from *st,
                            struct placed *ys, size_t k, size_t cap)
{
    const struct vpr_func *f = &m->f[i];
    const char *callee = m->f[f->arc.to].name;
    struct vpr_writer *w;
    long n = vpr_writers_of_state(m, st->callee, &w);
    size_t k0 = k, distinct = 0;
    for (long a = 0; a < n; a++) {
        if (!first_in_function(w, a)) continue;
        distinct++;
        if (!strcmp(w[a].function, callee) || !strcmp(w[a].function, f->name) ||
            (f->src_name && !strcmp(w[a].function, f->src_name)))
            continue;
        long y = vpr_model_func_by_name(m, w[a].function);
        if (y < 0 || (size_t)y == i || vpr_is_plt(m, &m->f[y]) ||
            vpf_system_path(m->f[y].file) || k >= cap)
            continue;
        for (size_t b = 0; b < k && y >= 0; b++)
            if (ys[b].y == y) y = -1;
        if (y < 0) continue;
        /* Its writes changed against the reads that branch on them:
         * its calls grew more than the holder's when the guarded
         * calls grew (the state flipped more often: a heartbeat that
         * now also invalidates), less when they fell. A writer called
         * in step with the holder, or less (a constructor per
         * transaction, a setter per request, an initializer run once),
         * did not tip the balance that way. */
        double rel = call_growth(&m->f[y]) / call_growth(f);
        if (f->arc.dir > 0 ? rel > 1 : rel < 1)
            ys[k++] = (struct placed){y, st};
    }
    free(w);
    return distinct > m->o->state_writers ? k0 : k;
}

static void rank_state_writers(struct vpr_model *m)
{
    for (size_t i = 0; i < m->n_f; i++) {
        const struct vpr_func *f = &m->f[i];
        if (!f->state || !(f->calibrated > 0)) continue;
        const char *callee = m->f[f->arc.to].name;
        /* every state the deciding branches read: the tests of an `||`
         * chain, both sides of a comparison (a count and its limit) */
        const struct vpf_schema_from *sts[8];
        size_t n_st = vpr_call_states(m, f, callee, sts, sizeof sts / sizeof *sts);
        struct placed ys[8];
        size_t k = 0;
        for (size_t s = 0; s < n_st; s++)
            k = state_writers(m, i, sts[s], ys, k, sizeof ys / sizeof *ys);
        if (!k) continue;
        /* the writer called more often than before first: an invalidation
         * run on every update grew with the updates, a setter run once did not */
        qsort_r(ys, k, sizeof *ys, cmp_growth, m);
        double c = f->calibrated;
        for (size_t a = 0; a < k; a++) {
            c = nextafter(c, 0);
            if (c > m->f[ys[a].y].calibrated) {
                m->f[ys[a].y].calibrated = c;
                m->f[ys[a].y].state_of = (long)i;
                m->f[ys[a].y].state_via = ys[a].via;
            }
        }
    }
}

/* A table whose chains grew - every lookup walks further, calls its
 * comparison more often per call - was sized by the function that wrote
 * its size (a hash size fixed at boot, a default too small for the
 * program's strings) or left unresized by the functions that fill it (an
 * insert that never checks the load, a delete that never shrinks): none of
 * them is on the stack of the lookups that pay, and all are cheap. The
 * schema's `@sizes` lines name the size an index is reduced by (`hash &
 * (ht->nbuckets - 1)`, `hash % _table_size`), in the lookups, the inserts
 * and the helpers that compute the index; the writers of that size
 * (sizers) and the indexing functions that store into the table or write
 * its other members, its count (fillers), rank right after the highest
 * ranked function that indexes by it, or calls or is called by one - the
 * lookup's anomaly is the evidence. Fillers first: when a table's size is
 * decided again as it fills (the fixed program's resize), the fill is
 * where the check belongs; a size written once comes next. A size more
 * than N functions write, or filled by more than N, says nothing about
 * where. */

/* "Class<...>::Class(...)": a constructor writes the size its caller
 * chose (`new StringTable(size)`), so the caller is the sizer. */
static int is_ctor(const char *sym)
{
    const char *d = vpr_dm_always(sym), *paren = strchr(d, '(');
    if (!paren) return 0;
    const char *sep = NULL;
    int depth = 0;
    for (const char *c = d; c < paren; c++) {
        if (*c == '<') depth++;
        else if (*c == '>') depth--;
        else if (!depth && c[0] == ':' && c[1] == ':') sep = c;
    }
    if (!sep) return 0;
    const char *name = sep + 2, *scope = sep;
    size_t n = (size_t)(paren - name);
    /* the scope's last component, without its template arguments */
    const char *b = d;
    depth = 0;
    for (const char *c = d; c < scope; c++) {
        if (*c == '<') depth++;
        else if (*c == '>') depth--;
        else if (!depth && c[0] == ':' && c[1] == ':') b = c + 2;
    }
    size_t k = 0;
    while (b + k < scope && b[k] != '<') k++;
    return k == n && !strncmp(b, name, n);
}

/* Does y write a member of the struct `key` ("struct T.f") names - the
 * table's count, its entries? */
static int writes_struct_of(const struct vpr_model *m, const char *fn, const char *key)
{
    const char *dot = strrchr(key, '.');
    if (strncmp(key, "struct ", 7) && strncmp(key, "class ", 6)) return 0;
    if (!dot) return 0;
    size_t n = (size_t)(dot - key) + 1;
    for (size_t k = 0; k < m->schema.n_writes; k++) {
        const struct vpf_schema_write *w = &m->schema.writes[k];
        if (!strcmp(w->function, fn) && !strncmp(w->target, key, n)) return 1;
    }
    return 0;
}

/* The lookup's anomaly says it does more work per call: it calls a
 * callee (the key comparison, the next entry) more often per call than in
 * the normal run, or its deciding variable grew per tick (a step counter)
 * or costs more (processing cost). A ring buffer's reader anomalous for
 * another reason (a spin budget) says nothing about the ring's size. */
static int walks_further(const struct vpr_func *f)
{
    if (f->arc.to >= 0 && f->arc.dir > 0) return 1;
    return f->disc == VPR_DISC_VARIABLE && (f->dim == VPR_DIM_DELTA || f->dim == VPR_DIM_PROC);
}

struct sized { long y; int role; };

static int in_sized(const struct sized *ys, size_t k, long y)
{
    for (size_t b = 0; b < k; b++)
        if (ys[b].y == y) return 1;
    return 0;
}

static size_t add_sized(struct sized *ys, size_t k, size_t cap, long y, int role)
{
    if (!in_sized(ys, k, y) && k < cap) ys[k++] = (struct sized){y, role};
    return k;
}

/* ys[0..k) rank right after `anchor`, in that order, each just below the
 * one before (unless it ranks higher already), for the state `via` in
 * their roles. */
static void place_sized(struct vpr_model *m, long anchor, const char *via,
                        const struct sized *ys, size_t k)
{
    double c = m->f[anchor].calibrated;
    for (size_t a = 0; a < k; a++) {
        struct vpr_func *y = &m->f[ys[a].y];
        c = nextafter(c, 0);
        if (c > y->calibrated && !vpr_is_plt(m, y)) {
            y->calibrated = c;
            y->size_of = anchor;
            y->size_via = via;
            y->size_role = ys[a].role;
        }
    }
}

/* The functions whose answers writer w stored into state (the schema's
 * `@setfrom`: `allowance_ = next_allowance(st)`, or a parameter a caller
 * passed the answer in: `fz_rehash(fz, fz_next_divisor(fz))` storing
 * `fz->divisor = divisor`), except `skip`, join ys[0..k) in `role`. */
static size_t add_answer_makers(const struct vpr_model *m, const struct vpr_writer *w,
                                const char *state, long skip, struct sized *ys, size_t k,
                                int role)
{
    const struct vpf_schema *s = &m->schema;
    for (size_t j = 0; j < s->n_froms; j++) {
        const struct vpf_schema_from *r = &s->froms[j];
        if (r->guard != 5 || r->line != w->line || strcmp(r->variable, state) ||
            strcmp(r->function, w->function))
            continue;
        long y = vpr_model_func_by_name(m, r->callee);
        if (y >= 0 && y != skip && !vpf_system_path(m->f[y].file))
            k = add_sized(ys, k, 8, y, role);
    }
    return k;
}

/* The function that chose the size a writer y stored: y itself, or for a
 * constructor the caller that constructed the table (two levels: a
 * derived class's constructor calls its base's). */
static long sizer_of(const struct vpr_model *m, long y)
{
    for (int up = 0; up < 3 && y >= 0 && is_ctor(m->f[y].name); up++) {
        long c = -1;
        for (size_t k = 0; k < m->n_arcs; k++) {
            const struct vpr_arc *a = &m->arcs[k];
            if (a->to != (uint32_t)y || a->from == (uint32_t)y || a->src == VPR_ARC_DROPPED ||
                !(a->count[VPR_BUGGY] > 0))
                continue;
            if (c >= 0 && c != (long)a->from) return y;   /* several: the constructor */
            c = a->from;
        }
        if (c < 0) break;
        y = c;
    }
    return y;
}

/* Did the size keep pace with its table: a variable holding it sampled in
 * both runs, its buggy values reaching beyond the normal ones? Then the
 * table was resized with its content, and a lookup that walks further per
 * call walks wrong - its loop follows the wrong link (the held-out
 * fresh6_a_symbol_index, whose mask grew with the symbols) - not a chain
 * a small table made long. A size never sampled says nothing either way. */
static int size_grew(const struct vpr_model *m, const char *size)
{
    const int d = VPR_DIM_VALUE;
    for (size_t vi = 0; vi < m->n_v; vi++) {
        const struct vpr_var *v = &m->v[vi];
        if (!(v->n[VPR_NORMAL][d] > 0) || !(v->n[VPR_BUGGY][d] > 0) ||
            v->lo[d] > v->hi[d] || v->blo[d] > v->bhi[d])
            continue;
        if (v->bhi[d] > v->hi[d] && vpr_var_is_state(m, v, size)) return 1;
    }
    return 0;
}

/* An adder that adds only when a predicate says so (the schema's
 * `@addguard`: `if (index_entry_due(seg, cfg)) seg->index[seg->nindex++] =
 * ...`) added as often as that answer said: an index filled too sparsely,
 * so every seek walks further, is the predicate's doing, not the append's
 * (fresh4_a_broker_index). Each such predicate follows its adder in ys,
 * whose k entries it returns grown. */
static size_t add_guards_of_adds(const struct vpr_model *m, const char *container, long best,
                                 struct sized *ys, size_t k)
{
    const struct vpf_schema *s = &m->schema;
    struct sized out[8];
    size_t n = 0;
    for (size_t a = 0; a < k; a++) {
        n = add_sized(out, n, 8, ys[a].y, ys[a].role);
        for (size_t j = 0; j < s->n_froms; j++) {
            const struct vpf_schema_from *g = &s->froms[j];
            if (g->guard != 6 || strcmp(g->variable, container) ||
                vpr_model_func_by_name(m, g->function) != ys[a].y)
                continue;
            long p = vpr_model_func_by_name(m, g->callee);
            if (p >= 0 && p != best && !in_sized(ys, k, p) && !vpf_system_path(m->f[p].file))
                n = add_sized(out, n, 8, p, VPR_ADD_GUARD);
        }
    }
    memcpy(ys, out, n * sizeof *out);
    return n;
}

/* kind 3: `@sizes` (the tables above); kind 4: `@items` - a container
 * walked by a loop that runs longer per call in the buggy run, whose
 * adders (push_back without the check that keeps a duplicate out, a timer
 * armed without cancelling the pending one) rank right after the walk:
 * missing constraint. The same trigger as a table's lookup; no sizers. */
static void rank_tables(struct vpr_model *m, int kind)
{
    if (!m->has_schema) return;
    const struct vpf_schema *s = &m->schema;
    size_t cap = kind == 3 ? m->o->sizers : m->o->adders;
    /* which functions the program calls (not entry functions), once */
    unsigned char *called = vpf_xcalloc(m->n_f ? m->n_f : 1, 1);
    for (size_t k = 0; k < m->n_arcs; k++) {
        const struct vpr_arc *a = &m->arcs[k];
        if (a->from != a->to && a->src != VPR_ARC_DROPPED && a->count[VPR_BUGGY] > 0)
            called[a->to] = 1;
    }
    for (size_t i = 0; i < s->n_froms; i++) {
        const struct vpf_schema_from *l = &s->froms[i];
        if (l->guard != kind) continue;
        int seen = 0;
        for (size_t j = 0; j < i && !seen; j++)
            seen = s->froms[j].guard == kind && !strcmp(s->froms[j].callee, l->callee);
        if (seen) continue;
        const char *size = l->callee;
        if (kind == 3 && size_grew(m, size)) continue;
        /* the lookup: the highest ranked function that indexes by the size,
         * calls one or is called by one, with evidence of its own (not
         * discounted) and a caller (an entry function's index is over what
         * the run was asked to do: main's per-CPU array) */
        long best = -1;
        for (size_t j = i; j < s->n_froms; j++) {
            const struct vpf_schema_from *h = &s->froms[j];
            if (h->guard != kind || strcmp(h->callee, size)) continue;
            if (kind == 4 && strcmp(h->variable, "walk") && strcmp(h->variable, "scan")) continue;
            long y = vpr_model_func_by_name(m, h->function);
            if (y < 0) continue;
            /* a walk is the loop's own: its callees do the per-item work,
             * and an adder placed under one of them would pass the walker
             * (fresh3_c_lsm_newest_hit: Table::get above Store::get). Its
             * callers count: a seek that binary-searches an index (the
             * walk) and then decodes forward from the entry it found walks
             * further when the index is sparse, the search itself not */
            for (size_t k = 0; k <= m->n_arcs; k++) {
                long c = y;
                if (k < m->n_arcs) {
                    const struct vpr_arc *a = &m->arcs[k];
                    if (a->src == VPR_ARC_DROPPED || !(a->count[VPR_BUGGY] > 0)) continue;
                    if (a->from == (uint32_t)y && kind != 4) c = a->to;
                    else if (a->to == (uint32_t)y) c = a->from;
                    else continue;
                }
                const struct vpr_func *f = &m->f[c];
                if (!(f->calibrated > 0) || !(f->r < m->o->default_discount) ||
                    !walks_further(f) || !called[c])
                    continue;
                if (best < 0 || f->calibrated > m->f[best].calibrated) best = c;
            }
        }
        if (best < 0) continue;
        struct sized ys[8];
        size_t k = 0, nfill = 0;
        struct vpr_writer *w = NULL;
        long n = kind == 3 ? vpr_writers_of_state(m, size, &w) : 0;
        for (size_t j = i; j < s->n_froms; j++) {
            const struct vpf_schema_from *h = &s->froms[j];
            if (h->guard != kind || strcmp(h->callee, size)) continue;
            if (kind == 4 ? strcmp(h->variable, "add") && strcmp(h->variable, "append") :
                strcmp(h->variable, "slot") && !writes_struct_of(m, h->function, size))
                continue;
            long y = vpr_model_func_by_name(m, h->function);
            if (y < 0 || y == best || vpf_system_path(m->f[y].file)) continue;
            /* An array's append counts only when a predicate decides it (an
             * index entry when index_entry_due() says so): arrays are
             * appended to everywhere - work stacks, tables filled at start,
             * queues drained each round - and their plain appends are how the
             * work is done (measured: placed above fresh8_a's, fresh3_b's
             * and fresh5_b's root causes). */
            if (!strcmp(h->variable, "append") && !vpr_add_guard(m, &m->f[y], size)) continue;
            if (in_sized(ys, k, y)) continue;
            /* one that writes the size too resizes the table (a rehash
             * storing the new bucket count): a sizer, below */
            int resizes = 0;
            for (long a = 0; a < n && !resizes; a++)
                resizes = vpr_model_func_by_name(m, w[a].function) == y;
            if (resizes) continue;
            if (++nfill > cap) { k = 0; break; }       /* every function fills it */
            k = add_sized(ys, k, 8, y, kind == 4 ? VPR_ADDER : VPR_FILLER);
        }
        if (kind == 4) k = add_guards_of_adds(m, size, best, ys, k);
        size_t k_fill = k;
        size_t distinct = 0;
        for (long a = 0; a < n; a++) {
            if (!first_in_function(w, a)) continue;
            if (++distinct > cap) { k = k_fill; break; }
            long y = sizer_of(m, vpr_model_func_by_name(m, w[a].function));
            if (y < 0 || y == best || vpf_system_path(m->f[y].file)) continue;
            /* A size the writer stores as some function's answer (`@setfrom`:
             * `fz_rehash(fz, fz_next_divisor(fz))`) was computed there: that
             * function - a cap, a step, an estimate - right before it. After
             * the fillers, as the writers: ranked first, a table sized once
             * from an estimate went above the insert that never grows it
             * (pg_hashjoin_nbuckets 2 -> 3). */
            for (long b = 0; b < n; b++)
                if (!strcmp(w[b].function, w[a].function))
                    k = add_answer_makers(m, &w[b], size, best, ys, k, VPR_SIZE_CHOICE);
            k = add_sized(ys, k, 8, y, VPR_SIZER);
        }
        free(w);
        place_sized(m, best, size, ys, k);
    }
    free(called);
}

/* A walk that stops at a limit. zlib's longest_match leaves its chain
 * walk when a match reaches `nice_len`; a plan computed per block clamped
 * it to the block's length instead of the longest match there can be, so
 * no search stops early and each walks its whole chain (the held-out
 * fresh11_a_lz_chain). The schema names the loops that stop at a limit
 * held in state (`@stops`: a test that leaves the loop, holding a value
 * against a member or a global - not a counter or a cursor against a
 * length); when the function walks further per call (the sizers'
 * evidence), the functions whose answers the limit's writers stored, then
 * the writers, rank right after it (wrong constraint). Not a limit that
 * grew (sampled with buggy values beyond the normal ones), nor one the
 * walk writes itself (a buffer's capacity it grows), nor one more than N
 * functions write (a length every function sets says nothing about where). */
static void rank_stops(struct vpr_model *m)
{
    if (!m->has_schema) return;
    const struct vpf_schema *s = &m->schema;
    for (size_t i = 0; i < s->n_froms; i++) {
        const struct vpf_schema_from *l = &s->froms[i];
        if (l->guard != 9) continue;
        long w = vpr_model_func_by_name(m, l->function);
        if (w < 0) continue;
        const struct vpr_func *walk = &m->f[w];
        if (!(walk->calibrated > 0) || !(walk->r < m->o->default_discount) ||
            !walks_further(walk) || size_grew(m, l->callee))
            continue;
        struct vpr_writer *wr = NULL;
        long n = vpr_writers_of_state(m, l->callee, &wr);
        size_t distinct = 0;
        int own = 0;
        for (long a = 0; a < n; a++) {
            distinct += first_in_function(wr, a);
            own |= vpr_model_func_by_name(m, wr[a].function) == w;
        }
        struct sized ys[8];
        size_t k = 0;
        if (distinct && distinct <= m->o->stops && !own) {
            for (long a = 0; a < n; a++) k = add_answer_makers(m, &wr[a], l->callee, w, ys, k, VPR_STOP);
            for (long a = 0; a < n; a++) {
                long y = vpr_model_func_by_name(m, wr[a].function);
                if (y >= 0 && !vpf_system_path(m->f[y].file)) k = add_sized(ys, k, 8, y, VPR_STOP);
            }
        }
        free(wr);
        place_sized(m, w, l->callee, ys, k);
    }
}

/* A range walked further. `for (c = d->lo; c < d->hi; c++) render_cell(...)`:
 * a repaint walks the damaged span of each row, which the writes widened
 * (`damage_cell`); when it runs longer per call in the buggy run, the
 * span was widened more - by a writer called far more often than the walk,
 * and by that writer's caller that called it far more often (a print that
 * damages a cell although it holds the same character already: missing
 * constraint). The schema names the range (`@bounds`: both ends loaded
 * from members of one struct, so a loop over a count is none); the
 * writers of its ends whose calls grew more than the walk's, each followed
 * by its caller whose calls of it grew the most (beyond the walk's), rank
 * right after the walk. More than N writers: none (a span every function
 * writes says nothing about where). */
static void rank_ranges(struct vpr_model *m)
{
    if (!m->has_schema) return;
    const struct vpf_schema *s = &m->schema;
    for (size_t i = 0; i < s->n_froms; i++) {
        const struct vpf_schema_from *l = &s->froms[i];
        if (l->guard != 7 || strcmp(l->variable, "hi")) continue;
        long w = vpr_model_func_by_name(m, l->function);
        if (w < 0) continue;
        const struct vpr_func *walk = &m->f[w];
        if (!(walk->calibrated > 0) || !(walk->r < m->o->default_discount) ||
            !walks_further(walk))
            continue;
        double grew = call_growth(walk);
        struct sized ys[8];
        size_t k = 0, distinct = 0;
        for (size_t j = 0; j < s->n_froms; j++) {
            const struct vpf_schema_from *e = &s->froms[j];
            if (e->guard != 7 || e->line != l->line || strcmp(e->function, l->function)) continue;
            struct vpr_writer *wr = NULL;
            long n = vpr_writers_of_state(m, e->callee, &wr);
            for (long a = 0; a < n; a++) {
                long y = vpr_model_func_by_name(m, wr[a].function);
                if (y < 0 || y == w || in_sized(ys, k, y)) continue;
                if (++distinct > m->o->ranges) { k = 0; break; }
                if (vpf_system_path(m->f[y].file) || !(call_growth(&m->f[y]) > grew)) continue;
                k = add_sized(ys, k, 8, y, VPR_RANGE);
                /* the caller that called the writer far more often */
                long best = -1;
                double bg = grew;
                for (size_t q = 0; q < m->n_arcs; q++) {
                    const struct vpr_arc *ar = &m->arcs[q];
                    if (ar->to != (uint32_t)y || ar->src == VPR_ARC_DROPPED || ar->from == (uint32_t)w)
                        continue;
                    double g = (ar->count[VPR_BUGGY] + 1) / (ar->count[VPR_NORMAL] + 1);
                    if (g > bg) bg = g, best = (long)ar->from;
                }
                if (best >= 0 && !vpf_system_path(m->f[best].file))
                    k = add_sized(ys, k, 8, best, VPR_RANGE);
            }
            free(wr);
            if (distinct > m->o->ranges) break;
        }
        if (distinct <= m->o->ranges) place_sized(m, w, l->callee, ys, k);
    }
}

/* A limit held wrong. `if (since_gc_ >= allowance_) collect();`, `if
 * (w->nused >= w->threshold) worker_spill(w);`: a guard holds a count
 * against a limit and runs the paced work when the count reaches it, so
 * that the work's cost per unit of progress stays bounded. The limit is
 * wrong in one of two ways, each with its own evidence:
 *  - too low: the guard's holder calls the paced work far more often per
 *    call than in the normal run (the changed-call evidence, arcs.c) - a
 *    threshold computed in 32 bits that wrapped to its floor, so a worker
 *    spills every 64 entries instead of never;
 *  - not kept pace: each call of the paced work costs far more than the
 *    workload's growth explains and it is still called about as often - a
 *    GC allowance computed from the object count instead of the live
 *    bytes, stuck at its floor while the heap it sweeps grew 13-fold.
 * Either way the function that computed the limit ran once per paced call
 * or once a run and returned a number: cheap, off the stack of the cost,
 * never sampled (wrong constraint). The schema names the limit
 * (`@guardstate`, both sides of the comparison), its writers (`@writes`)
 * and the function whose answer a writer stored (`@setfrom`); those
 * producers, then the writers, rank right after the function whose
 * evidence it is - the holder whose calls changed, or the paced function
 * that got dearer - never above it (the paced work may simply be slower
 * per call; sizers and adders are placed so too).
 *
 * Which side is the limit: the one every writer of which runs at most once
 * per paced call (plus once a run: an initializer) - a limit is set when
 * the work runs or before, the count advances between (the allocator
 * bumps it a million times). A limit sampled in both runs whose buggy
 * values reach beyond the normal ones grew: then it was neither too low
 * nor left behind, and nothing is placed; one never sampled (the guard is
 * a tail call's, off every stack) says nothing either way. */
static double per_run(const struct vpr_model *m, double total, int s)
{
    return m->n_runs[s] ? total / (double)m->n_runs[s] : total;
}

double vpr_per_call_growth(const struct vpr_model *m, const struct vpr_func *f)
{
    double c[2];
    for (int s = 0; s < 2; s++) c[s] = per_run(m, f->arc.calls[s], s);
    if (!(c[0] > 0) || !(c[1] > 0) || !(f->raw[VPR_NORMAL] > 0)) return 0;
    return (f->raw[VPR_BUGGY] / c[1]) / (f->raw[VPR_NORMAL] / c[0]);
}

/* Does the test at guard line l compare two states (a count and a limit)?
 * A flag or a pointer tested alone (`if (hj->outer)`) paces nothing. */
static int compares_states(const struct vpf_schema *s, const struct vpf_schema_from *l)
{
    for (size_t j = 0; j < s->n_froms; j++) {
        const struct vpf_schema_from *o = &s->froms[j];
        if (o->guard == 2 && o->line == l->line && strcmp(o->callee, l->callee) &&
            !strcmp(o->variable, l->variable) && !strcmp(o->function, l->function))
            return 1;
    }
    return 0;
}

/* The function whose evidence says the limit of guard line l (holder h
 * calls paced c) was wrong, with the role that says how; -1: none. */
static long limit_evidence(const struct vpr_model *m, long h, long c, int *role)
{
    const struct vpr_func *holder = &m->f[h], *paced = &m->f[c];
    if (holder->arc.to == c && holder->arc.dir > 0 && holder->calibrated > 0) {
        *role = VPR_LIMIT_LOW;
        return h;
    }
    /* the paced work: ranked on evidence of its own, each call far
     * dearer, and called about as often per evaluation of the guard: a
     * limit that kept pace makes it as much rarer as it got dearer -
     * nearer that than the same rate (the geometric middle) and the limit
     * grew. Not "dearer than the workload's growth explains": the work a
     * limit left behind is what made the buggy run longer (the GC pacer's
     * run took 3 times the normal's CPU, all of it in the collections). */
    double ratio = m->o->arc_ratio > 1 ? m->o->arc_ratio : 4;
    double g = vpr_per_call_growth(m, paced);
    if (!(paced->calibrated > 0) || !(paced->r < m->o->default_discount) || !(g >= ratio))
        return -1;
    double rate[2];
    for (int s = 0; s < 2; s++) {
        double per = holder->arc.calls[0] > 0 && holder->arc.calls[1] > 0 ?
                     holder->arc.calls[s] : (double)m->n_runs[s];
        rate[s] = paced->arc.calls[s] / (per > 0 ? per : 1);
    }
    if (!(rate[1] * sqrt(g) >= rate[0])) return -1;
    *role = VPR_LIMIT;
    return c;
}

static void rank_limits(struct vpr_model *m)
{
    if (!m->has_schema) return;
    const struct vpf_schema *s = &m->schema;
    for (size_t i = 0; i < s->n_froms; i++) {
        const struct vpf_schema_from *l = &s->froms[i];
        if (l->guard != 2) continue;
        int seen = 0;
        for (size_t j = 0; j < i && !seen; j++)
            seen = s->froms[j].guard == 2 && !strcmp(s->froms[j].function, l->function) &&
                   !strcmp(s->froms[j].variable, l->variable) &&
                   !strcmp(s->froms[j].callee, l->callee);
        if (seen || !compares_states(s, l)) continue;
        long h = vpr_model_func_by_name(m, l->function), c = vpr_model_func_by_name(m, l->variable);
        /* a function calling itself again (a retry after the spill) paces nothing */
        if (h < 0 || c < 0 || h == c || vpf_system_path(m->f[c].file) || vpr_is_plt(m, &m->f[c]))
            continue;
        int role = 0;
        long by = limit_evidence(m, h, c, &role);
        const char *limit = l->callee;
        if (by < 0 || size_grew(m, limit)) continue;
        struct vpr_writer *w = NULL;
        long n = vpr_writers_of_state(m, limit, &w);
        size_t distinct = 0;
        for (long a = 0; a < n; a++) distinct += first_in_function(w, a);
        /* the limit side: no writer runs more often than the paced work */
        double cap = per_run(m, m->f[c].arc.calls[VPR_BUGGY], VPR_BUGGY) + 1;
        int resets = 0, counter = 0;
        for (long a = 0; a < n; a++) {
            long y = vpr_model_func_by_name(m, w[a].function);
            double calls = y >= 0 ? per_run(m, m->f[y].arc.calls[VPR_BUGGY], VPR_BUGGY) : 0;
            counter |= calls > cap;
            resets |= calls > 1;
        }
        if (!distinct || distinct > m->o->limits || counter) {
            free(w);
            continue;
        }
        struct sized ys[8];
        size_t k = 0;
        /* the functions whose answers the writers stored, then the writers */
        for (long a = 0; a < n; a++) k = add_answer_makers(m, &w[a], limit, by, ys, k, role);
        /* A writer run once a run (main, a constructor) set the first
         * limit; one that sets it again at every paced call (the collector
         * after its sweep) decided it for the rest of the run. Only a
         * limit no such writer sets is the initializer's. */
        for (long a = 0; a < n; a++) {
            long y = vpr_model_func_by_name(m, w[a].function);
            if (y >= 0 && y != by && y != c && !vpf_system_path(m->f[y].file) &&
                !(resets && per_run(m, m->f[y].arc.calls[VPR_BUGGY], VPR_BUGGY) <= 1))
                k = add_sized(ys, k, 8, y, role);
        }
        free(w);
        place_sized(m, by, limit, ys, k);
    }
}

/* A choice between two ways of doing one job. A query planner picks the
 * linear merge or the heap for a disjunction (`if (plan_disjunction(...)
 * == OR_HEAP) eval_or_heap(...); else eval_or_linear(...);`), a join picks
 * hashing or nested loops, a sort insertion or merging: the choice exists
 * to switch with the input's size, so when the way chosen does far more
 * work per call in the buggy runs (its calls of a callee per call grew
 * --arc-ratio-fold) and the predicate still chose it, the predicate's
 * answer is the suspect (fresh14_a_posting_merge: eval_or_linear calls
 * cursor_doc 1,748 times a call, then 2.3 million; the planner compared
 * the longest list's length where the union's was meant). The predicate
 * ranks right after it (wrong constraint). The other way is another
 * `@guard` line of the same caller and predicate whose calls, with the
 * ranked function's, are at most the caller's calls in each run: one or
 * the other a call, not two calls made on the same answer (a parser's
 * success guarding a lookup and an update, each once per line). */
static void rank_alternatives(struct vpr_model *m)
{
    double ratio = m->o->arc_ratio > 1 ? m->o->arc_ratio : 4;
    for (size_t i = 0; i < m->n_f; i++) {
        const struct vpr_func *f = &m->f[i];
        if (!(f->calibrated > 0) || !(f->r < m->o->default_discount) || f->system ||
            vpr_is_plt(m, f) || f->arc.to < 0 || f->arc.dir <= 0 ||
            !(f->arc.per[VPR_NORMAL] > 0) || !(f->arc.per[VPR_BUGGY] > 0) ||
            !(f->arc.count[VPR_NORMAL] > 0))
            continue;
        double rn = f->arc.count[VPR_NORMAL] / f->arc.per[VPR_NORMAL];
        double rb = f->arc.count[VPR_BUGGY] / f->arc.per[VPR_BUGGY];
        if (!(rb >= ratio * rn)) continue;
        for (size_t k = 0; k < m->n_arcs; k++) {
            const struct vpr_arc *a = &m->arcs[k];
            if (a->src == VPR_ARC_DROPPED || a->to != i || !(a->count[VPR_BUGGY] > 0)) continue;
            const struct vpr_func *c = &m->f[a->from];
            const struct vpf_schema_from *g = vpr_call_guard(m, c, f->name), *alt = NULL;
            while ((alt = vpr_call_alternative(m, c, g, alt))) {
                long o = vpr_model_func_by_name(m, alt->variable);
                if (o < 0 || (size_t)o == i || vpr_is_plt(m, &m->f[o]) ||
                    vpf_system_path(m->f[o].file))
                    continue;
                int either = 1;
                for (int s = 0; s < 2 && either; s++)
                    either = arc_total(m, a->from, i, s) + arc_total(m, a->from, (size_t)o, s) <=
                             1.02 * c->arc.calls[s];
                if (!either) continue;
                long y = vpr_model_func_by_name(m, g->callee);
                if (y < 0 || (size_t)y == i || (size_t)y == a->from ||
                    vpf_system_path(m->f[y].file))
                    break;
                struct sized ys[1] = {{y, VPR_ALT_CHOICE}};
                place_sized(m, (long)i, m->f[o].name, ys, 1);
                break;
            }
        }
    }
}

/* Is f placed as the decider of its anchor's evidence - the function whose
 * answer, count or write the anchor's cost follows from? A producer (the
 * reader only spends what it was told to), a count link (the decision on
 * another thread, the removal behind a re-creation), a filler that never
 * resizes, the makers of a size, a range, a stop or a choice, a predicate
 * deciding an adder's adds. Not a plain guard's predicate (a query whose
 * answer the caller may misuse), a state writer, an adder, a sizer or a
 * limit's writers, which were as often the anchor's bystanders as its
 * cause (bench/RESULTS.md, "Deciders above"). */
static long decider_anchor(const struct vpr_func *f)
{
    /* the placement the report names (vpr_ranked_after's order) */
    if (f->guard_of >= 0) return -1;
    if (f->producer_of >= 0) return f->producer_of;
    if (f->state_of >= 0) return -1;
    if (f->size_of >= 0)
        return f->size_role == VPR_FILLER || f->size_role == VPR_SIZE_CHOICE ||
               f->size_role == VPR_RANGE || f->size_role == VPR_STOP ||
               f->size_role == VPR_ALT_CHOICE || f->size_role == VPR_ADD_GUARD ? f->size_of : -1;
    return f->link_of;
}

/* The deciders placed after an anchor rank right above it instead, in the
 * order they were placed (--deciders-above): the decision comes first, the
 * function that pays for it after. Over the corpus's recordings (r25 and
 * the held-out r23-r38, 3 runs each), placements in the top ten of these
 * roles were the root cause 36 times and their anchor never; of the roles
 * left out (a guard's query, a state writer, an adder, a sizer, a limit's
 * writers) 21 and 42 times. */
static int cmp_decided(const void *a, const void *b, void *ctx)
{
    const struct vpr_model *m = ctx;
    const struct vpr_func *x = &m->f[*(const size_t *)a], *y = &m->f[*(const size_t *)b];
    long ax = decider_anchor(x), ay = decider_anchor(y);
    if (ax != ay) return ax < ay ? -1 : 1;
    /* in placement order: the highest calibrated cost first */
    if (x->calibrated != y->calibrated) return x->calibrated > y->calibrated ? -1 : 1;
    return *(const size_t *)a < *(const size_t *)b ? -1 : 1;
}

static void raise_deciders(struct vpr_model *m)
{
    size_t *ys = vpf_xcalloc(m->n_f ? m->n_f : 1, sizeof *ys), k = 0;
    for (size_t i = 0; i < m->n_f; i++) {
        long a = decider_anchor(&m->f[i]);
        if (a >= 0 && m->f[i].calibrated < m->f[a].calibrated) ys[k++] = i;
    }
    qsort_r(ys, k, sizeof *ys, cmp_decided, m);
    /* each anchor's group, bottom up: the last placed just above it */
    for (size_t e = k; e > 0;) {
        long a = decider_anchor(&m->f[ys[e - 1]]);
        double c = m->f[a].calibrated;
        for (; e > 0 && decider_anchor(&m->f[ys[e - 1]]) == a; e--) {
            m->f[ys[e - 1]].calibrated = c = nextafter(c, INFINITY);
            m->f[ys[e - 1]].placed_above = 1;
        }
    }
    free(ys);
}

/* A producer and its consumer joined by their counts. A watcher thread
 * hands a file to the uploader thread (`chan_push`) when `pending_is_due`
 * says so; the uploader signs one file per job. The cost is the
 * uploader's (`sign_file`, called 16 times in the normal run and 403 in
 * the buggy one); the decision is on the other thread, whose only trace is
 * a call made as many times: `watcher_tick` called `chan_push` 16 and 403
 * times. Two counts equal in both runs, while they changed many-fold, are
 * one thing counted twice - a queue's push and the job it feeds, a
 * decision and the work it orders - not a coincidence. When a ranked
 * function whose calls changed (--arc-ratio) is called as many times, in
 * each run (within 2 %: gmon's counters race between threads), as some
 * call elsewhere is made under a predicate's or a state's say (the
 * schema's `@guard`, `@guardstate`), that call's caller, then its
 * predicate, rank right after it (a pure predicate first). Also a call
 * made 2 to 4 times as often in both runs (link_multiple), and a call of a
 * library function the counters saw (a guarded free()): an expiry that
 * drops what the next request creates again frees an entry's parts, three
 * frees per re-creation (fresh13_a_metrics_rollup's flush_interval under
 * metric_expired's say). Not a call on its own stack (its callers, their
 * callers; its callees: a caller calls it that often by definition): only
 * a call the call graph does not join to it, and not a sibling under a
 * loop (siblings(): fresh4_b_doc_relayout's layout_paragraph calls shape
 * and break_lines once a paragraph; a thread's start routine has no
 * caller in the program). At least 10 calls a run on the buggy side, so
 * that start-up counts (1, 2, 4) do not match by chance. */
static int near_count(double a, double b)
{
    double tol = 0.02 * (a > b ? a : b);
    return fabs(a - b) <= (tol > 2 ? tol : 2);
}

/* The callers of inlined code, from the DWARF (no arc records a call the
 * compiler inlined, and vprof-cc's counters only guarded ones): for each
 * inlined copy, the function it was inlined into - the next one out in the
 * inline chain at its start, or the symbol holding it. CSR by callee. */
struct inl_up {
    size_t *off;                /* n_f + 1 offsets into caller */
    long *caller;
};

static void inl_up_build(struct vpr_model *m, struct inl_up *u)
{
    size_t n = m->lines && m->inl_f ? vpr_lines_n_inlined(m->lines) : 0;
    long *pair = vpf_xcalloc(2 * (n ? n : 1), sizeof *pair);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t lo;
        uint32_t link;
        const char *name, *linkage;
        vpr_lines_inlined_range(m->lines, i, &lo, &link, &name, &linkage);
        long chain[VPR_INLINE_CHAIN_MAX];
        size_t c = vpr_model_inline_chain(m, lo, chain, VPR_INLINE_CHAIN_MAX);
        if (!c) continue;
        long callee = chain[c - 1], caller = c >= 2 ? chain[c - 2] : vpr_sym_find(&m->sym, lo);
        if (callee < 0 || caller < 0 || callee == caller) continue;
        pair[2 * k] = callee, pair[2 * k + 1] = caller, k++;
    }
    u->off = vpf_xcalloc(m->n_f + 1, sizeof *u->off);
    u->caller = vpf_xcalloc(k ? k : 1, sizeof *u->caller);
    for (size_t i = 0; i < k; i++) u->off[pair[2 * i] + 1]++;
    for (size_t f = 0; f < m->n_f; f++) u->off[f + 1] += u->off[f];
    size_t *at = vpf_xcalloc(m->n_f + 1, sizeof *at);
    for (size_t i = 0; i < k; i++) {
        size_t f = (size_t)pair[2 * i];
        u->caller[u->off[f] + at[f]++] = pair[2 * i + 1];
    }
    free(at), free(pair);
}

/* Marks f and every function joined to it by the buggy runs' call arcs in
 * direction dir (-1: its callers, theirs...; +1: its callees...); callers
 * include those that inlined it (u, may be NULL). */
static void mark_reach(const struct vpr_model *m, size_t f, int dir, unsigned char *mark,
                       size_t *work, const struct inl_up *u)
{
    size_t n = 0;
    mark[f] = 1;
    work[n++] = f;
    while (n) {
        size_t x = work[--n];
        for (size_t j = u && dir < 0 ? u->off[x] : 0; u && dir < 0 && j < u->off[x + 1]; j++) {
            long h = u->caller[j];
            if (!mark[h]) mark[h] = 1, work[n++] = (size_t)h;
        }
        for (size_t k = 0; k < m->n_arcs; k++) {
            const struct vpr_arc *a = &m->arcs[k];
            if (a->src == VPR_ARC_DROPPED || !(a->count[VPR_BUGGY] > 0)) continue;
            size_t from = dir < 0 ? a->to : a->from, to = dir < 0 ? a->from : a->to;
            if (from != x || mark[to]) continue;
            mark[to] = 1;
            work[n++] = to;
        }
    }
}

/* Are f (up: it and its callers) and the caller of a matching call
 * (theirs: it and its callers) siblings: do their callers' paths part at
 * a function that calls both ways about as often (within 2x, in each
 * run)? A loop calls its body's functions once
 * an item each: a paragraph's shaping and its line breaking. A caller that
 * calls one way 600,000 times and the other 29 (a datagram's lines and
 * the flushes it triggers) is no such loop. */
static int siblings(const struct vpr_model *m, const unsigned char *up,
                    const unsigned char *theirs)
{
    for (size_t k = 0; k < m->n_arcs; k++) {
        const struct vpr_arc *a = &m->arcs[k];
        if (a->src == VPR_ARC_DROPPED || !(a->count[VPR_BUGGY] > 0) || !up[a->from] ||
            !theirs[a->from] || !up[a->to] || theirs[a->to])
            continue;
        for (size_t j = 0; j < m->n_arcs; j++) {
            const struct vpr_arc *b = &m->arcs[j];
            if (b->src == VPR_ARC_DROPPED || b->from != a->from || !theirs[b->to] ||
                up[b->to])
                continue;
            int near = 1;
            for (int s = 0; s < 2 && near; s++)
                near = a->count[s] <= 2 * b->count[s] && b->count[s] <= 2 * a->count[s];
            if (near) return 1;
        }
    }
    return 0;
}

/* A call made k times (1 to VPR_LINK_PER) per call of f in each run: an
 * object's release frees its parts (an entry, its name, its buffer), so
 * the removals that make a cache create its entries again count three
 * frees an entry; the same k in both runs, while the counts changed
 * many-fold, is as unlikely by chance as equality. */
#define VPR_LINK_PER 4
static int link_multiple(const double *count, const double *calls)
{
    for (int k = 1; k <= VPR_LINK_PER; k++)
        if (near_count(count[0], k * calls[0]) && near_count(count[1], k * calls[1]))
            return k;
    return 0;
}

/* The counted calls: the program's arcs, then calls into libraries
 * (free, close), which vprof-cc's counters see and gmon does not. */
struct link_call {
    size_t from;
    long to;                    /* -1: a library function */
    const char *callee;
    const double *count;
};

static int nth_call(const struct vpr_model *m, size_t k, struct link_call *c)
{
    if (k < m->n_arcs) {
        const struct vpr_arc *a = &m->arcs[k];
        if (a->src == VPR_ARC_DROPPED) return 0;
        *c = (struct link_call){a->from, (long)a->to, m->f[a->to].name, a->count};
        return 1;
    }
    const struct vpr_libarc *l = &m->libarcs[k - m->n_arcs];
    *c = (struct link_call){l->from, -1, l->callee, l->count};
    return 1;
}

static void rank_count_links(struct vpr_model *m)
{
    if (!m->has_schema || !m->n_f) return;
    double ratio = m->o->arc_ratio > 1 ? m->o->arc_ratio : 4;
    unsigned char *up = vpf_xcalloc(m->n_f, 1), *down = vpf_xcalloc(m->n_f, 1);
    unsigned char *theirs = vpf_xcalloc(m->n_f, 1);
    size_t *work = vpf_xcalloc(m->n_f, sizeof *work);
    struct inl_up inl;
    inl_up_build(m, &inl);
    for (size_t i = 0; i < m->n_f; i++) {
        const struct vpr_func *f = &m->f[i];
        if (!(f->calibrated > 0) || !(f->r < m->o->default_discount) || f->system ||
            vpr_is_plt(m, f))
            continue;
        /* its calls, or its calls of the callee whose rate changed */
        const double *counts[2] = {f->arc.calls, f->arc.to >= 0 ? f->arc.count : NULL};
        int changed[2] = {0, 0};
        for (int w = 0; w < 2; w++) {
            if (!counts[w]) continue;
            double c[2];
            for (int s = 0; s < 2; s++) c[s] = per_run(m, counts[w][s], s);
            changed[w] = c[0] > 0 && c[1] >= 10 && (c[1] >= ratio * c[0] || c[0] >= ratio * c[1]);
        }
        if (!changed[0] && !changed[1]) continue;
        memset(up, 0, m->n_f);
        memset(down, 0, m->n_f);
        mark_reach(m, i, -1, up, work, &inl);
        mark_reach(m, i, +1, down, work, NULL);
        double cal = f->calibrated;
        for (size_t k = 0; k < m->n_arcs + m->n_libarcs; k++) {
            struct link_call a;
            if (!nth_call(m, k, &a) || up[a.from] || down[a.from] ||
                (a.to >= 0 && (up[a.to] || down[a.to])))
                continue;
            int per = 0, w = 0;
            for (; w < 2; w++)
                if (changed[w] && (per = link_multiple(a.count, counts[w]))) break;
            if (!per) continue;
            /* not a sibling under the same loop; another thread's start
             * routine has no caller in the program */
            memset(theirs, 0, m->n_f);
            mark_reach(m, a.from, -1, theirs, work, &inl);
            if (siblings(m, up, theirs)) continue;
            struct vpr_func *from = &m->f[a.from];
            const struct vpf_schema_from *g = vpr_call_guard(m, from, a.callee);
            if (!g && !vpr_call_state_guard(m, from, a.callee)) continue;
            long pred = g ? vpr_model_func_by_name(m, g->callee) : -1;
            /* a pure predicate holds the decision its caller acts on
             * (--pure-guards): it comes first */
            int first = pred >= 0 && m->o->pure_guards && pure_predicate(m, pred);
            long ys[2] = {first ? pred : (long)a.from, first ? (long)a.from : pred};
            for (int b = 0; b < 2; b++) {
                if (ys[b] < 0 || (size_t)ys[b] == i) continue;
                struct vpr_func *y = &m->f[ys[b]];
                cal = nextafter(cal, 0);
                if (!(cal > y->calibrated) || vpr_is_plt(m, y) || vpf_system_path(y->file))
                    continue;
                y->calibrated = cal;
                y->link_of = (long)i;
                y->link_from = (long)a.from;
                y->link_to = a.callee;
                y->link_per = per;
                y->link_by_arc = w == 1;
            }
        }
    }
    free(up), free(down), free(theirs), free(work), free(inl.off), free(inl.caller);
}

void vpr_rank_functions(struct vpr_model *m)
{
    const struct vpr_opts *o = m->o;
    /* the runs' total CPU time, once: a larger workload scales it */
    double tn = vpr_program_time(m, VPR_NORMAL), tb = vpr_program_time(m, VPR_BUGGY);
    double scale = tn > 0 ? tb / tn : 0;
    /* the largest function's buggy raw cost: the run's, for the roots */
    double top = mark_whole_run(m, o->rank == VPR_RANK_BLEND ? o->whole_run : 0);
    /* A branch that now fires more often (a program callee called at most
     * once per call in the normal runs, more often in the buggy ones:
     * vpr_branch_calls) chose all its callee's subtree does, as the whole
     * stacks count it: the value samples' unwinding stops VPROF_UNWIND
     * program frames above the leaf and gave such a caller a fraction
     * (fresh3_a_resolver_ttl: resolver_lookup 0.24 s below the 0.39 s of
     * upstream_query, two calls under its branch). Not a loop's calls,
     * whose rate grows with its data: the callee's own growth may be the
     * cause there (httpd64066_vhosts), nor a library callee (std::min,
     * called once more per chunk). */
    if (o->stack_raw == VPR_STACK_RAW_BRANCH)
        for (size_t i = 0; i < m->n_f; i++) {
            const struct vpr_func *f = &m->f[i];
            if (f->disc == VPR_DISC_ARC && f->arc.dir > 0 && vpr_branch_calls(m, f) &&
                !vpf_system_path(m->f[f->arc.to].file) && !vpr_is_plt(m, &m->f[f->arc.to]))
                raise_to_stacks(m, i);
        }
    for (size_t i = 0; i < m->n_f; i++) {
        struct vpr_func *f = &m->f[i];
        f->system = vpf_system_path(f->file);
        f->added = added_cost(f, scale);
        if (o->arcs_added) {
            double a = arc_added(m, f);
            if (a > f->added) f->added = a;
        }
        if (o->rank == VPR_RANK_PAPER)
            f->calibrated = (1.0 - f->r) * f->raw[VPR_BUGGY];
        else if (o->rank == VPR_RANK_ADDED)
            f->calibrated = (1.0 - f->r) * f->added;
        else if (o->rank == VPR_RANK_BLEND)
            /* the part of its cost the normal runs' proportions predict
             * counts as normal: DefaultDiscount applies to it */
            f->calibrated = (1.0 - f->r) * (f->added + (1.0 - o->default_discount) *
                                            (f->raw[VPR_BUGGY] - f->added));
        else
            /* what the function's anomalous values explain, plus its own
             * time discounted as the paper discounts normal functions */
            f->calibrated = f->blamed + (1.0 - o->default_discount) * f->pc_cost[VPR_BUGGY] +
                            (f->disc == VPR_DISC_LOCK ? 1.0 - f->r : 1.0 - o->default_discount) *
                            f->lock_cost;
    }
    keep_roots_to_added(m, scale, top);
    /* one schema scan per changed arc, for the ranking and the outputs */
    for (size_t i = 0; i < m->n_f; i++)
        if (m->f[i].arc.to >= 0) {
            m->f[i].guard = vpr_call_guard(m, &m->f[i], m->f[m->f[i].arc.to].name);
            m->f[i].state = vpr_call_state_guard(m, &m->f[i], m->f[m->f[i].arc.to].name);
        }
    if (o->dispatch_cap) cap_dispatchers(m);
    if (o->guards && o->arcs) rank_guards(m);
    if (o->producers) rank_producers(m);
    if (o->state_writers && o->arcs) rank_state_writers(m);
    if (o->sizers) rank_tables(m, 3);
    if (o->adders) rank_tables(m, 4);
    if (o->ranges) rank_ranges(m);
    if (o->stops) rank_stops(m);
    if (o->limits) rank_limits(m);
    if (o->count_links) rank_count_links(m);
    if (o->alternatives && o->arcs && m->has_schema) rank_alternatives(m);
    if (o->deciders_above) raise_deciders(m);
    m->order = vpf_xcalloc(m->n_f ? m->n_f : 1, sizeof *m->order);
    m->n_order = 0;
    /* ranked (see ranked()) */
    for (size_t i = 0; i < m->n_f; i++)
        if (ranked(m, &m->f[i]))
            m->order[m->n_order++] = i;
    qsort_r(m->order, m->n_order, sizeof *m->order, cmp_final, m);
    /* Then what the evidence left no cost to and what the buggy runs called
     * but never sampled, as gprof's flat profile lists them: when the
     * evidence cannot place a cheap decision (a sizing function run once),
     * the report still names it where a cost profiler would. */
    size_t costed = m->n_order;
    for (size_t i = 0; i < m->n_f; i++)
        if (!ranked(m, &m->f[i]) &&
            (m->f[i].arc.calls[VPR_BUGGY] > 0 || m->f[i].raw[VPR_BUGGY] > 0))
            m->order[m->n_order++] = i;
    qsort_r(m->order + costed, m->n_order - costed, sizeof *m->order, cmp_calls, m);
}
