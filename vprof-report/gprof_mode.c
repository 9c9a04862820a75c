/* gprof_mode.c - flat profile and call graph from gmon files, through the
 * same gmon reader (vpf_gmon_*) and histogram assignment as the vprof
 * ranking, printed as binutils `gprof -b` prints them.
 *
 * Follows gprof (cg_arcs.c, cg_print.c): a bin's count is split over the
 * symbols it overlaps; calls of a function = the counts of its incoming arcs
 * from other functions (self-recursive calls shown as "+N"); mutually
 * recursive functions (strongly connected components) form a
 * "<cycle N as a whole>" entry that owns their time; time flows from callee
 * (or its cycle) to caller in proportion to the calls along each arc,
 * callees first. */
#include "gprof_mode.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "demangle.h"
#include "hist_assign.h"
#include "lines.h"
#include "symbols.h"
#include "vprof_format.h"
#include "vprof_xalloc.h"

struct arc { size_t from, to; uint64_t count; double time, child_time; };

struct node {                   /* a function, or a cycle head */
    double self, child;         /* ticks: own, and inherited from callees */
    double fract;               /* gprof's propagation fraction (fractions()) */
    double pself, pchild;       /* self and child scaled by it: the call graph's */
    uint64_t calls;             /* from other functions (heads: from outside) */
    uint64_t self_calls;        /* recursive (heads: between members) */
    long cycle;                 /* cycle number, 0 = none */
    size_t head;                /* node index of its cycle head, or itself */
    long cg_index;
    size_t member_pos;          /* place in gprof's list of its cycle's members */
    /* Tarjan */
    long idx, low;
    int on_stack;
};

/* Tarjan's strongly connected components: component k is
 * order[comp_start[k] .. comp_start[k + 1]), callees first. */
struct tarjan {
    size_t *stack, sp;
    long counter;
    size_t *order, n_order;
    size_t *comp_start, n_comp;
};

/* The call graph of one print: also the comparators' context (qsort_r). */
struct cg {
    const struct vpr_symtab *t;
    struct node *g;             /* [0, ns) symbols, then cycle heads up to nn */
    size_t ns, nn;
    struct arc *a;              /* merged arcs between symbols */
    size_t na;
    size_t **out_idx, *out_n;   /* per symbol: its arcs out (indices into a) */
    size_t **in_idx, *in_n;     /* and in */
    struct tarjan tj;
    double hz;
    double total_time;          /* all histogram counts (flat profile %) */
    double total;               /* counts credited to symbols (call graph %) */
};

static const char *base_name(const struct cg *cg, size_t v, char buf[64])
{
    if (v < cg->ns) return cg->t->syms[v].name;
    snprintf(buf, 64, "<cycle %ld as a whole>", cg->g[v].cycle);
    return buf;
}

/* "name <cycle N>" for cycle members; names demangled as gprof prints them
 * (sorting stays on the linkage names, as in gprof) */
static void print_name(FILE *out, const struct cg *cg, size_t v)
{
    char buf[64];
    fputs(vpr_dm(base_name(cg, v, buf)), out);
    if (v < cg->ns && cg->g[v].cycle) fprintf(out, " <cycle %ld>", cg->g[v].cycle);
}

static int cmp_flat(const void *a, const void *b, void *ctx)
{
    const struct cg *cg = ctx;
    const struct node *G = cg->g;
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    if (G[x].self != G[y].self) return G[x].self > G[y].self ? -1 : 1;
    if (G[x].calls != G[y].calls) return G[x].calls > G[y].calls ? -1 : 1;
    return strcmp(cg->t->syms[x].name, cg->t->syms[y].name);
}

static int cmp_cg(const void *a, const void *b, void *ctx)
{
    const struct cg *cg = ctx;
    const struct node *G = cg->g;
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    double tx = G[x].pself + G[x].pchild, ty = G[y].pself + G[y].pchild;
    /* totals that are equal in exact arithmetic (a caller that inherits all
     * of a callee's time) differ in the last bits depending on the order of
     * the sums; gprof sums them in its own order (propagate, find_cycles
     * and assign_ticks follow it), so they compare exactly, as in gprof */
    if (tx != ty)
        return tx > ty ? -1 : 1;
    /* then gprof's cmp_total: cycles first, a name without a leading
     * underscore before one with (C++'s _Z names come after C's), calls */
    size_t ns = cg->ns;
    if ((x >= ns) != (y >= ns)) return x >= ns ? -1 : 1;
    if (x >= ns) return G[x].cycle < G[y].cycle ? -1 : 1;
    int ux = cg->t->syms[x].name[0] == '_', uy = cg->t->syms[y].name[0] == '_';
    if (ux != uy) return ux ? 1 : -1;
    if (G[x].calls != G[y].calls) return G[x].calls > G[y].calls ? -1 : 1;
    return strcmp(cg->t->syms[x].name, cg->t->syms[y].name) < 0 ? -1 : 1;
}

