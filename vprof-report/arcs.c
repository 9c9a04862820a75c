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
#include "writers.h"

#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { GMON_FROM_BUCKET = 16 };

static size_t arc_slot(uint64_t key, size_t cap)
{
    return (size_t)((key * 0x9e3779b97f4a7c15ull) >> 20) & (cap - 1);
}

static uint64_t arc_key(uint32_t from, uint32_t to, uint32_t host)
{
    return ((uint64_t)from << 32 | to) ^ (uint64_t)host * 0xff51afd7ed558ccdull;
}

static struct vpr_arc *arc_get(struct vpr_model *m, uint32_t from, uint32_t to,
                               uint32_t host)
{
    uint64_t key = arc_key(from, to, host);
    if (2 * (m->n_arcs + 1) > m->arc_hcap) {
        free(m->arc_h);
        m->arc_hcap = m->arc_hcap ? 2 * m->arc_hcap : 256;
        m->arc_h = vpf_xcalloc(m->arc_hcap, sizeof *m->arc_h);
        if (!m->arc_h) { m->arc_hcap = 0; return NULL; }
        for (size_t i = 0; i < m->n_arcs; i++) {
            uint64_t k = arc_key(m->arcs[i].from, m->arcs[i].to, m->arcs[i].host);
            size_t h = arc_slot(k, m->arc_hcap);
            while (m->arc_h[h]) h = (h + 1) & (m->arc_hcap - 1);
            m->arc_h[h] = i + 1;
        }
    }
    size_t h = arc_slot(key, m->arc_hcap);
    for (; m->arc_h[h]; h = (h + 1) & (m->arc_hcap - 1)) {
        struct vpr_arc *a = &m->arcs[m->arc_h[h] - 1];
        if (a->from == from && a->to == to && a->host == host) return a;
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
    a->host = host;
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
        /* gmon's from_pc is the first address of a 16-byte bucket of
         * return addresses (glibc's HASHFRACTION * sizeof(ARCINDEX), kept
         * by libvprof/callgraph.c): the direct call of s in it gives the
         * exact site, or the function that reached s by a sibling call
         * (tailcalls.c), whose call it then is, per call of its own. */
        uint64_t bucket = g->arcs[i].from_pc - bias, ret = 0;
        long via = vpr_sym_call_in(&m->sym, bucket, GMON_FROM_BUCKET, s, &ret);
        if (via >= 0 && via != s && !m->o->tail_calls) via = -1, ret = 0;
        /* The decision to call is made by the code holding the call: the
         * innermost function inlined there, as PC time and lock sites
         * are (the call's last byte; without a direct call, the bucket's
         * first address, inside the call or just after it). */
        if (ret) {                  /* a bucket can span two functions */
            long fr = vpr_sym_find(&m->sym, ret - 1);
            if (fr >= 0) f = fr;
        }
        if (via >= 0 && via != s) f = via;
        long from = via >= 0 && via != s ? via : vpr_model_code_func(m, ret ? ret - 1 : bucket, f);
        if (from == s || f == s) continue;
        struct vpr_arc *a = arc_get(m, (uint32_t)from, (uint32_t)s, (uint32_t)f);
        if (a) {
            a->count[side] += g->arcs[i].count;
            if (via >= 0 && via != s) a->sibling = 1;
        }
    }
}

/* A counter arc is kept apart (host VPR_ARC_PENDING) until every file is
 * read: the counters count calls in the source, before inlining, so where
 * they have a caller and callee they replace gmon's arcs of the pair
 * (which miss the calls that were inlined, and for an inlined caller can
 * only be rated per call of the symbol holding it). */
#define VPR_ARC_PENDING UINT32_MAX

/* Appended per file; settle_libarcs() merges a pair's counts. */
static void add_libarc(struct vpr_model *m, int side, uint32_t from, const char *callee,
                       double count)
{
    if (m->n_libarcs == m->cap_libarcs) {
        m->cap_libarcs = m->cap_libarcs ? 2 * m->cap_libarcs : 64;
        m->libarcs = vpf_xrealloc(m->libarcs, m->cap_libarcs, sizeof *m->libarcs);
    }
    struct vpr_libarc *a = &m->libarcs[m->n_libarcs++];
    a->from = from;
    a->callee = vpf_xstrdup(callee);
    a->count[side] = count;
    a->count[!side] = 0;
}

