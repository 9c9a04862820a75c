/* variance_work.c - --work-var: a request's work read from a variable the
 * profiling ticks sampled (values.<id>), for programs that do not call
 * vprof_req_work (VProfiler §3.2.1: variance that grows with the work is
 * inherent; docs/vprof-report.md "Variance").
 *
 * The variable is named NAME (every variable of that name: a parameter and
 * the caller's argument that feeds it carry the same value) or FUNC:NAME.
 * An interval's work is the largest value of it sampled on one of its
 * threads while the interval stayed there: the ticks see the variable only
 * when they interrupt code where it is live, so an interval without such a
 * tick has no work measure and counts as work 0 in R², like a request
 * without vprof_req_work (mostly intervals shorter than a tick period: the
 * text and JSON say in how many intervals it was sampled). The largest value, not the last: a loop counter sampled
 * mid-loop understates the work, the size it runs to does not, and both are
 * at most the size. Negative values are no amount of work and are skipped. */
#include "vprof_xalloc.h"
#include "variance.h"

#include <stdlib.h>
#include <string.h>

static int cmp_wsmp(const void *a, const void *b)
{
    const struct vpr_wsmp *x = a, *y = b;
    if (x->tid != y->tid) return x->tid < y->tid ? -1 : 1;
    return (x->t > y->t) - (x->t < y->t);
}

/* Whether layout variable lv is the one --work-var names ([FUNC:]NAME). */
static int matches(const struct vpf_layout_var *lv, const char *spec)
{
    const char *colon = strchr(spec, ':');
    if (!colon) return lv->name && !strcmp(lv->name, spec);
    size_t fl = (size_t)(colon - spec);
    return lv->name && lv->function && !strcmp(lv->name, colon + 1) &&
           strlen(lv->function) == fl && !strncmp(lv->function, spec, fl);
}

/* The sample's value as a number; 0 when it is none (an address). */
static int value_of(const struct vpf_layout_var *lv, uint64_t bits, double *x)
{
    int is_float = lv->kind == VPF_KIND_FLOAT ||
                   (lv->kind == VPF_KIND_PTR_BASIC && lv->type &&
                    (strstr(lv->type, "double") || strstr(lv->type, "float")));
    if (lv->kind == VPF_KIND_PTR) return 0;
    if (is_float) { memcpy(x, &bits, sizeof *x); return *x == *x; }
    *x = lv->kind == VPF_KIND_UINT || lv->kind == VPF_KIND_BOOL ? (double)bits
                                                                 : (double)(int64_t)bits;
    return 1;
}

/* The process of run directory label/pid on side s. */
static const struct vpr_proc *proc_of(const struct vpr_side *sd, const struct vpr_lproc *lp)
{
    for (size_t r = 0; r < sd->n; r++)
        for (size_t k = 0; k < sd->runs[r].n; k++)
            if (sd->runs[r].label == lp->label && sd->runs[r].procs[k].layout.pid == lp->pid)
                return &sd->runs[r].procs[k];
    return NULL;
}

int vpr_vwork_load(struct vpr_variance *v, struct vpr_side sides[2], char *err, size_t errlen)
{
    const struct vpr_latency *L = v->m->lat;
    const char *spec = v->o->work_var;
    v->work = vpf_xcalloc(L->n_procs ? L->n_procs : 1, sizeof *v->work);
    size_t vars = 0, pointers = 0;
    for (size_t p = 0; p < L->n_procs; p++) {
        const struct vpr_lproc *lp = &L->procs[p];
        const struct vpr_proc *pr = proc_of(&sides[lp->side], lp);
        if (!pr || !pr->values_path) continue;
        const struct vpf_layout *lay = &pr->layout;
        uint32_t max_id = 0;
        for (size_t i = 0; i < lay->n_vars; i++)
            if (lay->vars[i].id + 1 > max_id) max_id = lay->vars[i].id + 1;
        /* variable id -> its layout entry + 1, for the matching ones */
        size_t *want = vpf_xcalloc(max_id ? max_id : 1, sizeof *want);
        size_t n_want = 0;
        for (size_t i = 0; i < lay->n_vars; i++)
            if (matches(&lay->vars[i], spec)) {
                if (lay->vars[i].kind == VPF_KIND_PTR) { pointers++; continue; }
                want[lay->vars[i].id] = i + 1;
                n_want++;
            }
        vars += n_want;
        if (!n_want) { free(want); continue; }
        struct vpf_recfile_r rf;
        vpf_err e;
        if (vpf_values_open(pr->values_path, &rf, &e) < 0) {
            snprintf(err, errlen, "%s", e.msg);
            free(want);
            return -1;
        }
        struct vpr_vwork *w = &v->work[p];
        struct vpf_values_iter it;
        vpf_values_iter_init(&it, &rf);
        for (const struct vpf_value_rec *r; (r = vpf_values_next(&it, NULL));) {
            double x;
            if (r->var >= max_id || !want[r->var]) continue;
            if (!value_of(&lay->vars[want[r->var] - 1], r->value, &x) || x < 0) continue;
            w->s = vpf_grow(w->s, &w->cap, w->n + 1, sizeof *w->s);
            w->s[w->n++] = (struct vpr_wsmp){r->tid, r->time_ns, x};
        }
        vpf_values_iter_free(&it);
        vpf_recfile_close_r(&rf);
        free(want);
        if (w->n) qsort(w->s, w->n, sizeof *w->s, cmp_wsmp);
    }
    if (!vars) {
        snprintf(err, errlen, "--work-var: no sampled variable %s%s in the runs of %s (the "
                 "layout.<id> files list the sampled variables; FUNC:NAME picks one function's)",
                 spec, pointers ? " that is not a pointer" : "", v->m->exe);
        return -1;
    }
    return 0;
}

double vpr_vwork_max(const struct vpr_vwork *w, uint32_t tid, uint64_t a, uint64_t b)
{
    size_t lo = 0, hi = w->n;
    while (lo < hi) {           /* first sample at or after (tid, a) */
        size_t mid = (lo + hi) / 2;
        const struct vpr_wsmp *s = &w->s[mid];
        if (s->tid < tid || (s->tid == tid && s->t < a)) lo = mid + 1; else hi = mid;
    }
    double best = -1;
    for (; lo < w->n && w->s[lo].tid == tid && w->s[lo].t <= b; lo++)
        if (w->s[lo].x > best) best = w->s[lo].x;
    return best;
}