/* gprof leaves out of the call graph what has no time and no calls */
static int printed(const struct cg *cg, size_t v)
{
    const struct node *G = cg->g;
    return G[v].self > 0 || G[v].child > 0 || G[v].calls + G[v].self_calls > 0;
}

/* arcs that carry only a count: self calls and calls inside a cycle */
static int count_only(const struct cg *cg, const struct arc *a)
{
    const struct node *G = cg->g;
    return a->from == a->to || (G[a->from].cycle && G[a->from].cycle == G[a->to].cycle);
}

static double arc_total(const struct arc *a) { return a->time + a->child_time; }

static int self_arc(const struct arc *a) { return a->from == a->to; }

/* gprof lists parents with the count-only arcs first (a recursive call
 * before calls inside a cycle), then by increasing time carried, and
 * children by decreasing time with the count-only arcs last (a recursive
 * call at the very end); then by count; then in the order the arcs first
 * appear in the gmon data (its insertion sorts keep that order; cg->a is
 * in it) */
static int cmp_arc_asc(const void *x, const void *y, void *ctx)
{
    const struct cg *cg = ctx;
    const struct arc *a = *(struct arc *const *)x, *b = *(struct arc *const *)y;
    if (count_only(cg, a) != count_only(cg, b)) return count_only(cg, a) ? -1 : 1;
    if (self_arc(a) != self_arc(b)) return self_arc(a) ? -1 : 1;
    if (arc_total(a) != arc_total(b)) return arc_total(a) < arc_total(b) ? -1 : 1;
    if (a->count != b->count) return a->count < b->count ? -1 : 1;
    return a < b ? -1 : a > b;
}

static int cmp_arc_desc(const void *x, const void *y, void *ctx)
{
    const struct cg *cg = ctx;
    const struct arc *a = *(struct arc *const *)x, *b = *(struct arc *const *)y;
    if (count_only(cg, a) != count_only(cg, b)) return count_only(cg, a) ? 1 : -1;
    if (self_arc(a) != self_arc(b)) return self_arc(a) ? 1 : -1;
    if (arc_total(a) != arc_total(b)) return arc_total(a) > arc_total(b) ? -1 : 1;
    if (a->count != b->count) return a->count > b->count ? -1 : 1;
    return a < b ? -1 : a > b;
}

static int cmp_name(const void *a, const void *b, void *ctx)
{
    const struct cg *cg = ctx;
    size_t x = *(const size_t *)a, y = *(const size_t *)b, ns = cg->ns;
    if ((x >= ns) != (y >= ns)) return x >= ns ? 1 : -1;   /* cycles last */
    if (x >= ns) return cg->g[x].cycle < cg->g[y].cycle ? -1 : 1;
    return strcmp(cg->t->syms[x].name, cg->t->syms[y].name);
}

/* ---------- building the graph ---------- */

/* Self time of every symbol from the histogram. */
static void assign_ticks(struct cg *cg, const struct vpf_gmon *g, uint64_t bias)
{
    double *ticks = vpf_xcalloc(cg->ns ? cg->ns : 1, sizeof *ticks);
    cg->total_time = vpr_hist_assign(g, bias, cg->t, ticks);
    for (size_t i = 0; i < cg->ns; i++) {
        cg->g[i].self = ticks[i];
        cg->g[i].head = i;
        cg->g[i].idx = -1;
    }
    free(ticks);
}

/* gmon arcs -> arcs between symbols, merged; calls into a symbol from
 * outside every symbol count as spontaneous calls. */
static void collect_arcs(struct cg *cg, const struct vpf_gmon *g, uint64_t bias)
{
    struct node *G = cg->g;
    cg->a = vpf_xcalloc(g->n_arcs ? g->n_arcs : 1, sizeof *cg->a);
    /* (caller, callee) -> arc + 1, open addressing: a large program's gmon
     * has tens of thousands of call sites */
    size_t cap = 16;
    while (cap < 2 * g->n_arcs) cap *= 2;
    size_t *slot = vpf_xcalloc(cap, sizeof *slot);
    for (size_t i = 0; i < g->n_arcs; i++) {
        long f = vpr_sym_find(cg->t, g->arcs[i].from_pc - bias);
        long s = vpr_sym_find(cg->t, g->arcs[i].self_pc - bias);
        if (s < 0) continue;
        if (f < 0) { G[s].calls += g->arcs[i].count; continue; }  /* spontaneous */
        size_t h = (size_t)((((uint64_t)f * 0x9e3779b97f4a7c15ull) ^ (uint64_t)s) *
                            0xff51afd7ed558ccdull);
        for (h &= cap - 1; slot[h]; h = (h + 1) & (cap - 1))
            if (cg->a[slot[h] - 1].from == (size_t)f && cg->a[slot[h] - 1].to == (size_t)s) break;
        if (!slot[h]) {             /* first seen: arcs keep the gmon file's order */
            cg->a[cg->na++] = (struct arc){(size_t)f, (size_t)s, 0, 0, 0};
            slot[h] = cg->na;
        }
        size_t k = slot[h] - 1;
        cg->a[k].count += g->arcs[i].count;
        if (f == s) G[s].self_calls += g->arcs[i].count;
        else G[s].calls += g->arcs[i].count;
    }
    free(slot);
}

