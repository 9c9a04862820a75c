/* variance_tree.c - the variance tree (VProfiler §3.2): nodes, exact sums
 * over intervals, variances and covariances, heights, factor selection
 * (Algorithm 1) and the inherent/pathological label.
 *
 * Exactness. An interval's time is split over the nodes in integer ns, and
 * a node's time is the sum of its children's and its body's, so per
 * interval x_parent = Σ x_child exactly. The sums Σx, Σx² and Σ x_a·x_b of
 * sibling pairs are kept as 128-bit integers, and every (co)variance is
 * N/(n(n-1)) with the integer numerator N = n·Σx_a·x_b − Σx_a·Σx_b. N is
 * bilinear, so N(parent, parent) = Σ N(child, child) + 2 Σ N(child_i,
 * child_j) holds as an integer identity: the decomposition sums to the
 * measured variance of the interval latency with no rounding at all (the
 * JSON carries the numerators). The sums stay exact while n · max latency
 * < 2^63 ns (e.g. a million requests of up to 2.5 hours); beyond that the
 * analysis stops with an error instead of printing wrong numbers. */
#include "demangle.h"
#include "vprof_format.h"
#include "vprof_xalloc.h"
#include "variance.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NONE UINT32_MAX

typedef unsigned __int128 u128;
typedef __int128 i128;

static uint64_t mix(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return k;
}

static uint64_t node_hash(uint32_t parent, uint8_t type, long f)
{
    return mix(((uint64_t)parent << 32) ^ ((uint64_t)type << 56) ^ (uint64_t)(f + 7) * 0x9e3779b97f4a7c15ull);
}

static void node_rehash(struct vpr_variance *v)
{
    free(v->nh);
    v->nh_cap = v->nh_cap ? 2 * v->nh_cap : 256;
    v->nh = vpf_xcalloc(v->nh_cap, sizeof *v->nh);
    for (size_t i = 0; i < v->n_nodes; i++) {
        const struct vpr_vnode *n = &v->nodes[i];
        size_t h = node_hash(n->parent, n->type, n->f) & (v->nh_cap - 1);
        while (v->nh[h]) h = (h + 1) & (v->nh_cap - 1);
        v->nh[h] = i + 1;
    }
}

static uint32_t node_new(struct vpr_variance *v, uint32_t parent, uint8_t type, long f)
{
    if (v->n_nodes == v->cap_nodes) {
        v->cap_nodes = v->cap_nodes ? 2 * v->cap_nodes : 64;
        v->nodes = vpf_xrealloc(v->nodes, v->cap_nodes, sizeof *v->nodes);
        v->x = vpf_xrealloc(v->x, v->cap_nodes, sizeof *v->x);
    }
    if (2 * (v->n_nodes + 1) > v->nh_cap) node_rehash(v);
    uint32_t id = (uint32_t)v->n_nodes++;
    struct vpr_vnode *n = &v->nodes[id];
    memset(n, 0, sizeof *n);
    n->parent = parent;
    n->type = type;
    n->f = f;
    n->body = NONE;
    n->first_child = n->next_sibling = NONE;
    n->depth = parent == NONE ? 0 : (uint16_t)(v->nodes[parent].depth + 1);
    v->x[id] = 0;
    size_t h = node_hash(parent, type, f) & (v->nh_cap - 1);
    while (v->nh[h]) h = (h + 1) & (v->nh_cap - 1);
    v->nh[h] = id + 1;
    return id;
}

uint32_t vpr_vnode_get(struct vpr_variance *v, uint32_t parent, uint8_t type, long f)
{
    if (v->nh_cap) {
        size_t h = node_hash(parent, type, f) & (v->nh_cap - 1);
        for (; v->nh[h]; h = (h + 1) & (v->nh_cap - 1)) {
            const struct vpr_vnode *n = &v->nodes[v->nh[h] - 1];
            if (n->parent == parent && n->type == type && n->f == f) return (uint32_t)(v->nh[h] - 1);
        }
    }
    uint32_t id = node_new(v, parent, type, f);
    if (type != VT_BODY) {
        uint32_t b = node_new(v, id, VT_BODY, -1);
        v->nodes[id].body = b;
    }
    return id;
}

