/* out_contexts_html.c - the HTML views of --contexts (contexts.h): the
 * paper's heat map of the top calling contexts (IntroPerf, paper 002 §5.1,
 * Figure 7: a row per path in rank order, a column per function along it,
 * colour = the function's latency on a log10 scale, the hottest function
 * marked 0 and the others by their distance from it) and a differential
 * flame graph of the buggy runs against the normal ones (widths: where the
 * buggy runs' time went; colour: how much each frame's own time grew, red,
 * or shrank, blue) - the view perf users know. Inline CSS and SVG, no
 * script, no network. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "contexts.h"
#include "demangle.h"
#include "output.h"
#include "vprof_xalloc.h"

#define NONE UINT32_MAX
enum { HEAT_ROWS_MAX = 100, PATH_MAX_NODES = 256 };

static double per_run(const struct vpr_ctree *t, double x)
{
    return x / (t->runs ? (double)t->runs : 1);
}

/* ---------- the heat map ---------- */

/* ColorBrewer's YlOrRd, light (cool) to dark red (the bottleneck). */
static void heat_colour(double x, char *out, size_t len)
{
    static const int stop[5][3] = {
        {255, 255, 204}, {254, 217, 118}, {253, 141, 60}, {227, 26, 28}, {128, 0, 38}};
    if (x < 0) x = 0;
    if (x > 1) x = 1;
    double s = x * 4;
    int i = s >= 4 ? 3 : (int)s;
    double f = s - i;
    int c[3];
    for (int k = 0; k < 3; k++)
        c[k] = (int)lround(stop[i][k] + f * (stop[i + 1][k] - stop[i][k]));
    snprintf(out, len, "#%02x%02x%02x", c[0], c[1], c[2]);
}

static void heat_map(FILE *o, const struct vpr_ctx_view *v, size_t rows)
{
    const struct vpr_ctree *b = v->t[1], *n = v->t[0];
    uint32_t *eq = vpr_ctx_map(n, b);
    uint32_t nodes[PATH_MAX_NODES];
    /* the log scale spans the shown cells' own times */
    double lo = INFINITY, hi = 0;
    size_t width = 0;
    for (size_t i = 0; i < rows; i++) {
        size_t k = vpr_ctx_path_nodes(b, v->p[i].leaf, nodes, PATH_MAX_NODES);
        if (k > width) width = k;
        for (size_t j = 0; j < k; j++) {
            double x = per_run(b, b->n[nodes[j]].own[v->est]);
            if (x > 0 && x < lo) lo = x;
            if (x > hi) hi = x;
        }
    }
    if (!(lo < INFINITY)) lo = hi = 1;
    double llo = log10(lo), lhi = log10(hi);
    fprintf(o, "<h2 id=\"ctx-heat\">Top calling contexts</h2>\n<p>One row per calling context "
            "(path), highest differential cost first; its functions from the bottom of the "
            "stack. Colour: the function's own %s latency in the buggy runs, per run, log10 "
            "scale from %.3g ms (light) to %.3g ms (dark red); grey: none. The number in each "
            "cell is its distance from the path's hottest function (0, framed).</p>\n",
            v->est == VPR_CTX_AGGRESSIVE ? "aggressive" : "conservative", lo / 1e6, hi / 1e6);
    fputs("<div class=\"heatwrap\"><table class=\"heat\">\n<tr><th>rank</th><th>cost ms/run</th>"
          "<th class=\"l\" colspan=\"", o);
    fprintf(o, "%zu\">functions along the path</th></tr>\n", width ? width : 1);
    for (size_t i = 0; i < rows; i++) {
        size_t k = vpr_ctx_path_nodes(b, v->p[i].leaf, nodes, PATH_MAX_NODES);
        size_t hot = vpr_ctx_hottest(b, nodes, k, v->est);
        fprintf(o, "<tr class=\"path\" id=\"ctx%zu\"><td class=\"n\">%zu</td><td class=\"n\">"
                "%+.3f%s</td>", i + 1, i + 1, v->p[i].cost / 1e6, v->p[i].is_new ? " new" : "");
        for (size_t j = 0; j < k; j++) {
            const struct vpr_cnode *c = &b->n[nodes[j]];
            double x = per_run(b, c->own[v->est]);
            uint32_t w = eq[nodes[j]];
            double xn = w == NONE ? 0 : per_run(n, n->n[w].own[v->est]);
            char bg[16] = "#eeeeee";
            double pos = 0;
            if (x > 0) {
                pos = lhi > llo ? (log10(x) - llo) / (lhi - llo) : 1;
                heat_colour(pos, bg, sizeof bg);
            }
            const char *name = v->nm->name[c->f];
            char fit[200];
            vpr_dm_fit(fit, sizeof fit, name, 18, 0);
            size_t dist = j > hot ? j - hot : hot - j;
            fprintf(o, "<td class=\"c%s\" style=\"background:%s%s\" title=\"", j == hot ? " hot" : "",
                    bg, pos > 0.6 ? ";color:#fff" : "");
            vpr_html_esc(o, vpr_dm(name));
            fprintf(o, ": own %.3f ms/run (normal runs %.3f), latency %.3f ms/run, %.6g "
                    "instances/run\"><span class=\"fn\">", x / 1e6, xn / 1e6,
                    per_run(b, c->lat[v->est]) / 1e6, per_run(b, (double)c->count));
            vpr_html_esc(o, fit);
            fprintf(o, "</span><sub>%zu</sub></td>", dist);
        }
        fputs("</tr>\n", o);
    }
    fputs("</table></div>\n<p class=\"scale\">", o);
    char c0[16], c1[16], c2[16], c3[16], c4[16];
    heat_colour(0, c0, sizeof c0);
    heat_colour(0.25, c1, sizeof c1);
    heat_colour(0.5, c2, sizeof c2);
    heat_colour(0.75, c3, sizeof c3);
    heat_colour(1, c4, sizeof c4);
    fprintf(o, "%.3g ms <span class=\"ramp\" style=\"background:linear-gradient(to right,"
            "%s,%s,%s,%s,%s)\"></span> %.3g ms (own time per run, log scale)</p>\n",
            lo / 1e6, c0, c1, c2, c3, c4, hi / 1e6);
    free(eq);
}

