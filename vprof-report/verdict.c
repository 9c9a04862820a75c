/* verdict.c - the short verdict of a ranked function (verdict.h). */
#include "vprof_xalloc.h"
#include "verdict.h"
#include "ctx_rank.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "demangle.h"
#include "discount.h"
#include "latency.h"
#include "output.h"
#include "pattern.h"
#include "source.h"
#include "writers.h"

const char *vpr_evidence_name(int e)
{
    static const char *n[] = {"none", "thin", "moderate", "strong"};
    return e >= 0 && e <= VPR_EV_STRONG ? n[e] : "?";
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Median of a side's kept samples of one dimension (of |x| with mag). */
static double median_of2(const struct vpr_reservoir *r, int mag)
{
    if (!r->n) return NAN;
    double *c = vpf_xcalloc(r->n, sizeof *c);
    for (size_t i = 0; i < r->n; i++) c[i] = mag ? fabs(r->v[i]) : r->v[i];
    qsort(c, r->n, sizeof *c, cmp_d);
    double m = c[r->n / 2];
    free(c);
    return m;
}

static double median_of(const struct vpr_reservoir *r) { return median_of2(r, 0); }

/* "always 49152", "0..6160, median 1207" or "none" */
static void dist_str(double lo, double hi, double med, char *buf, size_t len)
{
    if (lo > hi) snprintf(buf, len, "no samples");
    else if (lo == hi) snprintf(buf, len, "always %.6g", lo);
    else snprintf(buf, len, "%.6g..%.6g, median %.6g", lo, hi, med);
}

void vpr_values_line(const struct vpr_var *v, int d, char *buf, size_t len)
{
    char a[96], b[96], outs[64];
    dist_str(v->lo[d], v->hi[d], median_of(&v->res[VPR_NORMAL][d]), a, sizeof a);
    dist_str(v->blo[d], v->bhi[d], median_of(&v->res[VPR_BUGGY][d]), b, sizeof b);
    const char *unit = d == VPR_DIM_DELTA ? " per tick" : d == VPR_DIM_PROC ? " ticks unchanged" : "";
    const char *ua = v->lo[d] > v->hi[d] ? "" : unit, *ub = v->blo[d] > v->bhi[d] ? "" : unit;
    unsigned long long nn = v->n[VPR_NORMAL][d], nb = v->n[VPR_BUGGY][d];
    unsigned long long out = v->n_outside[d];
    if (!nb) snprintf(outs, sizeof outs, "no samples");
    else if (out == nb) snprintf(outs, sizeof outs, "all outside the normal range");
    else if (!out) snprintf(outs, sizeof outs, "none outside the normal range");
    else snprintf(outs, sizeof outs, "%.0f%% outside the normal range",
                  100.0 * (double)out / (double)nb);
    snprintf(buf, len, "normal: %s%s (%llu samples); buggy: %s%s (%llu samples, %s)",
             a, ua, nn, b, ub, nb, outs);
}

static const char *role(uint16_t tags)
{
    if (tags & VPF_TAG_LOOP) return "a loop variable";
    if (tags & VPF_TAG_COND) return "a condition variable";
    if (tags & VPF_TAG_ARGS) return "a call argument";
    if (tags & VPF_TAG_GLOBAL) return "a global";
    return "a variable";
}

static void why_variable(const struct vpr_model *m, const struct vpr_func *f,
                         const struct vpr_var *v, char *buf, size_t len)
{
    const char *p = f->pattern ? f->pattern : VPR_PAT_NONE;
    int an = f->dim >= 0 && (v->st[f->dim] == VPR_DS_DIFFERS || v->st[f->dim] == VPR_DS_NO_NORMAL);
    int by_rate = !(v->tags & (VPF_TAG_LOOP | VPF_TAG_COND)) && f->arc.to >= 0 &&
                  (!strcmp(p, VPR_PAT_MISSING) || !strcmp(p, VPR_PAT_WRONG));
    if (by_rate)        /* pattern.c: untagged values that are no larger data */
        snprintf(buf, len, "%s, %s, takes other values than in the normal run but no larger "
                 "ones, and it calls %s %s often per call: %s", v->name, role(v->tags),
                 vpr_dm(m->f[f->arc.to].name), f->arc.dir > 0 ? "more" : "less",
                 f->arc.dir > 0 ? "work done that a constraint should limit (missing constraint)"
                                : "a branch is taken otherwise (wrong constraint)");
    else if (!strcmp(p, VPR_PAT_SCALABILITY) && !(v->tags & VPF_TAG_LOOP) &&
             (v->tags & VPF_TAG_COND) && vpr_loop_grew(m, f) >= 0)
        /* pattern.c: the paper's rule 2 before rule 3 */
        snprintf(buf, len, "%s, %s, takes other values than in the normal run, and %s, a loop "
                 "variable of it, reaches larger values than the normal run's: the loop runs "
                 "over more data (scalability: rule 2 before rule 3)", v->name, role(v->tags),
                 m->v[vpr_loop_grew(m, f)].name);
    else if (!strcmp(p, VPR_PAT_MISSING))
        snprintf(buf, len, "%s, %s, stays unchanged longer than in the normal run: work is "
                 "done that a constraint should skip (missing constraint)", v->name, role(v->tags));
    else if (!strcmp(p, VPR_PAT_WRONG))
        snprintf(buf, len, "%s, %s, takes other values than in the normal run: a condition "
                 "decides differently (wrong constraint)", v->name, role(v->tags));
    else if (!strcmp(p, VPR_PAT_SCALABILITY) && an && (v->tags & VPF_TAG_LOOP)) {
        /* say which way it moved: the test only says the shapes differ */
        double mn = median_of2(&v->res[VPR_NORMAL][f->dim], 1),
               mb = median_of2(&v->res[VPR_BUGGY][f->dim], 1);
        int more = !(mb < mn);
        if (f->dim == VPR_DIM_DELTA)
            snprintf(buf, len, "%s, %s, advances %s per tick than in the normal run: %s "
                     "(scalability)", v->name, role(v->tags), more ? "further" : "less",
                     more ? "the loop handles more data" :
                            "each step costs more, or the loop restarts more often");
        else
            snprintf(buf, len, "%s, %s, takes %s values than in the normal run: %s "
                     "(scalability)", v->name, role(v->tags), more ? "larger" : "smaller",
                     more ? "the loop handles more data" :
                            "the loop runs more often over less data");
    }
    else if (!strcmp(p, VPR_PAT_SCALABILITY))
        snprintf(buf, len, "costly with %s: the same work on more data (scalability)",
                 !an ? "values like the normal run's" :
                 2 * v->n_outside[f->dim] >= v->n[VPR_BUGGY][f->dim]
                     ? "values seen only in the buggy run"
                     : "values distributed unlike the normal run's");
    else if (an)
        snprintf(buf, len, "%s, %s, is anomalous (%s); no loop or condition tag to name a "
                 "pattern", v->name, role(v->tags), vpr_dim_name[f->dim]);
    else
        snprintf(buf, len, "its values look like the normal run's (discount %.2f)", f->r);
    (void)m;
}

/* "calls resize 0 times per call (normal 1 in 5882, 34 expected)" */
static void calls_line(const struct vpr_model *m, const struct vpr_func *f, char *buf, size_t len)
{
    const struct vpr_arcinfo *a = &f->arc;
    if (a->to < 0) { buf[0] = 0; return; }
    double rn = a->count[0] / a->per[0], rb = a->count[1] / a->per[1];
    snprintf(buf, len, "calls %s %.4g times per call in the buggy runs (%.0f in %.0f calls), "
             "%.4g in the normal runs (%.0f in %.0f): %.0f expected %s, p %.2g",
             vpr_dm(m->f[a->to].name), rb, a->count[1], a->per[1], rn, a->count[0],
             a->per[0], a->expected,
             a->rare ? "for the workload's growth and its other calls' growth" : "at the normal rate",
             a->p);
    if (a->sibling) {
        size_t k = strlen(buf);
        snprintf(buf + k, len - k, " (a sibling call: gmon, and gprof's call graph, count "
                 "these calls as its callers')");
    }
    const struct vpf_schema_from *st = f->state;
    if (st) {
        size_t k = strlen(buf);
        const char *fb = strrchr(st->file, '/');
        const char *callee = m->f[a->to].name;
        k += (size_t)snprintf(buf + k, len - k, "; it calls %s (%s:%u) when ",
                              vpr_dm(callee), fb ? fb + 1 : st->file, st->line);
        /* each state the deciding branches read (an `||` chain, a count
         * and its limit), then each one's writers */
        const struct vpf_schema_from *sts[16];
        size_t total = vpr_call_states(m, f, callee, sts, 16);
        for (size_t s = 0; s < total && k < len; s++)
            k += (size_t)snprintf(buf + k, len - k, "%s%s",
                                  s == 0 ? "" : s + 1 == total ? " or " : ", ", sts[s]->callee);
        if (k < len) k += (size_t)snprintf(buf + k, len - k, total > 1 ? " say so" : " says so");
        for (size_t s = 0, nth = 0; s < total && k < len; s++) {
            struct vpr_writer *w;
            long n = vpr_writers_of_state(m, sts[s]->callee, &w);
            for (long i = 0, shown = 0; i < n && k < len; i++) {
                int dup = 0;
                for (long j = 0; j < i; j++) dup |= !strcmp(w[j].function, w[i].function);
                if (dup) continue;
                if (shown == 4) { k += (size_t)snprintf(buf + k, len - k, ", ..."); break; }
                const char *wb = strrchr(w[i].file, '/');
                if (!shown && total == 1)
                    k += (size_t)snprintf(buf + k, len - k, ": written by ");
                else if (!shown)
                    k += (size_t)snprintf(buf + k, len - k, nth++ ? "; %s by " : ": %s written by ",
                                          sts[s]->callee);
                else
                    k += (size_t)snprintf(buf + k, len - k, ", ");
                if (k < len)
                    k += (size_t)snprintf(buf + k, len - k, "%s (%s:%u)", vpr_dm(w[i].function),
                                          wb ? wb + 1 : w[i].file, w[i].line);
                shown++;
            }
            free(w);
        }
    }
    const struct vpf_schema_from *g = f->guard;
    if (g) {
        size_t k = strlen(buf);
        const char *fb = strrchr(g->file, '/');
        snprintf(buf + k, len - k, "; it calls %s (%s:%u) when %s's answer says so: the "
                 "decision may be that predicate's", vpr_dm(m->f[a->to].name),
                 fb ? fb + 1 : g->file, g->line, vpr_dm(g->callee));
    }
}

/* Where a global's or member's value comes from: the functions that store
 * into it (the schema's @writes), this very variable's first; when only
 * stores into the member of some object of its type are known, say so. An
 * anomalous value read here is often decided there (a size that a resize
 * stopped growing, a budget computed at start-up). */
static void writers_line(const struct vpr_model *m, const struct vpr_var *v, char *buf,
                         size_t len)
{
    struct vpr_writer *w;
    long n = vpr_writers_of(m, v, &w);
    if (n <= 0) return;
    size_t k = 0, shown = 0;
    int typed_only = w[0].by_type;
    k += (size_t)snprintf(buf, len, "written by ");
    for (long i = 0; i < n && k < len; i++) {
        int dup = 0;                        /* one entry per function */
        for (long j = 0; j < i; j++)
            if (!strcmp(w[j].function, w[i].function) && w[j].by_type == w[i].by_type) dup = 1;
        if (dup) continue;
        if (shown == 4) {
            k += (size_t)snprintf(buf + k, len - k, ", ...");
            break;
        }
        const char *fb = strrchr(w[i].file, '/');
        k += (size_t)snprintf(buf + k, len - k, "%s%s (%s:%u)", shown ? ", " : "",
                              vpr_dm(w[i].function), fb ? fb + 1 : w[i].file, w[i].line);
        shown++;
    }
    if (typed_only && k < len)
        snprintf(buf + k, len - k, ", into this member of some object of its type");
    free(w);
}

/* Where a local's value comes from: the functions whose return value the
 * schema's `@from` lines say it takes (`level = random_level()`). A cheap
 * producer is often the decision (a level always 1, a cache size computed
 * wrongly) and the variable's reader only its victim. */
void vpr_returned_line(const struct vpr_model *m, const struct vpr_var *v, char *buf,
                       size_t len)
{
    buf[0] = 0;
    if (!m->has_schema || !v->name || !v->function || (v->tags & VPF_TAG_GLOBAL))
        return;
    const struct vpf_schema *s = &m->schema;
    size_t k = 0, shown = 0;
    for (size_t i = 0; i < s->n_froms && k < len; i++) {
        const struct vpf_schema_from *r = &s->froms[i];
        if (r->guard || strcmp(r->function, v->function) || strcmp(r->variable, v->name) ||
            (v->file && !vpr_same_path(r->file, v->file)))
            continue;
        int dup = 0;                        /* one entry per callee */
        for (size_t j = 0; j < i && !dup; j++)
            dup = !s->froms[j].guard && !strcmp(s->froms[j].callee, r->callee) &&
                  !strcmp(s->froms[j].function, r->function) &&
                  !strcmp(s->froms[j].variable, r->variable);
        if (dup) continue;
        if (shown == 4) { k += (size_t)snprintf(buf + k, len - k, ", ..."); break; }
        const char *fb = strrchr(r->file, '/');
        k += (size_t)snprintf(buf + k, len - k, "%s%s (%s:%u)", shown ? ", " : "returned by ",
                              vpr_dm(r->callee), fb ? fb + 1 : r->file, r->line);
        shown++;
    }
}

void vpr_verdict_writers(const struct vpr_model *m, const struct vpr_func *f,
                         struct vpr_verdict *vd)
{
    vd->writers[0] = 0;
    vd->returned[0] = 0;
    if (f->var >= 0 && (f->disc == VPR_DISC_VARIABLE || vd->var_also[0])) {
        writers_line(m, &m->v[f->var], vd->writers, sizeof vd->writers);
        vpr_returned_line(m, &m->v[f->var], vd->returned, sizeof vd->returned);
    }
}

/* A function decided by something else (its calls, latency, a lock) may
 * still have an anomalous variable: for an off-stack decision it is often
 * the state the decision left behind - a bucket count that stopped
 * growing, a flag left set - and its writers are where to look next. */
static void var_also(const struct vpr_model *m, const struct vpr_func *f, struct vpr_verdict *vd)
{
    vd->var_also[0] = 0;
    if (f->disc == VPR_DISC_VARIABLE || f->var < 0) return;
    const struct vpr_var *v = &m->v[f->var];
    if (v->dim < 0 || !(v->r < m->o->default_discount)) return;
    char tags[64], vals[512];
    vpr_tags_str(v->tags, tags, sizeof tags);
    vpr_values_line(v, v->dim, vals, sizeof vals);
    snprintf(vd->var_also, sizeof vd->var_also, "its most anomalous variable: %s (%s; %s), %s: %s",
             v->name, v->type && *v->type ? v->type : "?", tags, vpr_dim_name[v->dim], vals);
    vd->decl_file = v->file;
    if (f->file && vpr_same_path(f->file, v->file)) vd->decl_file = f->file;
    vd->decl_line = v->line;
}

/* The adder whose adds predicate f guards (the schema's `@addguard` for
 * f's container), demangled; "?" when none. */
static const char *adder_of(const struct vpr_model *m, const struct vpr_func *f)
{
    for (size_t j = 0; m->has_schema && f->size_via && j < m->schema.n_froms; j++) {
        const struct vpf_schema_from *g = &m->schema.froms[j];
        if (g->guard != 6 || strcmp(g->variable, f->size_via)) continue;
        long p = vpr_model_func_by_name(m, g->callee), a = vpr_model_func_by_name(m, g->function);
        if (p >= 0 && &m->f[p] == f && a >= 0) return vpr_dm(m->f[a].name);
    }
    return "?";
}

void vpr_verdict(const struct vpr_model *m, const struct vpr_func *f, struct vpr_verdict *vd)
{
    memset(vd, 0, sizeof *vd);
    vd->p = NAN;
    calls_line(m, f, vd->calls, sizeof vd->calls);
    if (f->guard_of >= 0) {
        const struct vpr_func *g = &m->f[f->guard_of];
        if (f->guard_above)
            snprintf(vd->after, sizeof vd->after, "ranked right above %s, whose calls of %s "
                     "changed and wait for its answer - a truth value it computes from "
                     "state, changing nothing: the decision is this function's",
                     vpr_dm(g->name), g->arc.to >= 0 ? vpr_dm(m->f[g->arc.to].name) : "?");
        else
            snprintf(vd->after, sizeof vd->after, "ranked right after %s, whose calls of %s "
                     "changed and wait for its answer: the decision may be this function's",
                     vpr_dm(g->name), g->arc.to >= 0 ? vpr_dm(m->f[g->arc.to].name) : "?");
    } else if (f->state_of >= 0) {
        const struct vpr_func *g = &m->f[f->state_of];
        snprintf(vd->after, sizeof vd->after, "ranked right after %s, whose calls of %s "
                 "changed on a branch on %s, which this function writes: the decision may "
                 "be this function's", vpr_dm(g->name),
                 g->arc.to >= 0 ? vpr_dm(m->f[g->arc.to].name) : "?",
                 f->state_via ? f->state_via->callee : "?");
    } else if (f->link_of >= 0) {
        const struct vpr_func *g = &m->f[f->link_of];
        char per[32] = "as many times", what[200];
        if (f->link_per > 1) snprintf(per, sizeof per, "%d times as often", f->link_per);
        if (f->link_by_arc && g->arc.to >= 0)
            snprintf(what, sizeof what, "whose calls of %s numbered %.0f and %.0f in the "
                     "normal and buggy runs", vpr_dm(m->f[g->arc.to].name),
                     g->arc.count[VPR_NORMAL], g->arc.count[VPR_BUGGY]);
        else
            snprintf(what, sizeof what, "called %.0f and %.0f times in the normal and buggy "
                     "runs", g->arc.calls[VPR_NORMAL], g->arc.calls[VPR_BUGGY]);
        snprintf(vd->after, sizeof vd->after, "ranked right after %s, %s; %s calls %s %s in "
                 "each, on a predicate's or a state's say, and no loop calls both: one "
                 "counts the other (a queue between threads, a job per decision, a removal "
                 "per re-creation)", vpr_dm(g->name), what, vpr_dm(m->f[f->link_from].name),
                 vpr_dm(f->link_to), per);
    } else if (f->size_of >= 0 && f->size_role == VPR_RANGE) {
        const struct vpr_func *g = &m->f[f->size_of];
        snprintf(vd->after, sizeof vd->after, "ranked right after %s, which walks further per "
                 "call over a range ending at %s, which this function widens, or calls far "
                 "more often what widens it", vpr_dm(g->name), f->size_via ? f->size_via : "?");
    } else if (f->size_of >= 0 && f->size_role == VPR_ADD_GUARD) {
        const struct vpr_func *g = &m->f[f->size_of];
        if (f->placed_above)
            snprintf(vd->after, sizeof vd->after, "ranked right above %s, which walks further "
                     "per call through the container %s, to which its adder %s adds only when "
                     "this function's answer says so", vpr_dm(g->name),
                     f->size_via ? f->size_via : "?", adder_of(m, f));
        else
            snprintf(vd->after, sizeof vd->after, "ranked right after %s's adder %s, which adds "
                     "to the container %s, which %s walks further through per call, only when "
                     "this function's answer says so", vpr_dm(g->name), adder_of(m, f),
                     f->size_via ? f->size_via : "?", vpr_dm(g->name));
    } else if (f->size_of >= 0 && f->size_role == VPR_ADDER) {
        const struct vpr_func *g = &m->f[f->size_of];
        snprintf(vd->after, sizeof vd->after, "ranked right after %s, which walks further per "
                 "call through the container %s, which this function adds to: what it adds, "
                 "or when, may be decided here", vpr_dm(g->name),
                 f->size_via ? f->size_via : "?");
    } else if (f->size_of >= 0 && f->size_role == VPR_LIMIT_LOW) {
        const struct vpr_func *g = &m->f[f->size_of];
        snprintf(vd->after, sizeof vd->after, "ranked right after %s, whose calls of %s "
                 "changed on a test of a count against the limit %s, which this function "
                 "decides: the limit may be too low", vpr_dm(g->name),
                 g->arc.to >= 0 ? vpr_dm(m->f[g->arc.to].name) : "?",
                 f->size_via ? f->size_via : "?");
    } else if (f->size_of >= 0 && f->size_role == VPR_LIMIT) {
        const struct vpr_func *g = &m->f[f->size_of];
        snprintf(vd->after, sizeof vd->after, "ranked right after %s, each call of which "
                 "costs %.3g times more while it is called as often: the limit %s that paces "
                 "its calls, which this function decides, did not keep pace",
                 vpr_dm(g->name), vpr_per_call_growth(m, g), f->size_via ? f->size_via : "?");
    } else if (f->size_of >= 0 && f->size_role == VPR_STOP) {
        const struct vpr_func *g = &m->f[f->size_of];
        snprintf(vd->after, sizeof vd->after, "ranked right after %s, which walks further "
                 "per call in a loop that stops at %s, which this function decides: the "
                 "limit may be wrong", vpr_dm(g->name), f->size_via ? f->size_via : "?");
    } else if (f->size_of >= 0 && f->size_role == VPR_ALT_CHOICE) {
        const struct vpr_func *g = &m->f[f->size_of];
        snprintf(vd->after, sizeof vd->after, "ranked right after %s, which its answer chose "
                 "over %s (their caller calls one or the other on it), and which does %.3g "
                 "times the work per call in the buggy runs: the choice may be wrong",
                 vpr_dm(g->name), f->size_via ? vpr_dm(f->size_via) : "?",
                 vpr_per_call_growth(m, g));
    } else if (f->size_of >= 0 && f->size_role == VPR_SIZE_CHOICE) {
        const struct vpr_func *g = &m->f[f->size_of];
        snprintf(vd->after, sizeof vd->after, "ranked right after %s, which does more work "
                 "per call in a table indexed by %s, whose writer stores this function's "
                 "answer: the table's size is computed here", vpr_dm(g->name),
                 f->size_via ? f->size_via : "?");
    } else if (f->size_of >= 0) {
        const struct vpr_func *g = &m->f[f->size_of];
        snprintf(vd->after, sizeof vd->after, "ranked right after %s, which does more work "
                 "per call in a table indexed by %s, which this function %s: the table's size "
                 "may be decided here", vpr_dm(g->name), f->size_via ? f->size_via : "?",
                 f->size_role == VPR_SIZER ? "writes" : "fills");
    } else if (f->producer_of >= 0) {
        const struct vpr_func *g = &m->f[f->producer_of];
        snprintf(vd->after, sizeof vd->after, "ranked right after %s, whose %s takes this "
                 "function's answer and has other values in the buggy run: the value may "
                 "be decided here", vpr_dm(g->name), g->var >= 0 ? m->v[g->var].name : "?");
    }
    /* --deciders-above: the decider ranks right above the function it was
     * placed for (every "after" line above starts the same way) */
    static const char after_at[] = "ranked right after ";
    if (f->placed_above && !strncmp(vd->after, after_at, sizeof after_at - 1))
        memcpy(vd->after + sizeof "ranked right " - 1, "above", 5);
    uint64_t min_ev = m->o->min_evidence ? m->o->min_evidence : 20;
    if (f->disc == VPR_DISC_VARIABLE && f->var >= 0 && f->dim >= 0) {
        const struct vpr_var *v = &m->v[f->var];
        char tags[64];
        vpr_tags_str(v->tags, tags, sizeof tags);
        snprintf(vd->what, sizeof vd->what, "%s (%s; %s), %s", v->name,
                 v->type && *v->type ? v->type : "?", tags, vpr_dim_name[f->dim]);
        vpr_values_line(v, f->dim, vd->values, sizeof vd->values);
        why_variable(m, f, v, vd->why, sizeof vd->why);
        /* the schema's path may be relative to the compilation directory:
         * prefer the DWARF path of the same file where there is one */
        vd->decl_file = v->file;
        if (f->file && vpr_same_path(f->file, v->file)) vd->decl_file = f->file;
        for (size_t k = 0; k < f->n_loc; k++)
            if (vpr_same_path(f->loc[k].file, v->file)) vd->decl_file = f->loc[k].file;
        vd->decl_line = v->line;
        if (f->file && f->line && vpr_pattern_link(m, f) >= 0)
            vd->def_file = f->file, vd->def_line = f->line;
        vd->n[0] = v->n[VPR_NORMAL][f->dim];
        vd->n[1] = v->n[VPR_BUGGY][f->dim];
        vd->p = v->dim_p[f->dim];
        if (vd->n[0] < min_ev || vd->n[1] < min_ev) vd->evidence = VPR_EV_THIN;
        else if (!isnan(vd->p) && vd->p < 0.01) vd->evidence = VPR_EV_STRONG;
        else vd->evidence = VPR_EV_MODERATE;
    } else if (f->disc == VPR_DISC_HIST && (f->share[0] > 0 || f->share[1] > 0)) {
        snprintf(vd->what, sizeof vd->what, "its share of the run, normal vs buggy runs");
        snprintf(vd->values, sizeof vd->values, "normal: %.1f%% of the run; buggy: %.1f%%; "
                 "grown beyond sampling noise in %u of %u comparisons (discount %.2f)",
                 100 * f->share[0], 100 * f->share[1], f->hist_c - f->hist_h, f->hist_c, f->r);
        snprintf(vd->why, sizeof vd->why, "no variable of it was sampled: the "
                 "hist-discounter compared its share of the run across runs");
        vd->n[0] = (uint64_t)llround(f->share_ticks[0]);
        vd->n[1] = (uint64_t)llround(f->share_ticks[1]);
        vd->evidence = vd->n[0] < min_ev || vd->n[1] < min_ev ? VPR_EV_THIN : VPR_EV_MODERATE;
    } else if (f->disc == VPR_DISC_HIST) {
        snprintf(vd->what, sizeof vd->what, "its rank by cost, normal vs buggy runs");
        snprintf(vd->values, sizeof vd->values, "similar rank in %u of %u comparisons "
                 "(discount %.2f)", f->hist_h, f->hist_c, f->r);
        snprintf(vd->why, sizeof vd->why, "no variable of it was sampled: the "
                 "hist-discounter compared its rank across runs");
        vd->n[0] = m->n_runs[VPR_NORMAL];
        vd->n[1] = m->n_runs[VPR_BUGGY];
        vd->evidence = vd->n[0] >= 3 && vd->n[1] >= 3 ? VPR_EV_MODERATE : VPR_EV_THIN;
    } else if (f->disc == VPR_DISC_CONTEXT && m->ctx) {
        const struct vpr_mctx *c = m->ctx;
        size_t i = (size_t)(f - m->f);
        snprintf(vd->what, sizeof vd->what, "its calling contexts, normal vs buggy runs");
        snprintf(vd->values, sizeof vd->values, "own time %.3f ms/run in its contexts in the "
                 "normal runs, %.3f in the buggy runs, %.3f of it added beyond the runs' "
                 "proportions (discount %.2f)", c->own[0][i] / 1e6, c->own[1][i] / 1e6,
                 c->added[i] / 1e6, f->r);
        snprintf(vd->why, sizeof vd->why, "no variable of it was sampled: its calling "
                 "contexts' growth (stack samples) stood in for the hist-discounter");
        vd->n[0] = c->inst[0][i];
        vd->n[1] = c->inst[1][i];
        uint64_t min_ev = m->o->min_evidence ? m->o->min_evidence : 20;
        vd->evidence = vd->n[0] < min_ev || vd->n[1] < min_ev ? VPR_EV_THIN : VPR_EV_MODERATE;
    } else if (f->disc == VPR_DISC_LATENCY && m->lat && (size_t)(f - m->f) < m->lat->n_f) {
        const struct vpr_lfunc *lf = &m->lat->f[f - m->f];
        struct vpr_lstats a = vpr_lat_stats(&lf->d, VPR_NORMAL), b = vpr_lat_stats(&lf->d, VPR_BUGGY);
        snprintf(vd->what, sizeof vd->what, "its call latency");
        /* a side without calls has no percentiles: say so, not "nan" */
        char side[2][120];
        const struct vpr_lstats *ab[2] = {&a, &b};
        for (int k = 0; k < 2; k++)
            if (lf->d.n[k])
                snprintf(side[k], sizeof side[k], "p50 %.6g us, p99 %.6g us (%zu calls)",
                         ab[k]->p50, ab[k]->p99, lf->d.n[k]);
            else
                snprintf(side[k], sizeof side[k], "no calls seen");
        snprintf(vd->values, sizeof vd->values, "normal: %s; buggy: %s", side[0], side[1]);
        snprintf(vd->why, sizeof vd->why, "its calls take longer in the buggy run "
                 "(waiting counts: latency is wall time)");
        vd->n[0] = lf->d.n[0];
        vd->n[1] = lf->d.n[1];
        vd->p = lf->p;
        vd->evidence = vd->n[0] < min_ev || vd->n[1] < min_ev ? VPR_EV_THIN
                     : !isnan(vd->p) && vd->p < 0.01 ? VPR_EV_STRONG : VPR_EV_MODERATE;
    } else if (f->disc == VPR_DISC_ARC && f->arc.to >= 0) {
        snprintf(vd->what, sizeof vd->what, "how often it calls %s", vpr_dm(m->f[f->arc.to].name));
        snprintf(vd->values, sizeof vd->values, "%s", vd->calls);
        vd->calls[0] = 0;
        /* the pattern came from its anomalous loop or condition variable
         * when it has one (pattern.c); otherwise from the arc's direction */
        int by_var = f->pattern && f->var >= 0 &&
                     strcmp(f->pattern, f->arc.dir > 0 ? VPR_PAT_MISSING : VPR_PAT_WRONG);
        if (by_var)
            snprintf(vd->why, sizeof vd->why, "it calls %s far %s often per call than in the "
                     "normal run, and %s, a %s variable of it, is anomalous too (by the paper's rules "
                     "on it: %s)",
                     vpr_dm(m->f[f->arc.to].name), f->arc.dir > 0 ? "more" : "less",
                     m->v[f->var].name, m->v[f->var].tags & VPF_TAG_LOOP ? "loop" : "condition",
                     f->pattern);
        else
            snprintf(vd->why, sizeof vd->why, f->arc.dir > 0
                     ? "it calls %s far more often per call than in the normal run: work done "
                       "that a constraint should limit (missing constraint)"
                     : "it calls %s far less often per call than in the normal run: a branch "
                       "stopped being taken (wrong constraint)", vpr_dm(m->f[f->arc.to].name));
        vd->n[0] = (uint64_t)f->arc.per[0];
        vd->n[1] = (uint64_t)f->arc.per[1];
        vd->p = f->arc.p;
        vd->evidence = vd->p < 1e-6 ? VPR_EV_STRONG : VPR_EV_MODERATE;
    } else if (f->disc == VPR_DISC_LOCK && m->lat && (size_t)(f - m->f) < m->lat->n_f &&
               m->lat->f[f - m->f].lock_site >= 0) {
        const struct vpr_lfunc *lf = &m->lat->f[f - m->f];
        const struct vpr_lsite *st = &m->lat->sites[lf->lock_site];
        struct vpr_lstats a = vpr_lat_stats(&st->d, VPR_NORMAL), b = vpr_lat_stats(&st->d, VPR_BUGGY);
        const char *waiter = st->f >= 0 ? vpr_dm(m->f[st->f].name) : "?";
        snprintf(vd->what, sizeof vd->what, "it holds a lock that %s waits for", waiter);
        snprintf(vd->values, sizeof vd->values, "waits in %s: normal p50 %.6g us, p99 %.6g us "
                 "(%zu); buggy p50 %.6g us, p99 %.6g us (%zu); %.4g s per run added, %.4g s "
                 "charged to it", waiter, a.p50, a.p99, st->d.n[0], b.p50, b.p99, st->d.n[1],
                 lf->lock_site_cost, lf->lock_cost);
        snprintf(vd->why, sizeof vd->why, "others wait longer for a lock while it holds it "
                 "(off-CPU time; blocking work under the lock?)");
        vd->n[0] = st->d.n[0];
        vd->n[1] = st->d.n[1];
        vd->evidence = vd->n[0] < min_ev || vd->n[1] < min_ev ? VPR_EV_THIN : VPR_EV_MODERATE;
    } else {
        snprintf(vd->what, sizeof vd->what, "no evidence beyond its cost");
        snprintf(vd->why, sizeof vd->why, "ranked by cost alone");
        vd->evidence = VPR_EV_NONE;
    }
    /* ranked for another function's evidence: its pattern is that
     * evidence's (pattern.c), and so are the reason and the strength (a
     * cheap predicate's own few ticks are not what placed it) */
    long link = vpr_pattern_link(m, f);
    if (link >= 0) {
        struct vpr_verdict *lv = vpf_xmalloc(sizeof *lv);
        vpr_verdict(m, &m->f[link], lv);
        vd->evidence = lv->evidence;
        vd->n[0] = lv->n[0];
        vd->n[1] = lv->n[1];
        free(lv);
    }
    if (link >= 0 && f->guard_of >= 0)
        snprintf(vd->why, sizeof vd->why, "its answer decides whether %s makes the calls that "
                 "changed: a condition that evaluates otherwise (wrong constraint)",
                 vpr_dm(m->f[link].name));
    else if (link >= 0 && f->state_of >= 0 && m->f[link].arc.dir > 0)
        snprintf(vd->why, sizeof vd->why, "it writes %s, on which %s decides the calls that "
                 "changed, and its calls grew faster than those: it flips the state more often "
                 "than the state needs, a check its writes lack (missing constraint)",
                 f->state_via ? f->state_via->callee : "?", vpr_dm(m->f[link].name));
    else if (link >= 0 && f->state_of >= 0)
        snprintf(vd->why, sizeof vd->why, "it writes %s, on which %s decides the calls that "
                 "changed (%s): what it writes, or when, may be the decision",
                 f->state_via ? f->state_via->callee : "?", vpr_dm(m->f[link].name),
                 m->f[link].pattern ? m->f[link].pattern : "?");
    else if (link >= 0 && f->link_of >= 0)
        snprintf(vd->why, sizeof vd->why, "%s %s's calls of %s, which keep step with %s's "
                 "work: a condition that evaluates otherwise orders the work (wrong "
                 "constraint)", f->link_from == f - m->f ? "it decides" : "its answer decides",
                 vpr_dm(m->f[f->link_from].name), vpr_dm(f->link_to),
                 vpr_dm(m->f[link].name));
    else if (link >= 0 && f->size_of >= 0 && f->size_role == VPR_RANGE)
        snprintf(vd->why, sizeof vd->why, "it widens %s's range (%s), or calls what does, far "
                 "more often than %s walks it: marks that the work does not need - a check "
                 "its writes lack (missing constraint)", vpr_dm(m->f[link].name),
                 f->size_via ? f->size_via : "?", vpr_dm(m->f[link].name));
    else if (link >= 0 && f->size_of >= 0 && f->size_role == VPR_ADD_GUARD)
        snprintf(vd->why, sizeof vd->why, "its answer decides when %s adds to %s, the container "
                 "%s walks further through per call: a condition that evaluates otherwise - "
                 "entries too sparse or too many (wrong constraint)", adder_of(m, f),
                 f->size_via ? f->size_via : "?", vpr_dm(m->f[link].name));
    else if (link >= 0 && f->size_of >= 0 && f->size_role == VPR_ADDER &&
             vpr_add_guard(m, f, f->size_via))
        snprintf(vd->why, sizeof vd->why, "it adds to %s, the container %s walks further "
                 "through per call, when %s's answer says so: entries too sparse or too many "
                 "for the walk, a condition that evaluates otherwise (wrong constraint)",
                 f->size_via, vpr_dm(m->f[link].name),
                 vpr_dm(vpr_add_guard(m, f, f->size_via)->callee));
    else if (link >= 0 && f->size_of >= 0 && f->size_role == VPR_ADDER)
        snprintf(vd->why, sizeof vd->why, "it adds to %s, the container %s walks further "
                 "through per call: entries it adds that the work does not need - a "
                 "duplicate, an orphan - a check its adds lack (missing constraint)",
                 f->size_via ? f->size_via : "?", vpr_dm(m->f[link].name));
    else if (link >= 0 && f->size_of >= 0 && f->size_role == VPR_LIMIT_LOW)
        snprintf(vd->why, sizeof vd->why, "it decides %s, the limit %s holds a count "
                 "against before it calls %s, which it called far more often per call in the "
                 "buggy run: a limit set too low (wrong constraint)",
                 f->size_via ? f->size_via : "?", vpr_dm(m->f[link].name),
                 m->f[link].arc.to >= 0 ? vpr_dm(m->f[m->f[link].arc.to].name) : "?");
    else if (link >= 0 && f->size_of >= 0 && f->size_role == VPR_LIMIT)
        snprintf(vd->why, sizeof vd->why, "it decides %s, the limit a guard holds a count "
                 "against before it calls %s, whose calls each do more work in the buggy run: "
                 "the limit did not grow with the work - the wrong quantity, or a floor "
                 "(wrong constraint)",
                 f->size_via ? f->size_via : "?", vpr_dm(m->f[link].name));
    else if (link >= 0 && f->size_of >= 0 && f->size_role == VPR_STOP)
        snprintf(vd->why, sizeof vd->why, "it decides %s, the limit at which %s's loop stops, "
                 "and that loop runs longer per call in the buggy run: a limit computed wrong - "
                 "a clamp to the wrong bound, a factor, a unit (wrong constraint)",
                 f->size_via ? f->size_via : "?", vpr_dm(m->f[link].name));
    else if (link >= 0 && f->size_of >= 0 && f->size_role == VPR_ALT_CHOICE)
        snprintf(vd->why, sizeof vd->why, "it chooses between %s and %s, and still chose %s "
                 "when that did far more work per call: a choice meant to switch with the "
                 "input's size that compares the wrong quantity, or with the wrong threshold "
                 "(wrong constraint)", vpr_dm(m->f[link].name),
                 f->size_via ? vpr_dm(f->size_via) : "?", vpr_dm(m->f[link].name));
    else if (link >= 0 && f->size_of >= 0 && f->size_role == VPR_SIZE_CHOICE)
        snprintf(vd->why, sizeof vd->why, "it computes the value of %s, the size of the table "
                 "%s walks further in per call: a size too small for the buggy run's entries - "
                 "a cap, a step or a formula (wrong constraint)",
                 f->size_via ? f->size_via : "?", vpr_dm(m->f[link].name));
    else if (link >= 0 && f->size_of >= 0 && f->size_role == VPR_SIZER)
        snprintf(vd->why, sizeof vd->why, "it writes %s, the size of the table %s walks further "
                 "in per call: a size too small for the buggy run's entries (wrong constraint)",
                 f->size_via ? f->size_via : "?", vpr_dm(m->f[link].name));
    else if (link >= 0 && f->size_of >= 0)
        snprintf(vd->why, sizeof vd->why, "it stores into the table indexed by %s that %s walks "
                 "further in per call, and does not resize it: a load check its inserts or "
                 "deletes lack (missing constraint)",
                 f->size_via ? f->size_via : "?", vpr_dm(m->f[link].name));
    else if (link >= 0)
        snprintf(vd->why, sizeof vd->why, "its answer is %s's %s (%s): how %s uses it is the "
                 "pattern", vpr_dm(m->f[link].name),
                 m->f[link].var >= 0 ? m->v[m->f[link].var].name : "?",
                 m->f[link].pattern ? m->f[link].pattern : "?", vpr_dm(m->f[link].name));
    else if (vpr_branch_calls(m, f)) {
        /* the pattern came from the call's rate (pattern.c), not from the
         * deciding evidence's own rules: say so */
        double rn = f->arc.count[VPR_NORMAL] / f->arc.per[VPR_NORMAL];
        double rb = f->arc.per[VPR_BUGGY] > 0 ? f->arc.count[VPR_BUGGY] / f->arc.per[VPR_BUGGY] : 0;
        snprintf(vd->why, sizeof vd->why, "it called %s at most once per call in the normal "
                 "runs (%.3g) and %.3g times per call in the buggy runs: a branch, or a retry "
                 "loop's exit, decides otherwise (wrong constraint)",
                 vpr_dm(m->f[f->arc.to].name), rn, rb);
    }
    var_also(m, f, vd);
}
