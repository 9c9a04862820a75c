/* out_waits_html.c - `--waits --html FILE`: a self-contained page (no
 * script, no network) with, per process, the wait-for graph drawn as SVG -
 * vertices on a circle, edges as arrows as thick as their weight, knots in
 * red, edges removed by refinement or lighter than --waits-keep dashed (as
 * the paper draws them) - followed by the text report. */
#include "vprof_xalloc.h"
#include "output.h"
#include "waits.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { W = 760, H = 560, MAXV = 40 };

/* 1 + knot index for vertices of a final knot, 0 otherwise. */
static int in_knot(const struct vpr_wgraph *g, uint32_t v)
{
    for (size_t i = 0; i < g->n_res; i++) {
        if (g->res[i].type != VPR_WK_KNOT) continue;
        for (size_t k = 0; k < g->res[i].n_vs; k++) if (g->res[i].vs[k] == v) return (int)i + 1;
    }
    return 0;
}

static int edge_in_knot(const struct vpr_wgraph *g, size_t e)
{
    for (size_t i = 0; i < g->n_res; i++) {
        if (g->res[i].type != VPR_WK_KNOT) continue;
        for (size_t k = 0; k < g->res[i].n_edges; k++) if (g->res[i].edges[k] == e) return 1;
    }
    return 0;
}

static int is_sink(const struct vpr_wgraph *g, uint32_t v)
{
    for (size_t i = 0; i < g->n_res; i++)
        if (g->res[i].type == VPR_WK_SINK && g->res[i].vs[0] == v) return 1;
    return 0;
}

static void svg(FILE *o, const struct vpr_wgraph *g)
{
    /* the heaviest vertices (by the weight of their edges), at most MAXV */
    double *inc = vpf_xcalloc(g->n_v ? g->n_v : 1, sizeof *inc);
    for (size_t i = 0; i < g->n_e; i++) { inc[g->e[i].a] += g->e[i].w; inc[g->e[i].b] += g->e[i].w; }
    for (size_t v = 0; v < g->n_v; v++) if (in_knot(g, (uint32_t)v) || is_sink(g, (uint32_t)v)) inc[v] += 1e30;
    int *pos = vpf_xmalloc((g->n_v ? g->n_v : 1) * sizeof *pos);
    size_t shown = 0;
    for (size_t v = 0; v < g->n_v; v++) {
        size_t better = 0;
        for (size_t u = 0; u < g->n_v; u++)
            if (inc[u] > inc[v] || (inc[u] == inc[v] && u < v)) better++;
        pos[v] = better < MAXV ? -2 : -1;
    }
    for (size_t v = 0; v < g->n_v; v++) if (pos[v] == -2) pos[v] = (int)shown++;
    double maxw = 0;
    for (size_t i = 0; i < g->n_e; i++) if (g->e[i].w > maxw) maxw = g->e[i].w;
    double cx = W / 2.0, cy = H / 2.0, rad = shown > 1 ? 200 : 0;
    double *x = vpf_xcalloc(g->n_v ? g->n_v : 1, sizeof *x), *y = vpf_xcalloc(g->n_v ? g->n_v : 1, sizeof *y);
    for (size_t v = 0; v < g->n_v; v++) {
        if (pos[v] < 0) continue;
        double a = 2 * M_PI * pos[v] / (double)(shown ? shown : 1) - M_PI / 2;
        x[v] = cx + rad * cos(a);
        y[v] = cy + rad * sin(a);
    }
    fprintf(o, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
            "viewBox=\"0 0 %d %d\" class=\"graph\">\n<defs>"
            "<marker id=\"ar\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerUnits=\"userSpaceOnUse\" "
            "markerWidth=\"14\" markerHeight=\"14\" orient=\"auto\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"#555\"/></marker>"
            "<marker id=\"ark\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerUnits=\"userSpaceOnUse\" "
            "markerWidth=\"14\" markerHeight=\"14\" orient=\"auto\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"#c00\"/></marker>"
            "</defs>\n", W, H, W, H);
    double keep = g->o.keep * g->span_ns;
    for (size_t i = g->n_e; i-- > 0;) {             /* lightest first, heaviest on top */
        const struct vpr_wedge *e = &g->e[i];
        if (pos[e->a] < 0 || pos[e->b] < 0) continue;
        int k = edge_in_knot(g, i);
        double sw = 1 + 7 * (maxw > 0 ? e->w / maxw : 0);
        const char *col = k ? "#c00" : "#777";
        int dash = e->removed || (g->o.keep > 0 && e->w < keep);
        fprintf(o, "<g><title>");
        vpr_html_esc(o, g->v[e->a].name);
        fputs(" -&gt; ", o);
        vpr_html_esc(o, g->v[e->b].name);
        fprintf(o, ": %.3f s%s</title>", e->w / 1e9, e->removed ? " (removed by refinement)" : "");
        if (e->a == e->b) {
            double lx = x[e->a] + (x[e->a] - cx) * 0.18, ly = y[e->a] + (y[e->a] - cy) * 0.18;
            if (shown < 2) ly -= 34;
            fprintf(o, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"16\" fill=\"none\" stroke=\"%s\" "
                    "stroke-width=\"%.1f\"%s/>", lx, ly, col, sw, dash ? " stroke-dasharray=\"6 4\"" : "");
            fprintf(o, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" fill=\"%s\">%.3f s</text></g>\n",
                    lx + 18, ly - 10, col, e->w / 1e9);
            continue;
        }
        double dx = x[e->b] - x[e->a], dy = y[e->b] - y[e->a], len = sqrt(dx * dx + dy * dy);
        if (len < 1) len = 1;
        double ux = dx / len, uy = dy / len, r0 = 26;
        double x0 = x[e->a] + ux * r0, y0 = y[e->a] + uy * r0;
        double x1 = x[e->b] - ux * r0, y1 = y[e->b] - uy * r0;
        double mx = (x0 + x1) / 2 - uy * 30, my = (y0 + y1) / 2 + ux * 30;   /* bend right */
        fprintf(o, "<path d=\"M%.1f,%.1f Q%.1f,%.1f %.1f,%.1f\" fill=\"none\" stroke=\"%s\" "
                "stroke-width=\"%.1f\" marker-end=\"url(#%s)\"%s/>", x0, y0, mx, my, x1, y1, col,
                sw, k ? "ark" : "ar", dash ? " stroke-dasharray=\"6 4\"" : "");
        fprintf(o, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" fill=\"%s\" "
                "text-anchor=\"middle\">%.3f s</text></g>\n", mx - uy * 10, my + ux * 10 + 4, col,
                e->w / 1e9);
    }
    for (size_t v = 0; v < g->n_v; v++) {
        if (pos[v] < 0) continue;
        const struct vpr_wgvertex *gv = &g->v[v];
        int k = in_knot(g, (uint32_t)v), s = is_sink(g, (uint32_t)v);
        const char *fill = k ? "#f8d0d0" : s ? "#fff2c0" : "#e8eef8";
        const char *stroke = k ? "#c00" : s ? "#b80" : "#456";
        fputs("<g><title>", o);
        vpr_html_esc(o, gv->name);
        fprintf(o, " (%s)%s</title>", vpr_wv_kind_name(gv->kind), k ? " - in a knot" : s ? " - a sink" : "");
        if (gv->kind == VPR_WV_THREAD)
            fprintf(o, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"24\" fill=\"%s\" stroke=\"%s\" "
                    "stroke-width=\"%d\"/>", x[v], y[v], fill, stroke, k ? 3 : 1);
        else
            fprintf(o, "<rect x=\"%.1f\" y=\"%.1f\" width=\"48\" height=\"36\" rx=\"4\" fill=\"%s\" "
                    "stroke=\"%s\" stroke-width=\"%d\"/>", x[v] - 24, y[v] - 18, fill, stroke, k ? 3 : 1);
        fprintf(o, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" text-anchor=\"middle\">",
                x[v], y[v] + 40);
        vpr_html_esc(o, gv->name);
        fputs("</text></g>\n", o);
    }
    fputs("</svg>\n", o);
    free(inc); free(pos); free(x); free(y);
}