/* Per-symbol lists of arcs out and in, each list allocated once at its
 * final size. */
static void index_arcs(struct cg *cg)
{
    size_t n = cg->ns ? cg->ns : 1;
    cg->out_idx = vpf_xcalloc(n, sizeof *cg->out_idx);
    cg->out_n = vpf_xcalloc(n, sizeof *cg->out_n);
    cg->in_idx = vpf_xcalloc(n, sizeof *cg->in_idx);
    cg->in_n = vpf_xcalloc(n, sizeof *cg->in_n);
    for (size_t k = 0; k < cg->na; k++) {
        cg->out_n[cg->a[k].from]++;
        cg->in_n[cg->a[k].to]++;
    }
    for (size_t i = 0; i < cg->ns; i++) {
        cg->out_idx[i] = vpf_xcalloc(cg->out_n[i] ? cg->out_n[i] : 1, sizeof **cg->out_idx);
        cg->in_idx[i] = vpf_xcalloc(cg->in_n[i] ? cg->in_n[i] : 1, sizeof **cg->in_idx);
        cg->out_n[i] = cg->in_n[i] = 0;
    }
    for (size_t k = 0; k < cg->na; k++) {
        size_t f = cg->a[k].from, s = cg->a[k].to;
        cg->out_idx[f][cg->out_n[f]++] = k;
        cg->in_idx[s][cg->in_n[s]++] = k;
    }
}

static void strong(struct cg *cg, size_t v)
{
    /* iterative DFS: deep call chains must not exhaust the C stack */
    struct tarjan *t = &cg->tj;
    struct node *G = cg->g;
    size_t *vs = vpf_xcalloc(cg->ns, sizeof *vs), *ks = vpf_xcalloc(cg->ns, sizeof *ks), d = 0;
    vs[0] = v;
    ks[0] = 0;
    G[v].idx = G[v].low = t->counter++;
    t->stack[t->sp++] = v;
    G[v].on_stack = 1;
    for (;;) {
        size_t u = vs[d];
        if (ks[d] < cg->out_n[u]) {
            /* newest arc first, as gprof's depth-first numbering walks
             * its prepended lists: the same order of components */
            const struct arc *a = &cg->a[cg->out_idx[u][cg->out_n[u] - 1 - ks[d]++]];
            size_t w = a->to;
            if (w == u) continue;
            if (G[w].idx < 0) {
                G[w].idx = G[w].low = t->counter++;
                t->stack[t->sp++] = w;
                G[w].on_stack = 1;
                vs[++d] = w;
                ks[d] = 0;
            } else if (G[w].on_stack && G[w].idx < G[u].low) {
                G[u].low = G[w].idx;
            }
            continue;
        }
        if (G[u].low == G[u].idx) {             /* u roots a component */
            t->comp_start[t->n_comp++] = t->n_order;
            size_t w;
            do {
                w = t->stack[--t->sp];
                G[w].on_stack = 0;
                t->order[t->n_order++] = w;
            } while (w != u);
        }
        if (d == 0) break;
        d--;
        if (G[u].low < G[vs[d]].low) G[vs[d]].low = G[u].low;
    }
    free(vs);
    free(ks);
}

/* Cycles: components of more than one function get a head node, numbered
 * callers first (gprof numbers them from the top of the graph), which owns
 * their self time and counts the calls into and inside the cycle. */
static void find_cycles(struct cg *cg)
{
    struct tarjan *tj = &cg->tj;
    struct node *G = cg->g;
    size_t n = cg->ns ? cg->ns : 1;
    tj->stack = vpf_xcalloc(n, sizeof *tj->stack);
    tj->order = vpf_xcalloc(n, sizeof *tj->order);
    tj->comp_start = vpf_xcalloc(cg->ns + 1, sizeof *tj->comp_start);
    for (size_t i = 0; i < cg->ns; i++) if (G[i].idx < 0) strong(cg, i);
    tj->comp_start[tj->n_comp] = tj->n_order;
    cg->nn = cg->ns;
    for (size_t c = tj->n_comp; c-- > 0;) {
        size_t lo = tj->comp_start[c], hi = tj->comp_start[c + 1];
        if (hi - lo < 2) continue;
        size_t h = cg->nn++;
        G[h].cycle = (long)(h - cg->ns + 1);
        G[h].head = h;
        for (size_t q = lo; q < hi; q++) {
            size_t v = tj->order[q];
            G[v].cycle = G[h].cycle;
            G[v].head = h;
            G[h].self += G[v].self;
        }
    }
    for (size_t k = 0; k < cg->na; k++) {
        size_t f = cg->a[k].from, s = cg->a[k].to;
        if (!G[s].cycle || f == s) continue;
        if (G[f].cycle == G[s].cycle) G[G[s].head].self_calls += cg->a[k].count;
        else G[G[s].head].calls += cg->a[k].count;
    }
}

