/* pattern.c - the classifier of §5.2: the function's most anomalous
 * variable (lowest discount), the dimension that gave it, and its tags. */
#include "pattern.h"
#include "writers.h"
#include "source.h"
#include "vprof_xalloc.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int anomalous(const struct vpr_var *v, int d)
{
    return d >= 0 && (v->st[d] == VPR_DS_DIFFERS || v->st[d] == VPR_DS_NO_NORMAL);
}

/* The paper's rules 1-4 (§5.2), in order, each on anomalous evidence only. */
static const char *paper_rules(const struct vpr_model *m, const struct vpr_func *f,
                               const struct vpr_var *v, int d, int top_raw)
{
    int an = anomalous(v, d);
    if (an && (v->tags & (VPF_TAG_LOOP | VPF_TAG_COND)) && d == VPR_DIM_PROC)
        return VPR_PAT_MISSING;                                     /* rule 1 */
    if (an && (v->tags & VPF_TAG_LOOP) && (d == VPR_DIM_VALUE || d == VPR_DIM_DELTA))
        return VPR_PAT_SCALABILITY;                                 /* rule 2 */
    if (an && (v->tags & VPF_TAG_COND)) return VPR_PAT_WRONG;       /* rule 3 */
    if (top_raw && !an && d == VPR_DIM_PROC &&
        fabs(f->r - m->o->default_discount) < 1e-12) {              /* rule 4 */
        int basic = 0;
        for (size_t k = 0; k < f->n_vars; k++)
            if (m->v[f->vars[k]].kind != VPF_KIND_PTR) basic = 1;
        if (!basic) return VPR_PAT_SCALABILITY;
    }
    return VPR_PAT_NONE;
}

/* Do the buggy values of dimension d reach beyond the normal ones in
 * magnitude (more data: a larger size, longer steps)? Values that changed
 * but stayed smaller (shorter steps, because each takes longer) are no
 * larger data. */
static int larger(const struct vpr_var *v, int d)
{
    if (v->lo[d] > v->hi[d] || v->blo[d] > v->bhi[d]) return 1;   /* a side has none */
    double n = fmax(fabs(v->lo[d]), fabs(v->hi[d]));
    double b = fmax(fabs(v->blo[d]), fabs(v->bhi[d]));
    return b > n;
}

/* The paper's artifact applies the tag rules to the deciding variable
 * whether or not its test rejected, and falls back to scalability for a
 * function that is costly although its values look normal (the
 * generalisation of rule 4: it does the normal thing on more data), whose
 * variable only appears in the buggy run, or whose anomalous variable has
 * neither tag. The artifact's code falls back only in the processing-cost
 * dimension and reads a condition whose values and deltas look normal as
 * a wrong constraint; here the fallback holds in every dimension: values
 * that look normal say nothing about a constraint (mdev23399_lru_scan's
 * `freed`, 0 in both runs, named a wrong constraint). */
static const char *artifact_rules(const struct vpr_model *m, const struct vpr_func *f,
                                  const struct vpr_var *v, int d)
{
    int normal_like = v->r >= m->o->default_discount;
    if (normal_like) return VPR_PAT_SCALABILITY;
    if (d == VPR_DIM_PROC) {
        if (v->tags & (VPF_TAG_LOOP | VPF_TAG_COND)) return VPR_PAT_MISSING;
    } else {
        if (v->tags & VPF_TAG_LOOP) return VPR_PAT_SCALABILITY;
        if (v->tags & VPF_TAG_COND) return VPR_PAT_WRONG;
    }
    /* anomalous, but neither a loop nor a condition (an argument, a
     * global): the same work on other data, as far as the values say -
     * more data when most buggy values lie beyond what the normal run saw.
     * Values within the normal range, only distributed otherwise, are no
     * larger data; a changed call rate of the function then says how it
     * chose (as for a function that rate decides, below). */
    if (d >= 0 && f->arc.to >= 0 && m->o->arcs &&
        (2 * v->n_outside[d] < v->n[VPR_BUGGY][d] || !larger(v, d)))
        return f->arc.dir > 0 ? VPR_PAT_MISSING : VPR_PAT_WRONG;
    return VPR_PAT_SCALABILITY;
}

