/* out_variance.c - --variance as text and JSON (docs/vprof-report.md,
 * "Variance"): per side the intervals and their latency, the variance tree
 * (each node's share of the total variance, with the sibling covariances
 * that complete the decomposition), the top factors of Algorithm 1, with
 * two sides the factors of the increase, and what to open next. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "vprof_xalloc.h"
#include "demangle.h"
#include "output.h"
#include "variance.h"

#define NONE UINT32_MAX

static const char *side_name(const struct vpr_variance *v, int s)
{
    return s == 0 ? "normal" : v->side[0].runs ? "buggy" : "run";
}

static int two(const struct vpr_variance *v)
{
    return v->side[0].n > 1 && v->side[1].n > 1;
}

void vpr_vfmt_ns(char *buf, size_t len, double ns)
{
    double a = fabs(ns);
    if (a >= 1e9) snprintf(buf, len, "%.3g s", ns / 1e9);
    else if (a >= 1e6) snprintf(buf, len, "%.3g ms", ns / 1e6);
    else if (a >= 1e3) snprintf(buf, len, "%.3g µs", ns / 1e3);
    else snprintf(buf, len, "%.3g ns", ns);
}

static double share(const struct vpr_variance *v, int s, double var)
{
    double t = v->nodes[0].var[s];
    return t > 0 ? var / t : 0;
}

static double inc_share(const struct vpr_variance *v, double vb, double vn)
{
    double t = v->nodes[0].var[1] - v->nodes[0].var[0];
    return t > 0 ? (vb - vn) / t : NAN;
}

/* ------------------------------------------------------------ next level */

static int has_func_child(const struct vpr_variance *v, long f, long callee)
{
    for (size_t i = 1; i < v->n_nodes; i++) {
        const struct vpr_vnode *n = &v->nodes[i];
        if (n->type == VT_FUNC && n->f == callee && n->parent != NONE) {
            const struct vpr_vnode *p = &v->nodes[n->parent];
            if ((p->type == VT_FUNC || p->type == VT_ROOT) && p->f == f) return 1;
        }
    }
    return 0;
}

static void list_add(char **s, size_t *len, size_t *cap, const char *name)
{
    size_t k = strlen(name);
    /* no duplicates: names are separated by commas */
    for (const char *p = *s; p && (p = strstr(p, name)); p += k)
        if ((p == *s || p[-1] == ',') && (p[k] == ',' || p[k] == 0)) return;
    if (*len + k + 2 > *cap) {
        *cap = (*len + k + 2) * 2;
        *s = vpf_xrealloc(*s, *cap, 1);
    }
    if (*len) (*s)[(*len)++] = ',';
    memcpy(*s + *len, name, k + 1);
    *len += k;
}

/* The function a node's time is in: the node itself, or its nearest
 * function ancestor (a wait, a body, a queue gap); -1 at the top. */
static long func_of(const struct vpr_variance *v, uint32_t id)
{
    for (; id != NONE; id = v->nodes[id].parent) {
        const struct vpr_vnode *n = &v->nodes[id];
        if (n->type == VT_FUNC) return n->f;
        if (n->type == VT_ROOT) return v->root_f;
    }
    return -1;
}

char *vpr_vnext_list(const struct vpr_variance *v, const struct vpr_vnext *nx, int with_seen)
{
    char *s = vpf_xcalloc(1, 1);
    size_t len = 0, cap = 1;
    const struct vpr_model *m = v->m;
    if (with_seen) {
        if (v->root_f >= 0) list_add(&s, &len, &cap, vpr_dm(m->f[v->root_f].name));
        for (size_t i = 1; i < v->n_nodes; i++)
            if (v->nodes[i].type == VT_FUNC && v->nodes[i].f >= 0)
                list_add(&s, &len, &cap, vpr_dm(m->f[v->nodes[i].f].name));
    }
    size_t base = len;
    /* the callees of the functions the top factors' time is in, that have
     * no node of their own below them */
    for (size_t i = 1; i < v->n_nodes; i++) {
        if (!vpr_vnode_top(v, (uint32_t)i)) continue;
        long fn = func_of(v, (uint32_t)i);
        if (fn < 0 || (size_t)fn >= nx->n_f) continue;
        for (size_t j = 0; j < nx->n_callee[fn]; j++) {
            long c = nx->callee[nx->off[fn] + j];
            if (!has_func_child(v, fn, c) && !m->f[c].is_lib)
                list_add(&s, &len, &cap, vpr_dm(m->f[c].name));
        }
    }
    if (len == base && with_seen) s[0] = 0;     /* nothing new to open */
    return s;
}