static int cmp_libarc(const void *x, const void *y)
{
    const struct vpr_libarc *a = x, *b = y;
    if (a->from != b->from) return a->from < b->from ? -1 : 1;
    return strcmp(a->callee, b->callee);
}

/* One entry per (caller, library callee), its counts summed over the runs;
 * none when the counters missed some processes (as settle_counters). */
static void settle_libarcs(struct vpr_model *m, int partial)
{
    size_t n = 0;
    if (!partial && m->n_libarcs) {
        qsort(m->libarcs, m->n_libarcs, sizeof *m->libarcs, cmp_libarc);
        for (size_t i = 0; i < m->n_libarcs; i++) {
            struct vpr_libarc *a = &m->libarcs[i];
            if (n && !cmp_libarc(&m->libarcs[n - 1], a)) {
                for (int s = 0; s < 2; s++) m->libarcs[n - 1].count[s] += a->count[s];
                free(a->callee);
            } else
                m->libarcs[n++] = *a;
        }
    } else
        for (size_t i = 0; i < m->n_libarcs; i++) free(m->libarcs[i].callee);
    m->n_libarcs = n;
}

void vpr_arcs_add_counts(struct vpr_model *m, int side, const struct vpf_calls *c)
{
    for (size_t i = 0; i < c->n; i++) {
        long f = vpr_model_func_by_name(m, c->pairs[i].caller);
        long s = vpr_model_func_by_name(m, c->pairs[i].callee);
        if (f >= 0 && s < 0) {
            add_libarc(m, side, (uint32_t)f, c->pairs[i].callee, (double)c->pairs[i].count);
            continue;
        }
        if (f < 0 || s < 0 || f == s) continue;
        struct vpr_arc *a = arc_get(m, (uint32_t)f, (uint32_t)s, VPR_ARC_PENDING);
        if (!a) continue;
        a->src = VPR_ARC_COUNTER;
        a->count[side] += (double)c->pairs[i].count;
    }
}