static void touch(struct vpr_variance *v, uint32_t id)
{
    if (v->n_tl == v->cap_tl) {
        v->cap_tl = v->cap_tl ? 2 * v->cap_tl : 64;
        v->tl = vpf_xrealloc(v->tl, v->cap_tl, sizeof *v->tl);
    }
    v->tl[v->n_tl++] = id;
}

void vpr_vtree_time(struct vpr_variance *v, uint32_t node, uint64_t ns)
{
    if (!ns) return;
    uint32_t b = v->nodes[node].type == VT_BODY ? node : v->nodes[node].body;
    if (!v->x[b]) touch(v, b);
    v->x[b] += (int64_t)ns;
}

static uint64_t pair_hash(uint32_t a, uint32_t b)
{
    return mix(((uint64_t)a << 32 | b) * 0x9e3779b97f4a7c15ull);
}

static struct vpr_vpair *pair_get(struct vpr_variance *v, uint32_t a, uint32_t b)
{
    if (a > b) { uint32_t t = a; a = b; b = t; }
    if (2 * (v->n_pairs + 1) > v->ph_cap) {
        free(v->ph);
        v->ph_cap = v->ph_cap ? 2 * v->ph_cap : 256;
        v->ph = vpf_xcalloc(v->ph_cap, sizeof *v->ph);
        for (size_t i = 0; i < v->n_pairs; i++) {
            size_t h = pair_hash(v->pairs[i].a, v->pairs[i].b) & (v->ph_cap - 1);
            while (v->ph[h]) h = (h + 1) & (v->ph_cap - 1);
            v->ph[h] = i + 1;
        }
    }
    size_t h = pair_hash(a, b) & (v->ph_cap - 1);
    for (; v->ph[h]; h = (h + 1) & (v->ph_cap - 1)) {
        struct vpr_vpair *p = &v->pairs[v->ph[h] - 1];
        if (p->a == a && p->b == b) return p;
    }
    if (v->n_pairs == v->cap_pairs) {
        v->cap_pairs = v->cap_pairs ? 2 * v->cap_pairs : 256;
        v->pairs = vpf_xrealloc(v->pairs, v->cap_pairs, sizeof *v->pairs);
    }
    struct vpr_vpair *p = &v->pairs[v->n_pairs++];
    memset(p, 0, sizeof *p);
    p->a = a;
    p->b = b;
    v->ph[h] = v->n_pairs;
    return p;
}

const struct vpr_vpair *vpr_vpair_find(const struct vpr_variance *v, uint32_t a, uint32_t b)
{
    if (a > b) { uint32_t t = a; a = b; b = t; }
    if (!v->ph_cap) return NULL;
    size_t h = pair_hash(a, b) & (v->ph_cap - 1);
    for (; v->ph[h]; h = (h + 1) & (v->ph_cap - 1)) {
        const struct vpr_vpair *p = &v->pairs[v->ph[h] - 1];
        if (p->a == a && p->b == b) return p;
    }
    return NULL;
}

/* qsort_r comparator: node ids by their parent in v (the context) */
static int cmp_parent(const void *a, const void *b, void *ctx)
{
    const struct vpr_variance *v = ctx;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    uint32_t px = v->nodes[x].parent, py = v->nodes[y].parent;
    if (px != py) return px < py ? -1 : 1;
    return (x > y) - (x < y);
}

static void side_lat(struct vpr_vside *sd, uint64_t lat)
{
    if (sd->n == sd->cap_lat) {
        sd->cap_lat = sd->cap_lat ? 2 * sd->cap_lat : 1024;
        sd->lat = vpf_xrealloc(sd->lat, sd->cap_lat, sizeof *sd->lat);
    }
    sd->lat[sd->n++] = lat;
    if (lat > sd->max_lat) sd->max_lat = lat;
}

static void heap_push(uint32_t *h, size_t *n, uint32_t x)
{
    size_t i = (*n)++;
    while (i && h[(i - 1) / 2] < x) { h[i] = h[(i - 1) / 2]; i = (i - 1) / 2; }
    h[i] = x;
}

static uint32_t heap_pop(uint32_t *h, size_t *n)
{
    uint32_t top = h[0], x = h[--*n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= *n) break;
        if (c + 1 < *n && h[c + 1] > h[c]) c++;
        if (h[c] <= x) break;
        h[i] = h[c];
        i = c;
    }
    if (*n) h[i] = x;
    return top;
}

