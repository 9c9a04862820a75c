/* waits_graph.c - wPerf's analysis of a wait timeline (paper 003 §3.2-§4.2).
 *
 * 1. Cascaded redistribution (§3.2, Figure 4): every waiting segment of A
 *    on B, from its start to its wake-up, charges its length to A -> B;
 *    then each segment in which B itself waited during that time charges
 *    the overlap to B -> C, recursively (a chain never returns to a
 *    vertex already on it; --waits-depth bounds it). The weight of an edge
 *    is what optimising it could save at most, including the waits it
 *    caused downstream. The time from the wake-up to the end of a wait is
 *    runnable time (woken, not yet running), not waiting.
 * 2. The wait-for graph (§3.1): an edge A -> B when A waited for B; threads
 *    with the same start routine merged into one vertex (§4.2), whose
 *    waits on each other become a self-loop.
 * 3. Knots and sinks (§3.1): strongly connected components (Tarjan) with
 *    no edge leaving them; a knot has two or more vertices or a self-loop,
 *    a sink is a lone vertex that waits for nobody.
 * 4. Refinement (§3.3, §4.3): inside a knot, remove the lightest edge
 *    until the knot is one vertex or a simple cycle, or its lightest edge
 *    weighs at least --waits-keep x the observed time (the paper's 20 %);
 *    whenever it falls apart, find the knots and sinks inside again. */
#include "vprof_xalloc.h"
#include "waits.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- 1. cascaded redistribution ---- */

struct cctx {
    struct vpr_wtimeline *tl;
    int max_depth;
    uint32_t path[256];
    size_t cascades;
};

static int on_path(const struct cctx *c, int depth, uint32_t v)
{
    for (int i = 0; i <= depth; i++) if (c->path[i] == v) return 1;
    return 0;
}

/* Segment i (of vertex path[depth]) waits during [s, e]. */
static void cascade(struct cctx *c, size_t i, uint64_t s, uint64_t e, int depth)
{
    struct vpr_wtimeline *tl = c->tl;
    tl->seg[i].w += (double)(e - s);
    c->cascades++;
    if (depth + 1 >= c->max_depth) return;
    uint32_t b = tl->seg[i].waker;
    c->path[depth + 1] = b;
    /* b's segments overlapping [s, e]: the first that ends after s */
    size_t lo = tl->first[b], hi = tl->first[b + 1];
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (tl->seg[mid].end <= s) lo = mid + 1; else hi = mid;
    }
    for (size_t k = lo; k < tl->first[b + 1] && tl->seg[k].start < e; k++) {
        const struct vpr_wseg *x = &tl->seg[k];
        uint64_t a = x->start > s ? x->start : s, z = x->wake < e ? x->wake : e;
        if (z <= a || on_path(c, depth + 1, x->waker)) continue;
        cascade(c, k, a, z, depth + 1);
    }
}

/* ---- 2. the graph ---- */

static int cmp_edge_ab(const void *x, const void *y)
{
    const struct vpr_wedge *a = x, *b = y;
    if (a->a != b->a) return a->a < b->a ? -1 : 1;
    return (a->b > b->b) - (a->b < b->b);
}

static int cmp_edge_w(const void *x, const void *y)
{
    const struct vpr_wedge *a = x, *b = y;
    if (a->w != b->w) return a->w > b->w ? -1 : 1;
    return cmp_edge_ab(x, y);
}

static void build_groups(struct vpr_wgraph *g)
{
    const struct vpr_wtimeline *tl = g->tl;
    g->group = vpf_xmalloc((tl->n_v ? tl->n_v : 1) * sizeof *g->group);
    for (size_t i = 0; i < tl->n_v; i++) {
        const struct vpr_wvertex *v = &tl->v[i];
        long same = -1;
        if (g->o.merge && v->kind == VPR_WV_THREAD && v->role_name &&
            strcmp(v->role_name, "main"))
            for (size_t k = 0; k < i && same < 0; k++)
                if (tl->v[k].kind == VPR_WV_THREAD && tl->v[k].role_name &&
                    !strcmp(tl->v[k].role_name, v->role_name))
                    same = g->group[k];
        if (same < 0) {
            g->v = vpf_xrealloc(g->v, (g->n_v + 1), sizeof *g->v);
            memset(&g->v[g->n_v], 0, sizeof *g->v);
            g->v[g->n_v].kind = v->kind;
            g->v[g->n_v].cpu_s = -1;
            g->v[g->n_v].runnable_s = -1;
            same = (long)g->n_v++;
        }
        struct vpr_wgvertex *gv = &g->v[same];
        if (v->runnable_s >= 0)         /* preempted time (perf input) */
            gv->runnable_s = (gv->runnable_s < 0 ? 0 : gv->runnable_s) + v->runnable_s;
        g->group[i] = (uint32_t)same;
        gv->members = vpf_xrealloc(gv->members, (gv->n_members + 1), sizeof *gv->members);
        gv->members[gv->n_members++] = (uint32_t)i;
        uint64_t f = v->kind == VPR_WV_THREAD ? v->first : tl->t0;
        uint64_t l = v->kind == VPR_WV_THREAD ? v->last : tl->t1;
        gv->span_s += l > f ? (double)(l - f) / 1e9 : 0;
        if (v->cpu_s >= 0) gv->cpu_s = (gv->cpu_s < 0 ? 0 : gv->cpu_s) + v->cpu_s;
    }
    for (size_t k = 0; k < g->n_v; k++) {
        struct vpr_wgvertex *gv = &g->v[k];
        const struct vpr_wvertex *v0 = &tl->v[gv->members[0]];
        char nm[300];
        if (gv->n_members > 1)
            snprintf(nm, sizeof nm, "%s x%zu", v0->role_name, gv->n_members);
        else
            snprintf(nm, sizeof nm, "%s", v0->name);
        gv->name = vpf_xstrdup(nm);
    }
}