/* binutils gprof's cg_dfn and find_cycle (cg_dfn.c), for one thing only:
 * the order in which it links a cycle's members into a list (its head,
 * then the functions on the depth-first path at each call back into the
 * cycle, each with what was linked to it before). The cycle entry lists
 * members of equal time and calls in that order (print_cycle_entry). The
 * walk is gprof's: roots in address order, children newest arc first. */
static void gprof_member_order(struct cg *cg)
{
    enum { NAN_ = 0, BUSY = -1 };
    size_t n = cg->ns, NONE = (size_t)-1;
    if (!n) return;
    long *top = vpf_xcalloc(n, sizeof *top), counter = 0;
    size_t *hd = vpf_xcalloc(n, sizeof *hd), *nx = vpf_xcalloc(n, sizeof *nx);
    size_t *stk = vpf_xcalloc(n + 1, sizeof *stk), *ks = vpf_xcalloc(n + 1, sizeof *ks);
    for (size_t i = 0; i < n; i++) { hd[i] = i; nx[i] = NONE; }
    for (size_t r = 0; r < n; r++) {
        if (top[r] != NAN_) continue;
        size_t depth = 1;                       /* gprof's dfn_stack is 1-based */
        stk[1] = r; ks[1] = 0; top[r] = BUSY;
        while (depth) {
            size_t u = stk[depth];
            if (ks[depth] < cg->out_n[u]) {
                size_t w = cg->a[cg->out_idx[u][cg->out_n[u] - 1 - ks[depth]++]].to;
                if (top[w] > 0) continue;       /* numbered */
                if (top[w] == NAN_) {           /* pre_visit */
                    stk[++depth] = w; ks[depth] = 0; top[w] = BUSY;
                    continue;
                }
                /* busy: find_cycle(w) */
                size_t ct, head = NONE;
                for (ct = depth; ct > 0; ct--) {
                    head = stk[ct];
                    if (w == head || (hd[w] != w && hd[w] == head)) break;
                }
                if (ct == 0 || ct == depth) continue;
                size_t tail = head;
                while (nx[tail] != NONE) tail = nx[tail];
                if (hd[head] != head) head = hd[head];
                for (size_t q = ct + 1; q <= depth; q++) {
                    size_t c = stk[q];
                    if (hd[c] != c) continue;
                    nx[tail] = c;
                    hd[c] = head;
                    for (tail = c; nx[tail] != NONE; tail = nx[tail]) hd[nx[tail]] = head;
                }
                continue;
            }
            if (hd[u] == u) {                   /* post_visit: number u's list */
                counter++;
                for (size_t m = u; m != NONE; m = nx[m]) top[m] = counter;
            }
            depth--;
        }
    }
    /* gprof numbers its cycles in the address order of their lists' heads
     * (cycle_link): the numbers printed, and the order of cycles of equal
     * time, are those */
    long *num = vpf_xcalloc(cg->nn - cg->ns + 2, sizeof *num), next = 0;
    for (size_t v = 0; v < n; v++) {
        if (hd[v] != v || nx[v] == NONE) continue;
        size_t pos = 0;
        for (size_t m = v; m != NONE; m = nx[m]) cg->g[m].member_pos = pos++;
        long c = cg->g[v].cycle;
        if (c > 0 && (size_t)c <= cg->nn - cg->ns && !num[c]) num[c] = ++next;
    }
    for (size_t c = 1; c <= cg->nn - cg->ns; c++)      /* a cycle gprof's walk missed */
        if (!num[c]) num[c] = ++next;
    for (size_t v = 0; v < cg->nn; v++)
        if (cg->g[v].cycle) cg->g[v].cycle = num[cg->g[v].cycle];
    free(num);
    free(top); free(hd); free(nx); free(stk); free(ks);
}

/* What a function's callers inherit of its time, as a fraction: the sum
 * over its callers (outside its cycle) of their own fraction times the
 * calls along the arc over all its calls; 1 where nothing calls it (binutils
 * gprof's inherit_flags and propagate_flags in cg_arcs.c). Exactly 1 for
 * every function in exact arithmetic, but gprof sums doubles, in its own
 * order (its parent lists newest first), and the call graph prints and
 * sorts times scaled by the result: the last bits order equal totals, as
 * a function with many callers has a fraction just under 1. */
static double inherited_fraction(const struct cg *cg, size_t v, size_t head)
{
    const struct node *G = cg->g;
    double f = 0;
    for (size_t k = cg->in_n[v]; k-- > 0;) {
        const struct arc *a = &cg->a[cg->in_idx[v][k]];
        if (a->from == v || (head != v && G[a->from].head == head)) continue;
        if (G[head].calls) f += G[a->from].fract * ((double)a->count / (double)G[head].calls);
    }
    return f;
}