/* ---------- the differential flame graph ---------- */

enum { FW = 1180, FROW = 17, FPAD = 4 };

struct flame {
    const struct vpr_ctx_view *v;
    const uint32_t *eq;
    double *sub;                /* buggy own time of each subtree, ns/run */
    double *delta;              /* own time, buggy - normal, ns/run */
    double max_delta, scale;    /* scale: px per ns */
    unsigned max_depth;
    size_t drawn, hidden;
    FILE *o;
};

static const char *fname(const struct flame *g, uint32_t node)
{
    return g->v->nm->name[g->v->t[1]->n[node].f];
}

static int cmp_by_name(const void *a, const void *b, void *arg)
{
    const struct flame *g = arg;
    return strcmp(fname(g, *(const uint32_t *)a), fname(g, *(const uint32_t *)b));
}

/* A frame's colour: white when unchanged, deeper red the more its own time
 * grew, deeper blue the more it shrank (relative to the largest change). */
static void diff_colour(double d, double max, char *out, size_t len)
{
    double r = max > 0 ? d / max : 0;
    if (r > 1) r = 1;
    if (r < -1) r = -1;
    int fade = (int)lround(235 * (1 - fabs(r)));
    if (fabs(r) < 0.01) snprintf(out, len, "#f2f2f2");
    else if (r > 0) snprintf(out, len, "#ff%02x%02x", fade + 20 > 255 ? 255 : fade + 20, fade);
    else snprintf(out, len, "#%02x%02xff", fade, fade + 20 > 255 ? 255 : fade + 20);
}