/* §5.2 applies its rules in order to "some" variable of the function:
 * rule 2 (a loop induction variable with abnormal values: scalability)
 * before rule 3 (an abnormal condition variable: wrong constraint). The
 * deciding variable - the most anomalous - can be a condition that is the
 * loop's bound (`i < ls->n`, 8 -> 63 labels a line), while the loop's own
 * variable reaches values the normal runs never did: the loop ran over
 * more data, rule 2. Only a clear case counts (--loop-first): the loop
 * variable's value or delta test rejected with a discount below
 * DefaultDiscount, most of its buggy samples outside the normal range, and
 * larger in magnitude. A condition that made a loop run longer without its
 * variable leaving the normal range (a retry, a wrong exit) stays rule 3,
 * and so does one whose deciding condition is constant in the buggy run.
 * Returns that loop variable, -1 if none. */
long vpr_loop_grew(const struct vpr_model *m, const struct vpr_func *f)
{
    if (!m->o->loop_first || f->var < 0 || f->dim < 0) return -1;
    /* a condition that holds one value through the buggy run is a setting
     * - a limit, a cap, a mode - and a wrong setting is rule 3's (a scan
     * capped at 1e6 where 64 was meant); a data size varies with the data */
    const struct vpr_var *c = &m->v[f->var];
    if (!(c->blo[f->dim] < c->bhi[f->dim])) return -1;
    for (size_t k = 0; k < f->n_vars; k++) {
        const struct vpr_var *u = &m->v[f->vars[k]];
        if (!(u->tags & VPF_TAG_LOOP)) continue;
        for (int d = VPR_DIM_VALUE; d <= VPR_DIM_DELTA; d++)
            if (anomalous(u, d) && u->dim_r[d] < m->o->default_discount && larger(u, d) &&
                2 * u->n_outside[d] >= u->n[VPR_BUGGY][d])
                return (long)f->vars[k];
    }
    return -1;
}

long vpr_pattern_link(const struct vpr_model *m, const struct vpr_func *f)
{
    long link = vpr_ranked_after(f);
    if (f->disc == VPR_DISC_VARIABLE && f->var >= 0 &&
        m->v[f->var].r < m->o->default_discount) {
        /* its own variable tells ... */
        const struct vpr_var *v = &m->v[f->var];
        size_t min_ev = m->o->min_evidence ? m->o->min_evidence : 20;
        int d = f->dim >= 0 ? f->dim : 0;
        /* ... unless a handful of samples is all it has and it was
         * placed for another function's evidence (--thin-yields): a
         * pattern read off 4 samples loses to the calls, the answer or the
         * state that placed it, counted over the whole run */
        if (m->o->thin_yields && link >= 0 &&
            (v->n[VPR_NORMAL][d] < min_ev || v->n[VPR_BUGGY][d] < min_ev))
            return link;
        /* ... or most of its buggy values are normal ones (--inside-yields):
         * a clock a predicate reads (metric_expired's g_now_ms, discount
         * 0.78) differs a little in any two runs and says nothing of the
         * kind of choice the placement found */
        if (m->o->inside_yields && link >= 0 && 2 * v->n_outside[d] < v->n[VPR_BUGGY][d])
            return link;
        return -1;
    }
    return link;
}

/* A call made at most once per call is no data loop: at that rate in the
 * normal runs, the callee was called under a branch (0.017 per call:
 * mdev15333's page read when the flags say so) or by a loop that ran once
 * (1 per call: pg14b1's prune, retried 14 times per page in the buggy
 * run). A changed rate then says a condition evaluates otherwise - §5.2's
 * wrong constraint - whatever the function's variables are: an untagged
 * flags word that grew 33 -> 2081 is no larger data, and the retry loop's
 * counter is a loop variable only by its syntax. A rate above 1 in the
 * normal runs is a loop over data, and the variables' rules decide. */
