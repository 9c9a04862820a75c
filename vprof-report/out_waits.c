/* out_waits.c - `vprof-report --waits` as text and JSON (docs/vprof-report.md
 * "Waits"): per process the vertices, the wait-for graph, the knots (after
 * refinement) with the call sites of their edges and what the wakers ran,
 * the sinks, and a verdict; with no knot, the CPU ranking of the sinks. */
#include "vprof_xalloc.h"
#include "demangle.h"
#include "output.h"
#include "waits.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void vpr_wait_site_str(const struct vpr_model *m, long f, uint64_t site, const char *name,
                       char *buf, size_t len)
{
    if (name) { snprintf(buf, len, "%s", name); return; }
    if (!m || f < 0 || (size_t)f >= m->n_f) { snprintf(buf, len, "?"); return; }
    const char *file;
    unsigned line;
    if (!m->f[f].is_lib && site && m->lines &&
        vpr_lines_lookup(m->lines, site, &file, &line) == 0) {
        const char *b = strrchr(file, '/');
        snprintf(buf, len, "%s (%s:%u)", vpr_dm(m->f[f].name), b ? b + 1 : file, line);
    } else {
        snprintf(buf, len, "%s", vpr_dm(m->f[f].name));
    }
}

static const char *fname(const struct vpr_model *m, long f)
{
    return m && f >= 0 && (size_t)f < m->n_f ? vpr_dm(m->f[f].name) : "?";
}

static double pct(double ns, double span)
{
    return span > 0 ? 100.0 * ns / span : 0;
}

/* "disk: fsync", "condition", ... : what kind of wait a site is. */
static void wait_what(const struct vpr_wsite *s, char *buf, size_t len)
{
    char tmp[32];
    if (s->kind == VPR_WS_IO || s->kind == VPR_WS_SYSCALL || s->kind == VPR_WS_SLEEP ||
        s->kind == VPR_WS_POLL)
        snprintf(buf, len, "%s", vpr_wait_sysname(s->nr, tmp, sizeof tmp));
    else
        snprintf(buf, len, "%s", vpr_ws_kind_name(s->kind));
}

static void knot_name(const struct vpr_wgraph *g, const struct vpr_wknot *k, char *buf,
                      size_t len)
{
    size_t n = 0;
    buf[0] = 0;
    for (size_t i = 0; i < k->n_vs && n + 1 < len; i++)
        n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? (k->n_vs == 2 ? " <-> " : ", ") : "",
                              g->v[k->vs[i]].name);
}

static size_t n_knots(const struct vpr_wgraph *g, int background)
{
    size_t n = 0;
    for (size_t i = 0; i < g->n_res; i++)
        if (g->res[i].type == VPR_WK_KNOT && g->res[i].background == background) n++;
    return n;
}

void vpr_wait_verdict(const struct vpr_wproc *p, char *buf, size_t len)
{
    const struct vpr_wgraph *g = &p->g;
    size_t nk = n_knots(g, 0), nb = n_knots(g, 1), n = 0;
    char nm[1024];
    if (nk) {
        n += (size_t)snprintf(buf + n, len - n, "throughput is limited by waiting: ");
        for (size_t i = 0, k = 0; i < g->n_res && n < len; i++) {
            if (g->res[i].type != VPR_WK_KNOT || g->res[i].background) continue;
            knot_name(g, &g->res[i], nm, sizeof nm);
            n += (size_t)snprintf(buf + n, len - n, "%sknot %zu (%s)", k++ ? ", " : "",
                                  i + 1, nm);
        }
        if (n < len)
            snprintf(buf + n, len - n, "; at least one waiting event of each knot must be "
                     "optimised (wPerf, Theorem 3.2)");
        return;
    }
    if (nb) {
        n += (size_t)snprintf(buf + n, len - n, "only knots that look like background threads "
                              "(no device, busy less than one CPU, paper §3.3): ");
        for (size_t i = 0, k = 0; i < g->n_res && n < len; i++) {
            if (g->res[i].type != VPR_WK_KNOT) continue;
            knot_name(g, &g->res[i], nm, sizeof nm);
            n += (size_t)snprintf(buf + n, len - n, "%sknot %zu (%s)", k++ ? ", " : "", i + 1, nm);
        }
        if (n < len)
            snprintf(buf + n, len - n, "; if these threads serve requests, they limit "
                     "throughput by waiting for each other");
        return;
    }
    n += (size_t)snprintf(buf + n, len - n, "no knot: no cycle of waits limits throughput; ");
    size_t ns = 0, nps = 0;
    for (size_t i = 0; i < g->n_res && n < len; i++) {
        const struct vpr_wknot *k = &g->res[i];
        if (k->type != VPR_WK_SINK || k->parent >= 0 || g->v[k->vs[0]].kind != VPR_WV_THREAD)
            continue;
        n += (size_t)snprintf(buf + n, len - n, "%s%s", ns++ ? ", " : "the bottleneck is "
                              "execution, not waiting: the sinks ", g->v[k->vs[0]].name);
    }
    if (ns && n < len)
        n += (size_t)snprintf(buf + n, len - n, " wait for no other thread (see their CPU ranking)");
    for (size_t i = 0; i < g->n_res && n < len; i++) {
        const struct vpr_wknot *k = &g->res[i];
        if (k->type != VPR_WK_SINK || k->parent >= 0 || g->v[k->vs[0]].kind == VPR_WV_THREAD)
            continue;
        n += (size_t)snprintf(buf + n, len - n, "%s%s", nps++ ? ", " : ns ? "; threads also wait "
                              "for " : "threads wait for ", g->v[k->vs[0]].name);
    }
    if (!ns && !nps && n < len) snprintf(buf + n, len - n, "nothing waits for long");
}