/* Draws node's children side by side from x, then each child's subtree. */
static void flame_children(struct flame *g, uint32_t node, double x, unsigned depth)
{
    const struct vpr_ctree *b = g->v->t[1];
    size_t nc = 0;
    for (uint32_t c = b->n[node].child; c != NONE; c = b->n[c].sibling) nc++;
    if (!nc) return;
    uint32_t *kids = vpf_xcalloc(nc, sizeof *kids);
    nc = 0;
    for (uint32_t c = b->n[node].child; c != NONE; c = b->n[c].sibling) kids[nc++] = c;
    qsort_r(kids, nc, sizeof *kids, cmp_by_name, g);        /* flame graphs sort by name */
    for (size_t i = 0; i < nc; i++) {
        uint32_t c = kids[i];
        double w = g->sub[c] * g->scale;
        if (w < 0.3) { g->hidden++; x += w; continue; }
        double y = FPAD + (double)(g->max_depth - depth) * FROW;
        char fill[16];
        diff_colour(g->delta[c], g->max_delta, fill, sizeof fill);
        const struct vpr_cnode *bn = &b->n[c];
        double own_b = per_run(b, bn->own[g->v->est]);
        double own_n = own_b - g->delta[c];
        fprintf(g->o, "<g class=\"f\"><title>");
        vpr_html_esc(g->o, vpr_dm(fname(g, c)));
        fprintf(g->o, " - %.3f ms/run with callees; own %.3f ms/run buggy, %.3f normal "
                "(%+.3f)%s</title><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" "
                "fill=\"%s\" data-delta-ms=\"%.6g\"/>", g->sub[c] / 1e6, own_b / 1e6, own_n / 1e6,
                g->delta[c] / 1e6, g->eq[c] == NONE ? ", a context only the buggy runs had" : "",
                x, y, w > 0.6 ? w - 0.6 : w, FROW - 1, fill, g->delta[c] / 1e6);
        size_t chars = (size_t)((w - 6) / 6.6);
        if (chars >= 3) {
            char fit[400];
            vpr_dm_fit(fit, sizeof fit, fname(g, c), chars > 300 ? 300 : (int)chars, 0);
            fprintf(g->o, "<text x=\"%.1f\" y=\"%.1f\">", x + 3, y + FROW - 5);
            vpr_html_esc(g->o, fit);
            fputs("</text>", g->o);
        }
        fputs("</g>\n", g->o);
        g->drawn++;
        flame_children(g, c, x, depth + 1);
        x += w;
    }
    free(kids);
}

static void flame_graph(FILE *o, const struct vpr_ctx_view *v)
{
    const struct vpr_ctree *b = v->t[1], *n = v->t[0];
    struct flame g = {.v = v, .o = o};
    uint32_t *eq = vpr_ctx_map(n, b);
    g.eq = eq;
    g.sub = vpf_xcalloc(b->nn, sizeof *g.sub);
    g.delta = vpf_xcalloc(b->nn, sizeof *g.delta);
    unsigned *depth = vpf_xcalloc(b->nn, sizeof *depth);
    for (size_t i = 1; i < b->nn; i++) {
        depth[i] = depth[b->n[i].parent] + 1;
        if (depth[i] > g.max_depth) g.max_depth = depth[i];
        double own = per_run(b, b->n[i].own[v->est]);
        g.delta[i] = own - (eq[i] == NONE ? 0 : per_run(n, n->n[eq[i]].own[v->est]));
        if (fabs(g.delta[i]) > g.max_delta) g.max_delta = fabs(g.delta[i]);
        g.sub[i] = own;
    }
    for (size_t i = b->nn; i-- > 1;) g.sub[b->n[i].parent] += g.sub[i];   /* children after parents */
    double total = g.sub[0];
    g.scale = total > 0 ? (FW - 2.0 * FPAD) / total : 0;
    /* paths the normal runs had and the buggy ones did not: not drawn */
    uint32_t *back = vpr_ctx_map(b, n);
    double *sub_n = vpf_xcalloc(n->nn, sizeof *sub_n), gone = 0;
    for (size_t i = 1; i < n->nn; i++) sub_n[i] = per_run(n, n->n[i].own[v->est]);
    for (size_t i = n->nn; i-- > 1;) sub_n[n->n[i].parent] += sub_n[i];
    size_t n_gone = 0;
    for (size_t i = 1; i < n->nn; i++)
        if (back[i] == NONE && back[n->n[i].parent] != NONE) {
            gone += sub_n[i];
            n_gone++;
        }
    free(sub_n);
    free(back);
    int height = (int)(g.max_depth + 1) * FROW + 2 * FPAD;
    fprintf(o, "<h2 id=\"ctx-flame\">Differential flame graph</h2>\n<p>The buggy runs' calling "
            "contexts, the bottom of the stack at the bottom; a frame's width is its time "
            "with its callees (%.3f ms per run in all), its colour the change of its own "
            "time against the equivalent frame of the normal runs: "
            "<span style=\"background:#ff5050\">&nbsp;grew&nbsp;</span> "
            "<span style=\"background:#f2f2f2\">&nbsp;unchanged&nbsp;</span> "
            "<span style=\"background:#5050ff;color:#fff\">&nbsp;shrank&nbsp;</span>, "
            "the deepest colour a change of %.3f ms per run. Hover a frame for its "
            "numbers.", total / 1e6, g.max_delta / 1e6);
    if (n_gone)
        fprintf(o, " Not drawn: %zu context(s) only the normal runs had (%.3f ms per run).",
                n_gone, gone / 1e6);
    fputs("</p>\n", o);
    fprintf(o, "<svg class=\"flame\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
            "xmlns=\"http://www.w3.org/2000/svg\" font-family=\"monospace\" font-size=\"11\">\n"
            "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#fdfdfd\"/>\n",
            FW, height, FW, height, FW, height);
    if (total > 0) {
        double y = FPAD + (double)g.max_depth * FROW;
        fprintf(o, "<g class=\"f\"><title>all - %.3f ms/run</title><rect x=\"%d\" y=\"%.1f\" "
                "width=\"%.1f\" height=\"%d\" fill=\"#e0e0e0\"/><text x=\"%d\" y=\"%.1f\">all"
                "</text></g>\n", total / 1e6, FPAD, y, FW - 2.0 * FPAD, FROW - 1, FPAD + 3,
                y + FROW - 5);
        flame_children(&g, 0, FPAD, 1);
    }
    fputs("</svg>\n", o);
    if (g.hidden)
        fprintf(o, "<p class=\"note\">%zu frame(s) narrower than a third of a pixel are not "
                "drawn.</p>\n", g.hidden);
    free(depth);
    free(g.sub);
    free(g.delta);
    free(eq);
}