/* ------------------------------------------------------------------ text */

static void text_side(FILE *o, const struct vpr_variance *v, int s)
{
    const struct vpr_vside *sd = &v->side[s];
    char mean[32], sd_[32], p50[32], p99[32], p999[32], mx[32];
    vpr_vfmt_ns(mean, sizeof mean, v->nodes[0].mean[s]);
    vpr_vfmt_ns(sd_, sizeof sd_, sqrt(v->nodes[0].var[s]));
    vpr_vfmt_ns(p50, sizeof p50, vpr_vpct(sd, 0.5));
    vpr_vfmt_ns(p99, sizeof p99, vpr_vpct(sd, 0.99));
    vpr_vfmt_ns(p999, sizeof p999, vpr_vpct(sd, 0.999));
    vpr_vfmt_ns(mx, sizeof mx, (double)sd->max_lat);
    fprintf(o, "  %-6s %zu run(s), %llu %s", side_name(v, s), sd->runs,
            (unsigned long long)sd->n, v->root_f >= 0 ? "calls" : "requests");
    if (sd->incomplete)
        fprintf(o, " (%llu without start or end left out)", (unsigned long long)sd->incomplete);
    fprintf(o, ": mean %s, sd %s, p50 %s, p99 %s, p99.9 %s, max %s\n", mean, sd_, p50, p99,
            p999, mx);
    if (sd->unexplained)
        fprintf(o, "         %llu with a wait before a stay that no hand-off explains\n",
                (unsigned long long)sd->unexplained);
    if (sd->with_work)
        fprintf(o, "         work (%s%s) in %llu: it explains %.1f %% of the latency "
                "variance (R²)\n", v->o->work_var ? v->o->work_var : "vprof_req_work",
                v->o->work_var ? ", sampled" : "", (unsigned long long)sd->with_work,
                100 * v->nodes[0].r2[s]);
    else if (v->o->work_var)
        fprintf(o, "         work (%s, sampled): in no interval (no tick sampled it during "
                "one)\n", v->o->work_var);
    if (sd->limited)
        fprintf(o, "         call events limited by VPROF_LATENCY_FUNCS\n");
}

struct tctx { FILE *o; const struct vpr_variance *v; size_t *pord; size_t hidden; };

static int shown(const struct vpr_variance *v, uint32_t id)
{
    if (vpr_vnode_top(v, id)) return 1;
    for (int s = 0; s < 2; s++)
        if (v->side[s].n > 1 && share(v, s, v->nodes[id].var[s]) >= v->o->show) return 1;
    return 0;
}

static void text_line(struct tctx *c, uint32_t id, int indent, const char *label)
{
    const struct vpr_variance *v = c->v;
    const struct vpr_vnode *n = &v->nodes[id];
    int rs = v->rank_side;
    char nm[512], mean[32];
    if (label) snprintf(nm, sizeof nm, "%s", label);
    else vpr_vnode_name(v, id, nm, sizeof nm);
    vpr_vfmt_ns(mean, sizeof mean, n->mean[rs]);
    if (two(v))
        fprintf(c->o, "%7.1f%% %7.1f%% %8.1f%% ", 100 * share(v, 0, n->var[0]),
                100 * share(v, 1, n->var[1]), 100 * inc_share(v, n->var[1], n->var[0]));
    else
        fprintf(c->o, "%7.1f%% ", 100 * share(v, rs, n->var[rs]));
    fprintf(c->o, "%10s %6.1f  %*s%s", mean,
            v->side[rs].n ? 100.0 * (double)n->acc[rs].present / (double)v->side[rs].n : 0.0,
            2 * indent, "", nm);
    int t = vpr_vnode_top(v, id);
    if (t) fprintf(c->o, "   <== top %d", t);
    if (v->side[rs].with_work && n->r2[rs] >= v->o->inherent_r2 && id)
        fprintf(c->o, "   (inherent: R² %.2f with work)", n->r2[rs]);
    fputc('\n', c->o);
}

