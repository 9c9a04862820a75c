/* contexts.c - see contexts.h: the calling-context tree, latency inference
 * from the continuity of calling context, normalization and the
 * differential path ranking. */
#include "contexts.h"

#include <stdlib.h>
#include <string.h>

#include "vprof_format.h"
#include "vprof_xalloc.h"

#define NONE UINT32_MAX

/* ---------- names ---------- */

static size_t slot(uint64_t h, size_t cap)
{
    return (size_t)(h * 0x9e3779b97f4a7c15ull >> 17) & (cap - 1);
}

uint32_t vpr_cname(struct vpr_cnames *nm, const char *s)
{
    uint64_t h = vpf_hash_str(VPF_FNV_BASIS, s);
    if (2 * (nm->n + 1) > nm->hcap) {
        free(nm->h);
        nm->hcap = nm->hcap ? 2 * nm->hcap : 1024;
        nm->h = vpf_xcalloc(nm->hcap, sizeof *nm->h);
        for (size_t i = 0; i < nm->n; i++) {
            size_t k = slot(vpf_hash_str(VPF_FNV_BASIS, nm->name[i]), nm->hcap);
            while (nm->h[k]) k = (k + 1) & (nm->hcap - 1);
            nm->h[k] = (uint32_t)i + 1;
        }
    }
    size_t k = slot(h, nm->hcap);
    for (; nm->h[k]; k = (k + 1) & (nm->hcap - 1))
        if (!strcmp(nm->name[nm->h[k] - 1], s)) return nm->h[k] - 1;
    nm->name = vpf_grow(nm->name, &nm->cap, nm->n + 1, sizeof *nm->name);
    nm->name[nm->n] = vpf_xstrdup(s);
    nm->h[k] = (uint32_t)++nm->n;
    return (uint32_t)(nm->n - 1);
}

void vpr_cnames_free(struct vpr_cnames *nm)
{
    for (size_t i = 0; i < nm->n; i++) free(nm->name[i]);
    free(nm->name);
    free(nm->h);
    memset(nm, 0, sizeof *nm);
}

/* ---------- the tree (Algorithm 1) ---------- */

void vpr_ctree_init(struct vpr_ctree *t)
{
    memset(t, 0, sizeof *t);
    t->n = vpf_xcalloc(1, sizeof *t->n);
    t->cap = 1;
    t->nn = 1;
    t->n[0] = (struct vpr_cnode){.f = NONE, .parent = NONE, .child = NONE, .sibling = NONE};
}

void vpr_ctree_free(struct vpr_ctree *t)
{
    free(t->n);
    free(t->h);
    memset(t, 0, sizeof *t);
}

static uint64_t edge_key(uint32_t parent, uint32_t f)
{
    return ((uint64_t)parent << 32 | f) + 1;
}

/* getNode: the child of v for function f, made on first sight. */
static uint32_t get_node(struct vpr_ctree *t, uint32_t v, uint32_t f)
{
    uint64_t key = edge_key(v, f);
    if (2 * (t->nn + 1) > t->hcap) {
        free(t->h);
        t->hcap = t->hcap ? 2 * t->hcap : 1024;
        t->h = vpf_xcalloc(t->hcap, sizeof *t->h);
        for (size_t i = 1; i < t->nn; i++) {
            size_t k = slot(edge_key(t->n[i].parent, t->n[i].f), t->hcap);
            while (t->h[k]) k = (k + 1) & (t->hcap - 1);
            t->h[k] = (uint32_t)i + 1;
        }
    }
    size_t k = slot(key, t->hcap);
    for (; t->h[k]; k = (k + 1) & (t->hcap - 1)) {
        const struct vpr_cnode *c = &t->n[t->h[k] - 1];
        if (c->parent == v && c->f == f) return t->h[k] - 1;
    }
    t->n = vpf_grow(t->n, &t->cap, t->nn + 1, sizeof *t->n);
    uint32_t id = (uint32_t)t->nn++;
    t->n[id] = (struct vpr_cnode){.f = f, .parent = v, .child = NONE, .sibling = t->n[v].child};
    t->n[v].child = id;
    t->h[k] = id + 1;
    return id;
}

/* ---------- latency inference (Algorithm 2) ---------- */

struct reg { uint64_t ts, te; uint32_t node; };

struct vpr_cthread {
    uint32_t tid;
    uint32_t *last;             /* node at each depth of the previous sample */
    struct reg *reg;            /* the open instance at each depth */
    size_t n, cap;              /* depth of the previous sample */
    uint64_t t_last;
};