static void build_edges(struct vpr_wgraph *g)
{
    const struct vpr_wtimeline *tl = g->tl;
    struct vpr_wedge *e = vpf_xmalloc((tl->n_seg ? tl->n_seg : 1) * sizeof *e);
    size_t n = 0;
    for (size_t i = 0; i < tl->n_seg; i++) {
        const struct vpr_wseg *s = &tl->seg[i];
        struct vpr_wgvertex *gv = &g->v[g->group[s->v]];
        gv->wait_s += (double)(s->wake - s->start) / 1e9;
        if (s->end > s->wake) gv->runnable_s = (gv->runnable_s < 0 ? 0 : gv->runnable_s) +
                                               (double)(s->end - s->wake) / 1e9;
        if (tl->v[s->waker].kind == VPR_WV_UNKNOWN) {
            /* missing data, not a vertex: as a sink it would break every knot */
            g->n_unknown++;
            g->unknown_ns += (double)(s->wake - s->start);
            continue;
        }
        e[n++] = (struct vpr_wedge){g->group[s->v], g->group[s->waker], s->w,
                                    (double)(s->wake - s->start), 1, 0};
    }
    qsort(e, n, sizeof *e, cmp_edge_ab);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (k && e[k - 1].a == e[i].a && e[k - 1].b == e[i].b) {
            e[k - 1].w += e[i].w;
            e[k - 1].direct += e[i].direct;
            e[k - 1].n_seg++;
        } else {
            e[k++] = e[i];
        }
    }
    qsort(e, k, sizeof *e, cmp_edge_w);
    /* noise: waits too short in sum to matter would break knots (an edge
     * leaving a knot makes it none) */
    double min = g->o.min * g->span_ns;
    while (k && e[k - 1].w < min) {
        g->n_negl++;
        g->negl_ns += e[--k].w;
    }
    g->e = e;
    g->n_e = k;
    g->out_of_graph = vpf_xcalloc(g->n_v ? g->n_v : 1, 1);
    char *linked = vpf_xcalloc(g->n_v ? g->n_v : 1, 1);
    for (size_t i = 0; i < k; i++) linked[e[i].a] = linked[e[i].b] = 1;
    for (size_t v = 0; v < g->n_v; v++) {
        const struct vpr_wgvertex *gv = &g->v[v];
        double ran = gv->cpu_s >= 0 ? gv->cpu_s : gv->span_s - gv->wait_s;
        g->out_of_graph[v] = !linked[v] && (gv->kind != VPR_WV_THREAD || ran * 1e9 < min || ran <= 0);
    }
    free(linked);
}

long vpr_wait_edge(const struct vpr_wgraph *g, uint32_t a, uint32_t b)
{
    for (size_t i = 0; i < g->n_e; i++) if (g->e[i].a == a && g->e[i].b == b) return (long)i;
    return -1;
}

/* ---- 3. strongly connected components of a vertex subset ---- */

struct scc {
    const struct vpr_wgraph *g;
    const char *in;             /* subset mask */
    size_t *adj_start, *adj;    /* CSR over live edges inside the subset */
    long *index, *low, *comp;
    size_t *stack, sp;
    char *on;
    long counter, n_comp;
};