static int cmp_pair(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Settles the counter arcs: each is its caller's own (host = caller, rated
 * per the caller's counted calls), gmon's arcs of the same pair are
 * dropped, and a callee inlined everywhere (no call of it in gmon) gets
 * its calls from the counters. */
static void settle_counters(struct vpr_model *m)
{
    /* Counts from some processes only (one killed before it wrote them, a
     * run of a build without --calls) would read as calls that stopped:
     * all or nothing. */
    int partial = 0, any = 0;
    for (int s = 0; s < 2; s++) {
        any |= m->st[s].calls_files > 0;
        partial |= m->st[s].calls_files != m->st[s].procs;
    }
    settle_libarcs(m, partial);
    if (any && partial) {
        if (!m->o->quiet)
            fprintf(stderr, "vprof-report: warning: call counts (calls.<id>) are missing for "
                    "%zu of %zu normal and %zu of %zu buggy processes: not used\n",
                    m->st[0].procs - m->st[0].calls_files, m->st[0].procs,
                    m->st[1].procs - m->st[1].calls_files, m->st[1].procs);
        for (size_t i = 0; i < m->n_arcs; i++)
            if (m->arcs[i].src == VPR_ARC_COUNTER) m->arcs[i].src = VPR_ARC_DROPPED;
        return;
    }
    size_t n = 0;
    uint64_t *have = vpf_xcalloc(m->n_arcs ? m->n_arcs : 1, sizeof *have);
    for (size_t i = 0; i < m->n_arcs; i++) {
        struct vpr_arc *a = &m->arcs[i];
        if (a->src != VPR_ARC_COUNTER) continue;
        have[n++] = (uint64_t)a->from << 32 | a->to;
        a->host = a->from;
        for (int s = 0; s < 2; s++) m->f[a->to].arc.ccalls[s] += a->count[s];
    }
    if (!n) { free(have); return; }
    qsort(have, n, sizeof *have, cmp_pair);
    for (size_t i = 0; i < m->n_arcs; i++) {
        struct vpr_arc *a = &m->arcs[i];
        uint64_t key = (uint64_t)a->from << 32 | a->to;
        if (a->src == VPR_ARC_GMON && bsearch(&key, have, n, sizeof *have, cmp_pair))
            a->src = VPR_ARC_DROPPED;
    }
    free(have);
    for (size_t i = 0; i < m->n_f; i++)
        if (m->f[i].inl_only)
            for (int s = 0; s < 2; s++) m->f[i].arc.calls[s] += m->f[i].arc.ccalls[s];
    /* the hash is keyed by host, which changed: rebuilt on the next arc_get */
    free(m->arc_h);
    m->arc_h = NULL;
    m->arc_hcap = 0;
}

struct growth { double ratio, weight; };

static int cmp_growth(const void *a, const void *b)
{
    double x = ((const struct growth *)a)->ratio, y = ((const struct growth *)b)->ratio;
    return x < y ? -1 : x > y;
}

/* The workload's growth: the median over the normal runs' calls of how
 * many times as often the buggy runs call the same function (each
 * function's ratio weighted by its normal calls). Most calls are the
 * workload's own (per request, per row, per element), so a larger
 * workload moves the median and a decision that calls one function more
 * often does not. 1 when nothing was called in both. */
static double workload_growth(const struct vpr_model *m)
{
    struct growth *g = vpf_xcalloc(m->n_f ? m->n_f : 1, sizeof *g);
    size_t n = 0;
    double total = 0;
    for (size_t i = 0; i < m->n_f; i++) {
        const struct vpr_arcinfo *c = &m->f[i].arc;
        if (c->calls[0] <= 0) continue;
        g[n].ratio = c->calls[1] / c->calls[0];
        g[n].weight = c->calls[0];
        total += g[n++].weight;
    }
    double w = 1;
    if (n) {
        qsort(g, n, sizeof *g, cmp_growth);
        double acc = 0;
        for (size_t i = 0; i < n; i++)
            if ((acc += g[i].weight) >= total / 2) { w = g[i].ratio; break; }
    }
    free(g);
    return w;
}

/* Two estimates of how much larger the buggy workload is: how much more
 * often functions are called (above) and how much more CPU time the runs
 * took (PC samples, per run). A defect inflates one or both (more calls,
 * more time) and seldom deflates them, so the smaller bounds the
 * workload's own growth more tightly. */
static double growth_bound(const struct vpr_model *m)
{
    double w = workload_growth(m);
    double t[2] = {vpr_program_time(m, VPR_NORMAL), vpr_program_time(m, VPR_BUGGY)};
    return t[0] > 0 && t[1] / t[0] < w ? t[1] / t[0] : w;
}

/* The calls an arc's rate is per: its host's. An inlined copy in a host
 * with no recorded call on a side (main, a thread's start routine: entered
 * from outside the program, which gmon does not record) is taken to run
 * once per run there, so its calls are tested as a rare caller's (against
 * the workload's growth). The host's own arcs stay untested: main's rate of
 * a callee is its loop over the input, the workload's size (measured: with
 * main's arcs tested too, main ranked above mdev13498_cascade's root cause
 * for the extra tables its larger workload creates) - unless the schema
 * says the entry makes those calls only when a predicate's answer says so
 * (`if (batch_should_flush(b, r)) ship_batch(b);` in a thread's loop): a
 * guarded call is a decision, not the loop (--entry-guards). */
static void host_calls(const struct vpr_model *m, const struct vpr_arc *a, double calls[2])
{
    int entry_guard = -1;                       /* -1: not looked up yet */
    for (int s = 0; s < 2; s++) {
        /* a counter arc is per call of its caller as the counters saw them
         * (inlined calls too); gmon's count when nothing counted it */
        calls[s] = a->src == VPR_ARC_COUNTER && m->f[a->host].arc.ccalls[s] > 0
                       ? m->f[a->host].arc.ccalls[s] : m->f[a->host].arc.calls[s];
        /* gmon's arc of an inlined copy is per call of the copy, which the
         * counters may have counted (the calls of a function holding a
         * decision are): then per those, not per its host's calls - main,
         * which holds it and "ran once", would make every call it makes a
         * change */
        if (a->src != VPR_ARC_COUNTER && a->from != a->host && m->f[a->from].inl_only &&
            m->f[a->from].arc.ccalls[s] > 0)
            calls[s] = m->f[a->from].arc.ccalls[s];
        if (calls[s] <= 0 && a->from != a->host) calls[s] = (double)m->n_runs[s];
        else if (calls[s] <= 0 && m->o->entry_guards) {
            if (entry_guard < 0)
                entry_guard = vpr_call_guard(m, &m->f[a->from], m->f[a->to].name) != NULL;
            if (entry_guard) calls[s] = (double)m->n_runs[s];
        }
    }
}

static int has_rate(const double *calls, double min_calls)
{
    return calls[0] >= min_calls && calls[1] >= min_calls;
}

/* The caller's expected buggy count of an arc: the normal rate per call
 * times the buggy calls; for a caller called too rarely to have a rate
 * (main, a phase run once), with --arc-rare, the normal count times the
 * larger of the workload's growth and the caller's own (below). 0: not
 * tested. */
static double arc_lambda(const struct vpr_model *m, const struct vpr_arc *a,
                         double min_calls)
{
    double calls[2];
    host_calls(m, a, calls);
    double cn = a->count[0] > 0 ? a->count[0] : 0.5;
    if (has_rate(calls, min_calls))
        return cn / calls[0] * calls[1];
    if (!m->o->arc_rare || calls[0] <= 0 || calls[1] <= 0 || a->count[0] <= 0)
        return 0;
    /* Its own workload: how much more often it calls its other callees. A
     * loop over a larger input calls everything in it more often; a
     * decision changes one callee against the others. Without another
     * callee to compare with, the workload's growth is the bound (an
     * inlined phase whose only out-of-line callee is the one it calls
     * 16,000 times as often: mdev21826_recovery built with inlining), but
     * never below the normal count: a smaller buggy workload must not make
     * a start-up function's unchanged calls (6 and 6) look like more, as
     * its other callees' unchanged counts would prevent if it had any. */
    double own = 0;
    for (size_t i = 0; i < m->n_arcs; i++) {
        const struct vpr_arc *o = &m->arcs[i];
        if (o == a || o->src == VPR_ARC_DROPPED || o->from != a->from || o->host != a->host ||
            o->count[0] <= 0)
            continue;
        if (o->count[1] / o->count[0] > own) own = o->count[1] / o->count[0];
    }
    if (own <= 0) own = 1;
    return cn * (own > m->arc_growth ? own : m->arc_growth);
}

void vpr_arcs_analyse(struct vpr_model *m)
{
    settle_counters(m);
    m->arc_growth = growth_bound(m);
    const struct vpr_opts *o = m->o;
    double min_calls = o->arc_min_calls ? (double)o->arc_min_calls : 10;
    double k_ratio = o->arc_ratio > 1 ? o->arc_ratio : 4;
    size_t tested = 0;
    for (size_t i = 0; i < m->n_arcs; i++) {
        const struct vpr_arc *a = &m->arcs[i];
        if (a->src != VPR_ARC_DROPPED && arc_lambda(m, a, min_calls) > 0) tested++;
    }
    if (!tested) return;
    double alpha = o->pvalue / (double)tested;
    for (size_t i = 0; i < m->n_f; i++) { m->f[i].arc.to = -1; m->f[i].arc.p = NAN; }
    for (size_t i = 0; i < m->n_arcs; i++) {
        const struct vpr_arc *a = &m->arcs[i];
        if (a->src == VPR_ARC_DROPPED) continue;
        struct vpr_arcinfo *ci = &m->f[a->from].arc;
        double calls[2];
        host_calls(m, a, calls);
        double lambda = arc_lambda(m, a, min_calls);
        if (lambda <= 0) continue;
        /* rates per buggy call of the caller: expected and observed */
        double rate_n = lambda / calls[1];
        double rate_b = a->count[1] / calls[1];
        double k = a->count[1], p;
        int dir;
        if (k > lambda) {
            if (rate_b < k_ratio * rate_n) continue;
            p = gsl_cdf_poisson_Q((unsigned)(k - 1), lambda);      /* P(X >= k) */
            dir = 1;
        } else {
            /* a rare caller's expectation is the largest growth among its
             * callees: one that grew less is not shown to have changed */
            if (rate_b * k_ratio > rate_n || a->count[0] <= 0 || !has_rate(calls, min_calls)) continue;
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
            ci->per[0] = calls[0];
            ci->per[1] = calls[1];
            ci->rare = !has_rate(calls, min_calls);
            ci->sibling = a->sibling;
        }
    }
}