void vpr_vtree_commit(struct vpr_variance *v, int s, int64_t w, int pid, uint64_t id)
{
    /* inclusive times: children before parents. A child's id is larger
     * than its parent's, so a max-heap of the touched ids yields every
     * node after all of its touched descendants. */
    size_t nh = 0;
    uint32_t *hp = v->heap = vpf_xrealloc(v->heap, (v->cap_tl + v->n_nodes + 1), sizeof *hp);
    for (size_t i = 0; i < v->n_tl; i++) heap_push(hp, &nh, v->tl[i]);
    while (nh) {
        uint32_t n = heap_pop(hp, &nh), p = v->nodes[n].parent;
        if (p == NONE) continue;
        if (!v->x[p]) { touch(v, p); heap_push(hp, &nh, p); }
        v->x[p] += v->x[n];
    }
    struct vpr_vside *sd = &v->side[s];
    side_lat(sd, v->x[0] > 0 ? (uint64_t)v->x[0] : 0);
    long double wl = w < 0 ? 0 : (long double)w;
    if (w >= 0) sd->with_work++;
    sd->sw += wl;
    sd->sww += wl * wl;
    for (size_t i = 0; i < v->n_tl; i++) {
        struct vpr_vacc *a = &v->nodes[v->tl[i]].acc[s];
        int64_t x = v->x[v->tl[i]];
        a->s1 += (u128)x;
        a->s2 += (u128)x * (u128)x;
        a->sw += (long double)x * wl;
        a->present += x > 0;
    }
    /* sibling pairs: group the touched nodes by parent */
    if (v->n_tl) qsort_r(v->tl, v->n_tl, sizeof *v->tl, cmp_parent, v);
    for (size_t i = 0; i < v->n_tl;) {
        size_t j = i;
        while (j < v->n_tl && v->nodes[v->tl[j]].parent == v->nodes[v->tl[i]].parent) j++;
        for (size_t a = i; a < j; a++)
            for (size_t b = a + 1; b < j; b++) {
                struct vpr_vpair *p = pair_get(v, v->tl[a], v->tl[b]);
                p->s[s] += (u128)v->x[v->tl[a]] * (u128)v->x[v->tl[b]];
            }
        i = j;
    }
    if (v->export_f) {
        fprintf(v->export_f, "req %s %d %llu %lld %lld", s ? "buggy" : "normal", pid,
                (unsigned long long)id, (long long)w, (long long)v->x[0]);
        for (size_t i = 0; i < v->n_tl; i++)
            fprintf(v->export_f, " %u=%lld", v->tl[i], (long long)v->x[v->tl[i]]);
        fputc('\n', v->export_f);
    }
    for (size_t i = 0; i < v->n_tl; i++) v->x[v->tl[i]] = 0;
    v->n_tl = 0;
}

/* ---------------------------------------------------------------- results */

static i128 numer(uint64_t n, u128 sab, u128 sa, u128 sb)
{
    return (i128)n * (i128)sab - (i128)sa * (i128)sb;
}

i128 vpr_vnum_node(const struct vpr_variance *v, uint32_t id, int s)
{
    const struct vpr_vacc *a = &v->nodes[id].acc[s];
    return numer(v->side[s].n, a->s2, a->s1, a->s1);
}

i128 vpr_vnum_pair(const struct vpr_variance *v, const struct vpr_vpair *p, int s)
{
    return numer(v->side[s].n, p->s[s], v->nodes[p->a].acc[s].s1, v->nodes[p->b].acc[s].s1);
}

static double over(i128 num, uint64_t n)
{
    if (n < 2) return 0;
    return (double)((long double)num / ((long double)n * (long double)(n - 1)));
}

double vpr_vpct(const struct vpr_vside *s, double q)
{
    if (!s->n) return NAN;
    double k = ceil(q * (double)s->n - 1e-9);
    size_t i = k < 1 ? 0 : (size_t)k - 1;
    return (double)s->lat[i < s->n ? i : s->n - 1];
}

/* Identity of a factor member: the node's own key, or for a body node its
 * parent's key marked as a body. */
struct fkey { uint8_t type, ptype; long f; };

static struct fkey key_of(const struct vpr_variance *v, uint32_t id)
{
    const struct vpr_vnode *n = &v->nodes[id];
    if (n->type != VT_BODY) return (struct fkey){n->type, 0, n->f};
    const struct vpr_vnode *p = &v->nodes[n->parent];
    return (struct fkey){VT_BODY, p->type, p->f};
}