int vpr_branch_calls(const struct vpr_model *m, const struct vpr_func *f)
{
    if (!m->o->branch_calls || !m->o->arcs || f->arc.to < 0 || !(f->arc.per[VPR_NORMAL] > 0) ||
        !(f->arc.per[VPR_BUGGY] > 0))
        return 0;
    double rn = f->arc.count[VPR_NORMAL] / f->arc.per[VPR_NORMAL];
    double rb = f->arc.count[VPR_BUGGY] / f->arc.per[VPR_BUGGY];
    /* still at most once per call: the branch is taken more, or less,
     * often; or exactly once per call, now repeated: the loop around it
     * that ran once (a retry) runs again. A rare call in a loop over data
     * (0.39 -> 3.6 per call: a line wrap per message, the messages 6 -> 28
     * words long) is neither: more data, the variables' rules decide. */
    return rn <= 1 && (rb <= 1 || fabs(rn - 1) < 1e-3);
}

const char *vpr_infer_pattern(const struct vpr_model *m,
                              const struct vpr_func *f, int top_raw)
{
    if (vpr_is_plt(m, f)) return VPR_PAT_NONE;      /* linker glue: no bug of its own */
    int artifact = m->o->pattern_rules == VPR_PATTERN_ARTIFACT;
    /* Ranked for another function's evidence, with no anomalous variable of
     * its own (none, or values that look normal): a predicate whose answer
     * a caller's changed calls waited for is a condition that evaluated
     * otherwise (wrong constraint, §5.2: "a conditional expression or its
     * evaluation is incorrect"); a producer's answer is what the reader's
     * variable holds, and how the reader uses it (its tags, its dimension)
     * is the pattern. */
    long link = vpr_pattern_link(m, f);
    if (link >= 0 && f->guard_of >= 0) return VPR_PAT_WRONG;
    /* A writer of the state the holder's branch reads, placed because its
     * calls grew faster than the holder's guarded calls (discount.c,
     * rank_state_writers): it flips the state more often than the state
     * needs - a heartbeat that invalidates a cache although nothing
     * changed. The holder's branch is right; the writes lack a check
     * (missing constraint), whatever the holder's own evidence says. */
    if (link >= 0 && f->state_of >= 0 && m->f[link].arc.dir > 0) return VPR_PAT_MISSING;
    /* A table's size was set wrong (a hash size fixed at boot: wrong
     * constraint), or the functions filling it never resize it (the
     * missing load check); the lookup's own pattern is how the walk
     * looks, not what the decision was (discount.c, rank_tables). An
     * adder to a walked container lacks the check that keeps an entry
     * out (missing constraint). A limit that did not keep pace with the
     * work it paces was computed wrong, and a predicate that decides an
     * adder's adds (and the adder it decides for) evaluates otherwise
     * (wrong constraint). */
    /* A call made as many times as the ranked function runs, on a
     * predicate's or a state's say: the condition orders the work (wrong
     * constraint; discount.c, rank_count_links). */
    if (link >= 0 && f->link_of >= 0) return VPR_PAT_WRONG;
    if (link >= 0 && f->size_of >= 0)
        return f->size_role == VPR_SIZER || f->size_role == VPR_SIZE_CHOICE ||
               f->size_role == VPR_STOP || f->size_role == VPR_ALT_CHOICE ||
               f->size_role == VPR_LIMIT ||
               f->size_role == VPR_LIMIT_LOW || f->size_role == VPR_ADD_GUARD ||
               (f->size_role == VPR_ADDER && vpr_add_guard(m, f, f->size_via)) ? VPR_PAT_WRONG :
               VPR_PAT_MISSING;
    if (link >= 0) return vpr_infer_pattern(m, &m->f[link], top_raw);
    if (vpr_branch_calls(m, f)) return VPR_PAT_WRONG;
    if (f->disc == VPR_DISC_ARC) {
        /* A changed call rate says where the program chose differently,
         * not how: a loop or condition variable of the function that is
         * anomalous too says which kind of choice it was (§5.2's rules on
         * it); without one, more calls is work a constraint should have
         * skipped, fewer a condition that now evaluates otherwise. */
        if (f->var >= 0 && anomalous(&m->v[f->var], f->dim) &&
            (m->v[f->var].tags & (VPF_TAG_LOOP | VPF_TAG_COND))) {
            const char *p = paper_rules(m, f, &m->v[f->var], f->dim, 0);
            if (strcmp(p, VPR_PAT_NONE)) return p;
        }
        return f->arc.dir > 0 ? VPR_PAT_MISSING : VPR_PAT_WRONG;
    }
    /* No variable decided (rank history, latency, lock waits): without
     * values vProf cannot tell the other patterns apart, and rule 4 labels
     * such a costly function Scalability; the artifact does so for every
     * function it ranks. One the evidence calls entirely normal (discount
     * 1: the same rank in every comparison) has no pattern. */
    if (f->disc != VPR_DISC_VARIABLE || f->var < 0)
        return artifact && f->raw[VPR_BUGGY] > 0 && f->r < 1 ? VPR_PAT_SCALABILITY : VPR_PAT_NONE;
    const struct vpr_var *v = &m->v[f->var];
    const char *p = artifact ? artifact_rules(m, f, v, f->dim) : paper_rules(m, f, v, f->dim, top_raw);
    if (!strcmp(p, VPR_PAT_WRONG) && vpr_loop_grew(m, f) >= 0) return VPR_PAT_SCALABILITY;
    return p;
}