static void text_node(struct tctx *c, uint32_t id, int indent)
{
    const struct vpr_variance *v = c->v;
    int rs = v->rank_side;
    text_line(c, id, indent, NULL);
    size_t nch;
    uint32_t *ch = vpr_vchildren(v, id, rs, &nch);
    for (size_t i = 0; i < nch; i++) {
        if (shown(v, ch[i])) text_node(c, ch[i], indent + 1);
        else c->hidden++;
    }
    free(ch);
    const struct vpr_vnode *n = &v->nodes[id];
    if (n->first_child == NONE) return;
    if (shown(v, n->body)) text_line(c, n->body, indent + 1, "(self)");
    /* the covariance terms under this node */
    for (size_t k = 0; k < v->n_pairs; k++) {
        const struct vpr_vpair *p = &v->pairs[c->pord[k]];
        if (v->nodes[p->a].parent != id) continue;
        int big = 0;
        for (int s = 0; s < 2; s++)
            if (v->side[s].n > 1 && fabs(share(v, s, 2 * p->cov[s])) >= v->o->show) big = 1;
        if (!big) continue;
        char a[256], b[256], nm[600];
        vpr_vnode_name(v, p->a, a, sizeof a);
        vpr_vnode_name(v, p->b, b, sizeof b);
        snprintf(nm, sizeof nm, "2·Cov(%s, %s)", a, b);
        if (two(v))
            fprintf(c->o, "%+7.1f%% %+7.1f%% %+8.1f%% ", 100 * share(v, 0, 2 * p->cov[0]),
                    100 * share(v, 1, 2 * p->cov[1]), 100 * inc_share(v, 2 * p->cov[1], 2 * p->cov[0]));
        else
            fprintf(c->o, "%+7.1f%% ", 100 * share(v, rs, 2 * p->cov[rs]));
        fprintf(c->o, "%10s %6s  %*s%s\n", "", "", 2 * indent + 2, "", nm);
    }
}

/* qsort_r comparator: pair indices of v (the context) by |covariance|,
 * largest first */
static int cmp_pair_cov(const void *a, const void *b, void *ctx)
{
    const struct vpr_variance *v = ctx;
    const struct vpr_vpair *x = &v->pairs[*(const size_t *)a], *y = &v->pairs[*(const size_t *)b];
    double cx = fabs(x->cov[v->rank_side]), cy = fabs(y->cov[v->rank_side]);
    return (cx < cy) - (cx > cy);
}

static size_t *pair_order(const struct vpr_variance *v)
{
    size_t *o = vpf_xmalloc((v->n_pairs + 1) * sizeof *o);
    for (size_t i = 0; i < v->n_pairs; i++) o[i] = i;
    qsort_r(o, v->n_pairs, sizeof *o, cmp_pair_cov, (void *)v);
    return o;
}

static void text_factors(FILE *o, const struct vpr_variance *v, const struct vpr_vfactor *fs,
                         const size_t *top, size_t n_top, int diff)
{
    for (size_t r = 0; r < n_top; r++) {
        const struct vpr_vfactor *f = &fs[top[r]];
        char nm[600];
        vpr_vfactor_name(v, f, nm, sizeof nm);
        fprintf(o, "  %zu. %-40s %5.1f %% of the %s  height %d  score %.3g", r + 1, nm,
                100 * f->share, diff ? "increase" : "variance", f->height, f->score);
        if (two(v) && !diff)
            fprintf(o, "  (normal: %.1f %%)", 100 * share(v, 0, f->contri[0]));
        if (f->inherent == 1) fprintf(o, "  inherent (R² %.2f with the work)", f->r2);
        else if (f->inherent == 0) fprintf(o, "  pathological (R² %.2f)", f->r2);
        fputc('\n', o);
    }
    if (!n_top)
        fprintf(o, "  none above %.1f %% among the first %d by score\n", 100 * v->o->d, v->o->k);
}

