/* out_variance_html.c - --variance --html FILE: one self-contained page (inline
 * CSS and SVG, no script, no network) with an icicle of the variance tree per
 * side: the root spans the width, every node lies under its parent with a
 * width proportional to its variance. Children's variances add up to their
 * parent's only together with the covariance terms: positive covariance
 * shows as a hatched block after the children, and when covariances are
 * negative (the children's variances exceed the parent's) the children are
 * scaled down to fit and the parent's label says so. Top factors are drawn
 * in red with their rank. Hovering shows the numbers (SVG <title>). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "output.h"
#include "variance.h"

#define NONE UINT32_MAX
enum { W = 1100, ROW = 26, MAX_ROWS = 24, LABEL_MIN = 46 };

static const char *side_name(const struct vpr_variance *v, int s)
{
    return s == 0 ? "normal" : v->side[0].runs ? "buggy" : "run";
}

static const char *fill_of(const struct vpr_vnode *n, int depth)
{
    static const char *blues[] = {"#9ecae1", "#6baed6", "#4292c6", "#75a9d9", "#8fbfe0"};
    switch (n->type) {
    case VT_ROOT: return "#c6dbef";
    case VT_BODY: return "#e5e5e5";
    case VT_MUTEX: case VT_COND: case VT_SYSCALL: case VT_SEM: case VT_JOIN: case VT_SPIN:
    case VT_RWLOCK: case VT_BARRIER: return "#bdbdbd";
    case VT_QUEUED: return "#bcbddc";
    case VT_UNEXPLAINED: return "#fdd0a2";
    default: return blues[depth % 5];
    }
}

struct ictx { FILE *o; const struct vpr_variance *v; int s; double total; int y0; int rows; };

static void rect(struct ictx *c, uint32_t id, double x, double w, int row, const char *note)
{
    const struct vpr_variance *v = c->v;
    const struct vpr_vnode *n = &v->nodes[id];
    int top = vpr_vnode_top(v, id);
    int inh = id && v->side[c->s].with_work && n->r2[c->s] >= v->o->inherent_r2;
    char nm[512];
    if (id && v->nodes[n->parent].first_child != NONE && n->type == VT_BODY)
        snprintf(nm, sizeof nm, "(self)");
    else
        vpr_vnode_name(v, id, nm, sizeof nm);
    double y = c->y0 + row * ROW;
    fprintf(c->o, "<g class=\"%s\"><rect x=\"%.2f\" y=\"%.0f\" width=\"%.2f\" height=\"%d\" "
            "fill=\"%s\" stroke=\"%s\" stroke-width=\"%s\"><title>",
            top ? "node top" : inh ? "node inherent" : "node", x, y, w > 0.5 ? w - 0.5 : w, ROW - 2,
            top ? "#fb6a4a" : inh ? "#a1d99b" : fill_of(n, row), top ? "#a50f15" : "#ffffff",
            top ? "2" : "0.5");
    char full[512];
    vpr_vnode_name(v, id, full, sizeof full);
    vpr_html_esc(c->o, full);
    char mean[32];
    vpr_vfmt_ns(mean, sizeof mean, n->mean[c->s]);
    fprintf(c->o, ": %.1f %% of the variance, mean %s, in %.1f %% of the intervals%s",
            100 * n->var[c->s] / c->total, mean,
            100.0 * (double)n->acc[c->s].present / (double)v->side[c->s].n,
            top ? "; top factor" : "");
    if (inh) fprintf(c->o, "; inherent: R² %.2f with the work", n->r2[c->s]);
    if (note) fputs(note, c->o);
    fputs("</title></rect>", c->o);
    if (w >= LABEL_MIN) {
        char lab[600];
        snprintf(lab, sizeof lab, "%s%.0d%s%s %.0f%%%s", top ? "#" : "", top, top ? " " : "", nm,
                 100 * n->var[c->s] / c->total, inh ? " inherent" : "");
        size_t fit = (size_t)(w / 6.6);
        if (strlen(lab) > fit && fit > 2) { lab[fit - 2] = 0; strcat(lab, "…"); }
        fprintf(c->o, "<text x=\"%.2f\" y=\"%.0f\" font-size=\"11\"%s>", x + 3, y + 16,
                top ? " font-weight=\"bold\" fill=\"#400\"" : "");
        vpr_html_esc(c->o, lab);
        fputs("</text>", c->o);
    }
    fputs("</g>\n", c->o);
    if (row + 1 > c->rows) c->rows = row + 1;
}

static void icicle(struct ictx *c, uint32_t id, double x, double w, int row)
{
    const struct vpr_variance *v = c->v;
    const struct vpr_vnode *n = &v->nodes[id];
    if (row >= MAX_ROWS || n->first_child == NONE) return;
    size_t nch;
    uint32_t *ch = vpr_vchildren(v, id, c->s, &nch);
    double sum = v->nodes[n->body].var[c->s] > 0 ? v->nodes[n->body].var[c->s] : 0;
    for (size_t i = 0; i < nch; i++)
        if (v->nodes[ch[i]].var[c->s] > 0) sum += v->nodes[ch[i]].var[c->s];
    double own = n->var[c->s];
    /* px per ns²: the parent's scale, or smaller when covariances are
     * negative and the children together exceed the parent */
    double scale = own > 0 ? w / own : 0;
    if (sum > own && sum > 0) scale = w / sum;
    double cx = x;
    for (size_t i = 0; i < nch; i++) {
        double cw = v->nodes[ch[i]].var[c->s] * scale;
        if (cw < 0.8) continue;
        rect(c, ch[i], cx, cw, row + 1, NULL);
        icicle(c, ch[i], cx, cw, row + 1);
        cx += cw;
    }
    double bw = v->nodes[n->body].var[c->s] * scale;
    if (bw >= 0.8) {
        rect(c, n->body, cx, bw, row + 1, NULL);
        cx += bw;
    }
    if (x + w - cx >= 0.8 && sum <= own) {          /* positive covariance */
        fprintf(c->o, "<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" fill=\"url(#hatch)\">"
                "<title>covariance terms: %.1f %% of the variance</title></rect>\n", cx,
                c->y0 + (row + 1) * ROW, x + w - cx - 0.5, ROW - 2,
                100 * (own - sum) / c->total);
        if (row + 2 > c->rows) c->rows = row + 2;
    }
    free(ch);
}

