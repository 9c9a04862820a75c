/* gprof_mode.c - flat profile and call graph from gmon files, through the
 * same gmon reader (vpf_gmon_*) and histogram assignment as the vprof
 * ranking.
 *
 * Follows binutils gprof: a bin's count is split over the symbols it
 * overlaps; calls of a function = sum of its incoming arc counts (self
 * arcs shown as "+N"); children time flows from callee to caller in
 * proportion to the calls along each arc. Difference: gprof collapses
 * mutually recursive functions into <cycle N> entries; here arcs that close
 * a cycle (found by depth-first search from the roots) carry no time, and
 * no cycle entries are printed. */
#include "gprof_mode.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hist_assign.h"
#include "lines.h"
#include "symbols.h"
#include "vprof_format.h"

struct arc { size_t from, to; uint64_t count; int back; };

struct gsym {
    double self, child;         /* ticks */
    uint64_t calls, self_calls;
    int listed, state;          /* state: DFS colour */
    long cg_index;
};

static const struct vpr_symtab *S;
static struct gsym *G;

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
    if (tx != ty) return tx > ty ? -1 : 1;
    if (G[x].calls != G[y].calls) return G[x].calls > G[y].calls ? -1 : 1;
    return strcmp(S->syms[x].name, S->syms[y].name);
}

/* Post-order DFS: marks back arcs, appends to topo (callees first). */
static void dfs(size_t v, struct arc *arcs, size_t na, size_t **out_idx,
                size_t *out_n, size_t *topo, size_t *nt)
{
    G[v].state = 1;
    for (size_t k = 0; k < out_n[v]; k++) {
        struct arc *a = &arcs[out_idx[v][k]];
        if (a->to == v) continue;
        if (G[a->to].state == 1) { a->back = 1; continue; }
        if (G[a->to].state == 0) dfs(a->to, arcs, na, out_idx, out_n, topo, nt);
    }
    G[v].state = 2;
    topo[(*nt)++] = v;
}

/* time an arc carries: the callee's share along it */
static double arc_time(const struct arc *a)
{
    const struct gsym *c = &G[a->to];
    if (a->back || a->from == a->to || !c->calls) return 0;
    return (c->self + c->child) * (double)a->count / (double)c->calls;
}

/* gprof lists a self-recursive arc first among parents and children */
static int cmp_arc_asc(const void *x, const void *y)
{
    const struct arc *a = *(struct arc *const *)x, *b = *(struct arc *const *)y;
    if ((a->from == a->to) != (b->from == b->to)) return a->from == a->to ? -1 : 1;
    double ta = arc_time(a), tb = arc_time(b);
    if (ta != tb) return ta < tb ? -1 : 1;
    if (a->count != b->count) return a->count < b->count ? -1 : 1;
    return strcmp(S->syms[a->from].name, S->syms[b->from].name);
}

static int cmp_arc_desc(const void *x, const void *y)
{
    const struct arc *a = *(struct arc *const *)x, *b = *(struct arc *const *)y;
    if ((a->from == a->to) != (b->from == b->to)) return a->from == a->to ? -1 : 1;
    double ta = arc_time(a), tb = arc_time(b);
    if (ta != tb) return ta > tb ? -1 : 1;
    if (a->count != b->count) return a->count > b->count ? -1 : 1;
    return strcmp(S->syms[a->to].name, S->syms[b->to].name);
}

static int cmp_name(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return strcmp(S->syms[x].name, S->syms[y].name);
}

/* "Index by function name": three per row; static functions carry the
 * file they are defined in, from the DWARF line table. */
static void print_index(FILE *out, size_t *idx, size_t ni, const char *exe)
{
    struct vpr_lines *ln = vpr_lines_load(exe);
    qsort(idx, ni, sizeof *idx, cmp_name);
    fprintf(out, "\f\nIndex by function name\n\n");
    size_t rows = (ni + 2) / 3;     /* column-major, three columns */
    for (size_t row = 0; row < rows; row++)
        for (size_t col = 0; col < 3; col++) {
            size_t i = row + col * rows;
            if (i >= ni) break;
            const struct vpr_sym *y = &S->syms[idx[i]];
            char ib[24], nm[512];
            const char *file;
            unsigned line;
            snprintf(ib, sizeof ib, "[%ld]", G[idx[i]].cg_index);
            if (!y->global && vpr_lines_lookup(ln, y->lo, &file, &line) == 0) {
                const char *b = strrchr(file, '/');
                snprintf(nm, sizeof nm, "%s (%s)", y->name, b ? b + 1 : file);
            } else {
                snprintf(nm, sizeof nm, "%s", y->name);
            }
            int last = col == 2 || row + (col + 1) * rows >= ni;
            fprintf(out, last ? "%6s %s\n" : "%6s %-21s", ib, nm);
        }
    vpr_lines_free(ln);
}