void vpr_cbuild_begin(struct vpr_cbuild *b, struct vpr_ctree *t, struct vpr_cnames *nm)
{
    memset(b, 0, sizeof *b);
    b->t = t;
    b->names = nm;
    t->runs++;
}

static struct vpr_cthread *thread_of(struct vpr_cbuild *b, uint32_t tid)
{
    for (size_t i = 0; i < b->n_th; i++)
        if (b->th[i].tid == tid) return &b->th[i];
    b->th = vpf_grow(b->th, &b->cap_th, b->n_th + 1, sizeof *b->th);
    struct vpr_cthread *th = &b->th[b->n_th++];
    memset(th, 0, sizeof *th);
    th->tid = tid;
    return th;
}

/* closeRegister: the instance at depth d ends; t_k is when its context
 * was seen to change (aggressive end), te its last sighting (conservative). */
static void close_reg(struct vpr_ctree *t, const struct reg *r, uint64_t t_k)
{
    struct vpr_cnode *v = &t->n[r->node];
    v->count++;
    v->lat[VPR_CTX_CONSERVATIVE] += (double)(r->te - r->ts);
    v->lat[VPR_CTX_AGGRESSIVE] += (double)(t_k - r->ts);
}

void vpr_cbuild_sample(struct vpr_cbuild *b, uint32_t tid, uint64_t t_ns,
                       const uint32_t *frames, size_t depth)
{
    struct vpr_ctree *t = b->t;
    struct vpr_cthread *th = thread_of(b, tid);
    if (depth > th->cap) {
        size_t nc = 2 * depth;
        th->last = vpf_xrealloc(th->last, nc, sizeof *th->last);
        th->reg = vpf_xrealloc(th->reg, nc, sizeof *th->reg);
        th->cap = nc;
    }
    if (t_ns < th->t_last) t_ns = th->t_last;          /* never backwards */
    t->samples++;
    /* deeper frames of the previous sample that this one does not have */
    for (size_t d = th->n; d-- > depth;) close_reg(t, &th->reg[d], t_ns);
    uint32_t v = 0;
    int changed = 0;            /* a context change propagates upwards */
    for (size_t d = 0; d < depth; d++) {
        v = get_node(t, v, frames[d]);
        if (!changed && (d >= th->n || th->last[d] != v)) changed = 1;
        if (changed) {
            if (d < th->n) close_reg(t, &th->reg[d], t_ns);
            th->reg[d] = (struct reg){t_ns, t_ns, v};
        } else {
            th->reg[d].te = t_ns;
        }
        th->last[d] = v;
    }
    if (depth) t->n[v].leaf++;
    th->n = depth;
    th->t_last = t_ns;
}

void vpr_cbuild_end(struct vpr_cbuild *b)
{
    for (size_t i = 0; i < b->n_th; i++) {
        struct vpr_cthread *th = &b->th[i];
        for (size_t d = th->n; d-- > 0;) close_reg(b->t, &th->reg[d], th->t_last);
        free(th->last);
        free(th->reg);
    }
    free(b->th);
    memset(b, 0, sizeof *b);
}

/* ---------- thread CPU clocks ---------- */

uint64_t vpr_tclock_add(struct vpr_tclock *c, uint32_t tid, uint64_t ns)
{
    if (2 * (c->n + 1) > c->cap) {
        size_t oc = c->cap;
        uint32_t *ot = c->tid;
        uint64_t *on = c->ns;
        c->cap = oc ? 2 * oc : 64;
        c->tid = vpf_xcalloc(c->cap, sizeof *c->tid);
        c->ns = vpf_xcalloc(c->cap, sizeof *c->ns);
        for (size_t i = 0; i < oc; i++) {
            if (!ot[i]) continue;
            size_t k = slot(ot[i], c->cap);
            while (c->tid[k]) k = (k + 1) & (c->cap - 1);
            c->tid[k] = ot[i];
            c->ns[k] = on[i];
        }
        free(ot);
        free(on);
    }
    uint32_t key = tid + 1;                     /* 0 marks a free slot */
    size_t k = slot(key, c->cap);
    while (c->tid[k] && c->tid[k] != key) k = (k + 1) & (c->cap - 1);
    if (!c->tid[k]) { c->tid[k] = key; c->n++; }
    return c->ns[k] += ns;
}

void vpr_tclock_free(struct vpr_tclock *c)
{
    free(c->tid);
    free(c->ns);
    memset(c, 0, sizeof *c);
}

/* ---------- normalization and ranking (Algorithm 3) ---------- */