static void svg_side(FILE *o, const struct vpr_variance *v, int s)
{
    /* draw into a buffer first: the height depends on the rows used */
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (!m) return;
    struct ictx c = {m, v, s, v->nodes[0].var[s] > 0 ? v->nodes[0].var[s] : 1, 0, 0};
    rect(&c, 0, 0, W, 0, NULL);
    icicle(&c, 0, 0, W, 0);
    fclose(m);
    /* one side alone is "run" (no comparison): no "run runs" in the heading */
    int alone = !strcmp(side_name(v, s), "run");
    fprintf(o, "<h2>Variance tree%s%s%s</h2>\n<svg class=\"icicle\" id=\"icicle-%s\" "
            "width=\"%d\" height=\"%d\" xmlns=\"http://www.w3.org/2000/svg\">\n"
            "<defs><pattern id=\"hatch\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
            "patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"#fff\"/>"
            "<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#999\" stroke-width=\"2\"/>"
            "</pattern></defs>\n", alone ? "" : ", ", alone ? "" : side_name(v, s),
            alone ? "" : " runs", side_name(v, s), W, c.rows * ROW + 2);
    fwrite(buf, 1, len, o);
    fputs("</svg>\n", o);
    free(buf);
}

static void factor_table(FILE *o, const struct vpr_variance *v, const struct vpr_vfactor *fs,
                         size_t n, const size_t *top, size_t n_top, const char *what)
{
    fprintf(o, "<table class=\"factors\"><tr><th>rank</th><th>factor</th><th>%s</th>"
            "<th>height</th><th>specificity</th><th>score</th><th>label</th></tr>\n", what);
    size_t lim = n < 10 ? n : 10;
    for (size_t i = 0; i < lim; i++) {
        const struct vpr_vfactor *f = &fs[i];
        int t = 0;
        for (size_t r = 0; r < n_top; r++) if (top[r] == i) t = (int)r + 1;
        char nm[600];
        vpr_vfactor_name(v, f, nm, sizeof nm);
        fprintf(o, "<tr%s><td>%s%d</td><td>", t ? " class=\"top\"" : "", t ? "top " : "",
                t ? t : (int)i + 1);
        vpr_html_esc(o, nm);
        fprintf(o, "</td><td class=\"n\">%.1f %%</td><td class=\"n\">%d</td><td class=\"n\">%.0f"
                "</td><td class=\"n\">%.3g</td><td>%s</td></tr>\n", 100 * f->share, f->height,
                f->spec, f->score, f->inherent < 0 ? "" : f->inherent ? "inherent" : "pathological");
    }
    fputs("</table>\n", o);
}

