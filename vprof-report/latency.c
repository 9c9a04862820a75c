/* latency.c - latency.<id> into the model (docs/vprof-report.md, "Latency").
 *
 * Every committed event is kept in memory (40 bytes each), sorted per
 * process by (thread, start): the holder of a lock wait is found among the
 * holder thread's call events, and --timeline/--trace replay them.
 *
 * Latency dimension: per function, the durations of its call events (the
 * lifetime of its frame record, so a caller's calls contain its callees'
 * waits) on both sides go through the same AD test + Hellinger rule as a
 * variable's dimensions (vpr_dim_discount). Its latency cost per run is
 * the summed duration of its call events (inclusive, off-CPU time
 * included); discount.c uses that cost only when the distributions differ,
 * since it counts wall time, not CPU time, and would otherwise flood the
 * ranking with long-lived frames such as main or thread entry functions. */
#include "latency.h"
#include "vprof_xalloc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *vpr_lat_kind_name(unsigned kind)
{
    static const char *n[] = {"?", "call", "mutex-wait", "mutex-hold", "cond-wait",
                              "request-start", "request-block", "request-end",
                              "syscall", "wake", "fd-wait", "sem-wait", "join-wait",
                              "annotated-wait", "thread-start", "rwlock-wait", "barrier-wait"};
    return kind < sizeof n / sizeof *n ? n[kind] : "?";
}

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* Function holding run-time address a; *link gets the link-time address
 * for the executable (as scan.c, library code is one pseudo-function per
 * library); in a library, the file offset, which is the same in every run
 * whatever the library's load address. */
long vpr_lat_func_at(struct vpr_model *m, const struct vpf_layout *lay, uint64_t bias,
                     uint64_t a, uint64_t *link)
{
    *link = a - bias;
    long s = vpr_sym_find(&m->sym, a - bias);
    if (s >= 0) return s;
    *link = a;
    for (size_t i = 0; i < lay->n_maps; i++) {
        const struct vpf_layout_map *mp = &lay->maps[i];
        if (a >= mp->lo && a < mp->hi && mp->path && strcmp(mp->path, lay->exe)) {
            char nm[300];
            snprintf(nm, sizeof nm, "[%s]", base_name(mp->path));
            *link = a - mp->lo + mp->off;
            return (long)vpr_model_lib_func(m, nm);
        }
    }
    return (long)vpr_model_lib_func(m, "[unknown]");
}

/* The function whose code holds call site link: the innermost function
 * inlined there when the DWARF names one (--inline-functions), as the PC
 * histogram gives inlined code's time to it. A lock taken or a call made by
 * an inlined copy is that function's, not its host symbol's: without this
 * a holder inlined into a thread's loop charges its victims' wait time to
 * the loop. */
static long site_func(struct vpr_model *m, long f, uint64_t link)
{
    return f < 0 || m->f[f].is_lib ? f : vpr_model_code_func(m, link, f);
}

static int cmp_ev(const void *a, const void *b)
{
    const struct vpr_lev *x = a, *y = b;
    if (x->tid != y->tid) return x->tid < y->tid ? -1 : 1;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    if (x->dur != y->dur) return x->dur > y->dur ? -1 : 1;     /* outer first */
    return 0;
}

