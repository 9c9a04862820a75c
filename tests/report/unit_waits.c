/* Unit tests of the --waits analysis (waits_graph.c) on timelines built in
 * memory: cascaded redistribution (paper 003 Figure 3, one level deeper),
 * knots and sinks, refinement with and without --waits-keep, merging of
 * threads by start routine, noise edges. Prints TAP lines. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "waits.h"

static int failed;

static void ok(int cond, const char *what)
{
    printf("%s - waits unit: %s\n", cond ? "ok" : "not ok", what);
    if (!cond) failed = 1;
}

static uint32_t thread(struct vpr_wtimeline *tl, uint32_t tid, const char *role)
{
    char nm[32];
    snprintf(nm, sizeof nm, "t%u", tid);
    uint32_t v = vpr_wait_vertex(tl, VPR_WV_THREAD, tid, 0, nm);
    tl->v[v].role_name = strdup(role);
    tl->v[v].first = tl->t0;
    tl->v[v].last = tl->t1;
    return v;
}

static void seg(struct vpr_wtimeline *tl, uint32_t v, uint32_t waker, uint64_t s, uint64_t e)
{
    tl->seg = realloc(tl->seg, (tl->n_seg + 1) * sizeof *tl->seg);
    struct vpr_wseg *x = &tl->seg[tl->n_seg++];
    memset(x, 0, sizeof *x);
    x->start = s;
    x->end = x->wake = e;
    x->v = v;
    x->waker = waker;
    x->kind = VPR_WS_MUTEX;
    x->site_f = x->wsite_f = -1;
}

static double weight(const struct vpr_wgraph *g, const char *a, const char *b)
{
    for (size_t i = 0; i < g->n_e; i++)
        if (!strcmp(g->v[g->e[i].a].name, a) && !strcmp(g->v[g->e[i].b].name, b)) return g->e[i].w;
    return -1;
}

/* The names of result r's vertices, sorted, comma-separated. */
static const char *members(const struct vpr_wgraph *g, const struct vpr_wknot *k)
{
    static char buf[256];
    const char *n[16];
    size_t c = 0;
    for (size_t i = 0; i < k->n_vs && c < 16; i++) n[c++] = g->v[k->vs[i]].name;
    for (size_t i = 1; i < c; i++)
        for (size_t j = i; j > 0 && strcmp(n[j], n[j - 1]) < 0; j--) {
            const char *t = n[j]; n[j] = n[j - 1]; n[j - 1] = t;
        }
    buf[0] = 0;
    for (size_t i = 0; i < c; i++) { if (i) strcat(buf, ","); strcat(buf, n[i]); }
    return buf;
}

static const struct vpr_wknot *only(const struct vpr_wgraph *g, int type, size_t *count)
{
    const struct vpr_wknot *k = NULL;
    *count = 0;
    for (size_t i = 0; i < g->n_res; i++)
        if (g->res[i].type == type) { k = &g->res[i]; (*count)++; }
    return k;
}

static struct vpr_wopts opts(double keep, int merge)
{
    struct vpr_wopts o = {.keep = keep, .min = 0, .merge = merge, .max_depth = 64};
    return o;
}

/* Figure 3, one level deeper: A waits for B [0,6), B for C [0,4), C for D
 * [0,2) in each period of 10: A->B 6, B->C 4 + 4, C->D 2 + 2 + 2. */
static void cascade_test(void)
{
    struct vpr_wtimeline tl;
    memset(&tl, 0, sizeof tl);
    tl.t0 = 0;
    tl.t1 = 1000;
    uint32_t a = thread(&tl, 1, "a"), b = thread(&tl, 2, "b"), c = thread(&tl, 3, "c"),
             d = thread(&tl, 4, "d");
    for (uint64_t t = 0; t < 1000; t += 10) {
        seg(&tl, a, b, t, t + 6);
        seg(&tl, b, c, t, t + 4);
        seg(&tl, c, d, t, t + 2);
    }
    vpr_wait_finish(&tl);
    struct vpr_wopts o = opts(0.2, 1);
    struct vpr_wgraph g;
    vpr_wait_graph(&tl, &o, &g);
    ok(weight(&g, "a", "b") == 600, "cascade: A->B keeps its own 6 per period (600)");
    ok(weight(&g, "b", "c") == 800, "cascade: B->C gets 4 own + 4 from A's wait (800)");
    ok(weight(&g, "c", "d") == 600, "cascade: C->D gets 2 + 2 + 2, recursively (600)");
    size_t nk, ns;
    only(&g, VPR_WK_KNOT, &nk);
    const struct vpr_wknot *s = only(&g, VPR_WK_SINK, &ns);
    ok(nk == 0 && ns == 1 && !strcmp(members(&g, s), "d"), "cascade: no knot, D is the sink");
    vpr_wait_graph_free(&g);
    o.max_depth = 1;
    vpr_wait_graph(&tl, &o, &g);
    ok(weight(&g, "b", "c") == 400 && weight(&g, "c", "d") == 200,
       "cascade: --waits-depth 1 keeps only the own waits");
    vpr_wait_graph_free(&g);
    vpr_wait_timeline_free(&tl);
}

/* A cycle that cascades into itself must terminate: A waits for B and B
 * for A over the same time. */