/* The sections' style (they may sit in the main report's page). */
static const char ctx_css[] =
    "table.heat{border-collapse:collapse}table.heat td,table.heat th{border:1px solid #ccc;"
    "padding:2px 4px;font-size:12px;white-space:nowrap}table.heat th.l{text-align:left}"
    "table.heat td.n{text-align:right}table.heat td.c.hot{outline:2px solid #000;"
    "outline-offset:-2px;font-weight:bold}table.heat sub{font-size:9px;margin-left:2px}"
    ".heatwrap{overflow-x:auto}.ramp{display:inline-block;width:200px;height:12px;"
    "vertical-align:middle;border:1px solid #999}svg.flame text{pointer-events:none}";

void vpr_ctx_html_sections(FILE *o, const struct vpr_ctx_view *v)
{
    fprintf(o, "<style>%s</style>\n", ctx_css);
    size_t rows = v->top && v->top < v->np ? v->top : v->np;
    if (rows > HEAT_ROWS_MAX) rows = HEAT_ROWS_MAX;
    if (rows) heat_map(o, v, rows);
    else fputs("<h2 id=\"ctx-heat\">Top calling contexts</h2>\n<p>No calling context in the "
               "buggy runs.</p>\n", o);
    flame_graph(o, v);
}

int vpr_ctx_html(const char *path, const struct vpr_ctx_view *v, char *err, size_t errlen)
{
    FILE *o = fopen(path, "w");
    if (!o) { snprintf(err, errlen, "%s: cannot write: %m", path); return -1; }
    fprintf(o, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">\n<title>vprof contexts"
            "</title>\n<style>body{font-family:sans-serif;margin:20px}h2{margin-top:28px}"
            "</style></head><body>\n<h1>vprof-report --contexts</h1>\n<p>Calling contexts the "
            "buggy input made hot (IntroPerf). normal: %zu run(s), %llu stack samples; buggy: "
            "%zu run(s), %llu stack samples; %s estimate of function latency.</p>\n",
            v->t[0]->runs, (unsigned long long)v->t[0]->samples, v->t[1]->runs,
            (unsigned long long)v->t[1]->samples,
            v->est == VPR_CTX_AGGRESSIVE ? "aggressive" : "conservative");
    vpr_ctx_html_sections(o, v);
    fputs("</body></html>\n", o);
    if (fclose(o) != 0) { snprintf(err, errlen, "%s: write error: %m", path); return -1; }
    return 0;
}