int vpr_lat_load(struct vpr_model *m, int side, size_t run, const struct vpr_run *r,
                 const struct vpr_proc *p, char *err, size_t errlen)
{
    if (!p->latency_path) return 0;
    struct vpf_recfile_r rf;
    vpf_err e;
    if (vpf_latency_open(p->latency_path, &rf, &e) < 0) {
        snprintf(err, errlen, "%s", e.msg);
        return -1;
    }
    if (!m->lat) m->lat = vpf_xcalloc(1, sizeof *m->lat);
    struct vpr_latency *L = m->lat;
    const struct vpf_latency_header *h = vpf_latency_hdr(&rf);
    L->files[side]++;
    L->dropped[side] += h->dropped;
    if (h->scan_ns > L->scan_ns) L->scan_ns = h->scan_ns;
    if (h->flags & VPF_LAT_FLAG_FUNCS) L->funcs_limited[side]++;
    L->procs = vpf_grow(L->procs, &L->cap_procs, L->n_procs + 1, sizeof *L->procs);
    struct vpr_lproc *lp = &L->procs[L->n_procs++];
    memset(lp, 0, sizeof *lp);
    lp->side = side;
    lp->run = run;
    lp->pid = p->layout.pid;
    lp->label = r->label;
    lp->ev = vpf_xcalloc(rf.n ? rf.n : 1, sizeof *lp->ev);
    uint64_t bias = m->sym.is_pie ? p->layout.load_bias : 0;
    const struct vpf_latency_rec *recs = vpf_latency_recs(&rf);
    for (uint64_t i = 0; i < rf.n; i++) {
        const struct vpf_latency_rec *x = &recs[i];
        if (!(x->flags & VPF_REC_COMMITTED)) continue;
        if ((x->kind < VPF_LAT_CALL || x->kind > VPF_LAT_BARRIER_WAIT) &&
            x->kind != VPF_LAT_REQ_WORK && x->kind != VPF_LAT_REQ_WAKE) continue;
        struct vpr_lev *v = &lp->ev[lp->n++];
        memset(v, 0, sizeof *v);
        v->start = x->start_ns;
        v->dur = x->duration_ns;
        v->tid = x->tid;
        v->other = x->other_tid;
        v->gen = x->generation;
        v->kind = x->kind;
        v->flags = x->flags;
        uint64_t link;
        v->site_f = x->site ? vpr_lat_func_at(m, &p->layout, bias, x->site, &v->site) : -1;
        if (x->site) v->site_f = site_func(m, v->site_f, v->site);
        if (x->kind == VPF_LAT_CALL || x->kind == VPF_LAT_THREAD_START) {
            v->f = vpr_lat_func_at(m, &p->layout, bias, x->func, &link);
            v->obj = link;
        } else {
            v->f = v->site_f;
            v->obj = x->func;
        }
        if (x->kind == VPF_LAT_REQ_WORK) {  /* units, not a time (latency.h) */
            v->site = x->duration_ns;
            v->dur = 0;
        }
        if (x->flags & 1) L->open[side]++;
    }
    L->events[side] += lp->n;
    vpf_recfile_close_r(&rf);
    qsort(lp->ev, lp->n, sizeof *lp->ev, cmp_ev);
    return 0;
}

static void dist_add(struct vpr_ldist *d, int s, size_t run, size_t n_runs, double us)
{
    d->v[s] = vpf_grow(d->v[s], &d->cap[s], d->n[s] + 1, sizeof *d->v[s]);
    d->v[s][d->n[s]++] = us;
    if (!d->sum[s]) d->sum[s] = vpf_xcalloc(n_runs ? n_runs : 1, sizeof *d->sum[s]);
    d->sum[s][run] += us / 1e6;
}

static void dist_free(struct vpr_ldist *d)
{
    for (int s = 0; s < 2; s++) { free(d->v[s]); free(d->sum[s]); }
}

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double vpr_lat_pct(const double *v, size_t n, double q)
{
    if (!n) return NAN;
    double k = ceil(q * (double)n - 1e-9);
    size_t i = k < 1 ? 0 : (size_t)k - 1;
    return v[i < n ? i : n - 1];
}

struct vpr_lstats vpr_lat_stats(const struct vpr_ldist *d, int s)
{
    const double *v = d->v[s];
    size_t n = d->n[s];
    struct vpr_lstats st = {vpr_lat_pct(v, n, 0.5), vpr_lat_pct(v, n, 0.99),
                            vpr_lat_pct(v, n, 0.999), n ? v[n - 1] : NAN};
    return st;
}

static uint64_t site_hash(uint8_t kind, long f, uint64_t site)
{
    uint64_t k = (site * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)f << 8 | kind);
    return k * 0xbf58476d1ce4e5b9ull;
}