/* Functions sampled in the member threads of graph vertex gv. */
static size_t cpu_rank(const struct vpr_wtimeline *tl, const struct vpr_wgvertex *gv,
                       struct vpr_wrun **out, size_t *total)
{
    struct vpr_wrun *r = NULL;
    size_t n = 0;
    *total = 0;
    for (size_t i = 0; i < gv->n_members && tl->smp; i++) {
        uint32_t v = gv->members[i];
        for (size_t k = 0; k < tl->n_smp[v]; k++) {
            long f = tl->smp[v][k].f;
            size_t j = 0;
            while (j < n && r[j].f != f) j++;
            if (j == n) { r = vpf_xrealloc(r, (n + 1), sizeof *r); r[n++] = (struct vpr_wrun){f, 0, 0, 0}; }
            r[j].share += 1;
            (*total)++;
        }
    }
    for (size_t j = 0; j < n; j++) r[j].share /= (double)*total;
    for (size_t a = 1; a < n; a++)          /* insertion sort: few functions */
        for (size_t b = a; b > 0 && r[b].share > r[b - 1].share; b--) {
            struct vpr_wrun t = r[b]; r[b] = r[b - 1]; r[b - 1] = t;
        }
    *out = r;
    return n;
}

static void text_edge(FILE *o, const struct vpr_model *m, const struct vpr_wproc *p, size_t ei)
{
    const struct vpr_wgraph *g = &p->g;
    const struct vpr_wedge *e = &g->e[ei];
    const struct vpr_wdetail *d = &p->d[ei];
    char s1[512], s2[64];
    fprintf(o, "    %s -> %s  %.3f s (%.1f %%; own waits %.3f s in %zu)\n", g->v[e->a].name,
            g->v[e->b].name, e->w / 1e9, pct(e->w, g->span_ns), e->direct / 1e9, e->n_seg);
    for (size_t i = 0; i < d->n_wait && i < 3; i++) {
        const struct vpr_wsite *s = &d->wait[i];
        if (s->kind == VPR_WS_IDLE) {
            fprintf(o, "      idle      no request in flight %.3f s (%zu times)\n", s->w / 1e9, s->n);
            continue;
        }
        vpr_wait_site_str(m, s->f, s->site, s->name, s1, sizeof s1);
        wait_what(s, s2, sizeof s2);
        fprintf(o, "      waits at  %s: %s %.3f s (%zu)\n", s1, s2, s->w / 1e9, s->n);
    }
    for (size_t i = 0; i < d->n_wake && i < 3; i++) {
        const struct vpr_wsite *s = &d->wake[i];
        vpr_wait_site_str(m, s->f, s->site, s->name, s1, sizeof s1);
        if (s->kind == VPR_WS_IO && s->nr)
            fprintf(o, "      woken by  %s: %s (a new request)\n", s1,
                    vpr_wait_sysname(s->nr, s2, sizeof s2));
        else
            fprintf(o, "      woken at  %s (%.3f s)\n", s1, s->w / 1e9);
    }
    if (d->n_run) {
        fprintf(o, "      meanwhile %s: ", g->v[e->b].name);
        for (size_t i = 0; i < d->n_run && i < 5; i++) {
            const struct vpr_wrun *r = &d->run[i];
            if (i && r->share < 0.01) break;
            if (r->wait_kind == VPR_WRUN_RUNNABLE) {
                fprintf(o, "%srunnable (woken, no CPU yet) %.0f %%", i ? ", " : "", 100 * r->share);
            } else if (r->wait_kind) {
                struct vpr_wsite ws = {.kind = r->wait_kind, .nr = r->nr};
                wait_what(&ws, s2, sizeof s2);
                fprintf(o, "%swaited in %s at %s %.0f %%", i ? ", " : "", s2, fname(m, r->f),
                        100 * r->share);
            } else {
                fprintf(o, "%sran %s %.0f %%", i ? ", " : "", fname(m, r->f), 100 * r->share);
            }
        }
        if (d->run_src)
            fprintf(o, "  (%s, %zu)", d->run_src == VPR_WRUN_SAMPLES ? "PC samples" : "call events",
                    d->run_n);
        fputs("\n", o);
    }
}