int vpr_waits_html(const char *path, const struct vpr_model *m, const struct vpr_wproc *p,
                   size_t n, int top, char *err, size_t errlen)
{
    FILE *o = fopen(path, "w");
    if (!o) { snprintf(err, errlen, "%s: cannot write: %m", path); return -1; }
    fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>vprof waits</title>\n"
          "<style>body{font-family:sans-serif;margin:1.5em;max-width:1100px}"
          "pre{background:#f6f6f6;padding:.8em;overflow-x:auto;font-size:12px}"
          ".legend span{display:inline-block;margin-right:1.2em}"
          "svg.graph{border:1px solid #ddd;background:#fff}</style></head><body>\n"
          "<h1>Waiting events that limit throughput</h1>\n"
          "<p>wPerf's analysis (paper 003): an arrow A &rarr; B means A waited for B; its "
          "width is the cascaded waiting time. <b style=\"color:#c00\">Red</b>: a knot, "
          "where at least one waiting event must be optimised; <b style=\"color:#b80\">yellow"
          "</b>: a sink, whose own execution limits it; dashed: removed by refinement or "
          "lighter than the kept share; boxes: pseudo-threads (devices, network, timers).</p>\n", o);
    for (size_t i = 0; i < n; i++) {
        char v[2048];
        vpr_wait_verdict(&p[i], v, sizeof v);
        fputs("<h2>", o);
        vpr_html_esc(o, p[i].tl.label);
        fprintf(o, " pid %d</h2>\n<p><b>Verdict:</b> ", p[i].tl.pid);
        vpr_html_esc(o, v);
        fputs(".</p>\n", o);
        svg(o, &p[i].g);
        char *txt = NULL;
        size_t len = 0;
        FILE *mem = open_memstream(&txt, &len);
        if (mem) {
            vpr_waits_text(mem, m, &p[i], top);
            fclose(mem);
            fputs("<pre>", o);
            vpr_html_esc(o, txt);
            fputs("</pre>\n", o);
            free(txt);
        }
    }
    fputs("</body></html>\n", o);
    if (fclose(o) != 0) { snprintf(err, errlen, "%s: write error", path); return -1; }
    return 0;
}