static struct vpr_lsite *site_get(struct vpr_latency *L, uint8_t kind, long f,
                                  long caller, uint64_t site)
{
    if (2 * (L->n_sites + 1) > L->sh_cap) {         /* (re)build the hash */
        free(L->sh);
        L->sh_cap = L->sh_cap ? 2 * L->sh_cap : 256;
        L->sh = vpf_xcalloc(L->sh_cap, sizeof *L->sh);
        for (size_t i = 0; i < L->n_sites; i++) {
            const struct vpr_lsite *s = &L->sites[i];
            size_t h = site_hash(s->kind, s->f, s->site) >> 20 & (L->sh_cap - 1);
            while (L->sh[h]) h = (h + 1) & (L->sh_cap - 1);
            L->sh[h] = i + 1;
        }
    }
    size_t h = site_hash(kind, f, site) >> 20 & (L->sh_cap - 1);
    for (; L->sh[h]; h = (h + 1) & (L->sh_cap - 1)) {
        struct vpr_lsite *s = &L->sites[L->sh[h] - 1];
        if (s->kind == kind && s->f == f && s->site == site) return s;
    }
    L->sites = vpf_grow(L->sites, &L->cap_sites, L->n_sites + 1, sizeof *L->sites);
    struct vpr_lsite *s = &L->sites[L->n_sites++];
    L->sh[h] = L->n_sites;
    memset(s, 0, sizeof *s);
    s->kind = kind;
    s->f = f;
    s->caller = caller;
    s->site = site;
    return s;
}

/* At most n values of sorted-or-not v, evenly strided: the AD test gets
 * the same sample size bound (--reservoir) as a variable's dimensions. */
static double *bounded(const double *v, size_t n, size_t cap, size_t *out_n)
{
    size_t k = n < cap ? n : cap;
    double *o = vpf_xcalloc(k ? k : 1, sizeof *o);
    for (size_t i = 0; i < k; i++) o[i] = v[(size_t)((double)i * (double)n / (double)k)];
    *out_n = k;
    return o;
}

static void holder_add(struct vpr_lsite *s, long f, double overlap_us, double dur_us)
{
    for (size_t i = 0; i < s->n_hold; i++)
        if (s->hold[i].f == f) {
            s->hold[i].overlap_us += overlap_us;
            s->hold[i].mean_dur_us += dur_us;     /* sum until sorted */
            s->hold[i].n++;
            return;
        }
    s->hold = vpf_grow(s->hold, &s->cap_hold, s->n_hold + 1, sizeof *s->hold);
    s->hold[s->n_hold++] = (struct vpr_lholder){f, overlap_us, dur_us, 1};
}

/* Index of the first event of lp (sorted by thread, start) at or after
 * (tid, start), or lp->n. */
size_t vpr_lat_lower_bound(const struct vpr_lproc *lp, uint32_t tid, uint64_t start)
{
    size_t lo = 0, hi = lp->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        const struct vpr_lev *e = &lp->ev[mid];
        if (e->tid < tid || (e->tid == tid && e->start < start)) lo = mid + 1; else hi = mid;
    }
    return lo;
}

/* The holder's call events overlapping wait w: each function gets the
 * overlap. Looks back at most this many of the holder thread's events
 * that start before the wait ends, so that many waits on a busy holder
 * stay linear; what is missed is outer frames that started long before
 * (the thread's entry function, a server loop), which say little. */
enum { HOLDER_LOOKBACK = 4096 };

static void find_holders(const struct vpr_lproc *lp, const struct vpr_lev *w,
                         struct vpr_lsite *s)
{
    uint64_t ws = w->start, we = w->start + w->dur;
    size_t i = vpr_lat_lower_bound(lp, w->other, 0), end = vpr_lat_lower_bound(lp, w->other, we);
    size_t looked = 0;
    for (size_t k = end; k > i && looked < HOLDER_LOOKBACK; k--, looked++) {
        const struct vpr_lev *c = &lp->ev[k - 1];
        if (c->kind != VPF_LAT_CALL) continue;
        uint64_t ce = c->start + c->dur;
        if (ce <= ws) continue;
        uint64_t a = c->start > ws ? c->start : ws, b = ce < we ? ce : we;
        if (b > a) holder_add(s, c->f, (double)(b - a) / 1e3, (double)c->dur / 1e3);
    }
}