static int key_cmp(struct fkey a, struct fkey b)
{
    if (a.type != b.type) return a.type < b.type ? -1 : 1;
    if (a.ptype != b.ptype) return a.ptype < b.ptype ? -1 : 1;
    return (a.f > b.f) - (a.f < b.f);
}

/* A body node that only repeats its parent (no real sibling ever). */
static int dup_body(const struct vpr_variance *v, uint32_t id)
{
    const struct vpr_vnode *n = &v->nodes[id];
    return n->type == VT_BODY && v->nodes[n->parent].first_child == NONE;
}

struct inst { struct fkey k[2]; int is_pair; int height; double c[2]; double r2w, w; };

static int cmp_inst(const void *a, const void *b)
{
    const struct inst *x = a, *y = b;
    if (x->is_pair != y->is_pair) return x->is_pair - y->is_pair;
    for (int i = 0; i < 2; i++) {
        int c = key_cmp(x->k[i], y->k[i]);
        if (c) return c;
    }
    return 0;
}


static int cmp_score(const void *a, const void *b)
{
    const struct vpr_vfactor *x = a, *y = b;
    if (x->score != y->score) return x->score > y->score ? -1 : 1;
    return (x->share < y->share) - (x->share > y->share);
}

/* Groups instances into factors and scores them on contribution c[side]
 * (or c[1] - c[0] when diff) against the total tot (Eq. 3-4). */
static struct vpr_vfactor *make_factors(const struct vpr_variance *v, struct inst *in, size_t n_in,
                                        int side, int diff, double tot, int H, size_t *n_out)
{
    qsort(in, n_in, sizeof *in, cmp_inst);
    struct vpr_vfactor *f = vpf_xcalloc(n_in ? n_in : 1, sizeof *f);
    size_t k = 0;
    for (size_t i = 0; i < n_in;) {
        size_t j = i;
        struct vpr_vfactor *x = &f[k++];
        x->is_pair = in[i].is_pair;
        for (int m = 0; m < 2; m++) {
            x->type[m] = in[i].k[m].type;
            x->ptype[m] = in[i].k[m].ptype;
            x->f[m] = in[i].k[m].f;
        }
        double r2w = 0, w = 0;
        for (; j < n_in && !cmp_inst(&in[i], &in[j]); j++) {
            x->contri[0] += in[j].c[0];
            x->contri[1] += in[j].c[1];
            if (in[j].height > x->height) x->height = in[j].height;
            r2w += in[j].r2w;
            w += in[j].w;
        }
        double c = diff ? x->contri[1] - x->contri[0] : x->contri[side];
        double sp = (double)(H - x->height);
        x->spec = sp * sp;
        x->share = tot > 0 ? c / tot : 0;
        x->score = x->spec * x->share;
        x->r2 = w > 0 ? r2w / w : 0;
        x->inherent = v->side[side].with_work ? x->r2 >= v->o->inherent_r2 : -1;
        i = j;
    }
    qsort(f, k, sizeof *f, cmp_score);
    *n_out = k;
    return f;
}

struct kidx { struct fkey k; size_t i; };

static int cmp_kidx(const void *a, const void *b)
{
    return key_cmp(((const struct kidx *)a)->k, ((const struct kidx *)b)->k);
}

/* Per node: index of the variance factor it belongs to in fs (SIZE_MAX for
 * the root and repeated bodies). */
static size_t *node_factors(const struct vpr_variance *v, const struct vpr_vfactor *fs, size_t n)
{
    struct kidx *ki = vpf_xmalloc((n + 1) * sizeof *ki);
    size_t nk = 0;
    for (size_t i = 0; i < n; i++)
        if (!fs[i].is_pair) ki[nk++] = (struct kidx){{fs[i].type[0], fs[i].ptype[0], fs[i].f[0]}, i};
    qsort(ki, nk, sizeof *ki, cmp_kidx);
    size_t *nf = vpf_xmalloc((v->n_nodes + 1) * sizeof *nf);
    for (size_t i = 0; i < v->n_nodes; i++) {
        nf[i] = SIZE_MAX;
        if (!i || dup_body(v, (uint32_t)i)) continue;
        struct kidx q = {key_of(v, (uint32_t)i), 0};
        struct kidx *hit = bsearch(&q, ki, nk, sizeof *ki, cmp_kidx);
        if (hit) nf[i] = hit->i;
    }
    free(ki);
    return nf;
}