static void text_knot(FILE *o, const struct vpr_model *m, const struct vpr_wproc *p,
                      size_t i, int top)
{
    const struct vpr_wgraph *g = &p->g;
    const struct vpr_wknot *k = &g->res[i];
    char nm[1024];
    knot_name(g, k, nm, sizeof nm);
    if (k->type == VPR_WK_SINK) {
        const struct vpr_wgvertex *v = &g->v[k->vs[0]];
        fprintf(o, "\nSink %zu: %s%s\n", i + 1, nm,
                k->parent >= 0 ? " (left when its knot was refined)" : "");
        if (v->kind == VPR_WV_THREAD) {
            struct vpr_wrun *r;
            size_t tot, n = cpu_rank(&p->tl, v, &r, &tot);
            fprintf(o, "  waits for nobody: its own execution limits it");
            if (v->cpu_s >= 0) fprintf(o, " (on CPU >= %.3f s of %.3f s)", v->cpu_s, v->span_s);
            fputs("\n", o);
            if (n) {
                fprintf(o, "  CPU ranking (PC samples, %zu):", tot);
                for (size_t j = 0; j < n && j < 5; j++)
                    fprintf(o, "%s %s %.0f %%", j ? "," : "", fname(m, r[j].f), 100 * r[j].share);
                fputs("\n", o);
            }
            free(r);
        } else {
            fprintf(o, "  %s: the threads wait for it and it waits for none of them\n",
                    v->kind == VPR_WV_NET ? "the network's peers (clients, servers)"
                    : v->kind == VPR_WV_TIMER ? "timers (sleeps, timeouts)"
                    : v->kind == VPR_WV_DISK ? "the device is never idle while requests wait"
                    : "outside the process");
        }
        return;
    }
    fprintf(o, "\nKnot %zu: %s%s\n", i + 1, nm, k->background ?
            "  [may be background threads: no device, busy less than one CPU]" : "");
    if (k->parent >= 0) {
        const struct vpr_wknot *p0 = &g->orig[k->parent];
        char on[1024];
        knot_name(g, p0, on, sizeof on);
        size_t nrm = 0;
        for (size_t j = 0; j < p0->n_edges; j++) if (g->e[p0->edges[j]].removed) nrm++;
        if (p0->n_vs != k->n_vs || nrm)
            fprintf(o, "  refined from %s (%zu edges removed, lightest first)\n", on, nrm);
    }
    size_t shown = 0;
    for (size_t j = 0; j < k->n_edges; j++) {
        if (top && shown >= (size_t)top) { fprintf(o, "    ... %zu more edges\n", k->n_edges - shown); break; }
        text_edge(o, m, p, k->edges[j]);
        shown++;
    }
}

