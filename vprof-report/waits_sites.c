/* waits_sites.c - what an edge of the wait-for graph is made of (paper
 * 003 §4.2, "the call stacks attached to each edge"): the call sites where
 * the waiters waited, the call sites where the wakers woke them (unlock,
 * signal, post, write; a disk's idle time: the call that issued the next
 * request), and what the waker was running meanwhile - the functions of
 * its PC samples during the waits, or, without samples, its calls (stack
 * scanner call events) that overlapped the waits, innermost first. */
#include "vprof_xalloc.h"
#include "waits.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

const char *vpr_wait_sysname(unsigned nr, char *buf, size_t len)
{
    static const struct { unsigned nr; const char *name; } t[] = {
        {SYS_read, "read"}, {SYS_write, "write"}, {SYS_pread64, "pread"},
        {SYS_pwrite64, "pwrite"}, {SYS_accept, "accept"}, {SYS_accept4, "accept4"},
        {SYS_connect, "connect"}, {SYS_recvfrom, "recv"}, {SYS_fsync, "fsync"},
        {SYS_fdatasync, "fdatasync"}, {SYS_poll, "poll"}, {SYS_select, "select"},
        {SYS_epoll_wait, "epoll_wait"}, {SYS_nanosleep, "nanosleep"},
        {SYS_clock_nanosleep, "clock_nanosleep"},
    };
    for (size_t i = 0; i < sizeof t / sizeof *t; i++)
        if (t[i].nr == nr) return t[i].name;
    snprintf(buf, len, "syscall %u", nr);
    return buf;
}

static void site_add(struct vpr_wsite **arr, size_t *n, size_t *cap, int kind, long f,
                     uint64_t site, const char *name, uint16_t nr, double w)
{
    for (size_t i = 0; i < *n; i++) {
        struct vpr_wsite *s = &(*arr)[i];
        if (s->kind == kind && s->f == f && s->site == site && s->nr == nr &&
            (s->name == name || (s->name && name && !strcmp(s->name, name)))) {
            s->w += w;
            s->n++;
            return;
        }
    }
    *arr = vpf_grow(*arr, cap, *n + 1, sizeof **arr);
    (*arr)[(*n)++] = (struct vpr_wsite){kind, f, site, name, nr, w, 1};
}

static int cmp_site(const void *a, const void *b)
{
    const struct vpr_wsite *x = a, *y = b;
    if (x->w != y->w) return x->w > y->w ? -1 : 1;
    return (x->f > y->f) - (x->f < y->f);
}

static void run_add_k(struct vpr_wrun **arr, size_t *n, size_t *cap, long f, double x,
                      int kind, uint16_t nr)
{
    for (size_t i = 0; i < *n; i++)
        if ((*arr)[i].f == f && (*arr)[i].wait_kind == kind && (*arr)[i].nr == nr) {
            (*arr)[i].share += x;
            return;
        }
    *arr = vpf_grow(*arr, cap, *n + 1, sizeof **arr);
    (*arr)[(*n)++] = (struct vpr_wrun){f, x, kind, nr};
}

static void run_add(struct vpr_wdetail *d, long f, double x)
{
    run_add_k(&d->run, &d->n_run, &d->cap_run, f, x, 0, 0);
}

/* The waker's own waits during [s, e]: added to w (time per wait site);
 * returns their total. */
static double waker_waits(const struct vpr_wtimeline *tl, uint32_t b, uint64_t s, uint64_t e,
                          struct vpr_wrun **w, size_t *nw, size_t *cw)
{
    size_t lo = tl->first[b], hi = tl->first[b + 1];
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (tl->seg[mid].end <= s) lo = mid + 1; else hi = mid;
    }
    double tot = 0;
    for (size_t k = lo; k < tl->first[b + 1] && tl->seg[k].start < e; k++) {
        const struct vpr_wseg *x = &tl->seg[k];
        uint64_t a = x->start > s ? x->start : s, z = x->wake < e ? x->wake : e;
        if (z > a) {
            run_add_k(w, nw, cw, x->site_f, (double)(z - a), x->kind ? x->kind : 1, x->nr);
            tot += (double)(z - a);
        }
        /* woken but not yet running: waiting for a CPU */
        a = x->wake > s ? x->wake : s;
        z = x->end < e ? x->end : e;
        if (z > a) {
            run_add_k(w, nw, cw, -1, (double)(z - a), VPR_WRUN_RUNNABLE, 0);
            tot += (double)(z - a);
        }
    }
    return tot;
}

static int cmp_run(const void *a, const void *b)
{
    const struct vpr_wrun *x = a, *y = b;
    if (x->share != y->share) return x->share > y->share ? -1 : 1;
    return (x->f > y->f) - (x->f < y->f);
}

/* Samples of waker vertex v in [s, e]. */
static size_t run_samples(const struct vpr_wtimeline *tl, uint32_t v, uint64_t s, uint64_t e,
                          struct vpr_wdetail *d)
{
    if (!tl->smp || !tl->n_smp[v]) return 0;
    const struct vpr_wsample *x = tl->smp[v];
    size_t lo = 0, hi = tl->n_smp[v], n = 0;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (x[mid].t < s) lo = mid + 1; else hi = mid;
    }
    for (; lo < tl->n_smp[v] && x[lo].t <= e; lo++, n++) run_add(d, x[lo].f, 1);
    return n;
}