static void fractions(struct cg *cg)
{
    const struct tarjan *tj = &cg->tj;
    struct node *G = cg->g;
    size_t *members = vpf_xcalloc(cg->ns ? cg->ns : 1, sizeof *members);
    cg->total = 0;
    size_t done = (size_t)-1;                   /* the last cycle handled */
    for (size_t q = tj->n_order; q-- > 0;) {    /* callers first */
        size_t v = tj->order[q], h = G[v].head;
        if (h == v) {
            G[v].fract = inherited_fraction(cg, v, v);
        } else if (h != done) {
            /* a cycle inherits from its members' outside callers, the
             * members taken in gprof's list order */
            size_t nm = 0;
            for (size_t i = 0; i < cg->ns; i++)
                if (G[i].head == h) members[nm++] = i;
            double f = 0;
            for (size_t pos = 0; pos < nm; pos++)
                for (size_t i = 0; i < nm; i++)
                    if (G[members[i]].member_pos == pos)
                        f += inherited_fraction(cg, members[i], h);
            G[h].fract = f;
            for (size_t i = 0; i < nm; i++) G[members[i]].fract = f;
            done = h;
        }
        if (G[v].fract == 0.0) G[v].fract = 1.0;    /* a root (not a cycle's head) */
        G[v].pself = G[v].self * G[v].fract;
        cg->total += G[v].pself;                /* gprof's print_time, in its order */
    }
    for (size_t h = cg->ns; h < cg->nn; h++) G[h].pself = G[h].fract * G[h].self;
    free(members);
}

/* Time flows from callee (or its cycle) to caller in proportion to the
 * calls along each arc, callees first; time of a cycle member's callee
 * inside the same cycle stays in the cycle. What the call graph prints is
 * scaled by the caller's fraction (fractions()). */
static void propagate(struct cg *cg)
{
    const struct tarjan *tj = &cg->tj;
    struct node *G = cg->g;
    for (size_t q = 0; q < tj->n_order; q++) {
        size_t v = tj->order[q];
        /* gprof sums a caller's child time over its arcs newest first (its
         * lists are built by prepending): the same order gives the same last
         * bits, which decide the order of equal totals */
        for (size_t k = cg->out_n[v]; k-- > 0;) {
            struct arc *a = &cg->a[cg->out_idx[v][k]];
            size_t w = a->to;
            if (w == v || (G[v].cycle && G[v].cycle == G[w].cycle)) continue;
            size_t T = G[w].head;
            if (!G[T].calls) continue;
            double frac = (double)a->count / (double)G[T].calls;
            a->time = G[T].self * frac;
            a->child_time = G[T].child * frac;
            double share = a->time + a->child_time, pshare = G[v].fract * share;
            G[v].child += share;
            G[v].pchild += pshare;
            a->time *= G[v].fract;
            a->child_time *= G[v].fract;
            if (G[v].cycle) {
                G[G[v].head].child += share;
                G[G[v].head].pchild += pshare;
            }
        }
    }
}

static void cg_build(struct cg *cg, const struct vpr_symtab *t, const struct vpf_gmon *g)
{
    memset(cg, 0, sizeof *cg);
    cg->t = t;
    cg->ns = t->n;
    cg->g = vpf_xcalloc(2 * cg->ns + 1, sizeof *cg->g);   /* a cycle head per symbol at most */
    cg->hz = g->prof_rate ? g->prof_rate : 100;
    uint64_t bias = vpr_gmon_bias(g, t, 0, 0);
    assign_ticks(cg, g, bias);
    collect_arcs(cg, g, bias);
    index_arcs(cg);
    find_cycles(cg);
    gprof_member_order(cg);
    fractions(cg);
    propagate(cg);
}

static void cg_free(struct cg *cg)
{
    for (size_t i = 0; i < cg->ns; i++) { free(cg->out_idx[i]); free(cg->in_idx[i]); }
    free(cg->out_idx); free(cg->out_n); free(cg->in_idx); free(cg->in_n);
    free(cg->tj.stack); free(cg->tj.order); free(cg->tj.comp_start);
    free(cg->a); free(cg->g);
}

/* ---------- printing ---------- */

/* gprof's per-call unit (hist.c, SItab): the first prefix, from tera down,
 * that puts the largest per-call time in [1, 1000); with no function that
 * has both calls and time, the first one ("Ts/call"), as gprof prints. */
static void unit_for(double per_call_sec, double *scale, const char **unit)
{
    static const double sc[] = {1e-12, 1e-9, 1e-6, 1e-3, 1, 1e3, 1e6, 1e9, 1e12, 1e15, 1e18};
    static const char *names[] = {"Ts", "Gs", "Ms", "Ks", " s", "ms", "us", "ns", "ps", "fs",
                                  "as"};
    *scale = sc[0];
    *unit = names[0];
    if (per_call_sec <= 0) return;
    for (size_t i = 0; i < sizeof sc / sizeof sc[0]; i++) {
        double v = per_call_sec * sc[i];
        *scale = sc[i];
        *unit = names[i];
        if (v >= 1.0 && v < 1000.0) return;
    }
}