static void text_next(FILE *o, const struct vpr_variance *v, const struct vpr_vnext *nx)
{
    int limited = v->side[0].limited || v->side[1].limited;
    char *add = vpr_vnext_list(v, nx, 0);
    if (limited) {
        if (*add) {
            char *all = vpr_vnext_list(v, nx, 1);
            fprintf(o, "\nNext: the call events were limited by VPROF_LATENCY_FUNCS. To open the "
                    "top factors' subtrees (their callees %s), run again with\n  "
                    "VPROF_LATENCY_FUNCS=%s\n", add, all);
            free(all);
        } else {
            fprintf(o, "\nNext: the call events were limited by VPROF_LATENCY_FUNCS; the top "
                    "factors have no further callees in the call graph (gmon arcs).\n");
        }
    } else {
        fprintf(o, "\nEvery instrumented function was recorded: the tree above is complete "
                "(no further run needed). ");
        fprintf(o, "Calls shorter than the polling interval are not seen; their time is in "
                "their caller's (self).\n");
    }
    free(add);
}

void vpr_vout_text(FILE *o, const struct vpr_variance *v, const struct vpr_vnext *nx)
{
    int rs = v->rank_side;
    fprintf(o, "vprof-report --variance: %s of %s\n",
            v->root_f >= 0 ? "calls" : "requests", v->m->exe);
    if (v->root_f >= 0) fprintf(o, "  intervals: every outermost call of %s\n", vpr_dm(v->m->f[v->root_f].name));
    for (int s = 0; s < 2; s++)
        if (v->side[s].runs) text_side(o, v, s);
    char tot[2][32];
    for (int s = 0; s < 2; s++) vpr_vfmt_ns(tot[s], sizeof tot[s], sqrt(v->nodes[0].var[s]));
    fprintf(o, "\nVariance tree: each node's share of the %s variance (sd %s)",
            v->root_f >= 0 ? "call duration" : "request latency", tot[rs]);
    if (two(v))
        fprintf(o, " in the normal and buggy runs, and of the increase (sd %s -> %s)", tot[0], tot[1]);
    fprintf(o, ";\nmean time per %s, %% of them where the node occurs%s. A node's variance is "
            "its children's plus their 2·Cov terms.\n", v->root_f >= 0 ? "call" : "request",
            two(v) ? " (buggy runs)" : "");
    if (two(v)) fprintf(o, " normal    buggy  increase ");
    else fprintf(o, "   share ");
    fprintf(o, "%10s %6s  node\n", "mean", "in %");
    struct tctx c = {o, v, pair_order(v), 0};
    text_node(&c, 0, 0);
    if (c.hidden)
        fprintf(o, "  (%zu subtree(s) below %.1f %% of the variance not shown; --show 0 shows all)\n",
                c.hidden, 100 * v->o->show);
    free(c.pord);
    fprintf(o, "\nTop factors (VProfiler Algorithm 1: score = (H - height)² × contribution, "
            "H = %d; first %d by score above %.1f %%)%s:\n", v->nodes[0].height, v->o->k,
            100 * v->o->d, two(v) ? ", buggy runs" : "");
    text_factors(o, v, v->factors, v->top, v->n_top, 0);
    if (two(v)) {
        fprintf(o, "\nWhat changed: factors of the increase of the variance (buggy - normal):\n");
        if (v->delta) text_factors(o, v, v->delta, v->dtop, v->n_dtop, 1);
        else fprintf(o, "  the variance did not grow\n");
    }
    text_next(o, v, nx);
}

/* ------------------------------------------------------------------ JSON */

static void i128_str(char *buf, size_t len, __int128 x)
{
    char t[48];
    int k = 0, neg = x < 0;
    unsigned __int128 u = neg ? -(unsigned __int128)x : (unsigned __int128)x;
    do { t[k++] = (char)('0' + (int)(u % 10)); u /= 10; } while (u);
    size_t j = 0;
    if (neg && j + 1 < len) buf[j++] = '-';
    while (k && j + 1 < len) buf[j++] = t[--k];
    buf[j] = 0;
}

