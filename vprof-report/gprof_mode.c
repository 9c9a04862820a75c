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

struct arc { size_t from, to; uint64_t count; double time, child_time; };

struct node {                   /* a function, or a cycle head */
    double self, child;         /* ticks */
    uint64_t calls;             /* from other functions (heads: from outside) */
    uint64_t self_calls;        /* recursive (heads: between members) */
    long cycle;                 /* cycle number, 0 = none */
    size_t head;                /* node index of its cycle head, or itself */
    long cg_index;
    /* Tarjan */
    long idx, low;
    int on_stack;
};

static const struct vpr_symtab *S;
static struct node *G;
static size_t NS;               /* nodes [0, NS) are symbols */
static struct arc *A;

static const char *base_name(size_t v)
{
    static char buf[64];
    if (v < NS) return S->syms[v].name;
    snprintf(buf, sizeof buf, "<cycle %ld as a whole>", G[v].cycle);
    return buf;
}

/* "name <cycle N>" for cycle members; names demangled as gprof prints them
 * (sorting stays on the linkage names, as in gprof) */
static void print_name(FILE *out, size_t v)
{
    fputs(vpr_dm(base_name(v)), out);
    if (v < NS && G[v].cycle) fprintf(out, " <cycle %ld>", G[v].cycle);
}

static int cmp_flat(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    if (G[x].self != G[y].self) return G[x].self > G[y].self ? -1 : 1;
    if (G[x].calls != G[y].calls) return G[x].calls > G[y].calls ? -1 : 1;
    return strcmp(S->syms[x].name, S->syms[y].name);
}

static int cmp_cg(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    double tx = G[x].self + G[x].child, ty = G[y].self + G[y].child;
    /* totals that are equal in exact arithmetic (a caller that inherits all
     * of a callee's time) differ in the last bits depending on the order of
     * the sums: treat them as ties, as gprof's own order ends up doing. Self
     * times alone are computed as gprof computes them (the flat profile
     * compares them exactly too), so two leaves are ordered by their last
     * bits as in gprof. */
    if (tx != ty)
        return tx > ty ? -1 : 1;
    /* then gprof's cmp_total: cycles first, a name without a leading
     * underscore before one with (C++'s _Z names come after C's), calls */
    if ((x >= NS) != (y >= NS)) return x >= NS ? -1 : 1;
    if (x >= NS) return G[x].cycle < G[y].cycle ? -1 : 1;
    int ux = S->syms[x].name[0] == '_', uy = S->syms[y].name[0] == '_';
    if (ux != uy) return ux ? 1 : -1;
    if (G[x].calls != G[y].calls) return G[x].calls > G[y].calls ? -1 : 1;
    return strcmp(S->syms[x].name, S->syms[y].name) < 0 ? -1 : 1;
}

/* gprof leaves out of the call graph what has no time and no calls */
static int printed(size_t v)
{
    return G[v].self > 0 || G[v].child > 0 || G[v].calls + G[v].self_calls > 0;
}

/* arcs that carry only a count: self calls and calls inside a cycle */
static int count_only(const struct arc *a)
{
    return a->from == a->to || (G[a->from].cycle && G[a->from].cycle == G[a->to].cycle);
}

static double arc_total(const struct arc *a) { return a->time + a->child_time; }

/* gprof lists parents with the count-only arcs first, then by increasing
 * time carried, and children by decreasing time with the count-only arcs
 * last; then by count; then in the order the arcs first appear in the gmon
 * data (its insertion sorts keep that order; A[] is in it) */
static int cmp_arc_asc(const void *x, const void *y)
{
    const struct arc *a = *(struct arc *const *)x, *b = *(struct arc *const *)y;
    if (count_only(a) != count_only(b)) return count_only(a) ? -1 : 1;
    if (arc_total(a) != arc_total(b)) return arc_total(a) < arc_total(b) ? -1 : 1;
    if (a->count != b->count) return a->count < b->count ? -1 : 1;
    return a < b ? -1 : a > b;
}