int vpr_vout_html(const char *path, const struct vpr_variance *v, char *err, size_t errlen)
{
    FILE *o = fopen(path, "w");
    if (!o) { snprintf(err, errlen, "%s: cannot write: %m", path); return -1; }
    fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">\n<title>vprof variance</title>\n"
          "<style>body{font-family:sans-serif;margin:20px}table{border-collapse:collapse}"
          "td,th{border:1px solid #bbb;padding:3px 6px;font-size:13px}td.n{text-align:right}"
          "tr.top td{background:#fee0d2;font-weight:bold}h2{margin-top:26px}"
          "svg text{font-family:sans-serif;pointer-events:none}</style></head><body>\n"
          "<h1>Which functions make the latency vary</h1>\n<p>", o);
    vpr_html_esc(o, v->m->exe);
    fprintf(o, "<br>intervals: %s", v->root_f >= 0 ? "calls of " : "requests");
    if (v->root_f >= 0) vpr_html_esc(o, v->m->f[v->root_f].name);
    for (int s = 0; s < 2; s++) {
        const struct vpr_vside *sd = &v->side[s];
        if (!sd->runs) continue;
        char t[4][32];
        vpr_vfmt_ns(t[0], sizeof t[0], v->nodes[0].mean[s]);
        vpr_vfmt_ns(t[1], sizeof t[1], sqrt(v->nodes[0].var[s]));
        vpr_vfmt_ns(t[2], sizeof t[2], vpr_vpct(sd, 0.99));
        vpr_vfmt_ns(t[3], sizeof t[3], (double)sd->max_lat);
        fprintf(o, "<br>%s: %llu intervals, mean %s, sd %s, p99 %s, max %s", side_name(v, s),
                (unsigned long long)sd->n, t[0], t[1], t[2], t[3]);
    }
    fputs("</p>\n<p>Width is variance: each box's share of the total is in its label. Red boxes "
          "are the top factors (VProfiler Algorithm 1, numbered), green ones inherent (their time "
          "grows with the request's work). A parent's variance is its children's plus their "
          "covariance terms: hatched space is positive covariance; when covariances are negative "
          "the children add up to more than the parent (shares above its own) and are drawn "
          "scaled to fit. Hover for the numbers.</p>\n", o);
    for (int s = 0; s < 2; s++)
        if (v->side[s].n > 1) svg_side(o, v, s);
    fputs("<h2>Top factors</h2>\n", o);
    factor_table(o, v, v->factors, v->n_factors, v->top, v->n_top, "share of the variance");
    if (v->delta) {
        fputs("<h2>What changed: factors of the increase (buggy − normal)</h2>\n", o);
        factor_table(o, v, v->delta, v->n_delta, v->dtop, v->n_dtop, "share of the increase");
    }
    fputs("</body></html>\n", o);
    if (fclose(o)) { snprintf(err, errlen, "%s: write error", path); return -1; }
    return 0;
}