static void json_factors(FILE *o, const struct vpr_variance *v, const struct vpr_vfactor *fs,
                         size_t n, const size_t *top, size_t n_top)
{
    fputc('[', o);
    size_t lim = n < 20 ? n : 20;
    for (size_t i = 0; i < lim; i++) {
        const struct vpr_vfactor *f = &fs[i];
        char nm[600];
        int t = 0;
        for (size_t r = 0; r < n_top; r++) if (top[r] == i) t = (int)r + 1;
        vpr_vfactor_name(v, f, nm, sizeof nm);
        fprintf(o, "%s\n    {\"order\":%zu,\"top\":%d,\"name\":", i ? "," : "", i + 1, t);
        vpr_jstr(o, nm);
        fprintf(o, ",\"pair\":%s,\"height\":%d,\"specificity\":%.17g,\"contribution\":",
                f->is_pair ? "true" : "false", f->height, f->spec);
        vpr_jnum(o, f->share);
        fputs(",\"score\":", o);
        vpr_jnum(o, f->score);
        fputs(",\"var_us2\":{", o);
        int first = 1;
        for (int s = 0; s < 2; s++)
            if (v->side[s].n) {
                fprintf(o, "%s\"%s\":", first ? "" : ",", side_name(v, s));
                vpr_jnum(o, f->contri[s] / 1e6);
                first = 0;
            }
        fprintf(o, "},\"inherent\":%s,\"r2\":", f->inherent < 0 ? "null" : f->inherent ? "true" : "false");
        vpr_jnum(o, f->r2);
        fputc('}', o);
    }
    fputs("]", o);
}