static void strong(struct scc *c, size_t v)
{
    c->index[v] = c->low[v] = c->counter++;
    c->stack[c->sp++] = v;
    c->on[v] = 1;
    for (size_t k = c->adj_start[v]; k < c->adj_start[v + 1]; k++) {
        size_t w = c->adj[k];
        if (c->index[w] < 0) {
            strong(c, w);
            if (c->low[w] < c->low[v]) c->low[v] = c->low[w];
        } else if (c->on[w] && c->index[w] < c->low[v]) {
            c->low[v] = c->index[w];
        }
    }
    if (c->low[v] == c->index[v]) {
        size_t w;
        do {
            w = c->stack[--c->sp];
            c->on[w] = 0;
            c->comp[w] = c->n_comp;
        } while (w != v);
        c->n_comp++;
    }
}

static int live_in(const struct vpr_wgraph *g, const char *in, size_t i)
{
    return !g->e[i].removed && in[g->e[i].a] && in[g->e[i].b];
}

/* Components of the subset; comp[v] for v in it. */
static void components(const struct vpr_wgraph *g, const char *in, long *comp)
{
    size_t n = g->n_v;
    struct scc c = {.g = g, .in = in, .comp = comp};
    c.adj_start = vpf_xcalloc(n + 1, sizeof *c.adj_start);
    c.adj = vpf_xmalloc((g->n_e ? g->n_e : 1) * sizeof *c.adj);
    for (size_t i = 0; i < g->n_e; i++) if (live_in(g, in, i)) c.adj_start[g->e[i].a + 1]++;
    for (size_t v = 0; v < n; v++) c.adj_start[v + 1] += c.adj_start[v];
    size_t *fill = vpf_xcalloc(n, sizeof *fill);
    for (size_t i = 0; i < g->n_e; i++)
        if (live_in(g, in, i)) c.adj[c.adj_start[g->e[i].a] + fill[g->e[i].a]++] = g->e[i].b;
    free(fill);
    c.index = vpf_xmalloc(n * sizeof *c.index);
    c.low = vpf_xmalloc(n * sizeof *c.low);
    c.stack = vpf_xmalloc(n * sizeof *c.stack);
    c.on = vpf_xcalloc(n, 1);
    for (size_t v = 0; v < n; v++) { c.index[v] = -1; comp[v] = -1; }
    for (size_t v = 0; v < n; v++) if (in[v] && c.index[v] < 0) strong(&c, v);
    free(c.adj_start); free(c.adj); free(c.index); free(c.low); free(c.stack); free(c.on);
}

/* ---- knots, sinks, refinement ---- */

static void push_res(struct vpr_wknot **arr, size_t *n, const struct vpr_wgraph *g,
                     const char *in, int type, int parent)
{
    *arr = vpf_xrealloc(*arr, (*n + 1), sizeof **arr);
    struct vpr_wknot *k = &(*arr)[(*n)++];
    memset(k, 0, sizeof *k);
    k->type = type;
    k->parent = parent;
    for (size_t v = 0; v < g->n_v; v++)
        if (in[v]) {
            k->vs = vpf_xrealloc(k->vs, (k->n_vs + 1), sizeof *k->vs);
            k->vs[k->n_vs++] = (uint32_t)v;
        }
    for (size_t i = 0; i < g->n_e; i++)
        if (live_in(g, in, i)) {
            k->edges = vpf_xrealloc(k->edges, (k->n_edges + 1), sizeof *k->edges);
            k->edges[k->n_edges++] = i;
        }
}

/* The terminal components of subset in: knots get fn(knot mask), sinks are
 * pushed as results. */
static void terminal(struct vpr_wgraph *g, const char *in, int parent,
                     void (*fn)(struct vpr_wgraph *, char *, int))
{
    size_t n = g->n_v;
    long *comp = vpf_xmalloc((n ? n : 1) * sizeof *comp);
    components(g, in, comp);
    long nc = 0;
    for (size_t v = 0; v < n; v++) if (comp[v] + 1 > nc) nc = comp[v] + 1;
    char *out = vpf_xcalloc((size_t)nc + 1, 1), *loop = vpf_xcalloc((size_t)nc + 1, 1);
    size_t *size = vpf_xcalloc((size_t)nc + 1, sizeof *size);
    for (size_t v = 0; v < n; v++) if (in[v]) size[comp[v]]++;
    for (size_t i = 0; i < g->n_e; i++) {
        if (!live_in(g, in, i)) continue;
        long ca = comp[g->e[i].a], cb = comp[g->e[i].b];
        if (ca != cb) out[ca] = 1;
        else if (g->e[i].a == g->e[i].b) loop[ca] = 1;
    }
    char *mask = vpf_xmalloc(n ? n : 1);
    for (long k = 0; k < nc; k++) {
        if (out[k]) continue;
        for (size_t v = 0; v < n; v++) mask[v] = in[v] && comp[v] == k;
        if (size[k] > 1 || loop[k]) fn(g, mask, parent);
        else push_res(&g->res, &g->n_res, g, mask, VPR_WK_SINK, parent);
    }
    free(mask); free(out); free(loop); free(size); free(comp);
}