void vpr_ctree_normalize(struct vpr_ctree *t)
{
    /* children have larger ids than their parent: one pass from the end */
    for (size_t i = 0; i < t->nn; i++)
        for (int e = 0; e < 2; e++) t->n[i].own[e] = t->n[i].lat[e];
    for (size_t i = t->nn; i-- > 1;) {
        const struct vpr_cnode *c = &t->n[i];
        for (int e = 0; e < 2; e++) t->n[c->parent].own[e] -= c->lat[e];
    }
    for (size_t i = 0; i < t->nn; i++)
        for (int e = 0; e < 2; e++)
            if (t->n[i].own[e] < 0) t->n[i].own[e] = 0;
}

uint32_t vpr_ctx_equivalent(const struct vpr_ctree *tree, const struct vpr_ctree *from,
                            uint32_t leaf)
{
    uint32_t chain[4096];
    size_t k = 0;
    for (uint32_t v = leaf; v != 0 && v != NONE && k < 4096; v = from->n[v].parent)
        chain[k++] = from->n[v].f;
    uint32_t v = 0;
    while (k-- > 0) {
        uint32_t c = tree->n[v].child;
        while (c != NONE && tree->n[c].f != chain[k]) c = tree->n[c].sibling;
        if (c == NONE) return NONE;
        v = c;
    }
    return v;
}

uint32_t *vpr_ctx_map(const struct vpr_ctree *to, const struct vpr_ctree *from)
{
    uint32_t *eq = vpf_xcalloc(from->nn ? from->nn : 1, sizeof *eq);
    eq[0] = 0;
    /* parents have smaller ids than their children: one pass */
    for (size_t i = 1; i < from->nn; i++) {
        uint32_t p = eq[from->n[i].parent], c = NONE;
        if (p != NONE)
            for (c = to->n[p].child; c != NONE && to->n[c].f != from->n[i].f; c = to->n[c].sibling) {}
        eq[i] = c;
    }
    return eq;
}

size_t vpr_ctx_path_nodes(const struct vpr_ctree *t, uint32_t leaf, uint32_t *out, size_t cap)
{
    size_t k = 0;
    for (uint32_t v = leaf; v != 0 && v != NONE && k < cap; v = t->n[v].parent) out[k++] = v;
    for (size_t i = 0; i < k / 2; i++) {
        uint32_t x = out[i];
        out[i] = out[k - 1 - i];
        out[k - 1 - i] = x;
    }
    return k;
}

size_t vpr_ctx_hottest(const struct vpr_ctree *t, const uint32_t *nodes, size_t k, int est)
{
    size_t hot = 0;
    for (size_t j = 1; j < k; j++)
        if (t->n[nodes[j]].own[est] > t->n[nodes[hot]].own[est]) hot = j;
    return hot;
}

size_t vpr_ctx_busiest(const struct vpr_ctree *t, const uint32_t *nodes, size_t k, int est)
{
    size_t hot = 0;
    for (size_t j = 1; j < k; j++)
        if (t->n[nodes[j]].leaf > t->n[nodes[hot]].leaf) hot = j;
    return k && t->n[nodes[hot]].leaf ? hot : vpr_ctx_hottest(t, nodes, k, est);
}

static int cmp_path(const void *a, const void *b)
{
    const struct vpr_cpath *x = a, *y = b;
    if (x->cost != y->cost) return x->cost > y->cost ? -1 : 1;
    return x->leaf < y->leaf ? -1 : x->leaf > y->leaf;
}

struct vpr_cpath *vpr_ctx_rank(const struct vpr_ctree *normal, const struct vpr_ctree *buggy,
                               int est, size_t *n)
{
    size_t np = 0;
    for (size_t i = 1; i < buggy->nn; i++) np += buggy->n[i].child == NONE;
    struct vpr_cpath *p = vpf_xcalloc(np ? np : 1, sizeof *p);
    double rb = buggy->runs ? (double)buggy->runs : 1, rn = normal->runs ? (double)normal->runs : 1;
    size_t k = 0;
    for (size_t i = 1; i < buggy->nn; i++) {
        if (buggy->n[i].child != NONE) continue;
        uint32_t eq = vpr_ctx_equivalent(normal, buggy, (uint32_t)i);
        double c = 0;
        for (uint32_t v = (uint32_t)i, w = eq; v != 0; v = buggy->n[v].parent) {
            c += buggy->n[v].own[est] / rb;
            if (w != NONE) {
                c -= normal->n[w].own[est] / rn;
                w = normal->n[w].parent;
            }
        }
        p[k++] = (struct vpr_cpath){(uint32_t)i, c, eq == NONE};
    }
    qsort(p, k, sizeof *p, cmp_path);
    *n = k;
    return p;
}