/* Every node of factor g lies below a node of factor f. */
static int nested_in(const struct vpr_variance *v, const size_t *nf, size_t g, size_t f)
{
    int any = 0;
    for (size_t i = 1; i < v->n_nodes; i++) {
        if (nf[i] != g) continue;
        int in = 0;
        for (uint32_t p = v->nodes[i].parent; p != NONE && !in; p = v->nodes[p].parent)
            in = nf[p] == f;
        if (!in) return 0;
        any = 1;
    }
    return any;
}

/* Algorithm 1, lines 14-23, as §3.2.2 words it: the first k by score
 * among the factors whose contribution is above d. One refinement (not in the paper; --plain-selection turns it
 * off): a function whose variance is that of a factor already selected
 * below it, give or take d (scan_items and the scan_items (self) it
 * consists of; a caller that only passes its callee's variance on), says
 * nothing new, and the next factor takes its place. */
static size_t select_top(const struct vpr_variance *v, const struct vpr_vfactor *f, size_t n,
                         size_t *top)
{
    size_t t = 0, *nf = v->o->plain ? NULL : node_factors(v, f, n);
    int k = v->o->k;
    for (size_t i = 0; i < n && k > 0 && t < 16; i++) {
        if (!(f[i].share > v->o->d)) continue;
        int redundant = 0;
        for (size_t r = 0; nf && r < t && !redundant && !f[i].is_pair; r++)
            redundant = !f[top[r]].is_pair && f[i].share - f[top[r]].share <= v->o->d &&
                        nested_in(v, nf, top[r], i);
        if (redundant) continue;
        top[t++] = i;
        k--;
    }
    free(nf);
    return t;
}

static void mark_top(struct vpr_variance *v, const struct vpr_vfactor *fs, const size_t *top,
                     size_t n_top)
{
    for (size_t r = 0; r < n_top; r++) {
        const struct vpr_vfactor *f = &fs[top[r]];
        if (f->is_pair) continue;       /* its members are not the factor */
        for (size_t i = 1; i < v->n_nodes; i++) {
            if (dup_body(v, (uint32_t)i)) continue;
            struct fkey k = key_of(v, (uint32_t)i);
            if (k.type == f->type[0] && k.ptype == f->ptype[0] && k.f == f->f[0] && !v->ntop[i])
                v->ntop[i] = (uint8_t)(r + 1);
        }
    }
}