static void cycle_test(void)
{
    struct vpr_wtimeline tl;
    memset(&tl, 0, sizeof tl);
    tl.t1 = 100;
    uint32_t a = thread(&tl, 1, "a"), b = thread(&tl, 2, "b");
    seg(&tl, a, b, 0, 50);
    seg(&tl, b, a, 0, 50);
    vpr_wait_finish(&tl);
    struct vpr_wopts o = opts(0.2, 1);
    struct vpr_wgraph g;
    vpr_wait_graph(&tl, &o, &g);
    size_t nk;
    const struct vpr_wknot *k = only(&g, VPR_WK_KNOT, &nk);
    ok(weight(&g, "a", "b") == 50 && weight(&g, "b", "a") == 50,
       "cycle: cascading stops at a vertex already on the chain (50 each, own only)");
    ok(nk == 1 && !strcmp(members(&g, k), "a,b"), "cycle: a <-> b is a knot");
    vpr_wait_graph_free(&g);
    vpr_wait_timeline_free(&tl);
}

/* Knot {a,b,c}: a->b 5, b->a 4, b->c 1, c->a 3 (no overlaps: no cascade). */
static void refine_test(void)
{
    struct vpr_wtimeline tl;
    memset(&tl, 0, sizeof tl);
    tl.t1 = 10;
    uint32_t a = thread(&tl, 1, "a"), b = thread(&tl, 2, "b"), c = thread(&tl, 3, "c");
    seg(&tl, a, b, 0, 5);
    seg(&tl, b, a, 5, 9);
    seg(&tl, b, c, 9, 10);
    seg(&tl, c, a, 0, 3);
    vpr_wait_finish(&tl);
    struct vpr_wopts o = opts(0, 1);
    struct vpr_wgraph g;
    vpr_wait_graph(&tl, &o, &g);
    size_t nk, ns;
    const struct vpr_wknot *k = only(&g, VPR_WK_KNOT, &nk);
    ok(g.n_orig == 1 && !strcmp(members(&g, &g.orig[0]), "a,b,c"), "refine: one knot a,b,c before");
    ok(nk == 1 && !strcmp(members(&g, k), "a,b") && k->n_edges == 2,
       "refine: removing the lightest edge b->c leaves the cycle a <-> b");
    long bc = vpr_wait_edge(&g, g.group[b], g.group[c]);
    ok(bc >= 0 && g.e[bc].removed == 1, "refine: b->c removed in step 1");
    only(&g, VPR_WK_SINK, &ns);
    ok(ns == 0, "refine: no sink");
    vpr_wait_graph_free(&g);
    o.keep = 0.05;                      /* 0.5 of 10: every edge is heavier */
    vpr_wait_graph(&tl, &o, &g);
    k = only(&g, VPR_WK_KNOT, &nk);
    ok(nk == 1 && !strcmp(members(&g, k), "a,b,c"), "refine: --waits-keep 0.05 keeps the knot whole");
    vpr_wait_graph_free(&g);
    /* a knot whose refinement leaves a sink: x <-> y, y -> z 3, z -> y 1 */
    vpr_wait_timeline_free(&tl);
    memset(&tl, 0, sizeof tl);
    tl.t1 = 100;
    uint32_t x = thread(&tl, 1, "x"), y = thread(&tl, 2, "y"), z = thread(&tl, 3, "z");
    seg(&tl, x, y, 0, 10);
    seg(&tl, y, x, 10, 20);
    seg(&tl, y, z, 20, 23);
    seg(&tl, z, y, 30, 31);
    vpr_wait_finish(&tl);
    o.keep = 0;
    vpr_wait_graph(&tl, &o, &g);
    const struct vpr_wknot *s = only(&g, VPR_WK_SINK, &ns);
    only(&g, VPR_WK_KNOT, &nk);
    ok(nk == 0 && ns == 1 && !strcmp(members(&g, s), "z") && s->parent == 0,
       "refine: without z -> y, z is a sink found inside the knot");
    vpr_wait_graph_free(&g);
    vpr_wait_timeline_free(&tl);
}

/* Two workers with one start routine contending with each other, and a
 * noise edge out of them. */
static void merge_test(void)
{
    struct vpr_wtimeline tl;
    memset(&tl, 0, sizeof tl);
    tl.t1 = 1000;
    uint32_t w1 = thread(&tl, 1, "worker"), w2 = thread(&tl, 2, "worker"), m = thread(&tl, 3, "main");
    seg(&tl, w1, w2, 0, 300);
    seg(&tl, w2, w1, 300, 600);
    seg(&tl, m, w1, 0, 900);
    seg(&tl, w2, m, 950, 952);          /* 0.2 %: noise */
    vpr_wait_finish(&tl);
    struct vpr_wopts o = opts(0.2, 1);
    o.min = 0.01;
    struct vpr_wgraph g;
    vpr_wait_graph(&tl, &o, &g);
    size_t nk;
    const struct vpr_wknot *k = only(&g, VPR_WK_KNOT, &nk);
    ok(g.n_v == 2 && weight(&g, "worker x2", "worker x2") == 900,
       "merge: two workers are one vertex with a self-loop of 900 (600 own + 300 "
       "cascaded from main's wait on worker 1)");
    ok(nk == 1 && !strcmp(members(&g, k), "worker x2"), "merge: the self-loop is a knot");
    ok(g.n_negl == 1, "noise: the 2-unit edge back to main is left out");
    vpr_wait_graph_free(&g);
    o.min = 0;
    vpr_wait_graph(&tl, &o, &g);
    only(&g, VPR_WK_KNOT, &nk);
    ok(nk == 1 && g.orig[0].n_vs == 2, "noise: kept, it joins main into the knot");
    vpr_wait_graph_free(&g);
    o.merge = 0;
    o.min = 0.01;
    vpr_wait_graph(&tl, &o, &g);
    k = only(&g, VPR_WK_KNOT, &nk);
    ok(g.n_v == 3 && nk == 1 && k->n_vs == 2, "merge none: the two workers form a knot");
    vpr_wait_graph_free(&g);
    vpr_wait_timeline_free(&tl);
}

int main(void)
{
    cascade_test();
    cycle_test();
    refine_test();
    merge_test();
    return failed;
}