void vpr_vout_json(FILE *o, const struct vpr_variance *v, const struct vpr_vnext *nx)
{
    static const char *tn[VT_N] = {"root", "func", "body", "mutex", "cond", "syscall",
                                   "queued", "unexplained", "sem", "join", "spin",
                                   "rwlock", "barrier"};
    fputs("{\"vprof_variance\":1,\"exe\":", o);
    vpr_jstr(o, v->m->exe);
    fputs(",\"intervals\":", o);
    vpr_jstr(o, v->root_f >= 0 ? "calls" : "requests");
    fputs(",\"root\":", o);
    vpr_jstr(o, v->root_f >= 0 ? vpr_dm(v->m->f[v->root_f].name) : NULL);
    fprintf(o, ",\"options\":{\"factors\":%d,\"min_contribution\":%.17g,\"inherent_r2\":%.17g,"
            "\"edge_depth\":%d},\"ranked\":\"%s\",\n\"sides\":[", v->o->k, v->o->d,
            v->o->inherent_r2, v->o->depth, side_name(v, v->rank_side));
    int first = 1;
    for (int s = 0; s < 2; s++) {
        const struct vpr_vside *sd = &v->side[s];
        if (!sd->runs) continue;
        char den[48];
        i128_str(den, sizeof den, (__int128)sd->n * (__int128)(sd->n ? sd->n - 1 : 0));
        fprintf(o, "%s\n  {\"name\":\"%s\",\"runs\":%zu,\"intervals\":%llu,\"incomplete\":%llu,"
                "\"unexplained\":%llu,\"limited\":%s,\"denominator\":\"%s\",\"latency\":{",
                first ? "" : ",", side_name(v, s), sd->runs, (unsigned long long)sd->n,
                (unsigned long long)sd->incomplete, (unsigned long long)sd->unexplained,
                sd->limited ? "true" : "false", den);
        fputs("\"mean_us\":", o); vpr_jnum(o, v->nodes[0].mean[s] / 1e3);
        fputs(",\"var_us2\":", o); vpr_jnum(o, v->nodes[0].var[s] / 1e6);
        fputs(",\"sd_us\":", o); vpr_jnum(o, sqrt(v->nodes[0].var[s]) / 1e3);
        fputs(",\"p50_us\":", o); vpr_jnum(o, vpr_vpct(sd, 0.5) / 1e3);
        fputs(",\"p99_us\":", o); vpr_jnum(o, vpr_vpct(sd, 0.99) / 1e3);
        fputs(",\"p999_us\":", o); vpr_jnum(o, vpr_vpct(sd, 0.999) / 1e3);
        fputs(",\"max_us\":", o); vpr_jnum(o, (double)sd->max_lat / 1e3);
        fprintf(o, "},\"work\":{\"source\":");
        if (v->o->work_var) vpr_jstr(o, v->o->work_var); else fputs("\"vprof_req_work\"", o);
        fprintf(o, ",\"intervals\":%llu,\"r2\":", (unsigned long long)sd->with_work);
        if (sd->with_work) vpr_jnum(o, v->nodes[0].r2[s]); else fputs("null", o);
        fputs("}}", o);
        first = 0;
    }
    fputs("],\n\"nodes\":[", o);
    for (size_t i = 0; i < v->n_nodes; i++) {
        const struct vpr_vnode *n = &v->nodes[i];
        char nm[512];
        vpr_vnode_name(v, (uint32_t)i, nm, sizeof nm);
        fprintf(o, "%s\n  {\"id\":%zu,\"parent\":%ld,\"type\":\"%s\",\"name\":", i ? "," : "", i,
                n->parent == NONE ? -1L : (long)n->parent, tn[n->type]);
        vpr_jstr(o, nm);
        fprintf(o, ",\"depth\":%u,\"height\":%d,\"top\":%d,\"leaf_body\":%s", n->depth, n->height,
                vpr_vnode_top(v, (uint32_t)i),
                n->type == VT_BODY && v->nodes[n->parent].first_child == NONE ? "true" : "false");
        first = 1;
        for (int s = 0; s < 2; s++) {
            const struct vpr_vside *sd = &v->side[s];
            if (!sd->runs) continue;
            char num[48];
            i128_str(num, sizeof num, vpr_vnum_node(v, (uint32_t)i, s));
            fprintf(o, ",\"%s\":{\"num\":\"%s\",\"var_us2\":", side_name(v, s), num);
            vpr_jnum(o, n->var[s] / 1e6);
            fputs(",\"share\":", o); vpr_jnum(o, share(v, s, n->var[s]));
            fputs(",\"mean_us\":", o); vpr_jnum(o, n->mean[s] / 1e3);
            fprintf(o, ",\"present\":%llu,\"r2\":", (unsigned long long)n->acc[s].present);
            vpr_jnum(o, n->r2[s]);
            fputc('}', o);
        }
        fputc('}', o);
    }
    fputs("],\n\"covariances\":[", o);
    for (size_t i = 0; i < v->n_pairs; i++) {
        const struct vpr_vpair *p = &v->pairs[i];
        fprintf(o, "%s\n  {\"parent\":%u,\"a\":%u,\"b\":%u", i ? "," : "", v->nodes[p->a].parent,
                p->a, p->b);
        for (int s = 0; s < 2; s++) {
            const struct vpr_vside *sd = &v->side[s];
            if (!sd->runs) continue;
            char num[48];
            i128_str(num, sizeof num, vpr_vnum_pair(v, p, s));
            fprintf(o, ",\"%s\":{\"num\":\"%s\",\"cov_us2\":", side_name(v, s), num);
            vpr_jnum(o, p->cov[s] / 1e6);
            fputs(",\"share\":", o); vpr_jnum(o, share(v, s, 2 * p->cov[s]));
            fputc('}', o);
        }
        fputc('}', o);
    }
    fputs("],\n\"factors\":", o);
    json_factors(o, v, v->factors, v->n_factors, v->top, v->n_top);
    fputs(",\n\"changed\":", o);
    if (v->delta) json_factors(o, v, v->delta, v->n_delta, v->dtop, v->n_dtop);
    else fputs("null", o);
    char *add = vpr_vnext_list(v, nx, 0), *all = vpr_vnext_list(v, nx, 1);
    fprintf(o, ",\n\"next\":{\"limited\":%s,\"open\":", v->side[0].limited || v->side[1].limited ?
            "true" : "false");
    vpr_jstr(o, add);
    fputs(",\"env\":", o);
    vpr_jstr(o, *all ? all : NULL);
    fputs("}}\n", o);
    free(add);
    free(all);
}