void vpr_waits_text(FILE *o, const struct vpr_model *m, const struct vpr_wproc *p, int top)
{
    const struct vpr_wtimeline *tl = &p->tl;
    const struct vpr_wgraph *g = &p->g;
    size_t nt = 0, np = 0;
    for (size_t i = 0; i < tl->n_v; i++) { if (tl->v[i].kind == VPR_WV_THREAD) nt++; else np++; }
    fprintf(o, "Waits (wPerf): %s pid %d%s%s\n", tl->label ? tl->label : "?", tl->pid,
            p->exe ? " " : "", p->exe ? p->exe : "");
    fprintf(o, "source: %s (%s); observed %.3f s; %zu threads, %zu pseudo-threads, %zu waits\n",
            tl->source, p->input ? p->input : "?", g->span_ns / 1e9, nt, np, tl->n_seg);
    fprintf(o, "\n%-28s %-8s %7s %9s %9s %9s\n", "vertex", "kind", "threads", "waiting",
            "runnable", "on CPU>=");
    for (size_t i = 0; i < g->n_v; i++) {
        const struct vpr_wgvertex *v = &g->v[i];
        if (g->out_of_graph[i]) continue;
        double span = v->kind == VPR_WV_THREAD ? v->span_s : g->span_ns / 1e9;
        char th[16] = "-", cpu[16] = "-", run[16] = "-";
        if (v->kind == VPR_WV_THREAD) snprintf(th, sizeof th, "%zu", v->n_members);
        if (v->cpu_s >= 0 && span > 0) snprintf(cpu, sizeof cpu, "%.1f %%", 100 * v->cpu_s / span);
        if (v->runnable_s >= 0 && span > 0) snprintf(run, sizeof run, "%.1f %%", 100 * v->runnable_s / span);
        fprintf(o, "%-28s %-8s %7s %8.1f %% %9s %9s\n", v->name, vpr_wv_kind_name(v->kind), th,
                span > 0 ? 100 * v->wait_s / span : 0, run, cpu);
    }
    fprintf(o, "\nWait-for graph (A -> B: A waited for B; weight: cascaded waiting time, "
            "%% of the observed time):\n");
    for (size_t i = 0; i < g->n_e && (!top || i < (size_t)(3 * top)); i++) {
        const struct vpr_wedge *e = &g->e[i];
        fprintf(o, "  %9.3f s %6.1f %%  %s -> %s%s\n", e->w / 1e9, pct(e->w, g->span_ns),
                g->v[e->a].name, g->v[e->b].name, e->removed ? "  (removed by refinement)" : "");
    }
    if (top && g->n_e > (size_t)(3 * top)) fprintf(o, "  ... %zu more edges\n", g->n_e - 3 * (size_t)top);
    if (g->n_negl)
        fprintf(o, "  (%zu edges lighter than %.1f %% left out: %.3f s in all)\n", g->n_negl,
                100 * g->o.min, g->negl_ns / 1e9);
    if (g->n_unknown)
        fprintf(o, "  (%zu waits whose waker is not known left out: %.3f s)\n", g->n_unknown,
                g->unknown_ns / 1e9);
    for (size_t i = 0; i < g->n_res; i++) text_knot(o, m, p, i, top);
    char v[2048];
    vpr_wait_verdict(p, v, sizeof v);
    fprintf(o, "\nVerdict: %s.\n", v);
    /* the ranking reads run directories, not the dir/<id> label */
    if (!n_knots(g, 0) && p->exe)
        fprintf(o, "For the cause, rank the functions against a normal run: "
                "vprof-report NORMAL_DIR %s\n", p->dir ? p->dir : "DIR");
}

/* ---- JSON ---- */

static void json_site(FILE *o, const struct vpr_model *m, const struct vpr_wsite *s)
{
    char b[512], w[64];
    vpr_wait_site_str(m, s->f, s->site, s->name, b, sizeof b);
    wait_what(s, w, sizeof w);
    fputs("{\"site\":", o); vpr_jstr(o, b);
    fputs(",\"function\":", o); vpr_jstr(o, s->name ? s->name : fname(m, s->f));
    fputs(",\"what\":", o); vpr_jstr(o, w);
    fprintf(o, ",\"weight_s\":%.9f,\"count\":%zu}", s->w / 1e9, s->n);
}