void vpr_vtree_finish(struct vpr_variance *v)
{
    for (int s = 0; s < 2; s++) {
        struct vpr_vside *sd = &v->side[s];
        if (!sd->n) continue;
        qsort(sd->lat, sd->n, sizeof *sd->lat, vpf_cmp_u64);
        /* n · max < 2^63 keeps n·Σx² and (Σx)² below 2^126 */
        u128 bound = (u128)sd->n * (u128)(sd->max_lat + 1);
        if (bound >> 63) v->overflow = 1;
        long double n = (long double)sd->n, dn = n * (n - 1);
        sd->var_w = sd->n > 1 ? (double)((n * sd->sww - sd->sw * sd->sw) / dn) : 0;
    }
    if (v->overflow) return;
    /* children lists (real children only) and heights */
    for (size_t i = v->n_nodes; i-- > 1;) {
        struct vpr_vnode *n = &v->nodes[i];
        if (n->type == VT_BODY) continue;
        struct vpr_vnode *p = &v->nodes[n->parent];
        n->next_sibling = p->first_child;
        p->first_child = (uint32_t)i;
    }
    for (size_t i = v->n_nodes; i-- > 1;) {
        struct vpr_vnode *n = &v->nodes[i];
        if (n->type == VT_BODY) continue;
        struct vpr_vnode *p = &v->nodes[n->parent];
        if (n->height + 1 > p->height) p->height = n->height + 1;
    }
    for (size_t i = 0; i < v->n_nodes; i++) {
        struct vpr_vnode *nd = &v->nodes[i];
        for (int s = 0; s < 2; s++) {
            const struct vpr_vside *sd = &v->side[s];
            const struct vpr_vacc *a = &nd->acc[s];
            if (sd->n < 1) continue;
            nd->var[s] = over(vpr_vnum_node(v, (uint32_t)i, s), sd->n);
            nd->mean[s] = (double)((long double)a->s1 / (long double)sd->n);
            if (sd->n > 1 && sd->var_w > 0 && nd->var[s] > 0) {
                long double n = (long double)sd->n;
                long double cov = (n * a->sw - (long double)a->s1 * sd->sw) / (n * (n - 1));
                nd->r2[s] = cov > 0 ? (double)(cov * cov / ((long double)nd->var[s] * sd->var_w)) : 0;
                if (nd->r2[s] > 1) nd->r2[s] = 1;
            }
        }
    }
    /* every pair of siblings, also those never seen in the same interval
     * (Σ x_a·x_b = 0, but their covariance is -mean_a·mean_b·n/(n-1)) */
    for (size_t i = 0; i < v->n_nodes; i++) {
        const struct vpr_vnode *nd = &v->nodes[i];
        if (nd->type == VT_BODY || nd->first_child == NONE) continue;
        for (uint32_t a = nd->first_child; a != NONE; a = v->nodes[a].next_sibling) {
            pair_get(v, nd->body, a);
            for (uint32_t b = v->nodes[a].next_sibling; b != NONE; b = v->nodes[b].next_sibling)
                pair_get(v, a, b);
        }
    }
    for (size_t i = 0; i < v->n_pairs; i++) {
        struct vpr_vpair *p = &v->pairs[i];
        for (int s = 0; s < 2; s++)
            if (v->side[s].n)
                p->cov[s] = over(vpr_vnum_pair(v, p, s), v->side[s].n);
    }
    /* factor instances: every node but the root (and bodies that only
     * repeat their node), every sibling pair (2·Cov: its term in the
     * parent's variance) */
    int rs = v->rank_side;
    struct inst *in = vpf_xcalloc(v->n_nodes + v->n_pairs + 1, sizeof *in);
    size_t n_in = 0;
    for (size_t i = 1; i < v->n_nodes; i++) {
        if (dup_body(v, (uint32_t)i)) continue;
        const struct vpr_vnode *nd = &v->nodes[i];
        struct inst *x = &in[n_in++];
        x->k[0] = key_of(v, (uint32_t)i);
        x->k[1] = (struct fkey){0, 0, 0};
        x->height = nd->height;
        x->c[0] = nd->var[0];
        x->c[1] = nd->var[1];
        x->w = nd->var[rs];
        x->r2w = nd->var[rs] * nd->r2[rs];
    }
    for (size_t i = 0; i < v->n_pairs; i++) {
        const struct vpr_vpair *p = &v->pairs[i];
        struct inst *x = &in[n_in++];
        struct fkey a = key_of(v, p->a), b = key_of(v, p->b);
        int sw = key_cmp(a, b) > 0;
        x->is_pair = 1;
        x->k[0] = sw ? b : a;
        x->k[1] = sw ? a : b;
        int ha = v->nodes[p->a].height, hb = v->nodes[p->b].height;
        x->height = ha > hb ? ha : hb;
        x->c[0] = 2 * p->cov[0];
        x->c[1] = 2 * p->cov[1];
        double r = v->nodes[p->a].r2[rs] < v->nodes[p->b].r2[rs] ? v->nodes[p->a].r2[rs]
                                                                   : v->nodes[p->b].r2[rs];
        x->w = fabs(p->cov[rs]);
        x->r2w = x->w * r;
    }
    int H = v->nodes[0].height;
    struct inst *in2 = vpf_xmalloc((n_in + 1) * sizeof *in2);
    memcpy(in2, in, n_in * sizeof *in);
    v->factors = make_factors(v, in, n_in, rs, 0, v->nodes[0].var[rs], H, &v->n_factors);
    v->n_top = select_top(v, v->factors, v->n_factors, v->top);
    v->ntop = vpf_xcalloc(v->n_nodes, 1);
    mark_top(v, v->factors, v->top, v->n_top);
    double inc = v->nodes[0].var[1] - v->nodes[0].var[0];
    if (v->side[0].n > 1 && v->side[1].n > 1 && inc > 0) {
        v->delta = make_factors(v, in2, n_in, 1, 1, inc, H, &v->n_delta);
        v->n_dtop = select_top(v, v->delta, v->n_delta, v->dtop);
    }
    free(in);
    free(in2);
}