static void owner_add(struct vpr_lsite *s, long f, double overlap_us)
{
    for (size_t i = 0; i < s->n_own; i++)
        if (s->own[i].f == f) { s->own[i].overlap_us += overlap_us; s->own[i].n++; return; }
    s->own = vpf_xrealloc(s->own, (s->n_own + 1), sizeof *s->own);
    s->own[s->n_own++] = (struct vpr_lholder){f, overlap_us, 0, 1};
}

/* The function that took the lock wait w waited for: the holder thread's
 * hold events of the same lock overlapping the wait (their site is the
 * caller of pthread_mutex_lock). Looks back as far as find_holders. */
static void find_owners(const struct vpr_lproc *lp, const struct vpr_lev *w,
                        struct vpr_lsite *s)
{
    uint64_t ws = w->start, we = w->start + w->dur;
    size_t i = vpr_lat_lower_bound(lp, w->other, 0), end = vpr_lat_lower_bound(lp, w->other, we);
    size_t looked = 0;
    for (size_t k = end; k > i && looked < HOLDER_LOOKBACK; k--, looked++) {
        const struct vpr_lev *c = &lp->ev[k - 1];
        if (c->kind != VPF_LAT_MUTEX_HOLD || c->obj != w->obj || c->f < 0) continue;
        uint64_t ce = c->start + c->dur;
        if (ce <= ws) continue;
        uint64_t a = c->start > ws ? c->start : ws, b = ce < we ? ce : we;
        if (b > a) owner_add(s, c->f, (double)(b - a) / 1e3);
    }
}

static int cmp_owner(const void *a, const void *b)
{
    const struct vpr_lholder *x = a, *y = b;
    if (x->overlap_us != y->overlap_us) return x->overlap_us > y->overlap_us ? -1 : 1;
    return (x->f > y->f) - (x->f < y->f);
}

/* Off-CPU time in the ranking: the wait time the buggy runs added at a
 * waiting site (buggy minus normal, per run) is charged to the functions
 * that held the lock meanwhile, in proportion to their overlap with the
 * waits; the site's wait durations, normal vs buggy, are their evidence
 * (AD + Hellinger, like a dimension). A holder that blocks under a lock
 * then ranks where its victims' lost time puts it, even without a single
 * value or PC sample of its own. */
static void charge_owners(struct vpr_model *m)
{
    struct vpr_latency *L = m->lat;
    for (size_t i = 0; i < L->n_f; i++) { L->f[i].lock_r = NAN; L->f[i].lock_site = -1; }
    for (size_t i = 0; i < L->n_sites; i++) {
        struct vpr_lsite *st = &L->sites[i];
        if (st->kind != VPF_LAT_MUTEX_WAIT || !st->n_own) continue;
        size_t nn, nb;
        double *a = bounded(st->d.v[0], st->d.n[0], m->o->reservoir, &nn);
        double *b = bounded(st->d.v[1], st->d.n[1], m->o->reservoir, &nb);
        double p, stat, h;
        vpr_dim_discount(m->o, a, nn, b, nb, &st->st, &st->r, &p, &stat, &h);
        free(a);
        free(b);
        double sum[2] = {0, 0};
        for (int s = 0; s < 2; s++)
            for (size_t r = 0; st->d.sum[s] && r < m->n_runs[s]; r++) sum[s] += st->d.sum[s][r];
        double added = (m->n_runs[1] ? sum[1] / (double)m->n_runs[1] : 0) -
                       (m->n_runs[0] ? sum[0] / (double)m->n_runs[0] : 0);
        if (added <= 0 || st->st == VPR_DS_UNDEFINED || st->st == VPR_DS_NONE) continue;
        double total = 0;
        for (size_t k = 0; k < st->n_own; k++) total += st->own[k].overlap_us;
        if (total <= 0) continue;
        for (size_t k = 0; k < st->n_own; k++) {
            long f = st->own[k].f;
            if (f < 0 || (size_t)f >= L->n_f) continue;
            struct vpr_lfunc *lf = &L->f[f];
            double share = added * st->own[k].overlap_us / total;
            if (lf->lock_site < 0 || share > lf->lock_site_cost) {
                lf->lock_site = (long)i;
                lf->lock_site_cost = share;
            }
            lf->lock_cost += share;
            if (isnan(lf->lock_r) || st->r < lf->lock_r) lf->lock_r = st->r;
        }
    }
}