static void json_edge(FILE *o, const struct vpr_model *m, const struct vpr_wproc *p, size_t ei)
{
    const struct vpr_wgraph *g = &p->g;
    const struct vpr_wedge *e = &g->e[ei];
    const struct vpr_wdetail *d = &p->d[ei];
    fputs("{\"from\":", o); vpr_jstr(o, g->v[e->a].name);
    fputs(",\"to\":", o); vpr_jstr(o, g->v[e->b].name);
    fprintf(o, ",\"weight_s\":%.9f,\"share\":%.6f,\"direct_s\":%.9f,\"waits\":%zu,"
            "\"removed_at_step\":%d,\"wait_sites\":[", e->w / 1e9,
            g->span_ns > 0 ? e->w / g->span_ns : 0, e->direct / 1e9, e->n_seg, e->removed);
    for (size_t i = 0; i < d->n_wait; i++) { if (i) fputc(',', o); json_site(o, m, &d->wait[i]); }
    fputs("],\"wake_sites\":[", o);
    for (size_t i = 0; i < d->n_wake; i++) { if (i) fputc(',', o); json_site(o, m, &d->wake[i]); }
    fprintf(o, "],\"waker_ran\":{\"source\":\"%s\",\"n\":%zu,\"functions\":[",
            d->run_src == VPR_WRUN_SAMPLES ? "samples" : d->run_src == VPR_WRUN_CALLS ? "calls"
            : "none", d->run_n);
    for (size_t i = 0; i < d->n_run; i++) {
        char w[64] = "";
        if (d->run[i].wait_kind == VPR_WRUN_RUNNABLE) snprintf(w, sizeof w, "runnable");
        else if (d->run[i].wait_kind) {
            struct vpr_wsite ws = {.kind = d->run[i].wait_kind, .nr = d->run[i].nr};
            wait_what(&ws, w, sizeof w);
        }
        fputs(i ? ",{\"function\":" : "{\"function\":", o);
        vpr_jstr(o, fname(m, d->run[i].f));
        fputs(",\"waiting\":", o);
        vpr_jstr(o, d->run[i].wait_kind ? w : NULL);
        fprintf(o, ",\"share\":%.6f}", d->run[i].share);
    }
    fputs("]}}", o);
}

static void json_knot(FILE *o, const struct vpr_wgraph *g, const struct vpr_wknot *k)
{
    fprintf(o, "{\"type\":\"%s\",\"background\":%s,\"refined_from\":%d,\"vertices\":[",
            k->type == VPR_WK_KNOT ? "knot" : "sink", k->background ? "true" : "false", k->parent);
    for (size_t i = 0; i < k->n_vs; i++) { if (i) fputc(',', o); vpr_jstr(o, g->v[k->vs[i]].name); }
    fputs("],\"edges\":[", o);
    for (size_t i = 0; i < k->n_edges; i++) fprintf(o, "%s%zu", i ? "," : "", k->edges[i]);
    fputs("]", o);                  /* the caller closes the object */
}