static void print_flat(FILE *out, const struct cg *cg, const struct vpf_gmon *g)
{
    const struct node *G = cg->g;
    double hz = cg->hz;
    size_t *idx = vpf_xcalloc(cg->ns ? cg->ns : 1, sizeof *idx), ni = 0;
    for (size_t i = 0; i < cg->ns; i++)
        if (G[i].self > 0 || G[i].calls > 0) idx[ni++] = i;
    qsort_r(idx, ni, sizeof *idx, cmp_flat, (void *)cg);
    double top_pc = 0;
    for (size_t i = 0; i < ni; i++) {
        const struct node *s = &G[idx[i]];
        if (s->calls) {
            double pc = (s->self + s->child) / hz / (double)s->calls;
            if (pc > top_pc) top_pc = pc;
        }
    }
    double scale;
    const char *unit;
    unit_for(top_pc, &scale, &unit);
    fprintf(out, "Flat profile:\n\nEach sample counts as %g %s.\n", 1.0 / hz,
            g->dimen[0] ? g->dimen : "seconds");
    if (!(cg->total_time > 0))          /* gprof's words for a profile without ticks */
        fprintf(out, " no time accumulated\n\n");
    fprintf(out, "  %%   cumulative   self              self     total           \n");
    fprintf(out, " time   seconds   seconds    calls %3s/call %3s/call  name    \n", unit, unit);
    double cum = 0;
    for (size_t i = 0; i < ni; i++) {
        const struct node *s = &G[idx[i]];
        cum += s->self;
        fprintf(out, "%6.2f %9.2f %8.2f",
                cg->total_time > 0 ? 100.0 * s->self / cg->total_time : 0.0, cum / hz,
                s->self / hz);
        if (s->calls)
            fprintf(out, " %8llu %8.2f %8.2f  ", (unsigned long long)s->calls,
                    scale * s->self / hz / (double)s->calls,
                    scale * (s->self + s->child) / hz / (double)s->calls);
        else
            fprintf(out, " %8s %8s %8s  ", "", "", "");
        fprintf(out, "%s\n", vpr_dm(cg->t->syms[idx[i]].name));
    }
    free(idx);
}

static void print_count_only(FILE *out, const struct cg *cg, uint64_t count, size_t v)
{
    fprintf(out, "%29s%7llu %7s     ", "", (unsigned long long)count, "");
    print_name(out, cg, v);
    fprintf(out, " [%ld]\n", cg->g[v].cg_index);
}

/* A parent or child line; v is the other end of the arc. */
static void print_arc(FILE *out, const struct cg *cg, const struct arc *a, size_t v)
{
    if (count_only(cg, a)) { print_count_only(out, cg, a->count, v); return; }
    const struct node *G = cg->g;
    uint64_t total = G[G[a->to].head].calls;
    fprintf(out, "%20.2f %7.2f %7llu/%-7llu     ", a->time / cg->hz, a->child_time / cg->hz,
            (unsigned long long)a->count, (unsigned long long)total);
    print_name(out, cg, v);
    fprintf(out, " [%ld]\n", G[v].cg_index);
}

/* The entry's own line: "[index] %time self children called name". */
static void print_primary(FILE *out, const struct cg *cg, size_t v, size_t index)
{
    const struct node *s = &cg->g[v];
    char ib[24], called[24] = "", rec[24] = "";
    snprintf(ib, sizeof ib, "[%zu]", index);
    if (s->calls || s->self_calls)
        snprintf(called, sizeof called, "%llu", (unsigned long long)s->calls);
    if (s->self_calls)
        snprintf(rec, sizeof rec, "+%-7llu", (unsigned long long)s->self_calls);
    fprintf(out, "%-6s%6.1f %7.2f %7.2f %7s%-8s ", ib,
            cg->total > 0 ? 100.0 * (s->pself + s->pchild) / cg->total : 0.0,
            s->pself / cg->hz, s->pchild / cg->hz, called, rec);
    print_name(out, cg, v);
    fprintf(out, " [%zu]\n", index);
}

/* gprof's order of a cycle's members (cg_print.c cmp_member, sort_members:
 * a stable insertion sort of its member list): time, then calls including
 * recursive ones, then the place in the list */
static int cmp_member(const void *a, const void *b, void *ctx)
{
    const struct node *G = ((const struct cg *)ctx)->g;
    const struct node *x = &G[*(const size_t *)a], *y = &G[*(const size_t *)b];
    double tx = x->pself + x->pchild, ty = y->pself + y->pchild;
    if (tx != ty) return tx > ty ? -1 : 1;
    uint64_t cx = x->calls + x->self_calls, cy = y->calls + y->self_calls;
    if (cx != cy) return cx > cy ? -1 : 1;
    return x->member_pos < y->member_pos ? -1 : x->member_pos > y->member_pos;
}

/* "<cycle N as a whole>": its line, then its members, largest first
 * (scratch: room for every symbol). */