static long find_block(const struct vpr_model *m, const char *file,
                       const char *func, unsigned line)
{
    if (!m->has_schema) return -1;
    long best = -1;
    unsigned span = ~0u;
    for (size_t i = 0; i < m->schema.n_blocks; i++) {
        const struct vpf_schema_block *b = &m->schema.blocks[i];
        if (line < b->line_start || line > b->line_end) continue;
        if (strcmp(b->function, func) || !vpr_same_path(b->file, file)) continue;
        if (b->line_end - b->line_start < span) {
            span = b->line_end - b->line_start;
            best = (long)i;
        }
    }
    return best;
}

static int cmp_loc(const void *a, const void *b)
{
    const struct vpr_location *x = a, *y = b;
    if (x->n != y->n) return x->n > y->n ? -1 : 1;
    int c = strcmp(x->file, y->file);
    return c ? c : (int)x->line - (int)y->line;
}

static void locate(struct vpr_model *m, struct vpr_func *f, size_t max_loc)
{
    if (f->var < 0 || f->dim < 0) return;
    struct vpr_var *v = &m->v[f->var];
    int d = f->dim;
    /* only the samples taken inside this function: a global is sampled in
     * many functions, and the question is where in this one it went wrong */
    for (size_t i = 0; i < v->n_out[d]; i++) {
        const char *file;
        unsigned line;
        if (!vpr_model_pc_in(m, (size_t)(f - m->f), v->out[d][i].pc)) continue;
        if (vpr_lines_lookup(m->lines, v->out[d][i].pc, &file, &line) < 0) continue;
        size_t k;
        for (k = 0; k < f->n_loc; k++)
            if (f->loc[k].line == line && !strcmp(f->loc[k].file, file)) break;
        if (k == f->n_loc) {
            f->loc = vpf_grow(f->loc, &f->cap_loc, f->n_loc + 1, sizeof *f->loc);
            f->loc[k] = (struct vpr_location){vpf_xstrdup(file), line, -1, NULL, 0,
                                              vpr_lines_inlined(m->lines, v->out[d][i].pc)};
            f->n_loc++;
        }
        f->loc[k].n += v->out[d][i].n;
    }
    if (f->n_loc) qsort(f->loc, f->n_loc, sizeof *f->loc, cmp_loc);
    if (f->n_loc > max_loc) {
        for (size_t k = max_loc; k < f->n_loc; k++) free(f->loc[k].file);
        f->n_loc = max_loc;
    }
    for (size_t k = 0; k < f->n_loc; k++) {
        long b = find_block(m, f->loc[k].file, f->name, f->loc[k].line);
        if (b >= 0) {
            f->loc[k].block = m->schema.blocks[b].id;
            f->loc[k].block_kind = m->schema.blocks[b].kind;
        }
    }
}

void vpr_patterns(struct vpr_model *m, size_t max_loc)
{
    long top = -1;
    for (size_t i = 0; i < m->n_order; i++)
        if (top < 0 || m->f[m->order[i]].raw[VPR_BUGGY] > m->f[top].raw[VPR_BUGGY])
            top = (long)m->order[i];
    for (size_t i = 0; i < m->n_order; i++) {
        struct vpr_func *f = &m->f[m->order[i]];
        f->pattern = vpr_infer_pattern(m, f, (long)m->order[i] == top);
        locate(m, f, max_loc);
    }
}
