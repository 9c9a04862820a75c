/* waits_samples.c - the PC samples of values.<id> per thread, for the wait
 * analysis: each thread's CPU time (ticks x timer periods / hz, as the
 * cost ranking counts them) and, at a given time, what the thread was
 * running - the function of the interrupted PC (depth-0 records). Several
 * records of one tick (one per variable) count once. */
#include "vprof_xalloc.h"
#include "waits.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_smp(const void *a, const void *b)
{
    const struct vpr_wsample *x = a, *y = b;
    return (x->t > y->t) - (x->t < y->t);
}

int vpr_wait_samples(struct vpr_model *m, struct vpr_wtimeline *tl,
                     const struct vpr_proc *p, char *err, size_t errlen)
{
    if (!p->values_path) return 0;
    struct vpf_recfile_r rf;
    vpf_err e;
    if (vpf_values_open(p->values_path, &rf, &e) < 0) {
        snprintf(err, errlen, "%s", e.msg);
        return -1;
    }
    unsigned hz = p->layout.hz ? p->layout.hz : vpf_values_hdr(&rf)->hz;
    uint64_t bias = m->sym.is_pie ? p->layout.load_bias : 0;
    size_t *cap = vpf_xcalloc(tl->n_v, sizeof *cap);
    uint64_t *ticks = vpf_xcalloc(tl->n_v, sizeof *ticks);
    uint16_t *last_tick = vpf_xcalloc(tl->n_v, sizeof *last_tick);
    uint64_t *last_ns = vpf_xcalloc(tl->n_v, sizeof *last_ns);
    tl->smp = vpf_xcalloc(tl->n_v, sizeof *tl->smp);
    tl->n_smp = vpf_xcalloc(tl->n_v, sizeof *tl->n_smp);
    uint32_t cache_tid = 0, cache_v = UINT32_MAX;
    uint64_t lo = 1, hi = 0;
    long lo_f = -1;
    struct vpf_values_iter it;
    vpf_values_iter_init(&it, &rf);
    for (const struct vpf_value_rec *r; (r = vpf_values_next(&it, NULL));) {
        if (r->depth != 0) continue;
        if (r->tid != cache_tid || cache_v == UINT32_MAX) {
            cache_tid = r->tid;
            cache_v = UINT32_MAX;
            for (size_t v = 0; v < tl->n_v; v++)
                if (tl->v[v].kind == VPR_WV_THREAD && tl->v[v].tid == r->tid) cache_v = (uint32_t)v;
        }
        if (cache_v == UINT32_MAX) continue;     /* a thread without latency events */
        uint32_t v = cache_v;
        if (tl->n_smp[v] && last_tick[v] == r->tick && last_ns[v] == r->time_ns) continue;
        last_tick[v] = r->tick;
        last_ns[v] = r->time_ns;
        ticks[v] += vpf_rec_weight(r->flags);
        long f;
        uint64_t link;
        if (r->pc >= lo && r->pc < hi) f = lo_f;
        else {
            f = vpr_lat_func_at(m, &p->layout, bias, r->pc, &link);
            if (f >= 0 && (size_t)f < m->n_f && m->f[f].sym >= 0) {
                const struct vpr_sym *s = &m->sym.syms[m->f[f].sym];
                lo = s->lo + bias;
                hi = s->hi + bias;
                lo_f = f;
            }
        }
        tl->smp[v] = vpf_grow(tl->smp[v], &cap[v], tl->n_smp[v] + 1, sizeof *tl->smp[v]);
        tl->smp[v][tl->n_smp[v]++] = (struct vpr_wsample){r->time_ns, f};
    }
    for (size_t v = 0; v < tl->n_v; v++) {
        if (tl->v[v].kind != VPR_WV_THREAD) continue;
        tl->v[v].cpu_s = hz ? (double)ticks[v] / hz : -1;
        if (tl->n_smp[v]) qsort(tl->smp[v], tl->n_smp[v], sizeof *tl->smp[v], cmp_smp);
    }
    free(cap);
    free(ticks);
    free(last_tick);
    free(last_ns);
    vpf_values_iter_free(&it);
    vpf_recfile_close_r(&rf);
    return 0;
}