static void unit_for(double per_call_sec, double *scale, const char **unit)
{
    static const double sc[] = {1e12, 1e9, 1e6, 1e3, 1};
    static const char *un[] = {"Ts", "Gs", "Ks", "ms", "s"};   /* per-call units */
    static const char *names[] = {"ps", "ns", "us", "ms", "s"};
    (void)un;
    *scale = 1e3;
    *unit = "ms";
    if (per_call_sec <= 0) return;
    for (int i = 0; i < 5; i++) {
        double v = per_call_sec * sc[i];
        if (v >= 1.0 && v < 1000.0) { *scale = sc[i]; *unit = names[i]; return; }
    }
}

int vpr_gprof_main(const char *exe, char **gmons, size_t n, FILE *out)
{
    static char *dflt[] = {"gmon.out"};
    if (!gmons) { gmons = dflt; n = 1; }
    char err[1024];
    struct vpr_symtab t;
    if (vpr_symtab_load(exe, &t, err, sizeof err) < 0) {
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
    uint64_t bias = vpr_gmon_bias(&g, &t, 0, 0);
    S = &t;
    G = calloc(t.n ? t.n : 1, sizeof *G);
    double *ticks = calloc(t.n ? t.n : 1, sizeof *ticks);
    double total_time = vpr_hist_assign(&g, bias, &t, ticks);
    double total = 0;               /* call graph: sum of credited time */
    for (size_t i = 0; i < t.n; i++) { G[i].self = ticks[i]; total += ticks[i]; }
    free(ticks);
    double hz = g.prof_rate ? g.prof_rate : 100;

    struct arc *arcs = calloc(g.n_arcs ? g.n_arcs : 1, sizeof *arcs);
    size_t na = 0;
    for (size_t i = 0; i < g.n_arcs; i++) {
        long f = vpr_sym_find(&t, g.arcs[i].from_pc - bias);
        long s = vpr_sym_find(&t, g.arcs[i].self_pc - bias);
        if (s < 0) continue;
        if (f < 0) { G[s].calls += g.arcs[i].count; continue; }  /* spontaneous */
        size_t k;
        for (k = 0; k < na; k++)
            if (arcs[k].from == (size_t)f && arcs[k].to == (size_t)s) break;
        if (k == na) arcs[na++] = (struct arc){(size_t)f, (size_t)s, 0, 0};
        arcs[k].count += g.arcs[i].count;
        if (f == s) G[s].self_calls += g.arcs[i].count;
        else G[s].calls += g.arcs[i].count;
    }
    size_t **out_idx = calloc(t.n ? t.n : 1, sizeof *out_idx);
    size_t *out_n = calloc(t.n ? t.n : 1, sizeof *out_n);
    for (size_t k = 0; k < na; k++) {
        size_t f = arcs[k].from;
        out_idx[f] = realloc(out_idx[f], (out_n[f] + 1) * sizeof **out_idx);
        out_idx[f][out_n[f]++] = k;
    }
    size_t *topo = malloc((t.n ? t.n : 1) * sizeof *topo), nt = 0;
    for (size_t i = 0; i < t.n; i++) if (!G[i].state) dfs(i, arcs, na, out_idx, out_n, topo, &nt);
    for (size_t q = 0; q < nt; q++) {           /* callees before callers */
        size_t v = topo[q];
        for (size_t k = 0; k < out_n[v]; k++) {
            struct arc *a = &arcs[out_idx[v][k]];
            if (a->to == v || a->back || !G[a->to].calls) continue;
            G[v].child += (G[a->to].self + G[a->to].child) * (double)a->count /
                          (double)G[a->to].calls;
        }
    }

    /* flat profile */
    size_t *idx = malloc((t.n ? t.n : 1) * sizeof *idx), ni = 0;
    for (size_t i = 0; i < t.n; i++)
        if (G[i].self > 0 || G[i].calls + G[i].self_calls > 0) idx[ni++] = i;
    qsort(idx, ni, sizeof *idx, cmp_flat);
    double top_pc = 0;
    for (size_t i = 0; i < ni; i++) {
        struct gsym *s = &G[idx[i]];
        uint64_t c = s->calls;     /* gprof: calls from other functions */
        if (c) {
            double pc = (s->self + s->child) / hz / (double)c;
            if (pc > top_pc) top_pc = pc;
        }
    }
    double scale;
    const char *unit;
    unit_for(top_pc, &scale, &unit);
    fprintf(out, "Flat profile:\n\nEach sample counts as %g %s.\n", 1.0 / hz,
            g.dimen[0] ? g.dimen : "seconds");
    fprintf(out, "  %%   cumulative   self              self     total           \n");
    fprintf(out, " time   seconds   seconds    calls %3s/call %3s/call  name    \n",
            unit, unit);
    double cum = 0;
    for (size_t i = 0; i < ni; i++) {
        struct gsym *s = &G[idx[i]];
        cum += s->self;
        uint64_t c = s->calls;
        fprintf(out, "%6.2f %9.2f %8.2f",
                total_time > 0 ? 100.0 * s->self / total_time : 0.0,
                cum / hz, s->self / hz);
        if (c)
            fprintf(out, " %8llu %8.2f %8.2f  ", (unsigned long long)c,
                    scale * s->self / hz / (double)c,
                    scale * (s->self + s->child) / hz / (double)c);
        else
            fprintf(out, " %8s %8s %8s  ", "", "", "");
        fprintf(out, "%s\n", t.syms[idx[i]].name);
    }

    /* call graph */
    ni = 0;
    for (size_t i = 0; i < t.n; i++) {
        int has_arcs = out_n[i] > 0;
        if (G[i].self > 0 || G[i].calls + G[i].self_calls > 0 || has_arcs) idx[ni++] = i;
        G[i].cg_index = -1;
    }
    qsort(idx, ni, sizeof *idx, cmp_cg);
    for (size_t i = 0; i < ni; i++) G[idx[i]].cg_index = (long)i + 1;
    fprintf(out, "\f\n\t\t\tCall graph\n\n\n");
    fprintf(out, "granularity: each sample hit covers %ld byte(s) for %.2f%% of %.2f seconds\n\n",
            g.hist_size ? (long)((double)((g.highpc - g.lowpc) / 2) / g.hist_size) * 2 : 0L,
            total > 0 ? 100.0 / total : 0.0, total / hz);
    fprintf(out, "index %% time    self  children    called     name\n");
    struct arc **list = malloc((na ? na : 1) * sizeof *list);
    for (size_t q = 0; q < ni; q++) {
        size_t v = idx[q];
        struct gsym *s = &G[v];
        /* parents by increasing time carried, as gprof prints them */
        size_t np = 0;
        for (size_t k = 0; k < na; k++)
            if (arcs[k].to == v) list[np++] = &arcs[k];
        qsort(list, np, sizeof *list, cmp_arc_asc);
        int parents = 0;
        for (size_t k = 0; k < np; k++) {
            struct arc *a = list[k];
            if (a->from == v) {         /* self-recursive: count only */
                fprintf(out, "%29s%7llu %7s     %s [%ld]\n", "",
                        (unsigned long long)a->count, "", t.syms[v].name, s->cg_index);
                continue;
            }
            parents = 1;
            double frac = s->calls ? (double)a->count / (double)s->calls : 0;
            fprintf(out, "%20.2f %7.2f %7llu/%-7llu     %s [%ld]\n",
                    a->back ? 0.0 : s->self / hz * frac,
                    a->back ? 0.0 : s->child / hz * frac,
                    (unsigned long long)a->count, (unsigned long long)s->calls,
                    t.syms[a->from].name, G[a->from].cg_index);
        }
        if (!parents) fprintf(out, "%49s<spontaneous>\n", "");
        char ib[24], called[24] = "", rec[24] = "";
        snprintf(ib, sizeof ib, "[%zu]", q + 1);
        if (s->calls || s->self_calls)
            snprintf(called, sizeof called, "%llu", (unsigned long long)s->calls);
        if (s->self_calls)
            snprintf(rec, sizeof rec, "+%-7llu", (unsigned long long)s->self_calls);
        fprintf(out, "%-6s%6.1f %7.2f %7.2f %7s%-8s %s [%zu]\n", ib,
                total > 0 ? 100.0 * (s->self + s->child) / total : 0.0,
                s->self / hz, s->child / hz, called, rec, t.syms[v].name, q + 1);
        size_t nc = 0;                  /* children by decreasing time */
        for (size_t k = 0; k < out_n[v]; k++)
            list[nc++] = &arcs[out_idx[v][k]];
        qsort(list, nc, sizeof *list, cmp_arc_desc);
        for (size_t k = 0; k < nc; k++) {
            struct arc *a = list[k];
            struct gsym *c = &G[a->to];
            if (a->to == v) {
                fprintf(out, "%29s%7llu %7s     %s [%ld]\n", "",
                        (unsigned long long)a->count, "", t.syms[v].name, s->cg_index);
                continue;
            }
            double frac = c->calls ? (double)a->count / (double)c->calls : 0;
            fprintf(out, "%20.2f %7.2f %7llu/%-7llu     %s [%ld]\n",
                    a->back ? 0.0 : c->self / hz * frac,
                    a->back ? 0.0 : c->child / hz * frac,
                    (unsigned long long)a->count, (unsigned long long)c->calls,
                    t.syms[a->to].name, c->cg_index);
        }
        fprintf(out, "-----------------------------------------------\n");
    }
    for (size_t i = 0; i < t.n; i++) free(out_idx[i]);
    free(list);
    size_t nx = 0;              /* gprof leaves out entries with no time and no calls */
    for (size_t i = 0; i < ni; i++)
        if (G[idx[i]].self > 0 || G[idx[i]].calls + G[idx[i]].self_calls > 0) idx[nx++] = idx[i];
    print_index(out, idx, nx, exe);
    free(out_idx); free(out_n); free(topo); free(idx); free(arcs); free(G);
    vpf_gmon_free(&g);
    vpr_symtab_free(&t);
    return 0;
}