/* Holders in order of what they say about the wait: those that cover
 * most of it (at least half the largest overlap) first, and among them the
 * innermost frame (shortest calls: the thread's entry function covers
 * every wait and says nothing); then the rest by overlap. */
static int cmp_holder(const void *a, const void *b, void *ctx)
{
    const struct vpr_lholder *x = a, *y = b;
    double major = *(const double *)ctx;    /* half the largest overlap */
    int mx = x->overlap_us >= major, my = y->overlap_us >= major;
    if (mx != my) return mx ? -1 : 1;
    if (mx && x->mean_dur_us != y->mean_dur_us) return x->mean_dur_us < y->mean_dur_us ? -1 : 1;
    if (x->overlap_us != y->overlap_us) return x->overlap_us > y->overlap_us ? -1 : 1;
    return (x->f > y->f) - (x->f < y->f);
}

/* Where an event ends; a request's work event carries units, not time. */
static uint64_t ev_end(const struct vpr_lev *e)
{
    return e->start + (e->kind == VPF_LAT_REQ_WORK ? 0 : e->dur);
}

/* The functions as long-lived as their threads (vpr_lfunc.cover): per
 * thread of each process, its span from the first event to the last end;
 * a function is that thread's root when one of its calls lasts the span
 * (a function called over and over, however busy, is not) and the thread
 * lives at least half the process's span (a thread a request lives as
 * long as the request: its function's latency is the request's). The runtime's
 * thread-start event names only the start routine; std::thread's _M_run,
 * the program's worker function under it, or main are as long-lived, and
 * their one call a thread is its life, which grows with the run
 * (mdev24731_deadlock_detect: 12 workers of 6.8 s against 3 of 0.32 s
 * ranked `worker` first). */
static void thread_cover(struct vpr_model *m, struct vpr_latency *L)
{
    double share = m->o->whole_run;
    size_t *in[2], *root[2];
    size_t *stamp = vpf_xcalloc(L->n_f ? L->n_f : 1, sizeof *stamp), group = 0;
    uint64_t *longest = vpf_xcalloc(L->n_f ? L->n_f : 1, sizeof *longest);
    for (int s = 0; s < 2; s++) {
        in[s] = vpf_xcalloc(L->n_f ? L->n_f : 1, sizeof *in[s]);
        root[s] = vpf_xcalloc(L->n_f ? L->n_f : 1, sizeof *root[s]);
    }
    for (size_t pi = 0; pi < L->n_procs; pi++) {
        const struct vpr_lproc *lp = &L->procs[pi];
        int s = lp->side;
        uint64_t plo = UINT64_MAX, phi = 0;         /* the process's span */
        for (size_t k = 0; k < lp->n; k++) {
            if (lp->ev[k].start < plo) plo = lp->ev[k].start;
            if (ev_end(&lp->ev[k]) > phi) phi = ev_end(&lp->ev[k]);
        }
        for (size_t i = 0, j; i < lp->n; i = j) {
            /* the thread's span, and each function's longest call in it */
            uint64_t lo = UINT64_MAX, hi = 0;
            group++;
            for (j = i; j < lp->n && lp->ev[j].tid == lp->ev[i].tid; j++) {
                const struct vpr_lev *e = &lp->ev[j];
                if (e->start < lo) lo = e->start;
                if (ev_end(e) > hi) hi = ev_end(e);
                if (e->kind != VPF_LAT_CALL || e->f < 0 || (size_t)e->f >= L->n_f) continue;
                if (stamp[e->f] != group) {
                    stamp[e->f] = group;
                    longest[e->f] = 0;
                    in[s][e->f]++;
                }
                if (e->dur > longest[e->f]) longest[e->f] = e->dur;
            }
            double sp = hi > lo ? (double)(hi - lo) : 0;
            /* a thread of the run, not one a request (its life is the
             * request's latency): half the process's span at least */
            int long_lived = phi > plo && 2 * sp >= (double)(phi - plo);
            for (size_t k = i; k < j; k++) {
                const struct vpr_lev *e = &lp->ev[k];
                if (e->kind != VPF_LAT_CALL || e->f < 0 || (size_t)e->f >= L->n_f) continue;
                if (stamp[e->f] == group && long_lived && (double)longest[e->f] >= share * sp) {
                    root[s][e->f]++;
                    stamp[e->f] = 0;                /* once a thread */
                }
            }
        }
    }
    for (size_t f = 0; f < L->n_f; f++) {
        struct vpr_lfunc *lf = &L->f[f];
        for (int s = 0; s < 2; s++)
            lf->cover[s] = in[s][f] ? (double)root[s][f] / (double)in[s][f] : 0;
        lf->thread_root = share > 0 && lf->cover[0] >= share && lf->cover[1] >= share;
    }
    for (int s = 0; s < 2; s++) { free(in[s]); free(root[s]); }
    free(stamp);
    free(longest);
}