static void json_proc(FILE *o, const struct vpr_model *m, const struct vpr_wproc *p)
{
    const struct vpr_wtimeline *tl = &p->tl;
    const struct vpr_wgraph *g = &p->g;
    fputs("{\"label\":", o); vpr_jstr(o, tl->label);
    fprintf(o, ",\"pid\":%d,\"exe\":", tl->pid); vpr_jstr(o, p->exe);
    fputs(",\"source\":", o); vpr_jstr(o, tl->source);
    fputs(",\"input\":", o); vpr_jstr(o, p->input);
    fprintf(o, ",\"observed_s\":%.9f,\"segments\":%zu,\"cascade_steps\":%zu,"
            "\"unknown_waker\":{\"waits\":%zu,\"s\":%.9f},\"left_out_edges\":%zu,\"threads\":[",
            g->span_ns / 1e9, tl->n_seg, g->cascades, g->n_unknown, g->unknown_ns / 1e9, g->n_negl);
    int first = 1;
    for (size_t i = 0; i < tl->n_v; i++) {
        const struct vpr_wvertex *v = &tl->v[i];
        if (v->kind != VPR_WV_THREAD) continue;
        fprintf(o, "%s{\"tid\":%u,\"name\":", first ? "" : ",", v->tid);
        first = 0;
        vpr_jstr(o, v->name);
        fputs(",\"start_routine\":", o); vpr_jstr(o, v->role_name);
        fprintf(o, ",\"creator\":%u,\"vertex\":", v->creator);
        vpr_jstr(o, g->v[g->group[i]].name);
        fputs("}", o);
    }
    fputs("],\"vertices\":[", o);
    for (size_t i = 0; i < g->n_v; i++) {
        const struct vpr_wgvertex *v = &g->v[i];
        fputs(i ? ",{\"name\":" : "{\"name\":", o); vpr_jstr(o, v->name);
        fputs(",\"kind\":", o); vpr_jstr(o, vpr_wv_kind_name(v->kind));
        fprintf(o, ",\"threads\":%zu,\"waiting_s\":%.9f,\"span_s\":%.9f,\"cpu_s\":",
                v->kind == VPR_WV_THREAD ? v->n_members : 0, v->wait_s, v->span_s);
        vpr_jnum(o, v->cpu_s >= 0 ? v->cpu_s : 0.0 / 0.0);
        fputs(",\"runnable_s\":", o);
        vpr_jnum(o, v->runnable_s >= 0 ? v->runnable_s : 0.0 / 0.0);
        fputs("}", o);
    }
    fputs("],\"edges\":[", o);
    for (size_t i = 0; i < g->n_e; i++) { if (i) fputc(',', o); json_edge(o, m, p, i); }
    fputs("],\"knots_before_refinement\":[", o);
    for (size_t i = 0; i < g->n_orig; i++) {
        if (i) fputc(',', o);
        json_knot(o, g, &g->orig[i]);
        fputc('}', o);
    }
    fputs("],\"results\":[", o);
    for (size_t i = 0; i < g->n_res; i++) {
        if (i) fputc(',', o);
        json_knot(o, g, &g->res[i]);
        if (g->res[i].type == VPR_WK_SINK) {           /* the CPU ranking of a sink */
            struct vpr_wrun *r;
            size_t tot, n = cpu_rank(tl, &g->v[g->res[i].vs[0]], &r, &tot);
            fprintf(o, ",\"cpu_samples\":%zu,\"cpu_ranking\":[", tot);
            for (size_t j = 0; j < n; j++) {
                fputs(j ? ",{\"function\":" : "{\"function\":", o);
                vpr_jstr(o, fname(m, r[j].f));
                fprintf(o, ",\"share\":%.6f}", r[j].share);
            }
            fputs("]", o);
            free(r);
        }
        fputc('}', o);
    }
    char v[2048];
    vpr_wait_verdict(p, v, sizeof v);
    fputs("],\"verdict\":", o); vpr_jstr(o, v);
    fprintf(o, ",\"knots\":%zu}", n_knots(g, 0));
}

void vpr_waits_json(FILE *o, const struct vpr_model *m, const struct vpr_wproc *p, size_t n,
                    int top)
{
    (void)top;
    fputs("{\"waits\":[", o);
    for (size_t i = 0; i < n; i++) { if (i) fputc(',', o); json_proc(o, m, &p[i]); }
    fputs("]}\n", o);
}

void vpr_waits_timeline_tsv(FILE *o, const struct vpr_model *m, const struct vpr_wproc *p)
{
    const struct vpr_wtimeline *tl = &p->tl;
    char s1[512], s2[512];
    fprintf(o, "# %s pid %d: vertex\ttid\tstart_ns\twake_ns\tend_ns\tkind\twaker\twaker_tid\t"
            "weight_ns\twait_site\twake_site\n", tl->label ? tl->label : "?", tl->pid);
    for (size_t i = 0; i < tl->n_seg; i++) {
        const struct vpr_wseg *s = &tl->seg[i];
        vpr_wait_site_str(m, s->site_f, s->site, s->site_name, s1, sizeof s1);
        vpr_wait_site_str(m, s->wsite_f, s->wsite, s->wsite_name, s2, sizeof s2);
        fprintf(o, "%s\t%u\t%llu\t%llu\t%llu\t%s\t%s\t%u\t%.0f\t%s\t%s\n", tl->v[s->v].name,
                tl->v[s->v].tid, (unsigned long long)(s->start - tl->t0),
                (unsigned long long)(s->wake - tl->t0), (unsigned long long)(s->end - tl->t0),
                vpr_ws_kind_name(s->kind), tl->v[s->waker].name, tl->v[s->waker].tid, s->w, s1, s2);
    }
}