int vpr_vnode_top(const struct vpr_variance *v, uint32_t id)
{
    return v->ntop && id < v->n_nodes ? v->ntop[id] : 0;
}

/* What vpr_vchildren sorts by: side s's variance of v's nodes. */
struct child_key {
    const struct vpr_variance *v;
    int s;
};

static int cmp_child(const void *a, const void *b, void *ctx)
{
    const struct child_key *k = ctx;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    double vx = k->v->nodes[x].var[k->s], vy = k->v->nodes[y].var[k->s];
    if (vx != vy) return vx > vy ? -1 : 1;
    return (x > y) - (x < y);
}

uint32_t *vpr_vchildren(const struct vpr_variance *v, uint32_t id, int s, size_t *n)
{
    size_t k = 0;
    for (uint32_t c = v->nodes[id].first_child; c != NONE; c = v->nodes[c].next_sibling) k++;
    uint32_t *out = vpf_xmalloc((k + 1) * sizeof *out);
    k = 0;
    for (uint32_t c = v->nodes[id].first_child; c != NONE; c = v->nodes[c].next_sibling)
        out[k++] = c;
    struct child_key key = {v, s};
    qsort_r(out, k, sizeof *out, cmp_child, &key);
    *n = k;
    return out;
}

static const char *type_label(uint8_t t)
{
    switch (t) {
    case VT_MUTEX: return "[mutex wait]";
    case VT_COND: return "[cond wait]";
    case VT_QUEUED: return "[queued]";
    case VT_UNEXPLAINED: return "[unexplained wait]";
    case VT_SEM: return "[semaphore wait]";
    case VT_JOIN: return "[join wait]";
    case VT_SPIN: return "[annotated wait]";
    case VT_RWLOCK: return "[rwlock wait]";
    case VT_BARRIER: return "[barrier wait]";
    default: return "?";
    }
}

static void key_name(const struct vpr_variance *v, uint8_t type, long f, char *buf, size_t len)
{
    const struct vpr_model *m = v->m;
    switch (type) {
    case VT_ROOT:
        if (v->root_f >= 0) snprintf(buf, len, "%s", vpr_dm(m->f[v->root_f].name));
        else snprintf(buf, len, "request latency");
        break;
    case VT_FUNC:
        snprintf(buf, len, "%s", f >= 0 && (size_t)f < m->n_f ? vpr_dm(m->f[f].name) : "?");
        break;
    case VT_SYSCALL:
        snprintf(buf, len, "[syscall %ld]", f);
        break;
    default:
        snprintf(buf, len, "%s", type_label(type));
    }
}

static void fkey_name(const struct vpr_variance *v, struct fkey k, char *buf, size_t len)
{
    if (k.type != VT_BODY) { key_name(v, k.type, k.f, buf, len); return; }
    char p[256];
    if (k.ptype == VT_ROOT && v->root_f < 0) {
        snprintf(buf, len, "(request time outside instrumented functions)");
        return;
    }
    key_name(v, k.ptype, k.f, p, sizeof p);
    snprintf(buf, len, "%s (self)", p);
}

void vpr_vnode_name(const struct vpr_variance *v, uint32_t id, char *buf, size_t len)
{
    fkey_name(v, key_of(v, id), buf, len);
}

void vpr_vfactor_name(const struct vpr_variance *v, const struct vpr_vfactor *f, char *buf,
                      size_t len)
{
    char a[256], b[256];
    fkey_name(v, (struct fkey){f->type[0], f->ptype[0], f->f[0]}, a, sizeof a);
    if (!f->is_pair) { snprintf(buf, len, "%s", a); return; }
    fkey_name(v, (struct fkey){f->type[1], f->ptype[1], f->f[1]}, b, sizeof b);
    snprintf(buf, len, "Cov(%s, %s)", a, b);
}

void vpr_variance_free(struct vpr_variance *v)
{
    if (v->work && v->m && v->m->lat)
        for (size_t p = 0; p < v->m->lat->n_procs; p++) free(v->work[p].s);
    free(v->work);
    free(v->nodes);
    free(v->nh);
    free(v->pairs);
    free(v->ph);
    for (int s = 0; s < 2; s++) free(v->side[s].lat);
    free(v->factors);
    free(v->delta);
    free(v->ntop);
    free(v->x);
    free(v->tl);
    free(v->heap);
    memset(v, 0, sizeof *v);
}