void vpr_lat_analyse(struct vpr_model *m)
{
    struct vpr_latency *L = m->lat;
    if (!L) return;
    L->n_f = m->n_f;
    L->f = vpf_xcalloc(m->n_f ? m->n_f : 1, sizeof *L->f);
    thread_cover(m, L);
    for (size_t pi = 0; pi < L->n_procs; pi++) {
        const struct vpr_lproc *lp = &L->procs[pi];
        int s = lp->side;
        size_t nr = m->n_runs[s];
        /* A thread's start routine lives as long as the thread: its call
         * is the thread's lifetime, which grows with the run, not a call
         * that got slower. Events are sorted by (thread, start), so the
         * thread-start event comes just before that call. */
        uint32_t root_tid = 0;
        long root_f = -1;
        for (size_t i = 0; i < lp->n; i++) {
            const struct vpr_lev *e = &lp->ev[i];
            double us = (double)e->dur / 1e3;
            if (e->kind == VPF_LAT_THREAD_START) {
                root_tid = e->tid;
                root_f = e->f;
                continue;
            }
            if (e->kind == VPF_LAT_CALL && e->tid == root_tid && e->f == root_f) {
                root_f = -1;
                continue;
            }
            if (e->kind == VPF_LAT_CALL && e->f >= 0 && (size_t)e->f < L->n_f) {
                if (L->f[e->f].thread_root) continue;       /* as the start routine */
                dist_add(&L->f[e->f].d, s, lp->run, nr, us);
                struct vpr_lsite *st = site_get(L, VPF_LAT_CALL, e->f, e->site_f, e->site);
                dist_add(&st->d, s, lp->run, nr, us);
            } else if (e->kind == VPF_LAT_MUTEX_WAIT) {
                struct vpr_lsite *st = site_get(L, VPF_LAT_MUTEX_WAIT, e->f, e->f, e->site);
                dist_add(&st->d, s, lp->run, nr, us);
                if (e->other && s == VPR_BUGGY) {
                    find_holders(lp, e, st);
                    find_owners(lp, e, st);
                }
            }
        }
    }
    for (size_t i = 0; i < L->n_sites; i++) {
        struct vpr_lsite *st = &L->sites[i];
        for (int s = 0; s < 2; s++)
            if (st->d.n[s]) qsort(st->d.v[s], st->d.n[s], sizeof(double), cmp_dbl);
        for (size_t k = 0; k < st->n_hold; k++) st->hold[k].mean_dur_us /= (double)st->hold[k].n;
        double major = 0;
        for (size_t k = 0; k < st->n_hold; k++)
            if (st->hold[k].overlap_us > major) major = st->hold[k].overlap_us;
        major /= 2;
        if (st->n_hold > 1) qsort_r(st->hold, st->n_hold, sizeof *st->hold, cmp_holder, &major);
        if (st->n_own > 1) qsort(st->own, st->n_own, sizeof *st->own, cmp_owner);
    }
    for (size_t i = 0; i < L->n_f; i++) {
        struct vpr_lfunc *lf = &L->f[i];
        for (int s = 0; s < 2; s++) {
            double sum = 0;
            for (size_t r = 0; lf->d.sum[s] && r < m->n_runs[s]; r++) sum += lf->d.sum[s][r];
            lf->cost[s] = m->n_runs[s] ? sum / (double)m->n_runs[s] : 0;
        }
        for (int s = 0; s < 2; s++)
            if (lf->d.n[s]) qsort(lf->d.v[s], lf->d.n[s], sizeof(double), cmp_dbl);
        size_t nn, nb;
        double *a = bounded(lf->d.v[0], lf->d.n[0], m->o->reservoir, &nn);
        double *b = bounded(lf->d.v[1], lf->d.n[1], m->o->reservoir, &nb);
        vpr_dim_discount(m->o, a, nn, b, nb, &lf->st, &lf->r, &lf->p, &lf->stat, &lf->h);
        free(a);
        free(b);
    }
    charge_owners(m);
}