static void print_cycle_entry(FILE *out, const struct cg *cg, size_t v, size_t index,
                              size_t *scratch)
{
    const struct node *G = cg->g;
    print_primary(out, cg, v, index);
    size_t nm = 0;
    for (size_t i = 0; i < cg->ns; i++) if (G[i].head == v) scratch[nm++] = i;
    qsort_r(scratch, nm, sizeof *scratch, cmp_member, (void *)cg);
    for (size_t i = 0; i < nm; i++) {
        size_t w = scratch[i];
        fprintf(out, "%20.2f %7.2f %7llu", G[w].pself / cg->hz, G[w].pchild / cg->hz,
                (unsigned long long)G[w].calls);
        if (G[w].self_calls)
            fprintf(out, "+%-7llu     ", (unsigned long long)G[w].self_calls);
        else
            fprintf(out, " %7s     ", "");
        print_name(out, cg, w);
        fprintf(out, " [%ld]\n", G[w].cg_index);
    }
}

/* A function: its parents (or <spontaneous>), its line, its children
 * (list: room for every arc). */
static void print_func_entry(FILE *out, const struct cg *cg, size_t v, size_t index,
                             const struct arc **list)
{
    size_t np = 0;
    for (size_t k = 0; k < cg->in_n[v]; k++) list[np++] = &cg->a[cg->in_idx[v][k]];
    qsort_r(list, np, sizeof *list, cmp_arc_asc, (void *)cg);
    int parents = 0;
    for (size_t k = 0; k < np; k++) {
        parents |= list[k]->from != v;  /* a cycle member's callers count */
        print_arc(out, cg, list[k], list[k]->from);
    }
    if (!parents) fprintf(out, "%49s<spontaneous>\n", "");
    print_primary(out, cg, v, index);
    size_t nc = 0;
    for (size_t k = 0; k < cg->out_n[v]; k++) list[nc++] = &cg->a[cg->out_idx[v][k]];
    qsort_r(list, nc, sizeof *list, cmp_arc_desc, (void *)cg);
    for (size_t k = 0; k < nc; k++) print_arc(out, cg, list[k], list[k]->to);
}

/* Entries of the call graph, by total time; numbers them (cg_index): gprof
 * numbers every symbol and cycle, also those it does not print. idx: room
 * for nn. */
static size_t number_entries(struct cg *cg, size_t *idx)
{
    struct node *G = cg->g;
    size_t ni = 0;
    for (size_t i = 0; i < cg->nn; i++) idx[ni++] = i;
    qsort_r(idx, ni, sizeof *idx, cmp_cg, cg);
    for (size_t i = 0; i < ni; i++) G[idx[i]].cg_index = (long)i + 1;
    return ni;
}

static void print_call_graph(FILE *out, const struct cg *cg, const struct vpf_gmon *g,
                             const size_t *idx, size_t ni)
{
    fprintf(out, "\f\n\t\t\tCall graph\n\n\n");
    fprintf(out, "granularity: each sample hit covers %ld byte(s)",
            g->hist_size ? (long)((double)((g->highpc - g->lowpc) / 2) / g->hist_size) * 2 : 0L);
    if (cg->total > 0)
        fprintf(out, " for %.2f%% of %.2f seconds\n\n", 100.0 / cg->total, cg->total / cg->hz);
    else
        fprintf(out, " no time propagated\n\n");
    fprintf(out, "index %% time    self  children    called     name\n");
    const struct arc **list = vpf_xcalloc(cg->na + 1, sizeof *list);
    size_t *scratch = vpf_xcalloc(cg->ns + 1, sizeof *scratch);
    for (size_t q = 0; q < ni; q++) {
        if (!printed(cg, idx[q])) continue;
        if (idx[q] >= cg->ns) print_cycle_entry(out, cg, idx[q], q + 1, scratch);
        else print_func_entry(out, cg, idx[q], q + 1, list);
        fprintf(out, "-----------------------------------------------\n");
    }
    free(scratch);
    free(list);
}

/* "Index by function name": column-major, three columns; static functions
 * carry the file they are defined in (DWARF line table). gprof leaves out
 * entries with no time and no calls. */