enum { CALL_LOOKBACK = 4096 };

/* The waker's innermost call events during [s, e]: each event's overlap,
 * kept only for calls that contain no other overlapping call (what the
 * thread was doing, not its outer frames). */
static size_t run_calls(const struct vpr_wtimeline *tl, uint32_t v, uint64_t s, uint64_t e,
                        struct vpr_wdetail *d)
{
    const struct vpr_lproc *lp = tl->lp;
    if (!lp || tl->v[v].kind != VPR_WV_THREAD) return 0;
    uint32_t tid = tl->v[v].tid;
    size_t i0 = vpr_lat_lower_bound(lp, tid, 0), end = vpr_lat_lower_bound(lp, tid, e);
    size_t from = end > i0 + CALL_LOOKBACK ? end - CALL_LOOKBACK : i0, n = 0;
    for (size_t k = from; k < end; k++) {
        const struct vpr_lev *c = &lp->ev[k];
        if (c->kind != VPF_LAT_CALL || c->start + c->dur <= s) continue;
        int inner = 0;
        for (size_t j = k + 1; j < end && lp->ev[j].start < c->start + c->dur; j++)
            if (lp->ev[j].kind == VPF_LAT_CALL && lp->ev[j].start + lp->ev[j].dur > s) {
                inner = 1;
                break;
            }
        if (inner) continue;
        uint64_t a = c->start > s ? c->start : s, z = c->start + c->dur < e ? c->start + c->dur : e;
        if (z > a) { run_add(d, c->f, (double)(z - a)); n++; }
    }
    return n;
}

struct vpr_wdetail *vpr_wait_details(const struct vpr_wgraph *g)
{
    const struct vpr_wtimeline *tl = g->tl;
    struct vpr_wdetail *d = vpf_xcalloc(g->n_e, sizeof *d);
    for (size_t i = 0; i < tl->n_seg; i++) {
        const struct vpr_wseg *s = &tl->seg[i];
        long ei = vpr_wait_edge(g, g->group[s->v], g->group[s->waker]);
        if (ei < 0) continue;
        struct vpr_wdetail *x = &d[ei];
        site_add(&x->wait, &x->n_wait, &x->cap_wait, s->kind, s->site_f, s->site, s->site_name,
                 s->kind == VPR_WS_IDLE ? 0 : s->nr, s->w);
        if (s->wsite || s->wsite_name)
            site_add(&x->wake, &x->n_wake, &x->cap_wake, s->kind == VPR_WS_IDLE ? VPR_WS_IO : s->kind,
                     s->wsite_f, s->wsite, s->wsite_name, s->kind == VPR_WS_IDLE ? s->nr : 0,
                     s->w);
    }
    /* what the waker did: its own waits by site, and the rest of the time
     * split over the functions of its samples if the edge's wakers have
     * any, else of its innermost calls */
    for (size_t ei = 0; ei < g->n_e; ei++) {
        struct vpr_wdetail *x = &d[ei];
        struct vpr_wrun *w = NULL;
        size_t nw = 0, cw = 0;
        double len = 0, waited = 0;
        for (size_t i = 0; i < tl->n_seg; i++) {
            const struct vpr_wseg *s = &tl->seg[i];
            if (g->group[s->v] != g->e[ei].a || g->group[s->waker] != g->e[ei].b ||
                tl->v[s->waker].kind != VPR_WV_THREAD)
                continue;
            len += (double)(s->wake - s->start);
            waited += waker_waits(tl, s->waker, s->start, s->wake, &w, &nw, &cw);
        }
        for (int src = VPR_WRUN_SAMPLES; src <= VPR_WRUN_CALLS && !x->n_run; src++) {
            size_t got = 0;
            for (size_t i = 0; i < tl->n_seg; i++) {
                const struct vpr_wseg *s = &tl->seg[i];
                if (g->group[s->v] != g->e[ei].a || g->group[s->waker] != g->e[ei].b) continue;
                got += src == VPR_WRUN_SAMPLES ? run_samples(tl, s->waker, s->start, s->wake, x)
                                               : run_calls(tl, s->waker, s->start, s->wake, x);
            }
            if (x->n_run) { x->run_src = src; x->run_n = got; }
        }
        double tot = 0, running = len > waited ? (len - waited) / len : 0;
        for (size_t k = 0; k < x->n_run; k++) tot += x->run[k].share;
        for (size_t k = 0; k < x->n_run && tot > 0; k++)
            x->run[k].share = x->run[k].share / tot * (len > 0 ? running : 1);
        for (size_t k = 0; k < nw && len > 0; k++)
            run_add_k(&x->run, &x->n_run, &x->cap_run, w[k].f, w[k].share / len, w[k].wait_kind, w[k].nr);
        free(w);
        if (x->n_run > 1) qsort(x->run, x->n_run, sizeof *x->run, cmp_run);
        if (x->n_wait > 1) qsort(x->wait, x->n_wait, sizeof *x->wait, cmp_site);
        if (x->n_wake > 1) qsort(x->wake, x->n_wake, sizeof *x->wake, cmp_site);
    }
    return d;
}

void vpr_wait_details_free(struct vpr_wdetail *d, size_t n)
{
    for (size_t i = 0; i < n; i++) { free(d[i].wait); free(d[i].wake); free(d[i].run); }
    free(d);
}