void vpr_lat_free(struct vpr_latency *L)
{
    if (!L) return;
    for (size_t i = 0; i < L->n_procs; i++) free(L->procs[i].ev);
    free(L->procs);
    for (size_t i = 0; i < L->n_f; i++) dist_free(&L->f[i].d);
    free(L->f);
    for (size_t i = 0; i < L->n_sites; i++) {
        dist_free(&L->sites[i].d);
        free(L->sites[i].hold);
        free(L->sites[i].own);
    }
    free(L->sites);
    free(L->sh);
    free(L);
}

static void req_push(struct vpr_lreq **out, size_t *n, size_t *cap, struct vpr_lreq r)
{
    *out = vpf_grow(*out, cap, *n + 1, sizeof **out);
    (*out)[(*n)++] = r;
}

size_t vpr_lat_requests(const struct vpr_lproc *lp, int all, uint64_t id,
                        struct vpr_lreq **out)
{
    size_t n = 0, cap = 0;
    *out = NULL;
    /* open stays of the current thread: an event loop serves many at once */
    struct vpr_lreq *open = NULL;
    size_t n_open = 0, cap_open = 0;
    uint64_t last_end = 0;
    for (size_t i = 0; i <= lp->n; i++) {
        const struct vpr_lev *e = i < lp->n ? &lp->ev[i] : NULL;
        if (n_open && (!e || e->tid != open[0].tid)) {    /* thread ends */
            for (size_t k = 0; k < n_open; k++) {
                open[k].end = last_end > open[k].start ? last_end : open[k].start;
                open[k].open = 1;
                req_push(out, &n, &cap, open[k]);
            }
            n_open = 0;
        }
        if (!e) break;
        if (i == 0 || e->tid != lp->ev[i - 1].tid) last_end = 0;
        if (e->start + e->dur > last_end) last_end = e->start + e->dur;
        if (e->kind < VPF_LAT_REQ_START || e->kind > VPF_LAT_REQ_END) continue;
        if (!all && e->obj != id) continue;
        size_t k = 0;
        while (k < n_open && open[k].id != e->obj) k++;
        if (e->kind == VPF_LAT_REQ_START) {
            if (k == n_open) {
                open = vpf_grow(open, &cap_open, n_open + 1, sizeof *open);
                open[n_open++] = (struct vpr_lreq){e->obj, e->start, 0, e->tid, 0};
            }
            continue;
        }
        if (k == n_open) continue;                      /* block/end without start */
        open[k].end = e->start;
        req_push(out, &n, &cap, open[k]);
        open[k] = open[--n_open];
    }
    free(open);
    return n;
}