static void print_index(FILE *out, const struct cg *cg, const size_t *entries, size_t n,
                        const char *exe)
{
    const struct node *G = cg->g;
    const struct vpr_symtab *S = cg->t;
    size_t *idx = vpf_xcalloc(n + 1, sizeof *idx), ni = 0;
    for (size_t i = 0; i < n; i++) {
        size_t v = entries[i];
        if (v >= cg->ns || G[v].self > 0 || G[v].calls + G[v].self_calls > 0) idx[ni++] = v;
    }
    struct vpr_lines *ln = vpr_lines_load(exe);
    qsort_r(idx, ni, sizeof *idx, cmp_name, (void *)cg);
    fprintf(out, "\f\nIndex by function name\n\n");
    size_t rows = (ni + 2) / 3, pos = 0;
    for (size_t row = 0; row < rows; row++)
        for (size_t col = 0; col < 3; col++) {
            size_t i = row + col * rows;
            if (i >= ni) break;
            size_t v = idx[i];
            char ib[24], cyc[40];
            const char *file, *nm, *in = NULL;
            unsigned line;
            snprintf(ib, sizeof ib, "[%ld]", G[v].cg_index);
            if (v >= cg->ns) {
                snprintf(cyc, sizeof cyc, "<cycle %ld>", G[v].cycle);
                nm = cyc;
            } else {
                nm = vpr_dm(S->syms[v].name);
                if (!S->syms[v].global && vpr_lines_lookup(ln, S->syms[v].lo, &file, &line) == 0) {
                    in = strrchr(file, '/');
                    in = in ? in + 1 : file;
                }
            }
            /* gprof pads each entry so that its "[N]" ends at column
             * 28 * col + 6, or one space after a name that ran past it
             * (an index of 5 digits or more, "[4261]", starts at once) */
            if (col == 0) pos = 0;
            size_t at = 28 * col + 5, target = at > strlen(ib) ? at - strlen(ib) : 0;
            for (; pos < target; pos++) fputc(' ', out);
            fprintf(out, " %s %s", ib, nm);         /* at least one space */
            pos += 1 + strlen(ib) + 1 + strlen(nm);
            if (in) {
                fprintf(out, " (%s)", in);
                pos += strlen(in) + 3;
            }
            if (col == 2 || row + (col + 1) * rows >= ni) fputc('\n', out);
        }
    vpr_lines_free(ln);
    free(idx);
}

/* Loads gmon file path and checks that it is a profile of t (a gmon file
 * of another program would have its time given to t's functions). The
 * call arcs are checked against every function symbol of the program
 * (chk): gprof's own selection leaves out clones such as "f.isra.0", and
 * a program whose calls mostly go to clones is still this program. */
static int load_checked(const struct vpr_symtab *t, const struct vpr_symtab *chk,
                        const char *path, struct vpf_gmon *g)
{
    vpf_err e;
    char err[1024];
    if (vpf_gmon_load(path, g, &e) < 0) {
        fprintf(stderr, "vprof-report: %s\n", e.msg);
        return -1;
    }
    if (vpr_gmon_check(g, vpr_gmon_bias(g, t, 0, 0), chk, path, err, sizeof err) < 0) {
        fprintf(stderr, "vprof-report: %s\n", err);
        vpf_gmon_free(g);
        return -1;
    }
    return 0;
}

/* The gmon files summed into g, each checked on its own. */
static int load_all(const struct vpr_symtab *t, const struct vpr_symtab *chk, char **gmons,
                    size_t n, struct vpf_gmon *g)
{
    if (load_checked(t, chk, gmons[0], g) < 0) return -1;
    for (size_t i = 1; i < n; i++) {
        struct vpf_gmon one;
        vpf_err e;
        if (load_checked(t, chk, gmons[i], &one) < 0) { vpf_gmon_free(g); return -1; }
        vpf_gmon_free(&one);
        if (vpf_gmon_merge(g, gmons[i], &e) < 0) {
            fprintf(stderr, "vprof-report: %s\n", e.msg);
            vpf_gmon_free(g);
            return -1;
        }
    }
    return 0;
}

int vpr_gprof_main(const char *exe, char **gmons, size_t n, FILE *out)
{
    static char *dflt[] = {"gmon.out"};
    if (!gmons) { gmons = dflt; n = 1; }
    char err[1024];
    struct vpr_symtab t, chk;
    if (vpr_symtab_load_gprof(exe, &t, err, sizeof err) < 0) {
        fprintf(stderr, "vprof-report: %s\n", err);
        return 1;
    }
    if (vpr_symtab_load(exe, &chk, err, sizeof err) < 0) {
        fprintf(stderr, "vprof-report: %s\n", err);
        vpr_symtab_free(&t);
        return 1;
    }
    struct vpf_gmon g;
    int rc = 1;
    if (load_all(&t, &chk, gmons, n, &g) == 0) {
        rc = vpr_gprof_print(out, &t, &g, exe);
        vpf_gmon_free(&g);
    }
    vpr_symtab_free(&chk);
    vpr_symtab_free(&t);
    return rc;
}

int vpr_gprof_print(FILE *out, const struct vpr_symtab *t, const struct vpf_gmon *g,
                    const char *exe)
{
    struct cg cg;
    cg_build(&cg, t, g);
    print_flat(out, &cg, g);
    if (!g->n_arcs) {           /* no call arcs recorded: gprof prints the flat profile only */
        cg_free(&cg);
        return 0;
    }
    size_t *idx = vpf_xcalloc(cg.nn + 1, sizeof *idx);
    size_t ni = number_entries(&cg, idx);
    print_call_graph(out, &cg, g, idx, ni);
    print_index(out, &cg, idx, ni, exe);
    free(idx);
    cg_free(&cg);
    return 0;
}