static int cmp_arc_desc(const void *x, const void *y)
{
    const struct arc *a = *(struct arc *const *)x, *b = *(struct arc *const *)y;
    if (count_only(a) != count_only(b)) return count_only(a) ? 1 : -1;
    if (arc_total(a) != arc_total(b)) return arc_total(a) > arc_total(b) ? -1 : 1;
    if (a->count != b->count) return a->count > b->count ? -1 : 1;
    return a < b ? -1 : a > b;
}

static int cmp_name(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    if ((x >= NS) != (y >= NS)) return x >= NS ? 1 : -1;   /* cycles last */
    if (x >= NS) return G[x].cycle < G[y].cycle ? -1 : 1;
    return strcmp(S->syms[x].name, S->syms[y].name);
}

/* Tarjan's strongly connected components over the arcs (self arcs
 * ignored). Components come out callees first, which is the order time
 * must be propagated in; scc_of[v] is the component, order[] lists the
 * nodes component by component. */
struct tarjan {
    size_t **out_idx, *out_n;
    size_t *stack, sp;
    long counter;
    size_t *order, n_order;
    size_t *comp_start, n_comp;   /* component k = order[comp_start[k] .. [k+1]) */
};

static void strong(struct tarjan *t, size_t v)
{
    /* iterative DFS: deep call chains must not exhaust the C stack */
    size_t *vs = malloc(NS * sizeof *vs), *ks = malloc(NS * sizeof *ks), d = 0;
    vs[0] = v;
    ks[0] = 0;
    G[v].idx = G[v].low = t->counter++;
    t->stack[t->sp++] = v;
    G[v].on_stack = 1;
    for (;;) {
        size_t u = vs[d];
        if (ks[d] < t->out_n[u]) {
            /* newest arc first, as gprof's depth-first numbering walks
             * its prepended lists: the same order of components */
            const struct arc *a = &A[t->out_idx[u][t->out_n[u] - 1 - ks[d]++]];
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

/* "Index by function name": column-major, three columns; static functions
 * carry the file they are defined in (DWARF line table). */
static void print_index(FILE *out, size_t *idx, size_t ni, const char *exe)
{
    struct vpr_lines *ln = vpr_lines_load(exe);
    qsort(idx, ni, sizeof *idx, cmp_name);
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
            if (v >= NS) {
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
             * 28 * col + 6, or one space after a name that ran past it */
            if (col == 0) pos = 0;
            size_t target = 28 * col + 5 - strlen(ib);
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
}

static void unit_for(double per_call_sec, double *scale, const char **unit)
{
    static const double sc[] = {1e12, 1e9, 1e6, 1e3, 1};
    static const char *names[] = {"ps", "ns", "us", "ms", "s"};
    *scale = 1e3;
    *unit = "ms";
    if (per_call_sec <= 0) return;
    for (int i = 0; i < 5; i++) {
        double v = per_call_sec * sc[i];
        if (v >= 1.0 && v < 1000.0) { *scale = sc[i]; *unit = names[i]; return; }
    }
}

static void print_count_only(FILE *out, uint64_t count, size_t v)
{
    fprintf(out, "%29s%7llu %7s     ", "", (unsigned long long)count, "");
    print_name(out, v);
    fprintf(out, " [%ld]\n", G[v].cg_index);
}

static void print_arc(FILE *out, const struct arc *a, uint64_t total, size_t v, double hz)
{
    fprintf(out, "%20.2f %7.2f %7llu/%-7llu     ", a->time / hz, a->child_time / hz,
            (unsigned long long)a->count, (unsigned long long)total);
    print_name(out, v);
    fprintf(out, " [%ld]\n", G[v].cg_index);
}

static void print_flat(FILE *out, const struct vpf_gmon *g, double hz, double total_time)
{
    size_t *idx = malloc((NS ? NS : 1) * sizeof *idx), ni = 0;
    for (size_t i = 0; i < NS; i++)
        if (G[i].self > 0 || G[i].calls > 0) idx[ni++] = i;
    qsort(idx, ni, sizeof *idx, cmp_flat);
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
    fprintf(out, "  %%   cumulative   self              self     total           \n");
    fprintf(out, " time   seconds   seconds    calls %3s/call %3s/call  name    \n", unit, unit);
    double cum = 0;
    for (size_t i = 0; i < ni; i++) {
        const struct node *s = &G[idx[i]];
        cum += s->self;
        fprintf(out, "%6.2f %9.2f %8.2f",
                total_time > 0 ? 100.0 * s->self / total_time : 0.0, cum / hz, s->self / hz);
        if (s->calls)
            fprintf(out, " %8llu %8.2f %8.2f  ", (unsigned long long)s->calls,
                    scale * s->self / hz / (double)s->calls,
                    scale * (s->self + s->child) / hz / (double)s->calls);
        else
            fprintf(out, " %8s %8s %8s  ", "", "", "");
        fprintf(out, "%s\n", vpr_dm(S->syms[idx[i]].name));
    }
    free(idx);
}

int vpr_gprof_main(const char *exe, char **gmons, size_t n, FILE *out)
{
    static char *dflt[] = {"gmon.out"};
    if (!gmons) { gmons = dflt; n = 1; }
    char err[1024];
    struct vpr_symtab t;
    if (vpr_symtab_load_gprof(exe, &t, err, sizeof err) < 0) {
        fprintf(stderr, "vprof-report: %s\n", err);
        return 1;
    }
    struct vpf_gmon g;
    vpf_err e;
    if (vpf_gmon_load(gmons[0], &g, &e) < 0) {
        fprintf(stderr, "vprof-report: %s\n", e.msg);
        vpr_symtab_free(&t);
        return 1;
    }
    for (size_t i = 1; i < n; i++)
        if (vpf_gmon_merge(&g, gmons[i], &e) < 0) {
            fprintf(stderr, "vprof-report: %s\n", e.msg);
            vpf_gmon_free(&g);
            vpr_symtab_free(&t);
            return 1;
        }
    int rc = vpr_gprof_print(out, &t, &g, exe);
    vpf_gmon_free(&g);
    vpr_symtab_free(&t);
    return rc;
}

int vpr_gprof_print(FILE *out, const struct vpr_symtab *symtab,
                    const struct vpf_gmon *gm, const char *exe)
{
    const struct vpr_symtab t = *symtab;
    const struct vpf_gmon g = *gm;
    uint64_t bias = vpr_gmon_bias(&g, &t, 0, 0);
    S = symtab;
    NS = t.n;
    /* room for one cycle head per symbol at most */
    G = calloc(2 * NS + 1, sizeof *G);
    double *ticks = calloc(NS ? NS : 1, sizeof *ticks);
    double total_time = vpr_hist_assign(&g, bias, &t, ticks);
    double total = 0;               /* call graph: sum of credited time (below) */
    for (size_t i = 0; i < NS; i++) {
        G[i].self = ticks[i];
        G[i].head = i;
        G[i].idx = -1;
    }
    free(ticks);
    double hz = g.prof_rate ? g.prof_rate : 100;

    A = calloc(g.n_arcs ? g.n_arcs : 1, sizeof *A);
    size_t na = 0;
    for (size_t i = 0; i < g.n_arcs; i++) {
        long f = vpr_sym_find(&t, g.arcs[i].from_pc - bias);
        long s = vpr_sym_find(&t, g.arcs[i].self_pc - bias);
        if (s < 0) continue;
        if (f < 0) { G[s].calls += g.arcs[i].count; continue; }  /* spontaneous */
        size_t k;
        for (k = 0; k < na; k++)
            if (A[k].from == (size_t)f && A[k].to == (size_t)s) break;
        if (k == na) A[na++] = (struct arc){(size_t)f, (size_t)s, 0, 0, 0};
        A[k].count += g.arcs[i].count;
        if (f == s) G[s].self_calls += g.arcs[i].count;
        else G[s].calls += g.arcs[i].count;
    }
    struct tarjan tj;
    memset(&tj, 0, sizeof tj);
    tj.out_idx = calloc(NS ? NS : 1, sizeof *tj.out_idx);
    tj.out_n = calloc(NS ? NS : 1, sizeof *tj.out_n);
    size_t **in_idx = calloc(NS ? NS : 1, sizeof *in_idx), *in_n = calloc(NS ? NS : 1, sizeof *in_n);
    for (size_t k = 0; k < na; k++) {
        size_t f = A[k].from, s = A[k].to;
        tj.out_idx[f] = realloc(tj.out_idx[f], (tj.out_n[f] + 1) * sizeof **tj.out_idx);
        tj.out_idx[f][tj.out_n[f]++] = k;
        in_idx[s] = realloc(in_idx[s], (in_n[s] + 1) * sizeof **in_idx);
        in_idx[s][in_n[s]++] = k;
    }
    tj.stack = malloc((NS ? NS : 1) * sizeof *tj.stack);
    tj.order = malloc((NS ? NS : 1) * sizeof *tj.order);
    tj.comp_start = malloc((NS + 1) * sizeof *tj.comp_start);
    for (size_t i = 0; i < NS; i++) if (G[i].idx < 0) strong(&tj, i);
    tj.comp_start[tj.n_comp] = tj.n_order;
    /* summed callers first, as gprof sums it: the last bits decide how a
     * percentage ending in 5 rounds */
    for (size_t q = tj.n_order; q-- > 0;) total += G[tj.order[q]].self;

    /* cycles: components of more than one function, numbered callers
     * first (gprof numbers them from the top of the graph) */
    size_t nn = NS;
    for (size_t c = tj.n_comp; c-- > 0;) {
        size_t lo = tj.comp_start[c], hi = tj.comp_start[c + 1];
        if (hi - lo < 2) continue;
        size_t h = nn++;
        G[h].cycle = (long)(h - NS + 1);
        G[h].head = h;
        for (size_t q = lo; q < hi; q++) {
            size_t v = tj.order[q];
            G[v].cycle = G[h].cycle;
            G[v].head = h;
            G[h].self += G[v].self;
        }
    }
    for (size_t k = 0; k < na; k++) {           /* calls of each cycle */
        size_t f = A[k].from, s = A[k].to;
        if (!G[s].cycle || f == s) continue;
        if (G[f].cycle == G[s].cycle) G[G[s].head].self_calls += A[k].count;
        else G[G[s].head].calls += A[k].count;
    }
    /* propagate, callees first; time of a cycle member's callee inside the
     * same cycle stays in the cycle */
    for (size_t c = 0; c < tj.n_comp; c++) {
        for (size_t q = tj.comp_start[c]; q < tj.comp_start[c + 1]; q++) {
            size_t v = tj.order[q];
            /* gprof sums a caller's child time over its arcs newest first
             * (its lists are built by prepending): the same order gives
             * the same last bits, which decide the order of equal totals */
            for (size_t k = tj.out_n[v]; k-- > 0;) {
                struct arc *a = &A[tj.out_idx[v][k]];
                size_t w = a->to;
                if (w == v || (G[v].cycle && G[v].cycle == G[w].cycle)) continue;
                size_t T = G[w].head;
                if (!G[T].calls) continue;
                double frac = (double)a->count / (double)G[T].calls;
                a->time = G[T].self * frac;
                a->child_time = G[T].child * frac;
                G[v].child += a->time + a->child_time;
                if (G[v].cycle) G[G[v].head].child += a->time + a->child_time;
            }
        }
    }

    print_flat(out, &g, hz, total_time);

    /* call graph: gprof numbers every symbol in this order, also those it
     * does not print */
    size_t *idx = malloc((nn + NS + 1) * sizeof *idx), ni = 0;  /* + scratch */
    for (size_t i = 0; i < nn; i++) idx[ni++] = i;
    qsort(idx, ni, sizeof *idx, cmp_cg);
    for (size_t i = 0; i < ni; i++) G[idx[i]].cg_index = (long)i + 1;
    fprintf(out, "\f\n\t\t\tCall graph\n\n\n");
    fprintf(out, "granularity: each sample hit covers %ld byte(s) for %.2f%% of %.2f seconds\n\n",
            g.hist_size ? (long)((double)((g.highpc - g.lowpc) / 2) / g.hist_size) * 2 : 0L,
            total > 0 ? 100.0 / total : 0.0, total / hz);
    fprintf(out, "index %% time    self  children    called     name\n");
    struct arc **list = malloc((na + NS + 1) * sizeof *list);
    for (size_t q = 0; q < ni; q++) {
        size_t v = idx[q];
        struct node *s = &G[v];
        if (!printed(v)) continue;
        char ib[24], called[24] = "", rec[24] = "";
        snprintf(ib, sizeof ib, "[%zu]", q + 1);
        if (s->calls || s->self_calls)
            snprintf(called, sizeof called, "%llu", (unsigned long long)s->calls);
        if (s->self_calls)
            snprintf(rec, sizeof rec, "+%-7llu", (unsigned long long)s->self_calls);
        if (v >= NS) {                          /* cycle as a whole */
            fprintf(out, "%-6s%6.1f %7.2f %7.2f %7s%-8s %s [%zu]\n", ib,
                    total > 0 ? 100.0 * (s->self + s->child) / total : 0.0,
                    s->self / hz, s->child / hz, called, rec, base_name(v), q + 1);
            size_t nm = 0;
            for (size_t i = 0; i < NS; i++) if (G[i].head == v) idx[ni + nm++] = i;
            size_t *mem = idx + ni;             /* members, largest first */
            qsort(mem, nm, sizeof *mem, cmp_cg);
            for (size_t i = 0; i < nm; i++) {
                fprintf(out, "%20.2f %7.2f %7llu %7s     ", G[mem[i]].self / hz,
                        G[mem[i]].child / hz, (unsigned long long)G[mem[i]].calls, "");
                print_name(out, mem[i]);
                fprintf(out, " [%ld]\n", G[mem[i]].cg_index);
            }
            fprintf(out, "-----------------------------------------------\n");
            continue;
        }
        size_t np = 0;
        for (size_t k = 0; k < in_n[v]; k++) list[np++] = &A[in_idx[v][k]];
        qsort(list, np, sizeof *list, cmp_arc_asc);
        int parents = 0;
        for (size_t k = 0; k < np; k++) {
            const struct arc *a = list[k];
            parents |= a->from != v;    /* a cycle member's callers count */
            if (count_only(a)) { print_count_only(out, a->count, a->from); continue; }
            print_arc(out, a, G[G[v].head].calls, a->from, hz);
        }
        if (!parents) fprintf(out, "%49s<spontaneous>\n", "");
        fprintf(out, "%-6s%6.1f %7.2f %7.2f %7s%-8s ", ib,
                total > 0 ? 100.0 * (s->self + s->child) / total : 0.0,
                s->self / hz, s->child / hz, called, rec);
        print_name(out, v);
        fprintf(out, " [%zu]\n", q + 1);
        size_t nc = 0;
        for (size_t k = 0; k < tj.out_n[v]; k++) list[nc++] = &A[tj.out_idx[v][k]];
        qsort(list, nc, sizeof *list, cmp_arc_desc);
        for (size_t k = 0; k < nc; k++) {
            const struct arc *a = list[k];
            if (count_only(a)) print_count_only(out, a->count, a->to);
            else print_arc(out, a, G[G[a->to].head].calls, a->to, hz);
        }
        fprintf(out, "-----------------------------------------------\n");
    }
    size_t nx = 0;              /* gprof leaves out entries with no time and no calls */
    for (size_t i = 0; i < ni; i++) {
        size_t v = idx[i];
        if (v >= NS || G[v].self > 0 || G[v].calls + G[v].self_calls > 0) idx[nx++] = v;
    }
    print_index(out, idx, nx, exe);

    for (size_t i = 0; i < NS; i++) { free(tj.out_idx[i]); free(in_idx[i]); }
    free(tj.out_idx); free(tj.out_n); free(in_idx); free(in_n);
    free(tj.stack); free(tj.order); free(tj.comp_start);
    free(list); free(idx); free(A); free(G);
    return 0;
}