static int is_simple(const struct vpr_wgraph *g, const char *in, size_t n_in)
{
    size_t *outdeg = vpf_xcalloc(g->n_v, sizeof *outdeg), n_edges = 0;
    for (size_t i = 0; i < g->n_e; i++)
        if (live_in(g, in, i)) { outdeg[g->e[i].a]++; n_edges++; }
    int simple = n_edges == n_in;
    for (size_t v = 0; v < g->n_v && simple; v++) if (in[v] && outdeg[v] != 1) simple = 0;
    free(outdeg);
    return simple;
}

static int steps;

static void refine(struct vpr_wgraph *g, char *in, int parent)
{
    size_t n_in = 0;
    for (size_t v = 0; v < g->n_v; v++) n_in += in[v] != 0;
    long lightest = -1;
    for (size_t i = 0; i < g->n_e; i++)
        if (live_in(g, in, i)) lightest = (long)i;   /* sorted heaviest first */
    double keep = g->o.keep * g->span_ns;
    if (n_in == 1 || lightest < 0 || is_simple(g, in, n_in) ||
        (g->o.keep > 0 && g->e[lightest].w >= keep)) {
        /* paper §3.3: no I/O pseudo-thread and the threads together use less
         * than one CPU - they sleep a lot, like background threads. Use is
         * running or runnable time (not waiting): PC samples are a lower
         * bound only (a tick in a function without variables records none) */
        int bg = 1;
        double busy = 0;
        for (size_t v = 0; v < g->n_v; v++) {
            if (!in[v]) continue;
            const struct vpr_wgvertex *gv = &g->v[v];
            if (gv->kind != VPR_WV_THREAD) bg = 0;
            busy += gv->span_s - gv->wait_s;
        }
        push_res(&g->res, &g->n_res, g, in, VPR_WK_KNOT, parent);
        g->res[g->n_res - 1].background = bg && g->span_ns > 0 && busy < g->span_ns / 1e9;
        return;
    }
    g->e[lightest].removed = ++steps;
    terminal(g, in, parent, refine);
}

static void note_orig(struct vpr_wgraph *g, char *in, int parent)
{
    (void)parent;
    push_res(&g->orig, &g->n_orig, g, in, VPR_WK_KNOT, -1);
}

void vpr_wait_graph(struct vpr_wtimeline *tl, const struct vpr_wopts *o,
                    struct vpr_wgraph *g)
{
    memset(g, 0, sizeof *g);
    g->tl = tl;
    g->o = *o;
    if (g->o.max_depth < 1) g->o.max_depth = 1;
    if (g->o.max_depth > 256) g->o.max_depth = 256;
    g->span_ns = (double)(tl->t1 - tl->t0);
    struct cctx c = {.tl = tl, .max_depth = g->o.max_depth};
    for (size_t i = 0; i < tl->n_seg; i++) tl->seg[i].w = 0;
    for (size_t i = 0; i < tl->n_seg; i++) {
        c.path[0] = tl->seg[i].v;
        if (tl->seg[i].wake > tl->seg[i].start)
            cascade(&c, i, tl->seg[i].start, tl->seg[i].wake, 0);
    }
    g->cascades = c.cascades;
    build_groups(g);
    build_edges(g);
    char *all = vpf_xmalloc(g->n_v ? g->n_v : 1);
    for (size_t v = 0; v < g->n_v; v++) all[v] = !g->out_of_graph[v];
    steps = 0;
    terminal(g, all, -1, note_orig);
    for (size_t k = 0; k < g->n_orig; k++) {
        char *in = vpf_xcalloc(g->n_v ? g->n_v : 1, 1);
        for (size_t i = 0; i < g->orig[k].n_vs; i++) in[g->orig[k].vs[i]] = 1;
        refine(g, in, (int)k);
        free(in);
    }
    free(all);
}

static void free_knots(struct vpr_wknot *k, size_t n)
{
    for (size_t i = 0; i < n; i++) { free(k[i].vs); free(k[i].edges); }
    free(k);
}

void vpr_wait_graph_free(struct vpr_wgraph *g)
{
    for (size_t i = 0; i < g->n_v; i++) { free(g->v[i].name); free(g->v[i].members); }
    free(g->v);
    free(g->group);
    free(g->e);
    free(g->out_of_graph);
    free_knots(g->orig, g->n_orig);
    free_knots(g->res, g->n_res);
    memset(g, 0, sizeof *g);
}
