/* out_html.c - --html FILE: one self-contained page (inline CSS and SVG, no
 * script, no network): the ranked table and, per top function, the
 * distribution of each of its variables in the normal and the buggy runs
 * (histograms over the shared Hellinger bins of the dimension that decided
 * its discount, as in the paper's Figure 6) and its cost in both runs. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ctx_rank.h"
#include "demangle.h"
#include "hellinger.h"
#include "output.h"
#include "source.h"
#include "verdict.h"
#include "vprof_xalloc.h"

void vpr_html_esc(FILE *o, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", o); break;
        case '>': fputs("&gt;", o); break;
        case '&': fputs("&amp;", o); break;
        case '"': fputs("&quot;", o); break;
        default: fputc(*s, o);
        }
    }
}

/* The verdict of a top function and, for each place its anomalous samples
 * fell, the code around it with that line highlighted. */
static void html_verdict(FILE *o, const struct vpr_model *m, const struct vpr_func *f,
                         struct vpr_source *src, int with_writers)
{
    struct vpr_verdict vd;
    vpr_verdict(m, f, &vd);
    if (with_writers) vpr_verdict_writers(m, f, &vd);
    fputs("<div class=\"verdict\"><p><b>", o);
    vpr_html_esc(o, vd.what);
    fputs("</b><br>", o);
    vpr_html_esc(o, vd.values);
    if (vd.calls[0]) { fputs("<br>also ", o); vpr_html_esc(o, vd.calls); }
    if (vd.var_also[0]) { fputs("<br>", o); vpr_html_esc(o, vd.var_also); }
    if (vd.after[0]) { fputs("<br>", o); vpr_html_esc(o, vd.after); }
    if (vd.writers[0]) { fputs("<br>", o); vpr_html_esc(o, vd.writers); }
    if (vd.returned[0]) { fputs("<br>", o); vpr_html_esc(o, vd.returned); }
    fputs("<br>why: ", o);
    vpr_html_esc(o, vd.why);
    if (vd.def_line) {             /* placed: its own code, not its variable's */
        vd.decl_file = vd.def_file;
        vd.decl_line = vd.def_line;
    }
    if (vd.decl_line) {
        const char *b = vd.decl_file ? strrchr(vd.decl_file, '/') : NULL;
        fputs(vd.def_line ? "<br>defined at " : "<br>declared at ", o);
        vpr_html_esc(o, b ? b + 1 : vd.decl_file);
        fprintf(o, ":%u (yellow below; anomalous samples in red)", vd.decl_line);
    }
    fprintf(o, "<br>evidence <span class=\"ev-%s\">%s</span>", vpr_evidence_name(vd.evidence),
            vpr_evidence_name(vd.evidence));
    if (vd.evidence != VPR_EV_NONE)
        fprintf(o, " (%llu normal, %llu buggy observations)", (unsigned long long)vd.n[0],
                (unsigned long long)vd.n[1]);
    fputs("</p>\n", o);
    /* windows of 3 lines around the declaration of the deciding variable
     * and the first locations, merged where they touch */
    struct { const char *file; unsigned lo, hi; } win[5];
    size_t nw = 0;
    for (size_t k = 0; k < f->n_loc + 1 && k < 5; k++) {
        const char *file = k ? f->loc[k - 1].file : vd.decl_file;
        unsigned line = k ? f->loc[k - 1].line : vd.decl_line;
        if (!vpr_source_raw(src, file, line)) continue;
        /* a definition: the first lines of the body, where a placed
         * predicate's comparison is */
        unsigned lo = line > 3 ? line - 3 : 1, hi = line + (!k && vd.def_line ? 8 : 3);
        size_t j;
        for (j = 0; j < nw; j++)
            if (vpr_same_path(win[j].file, file) && lo <= win[j].hi + 1 && hi + 1 >= win[j].lo) {
                if (lo < win[j].lo) win[j].lo = lo;
                if (hi > win[j].hi) win[j].hi = hi;
                break;
            }
        if (j == nw) { win[nw].file = file; win[nw].lo = lo; win[nw].hi = hi; nw++; }
    }
    for (size_t w = 0; w < nw; w++) {
        fputs("<pre class=\"src\">", o);
        for (unsigned ln = win[w].lo; ln <= win[w].hi; ln++) {
            const char *t = vpr_source_raw(src, win[w].file, ln);
            if (!t) break;
            unsigned long long hits = 0;
            for (size_t j = 0; j < f->n_loc; j++)
                if (f->loc[j].line == ln && !strcmp(f->loc[j].file, win[w].file)) hits = f->loc[j].n;
            int is_decl = ln == vd.decl_line && vd.decl_file && !strcmp(vd.decl_file, win[w].file);
            if (hits) fprintf(o, "<span class=\"hot\" title=\"%llu anomalous samples\">", hits);
            else if (is_decl) fputs("<span class=\"decl\" title=\"declaration\">", o);
            else fputs("<span>", o);
            fprintf(o, "%5u  ", ln);
            vpr_html_esc(o, t);
            fputs("</span>", o);
        }
        fputs("</pre>\n", o);
    }
    fputs("</div>\n", o);
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Two overlaid histograms (normal blue, buggy red) as fractions of each
 * sample, over shared bins. */
static void svg_hist(FILE *o, const struct vpr_var *v, int d, size_t max_bins)
{
    const struct vpr_reservoir *a = &v->res[VPR_NORMAL][d], *b = &v->res[VPR_BUGGY][d];
    const int W = 520, H = 180, L = 40, B = 30;
    fprintf(o, "<svg class=\"plot\" width=\"%d\" height=\"%d\" "
            "xmlns=\"http://www.w3.org/2000/svg\">\n", W, H + B);
    if (!a->n && !b->n) { fputs("<text x=\"10\" y=\"20\">no samples</text></svg>\n", o); return; }
    double *x = vpf_xcalloc(a->n + 1, sizeof *x), *y = vpf_xcalloc(b->n + 1, sizeof *y);
    if (a->n) memcpy(x, a->v, a->n * sizeof *x);
    if (b->n) memcpy(y, b->v, b->n * sizeof *y);
    qsort(x, a->n, sizeof *x, cmp_d);
    qsort(y, b->n, sizeof *y, cmp_d);
    double *edges;
    size_t nb = vpr_shared_bins(x, a->n, y, b->n, max_bins, &edges);
    double *ca = vpf_xcalloc(nb, sizeof *ca), *cb = vpf_xcalloc(nb, sizeof *cb);
    vpr_bin_counts(x, a->n, edges, nb, ca);
    vpr_bin_counts(y, b->n, edges, nb, cb);
    double top = 0;
    for (size_t i = 0; i < nb; i++) {
        if (a->n) ca[i] /= (double)a->n;
        if (b->n) cb[i] /= (double)b->n;
        if (ca[i] > top) top = ca[i];
        if (cb[i] > top) top = cb[i];
    }
    if (top <= 0) top = 1;
    double bw = (double)(W - L - 10) / (double)nb;
    fprintf(o, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#333\"/>\n",
            L, H, W - 10, H);
    fprintf(o, "<line x1=\"%d\" y1=\"10\" x2=\"%d\" y2=\"%d\" stroke=\"#333\"/>\n", L, L, H);
    for (size_t i = 0; i < nb; i++) {
        double h1 = ca[i] / top * (H - 20), h2 = cb[i] / top * (H - 20);
        double x0 = L + bw * (double)i;
        fprintf(o, "<rect class=\"normal\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                "fill=\"#1f77b4\" fill-opacity=\"0.6\"><title>normal %.6g: %.3f</title></rect>\n",
                x0 + bw * 0.1, H - h1, bw * 0.39, h1, edges[i], ca[i]);
        fprintf(o, "<rect class=\"buggy\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                "fill=\"#d62728\" fill-opacity=\"0.6\"><title>buggy %.6g: %.3f</title></rect>\n",
                x0 + bw * 0.51, H - h2, bw * 0.39, h2, edges[i], cb[i]);
    }
    /* One bin per distinct value (few of them: flags, counters, a budget
     * that is 49152 or 0): each bar pair is labelled with its value, as the
     * bars are not on a linear scale. Quantile bins: the ends, the right
     * one the largest value (the last edge lies just above it, which for
     * data all 0 is a denormal). */
    size_t distinct = 0;
    for (size_t i = 0, j = 0; i < a->n || j < b->n; distinct++) {
        double z = j >= b->n || (i < a->n && x[i] <= y[j]) ? x[i] : y[j];
        while (i < a->n && x[i] == z) i++;
        while (j < b->n && y[j] == z) j++;
    }
    if (distinct <= max_bins && nb <= 12) {
        for (size_t i = 0; i < nb; i++)
            fprintf(o, "<text x=\"%.1f\" y=\"%d\" font-size=\"11\" text-anchor=\"middle\">"
                    "%.6g</text>\n", L + bw * ((double)i + 0.5), H + 14, edges[i]);
    } else {
        double hi = a->n && (!b->n || x[a->n - 1] > y[b->n - 1]) ? x[a->n - 1] : y[b->n - 1];
        fprintf(o, "<text x=\"%d\" y=\"%d\" font-size=\"11\">%.6g</text>\n", L, H + 14, edges[0]);
        fprintf(o, "<text x=\"%d\" y=\"%d\" font-size=\"11\" text-anchor=\"end\">%.6g</text>\n",
                W - 10, H + 14, hi);
    }
    fprintf(o, "<text x=\"%d\" y=\"%d\" font-size=\"11\" text-anchor=\"middle\">%s "
            "(fraction of samples per %s)</text>\n", W / 2, H + 27, vpr_dim_name[d],
            distinct <= max_bins ? "value" : "bin");
    fprintf(o, "<text x=\"2\" y=\"18\" font-size=\"11\">%.2f</text>\n", top);
    fputs("</svg>\n", o);
    free(x); free(y); free(edges); free(ca); free(cb);
}

static void svg_cost(FILE *o, const struct vpr_func *f, double max)
{
    const int W = 520, H = 50;
    if (max <= 0) max = 1;
    fprintf(o, "<svg class=\"cost\" width=\"%d\" height=\"%d\" "
            "xmlns=\"http://www.w3.org/2000/svg\">\n", W, H);
    double wn = f->raw[VPR_NORMAL] / max * (W - 160), wb = f->raw[VPR_BUGGY] / max * (W - 160);
    fprintf(o, "<text x=\"0\" y=\"17\" font-size=\"12\">normal</text>"
            "<rect x=\"60\" y=\"5\" width=\"%.1f\" height=\"16\" fill=\"#1f77b4\"/>"
            "<text x=\"%.1f\" y=\"17\" font-size=\"12\">%.4f s</text>\n",
            wn, 64 + wn, f->raw[VPR_NORMAL]);
    fprintf(o, "<text x=\"0\" y=\"42\" font-size=\"12\">buggy</text>"
            "<rect x=\"60\" y=\"30\" width=\"%.1f\" height=\"16\" fill=\"#d62728\"/>"
            "<text x=\"%.1f\" y=\"42\" font-size=\"12\">%.4f s</text>\n",
            wb, 64 + wb, f->raw[VPR_BUGGY]);
    fputs("</svg>\n", o);
}

int vpr_out_html(const char *path, const struct vpr_model *m, char *err,
                 size_t errlen)
{
    FILE *o = fopen(path, "w");
    if (!o) { snprintf(err, errlen, "%s: cannot write: %m", path); return -1; }
    fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">\n<title>vprof report</title>\n"
          "<style>body{font-family:sans-serif;margin:20px}table{border-collapse:collapse}"
          "td,th{border:1px solid #bbb;padding:3px 6px;font-size:13px}"
          "td.n{text-align:right}h2{margin-top:28px}.legend span{padding:0 8px}"
          "pre.src{background:#f6f6f6;padding:4px;font-size:12px}"
          "pre.src span{display:block}pre.src .hot{background:#ffd7d7;font-weight:bold}"
          "pre.src .decl{background:#fff3c4}"
          ".ev-thin{color:#b00}.ev-strong{color:#070}"
          "code.symbol{font-size:12px;overflow-wrap:anywhere}"
          "</style></head><body>\n<h1>vprof report</h1>\n<p>", o);
    vpr_html_esc(o, m->exe);
    fprintf(o, "<br>normal: %zu run(s), %llu value samples; buggy: %zu run(s), %llu value "
            "samples<br>DefaultDiscount %.2f, ValidDiscount %.2f, p %.3g</p>\n",
            m->n_runs[0], (unsigned long long)m->st[0].value_samples, m->n_runs[1],
            (unsigned long long)m->st[1].value_samples, m->o->default_discount,
            m->o->valid_discount, m->o->pvalue);
    fputs("<table id=\"ranking\"><tr><th>rank</th><th>function</th><th>calibrated</th>"
          "<th>raw</th><th>pc cost</th><th>discount</th><th>dimension</th>"
          "<th>variable</th><th>pattern</th><th>location</th></tr>\n", o);
    size_t shown = vpr_n_shown(m);
    double maxc = 0;
    for (size_t i = 0; i < shown; i++) {
        const struct vpr_func *f = &m->f[m->order[i]];
        if (f->raw[0] > maxc) maxc = f->raw[0];
        if (f->raw[1] > maxc) maxc = f->raw[1];
        /* a long C++ name shortened here, whole in its section and title */
        char fn[400];
        vpr_dm_fit(fn, sizeof fn, f->name, 60, 0);
        fprintf(o, "<tr><td class=\"n\">%zu</td><td><a href=\"#f%zu\"", i + 1, i + 1);
        if (strcmp(fn, vpr_dm(f->name))) {
            fputs(" title=\"", o);
            vpr_html_esc(o, vpr_dm(f->name));
            fputc('"', o);
        }
        fputc('>', o);
        vpr_html_esc(o, fn);
        fprintf(o, "</a></td><td class=\"n\">%.4f</td><td class=\"n\">%.4f</td>"
                "<td class=\"n\">%.4f</td><td class=\"n\">",
                f->calibrated, f->raw[1], f->pc_cost[1]);
        if (f->disc == VPR_DISC_NONE) fputs("-", o); else fprintf(o, "%.2f", f->r);
        fprintf(o, "</td><td>%s</td><td>", f->disc == VPR_DISC_HIST ? "hist" :
                f->disc == VPR_DISC_CONTEXT ? "contexts" :
                f->disc == VPR_DISC_LATENCY ? "latency" : f->disc == VPR_DISC_LOCK ? "lock" : f->disc == VPR_DISC_ARC ? "calls" :
                f->dim >= 0 ? vpr_dim_name[f->dim] : "-");
        /* an expression like this->max_scan_ must not wrap at its '-' */
        fputs("<span style=\"white-space:nowrap\">", o);
        long by = vpr_ranked_after(f);
        if (by >= 0) {
            fputs(f->guard_above || f->placed_above ? "above " : "after ", o);
            vpr_html_esc(o, vpr_dm(m->f[by].name));
        } else {
            vpr_html_esc(o, f->var >= 0 ? m->v[f->var].name : "-");
        }
        fputs("</span>", o);
        fprintf(o, "</td><td>%s</td><td>", f->pattern ? f->pattern : "none");
        if (f->file) {
            const char *b = strrchr(f->file, '/');
            fputs("<span title=\"", o);
            vpr_html_esc(o, f->file);
            fputs("\">", o);
            vpr_html_esc(o, b ? b + 1 : f->file);
            fprintf(o, ":%u</span>", f->line);
        }
        fputs("</td></tr>\n", o);
    }
    fputs("</table>\n<p class=\"legend\"><span style=\"color:#1f77b4\">&#9632; normal</span>"
          "<span style=\"color:#d62728\">&#9632; buggy</span></p>\n", o);
    struct vpr_source *src = vpr_source_new();
    for (size_t i = 0; i < shown; i++) {
        const struct vpr_func *f = &m->f[m->order[i]];
        /* a C++ name can fill a screen in bold: the heading has the
         * table's short form, the whole name follows in small type */
        char nm[400];
        vpr_dm_fit(nm, sizeof nm, f->name, 80, 0);
        fprintf(o, "<h2 id=\"f%zu\">%zu. ", i + 1, i + 1);
        vpr_html_esc(o, nm);
        fprintf(o, "</h2>\n<p>discounter %s, discount %.2f, pattern %s",
                vpr_disc_name(f->disc), f->r, f->pattern ? f->pattern : "none");
        if (strcmp(nm, vpr_dm(f->name))) {
            fputs("<br>name <code class=\"symbol\">", o);
            vpr_html_esc(o, vpr_dm(f->name));
            fputs("</code>", o);
        }
        if (strcmp(vpr_dm(f->name), f->name)) {
            fputs("<br>symbol <code class=\"symbol\">", o);
            vpr_html_esc(o, f->name);
            fputs("</code>", o);
        }
        long host = f->inl_only ? vpr_model_host(f) : -1;
        if (host >= 0) {
            fputs("<br>inlined into ", o);
            vpr_html_esc(o, vpr_dm(m->f[host].name));
            fputs(": no symbol of its own", o);
        } else if (f->inl_only) {
            fputs("<br>inlined: no symbol of its own", o);
        }
        fputs("</p>\n", o);
        html_verdict(o, m, f, src, i < VPR_WRITERS_SHOWN);
        svg_cost(o, f, maxc);
        vpr_mctx_html_func(o, m, m->order[i]);
        vpr_lat_html_func(o, m, m->order[i]);
        for (size_t k = 0; k < f->n_vars; k++) {
            const struct vpr_var *v = &m->v[f->vars[k]];
            int d = v->dim >= 0 ? v->dim : VPR_DIM_VALUE;
            fputs("<h3>", o);
            vpr_html_esc(o, v->name);
            fprintf(o, " &mdash; %s, discount %.2f</h3>\n", vpr_dim_name[d], v->r);
            svg_hist(o, v, d, m->o->bins);
        }
        for (size_t k = 0; k < f->n_loc; k++) {
            if (!k) fputs("<ul class=\"locations\">\n", o);
            fputs("<li>", o);
            vpr_html_esc(o, f->loc[k].file);
            fprintf(o, ":%u &mdash; %llu anomalous samples", f->loc[k].line,
                    (unsigned long long)f->loc[k].n);
            if (f->loc[k].block >= 0)
                fprintf(o, ", block %ld (%s)", f->loc[k].block, f->loc[k].block_kind);
            if (f->loc[k].inlined) {
                fputs(", code of ", o);
                vpr_html_esc(o, vpr_dm(f->loc[k].inlined));
                fputs(" (inlined)", o);
            }
            fputs("</li>\n", o);
            if (k + 1 == f->n_loc) fputs("</ul>\n", o);
        }
    }
    vpr_source_free(src);
    vpr_lat_html_waits(o, m);
    vpr_mctx_html_summary(o, m);
    fputs("</body></html>\n", o);
    if (fclose(o) != 0) { snprintf(err, errlen, "%s: write error: %m", path); return -1; }
    return 0;
}
