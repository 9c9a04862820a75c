/* out_latency.c - the latency parts of the text and JSON reports: per
 * ranked function its call latencies (count, p50, p99, p99.9, max; normal
 * vs buggy) and call sites, then the lock waits per waiting site with the
 * holder's functions. Durations in µs, nearest-rank percentiles. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "demangle.h"
#include "latency.h"
#include "output.h"
#include "vprof_xalloc.h"

enum { SITES_SHOWN = 3, HOLDERS_SHOWN = 4 };

static const char *sym(const struct vpr_model *m, long f)
{
    return f >= 0 && (size_t)f < m->n_f ? m->f[f].name : "?";
}

static const char *fname(const struct vpr_model *m, long f)
{
    return vpr_dm(sym(m, f));
}

/* "file:line" of a link-time site, or "" */
static void site_loc(const struct vpr_model *m, uint64_t site, char *buf, size_t len)
{
    const char *file;
    unsigned line;
    buf[0] = 0;
    if (m->lines && vpr_lines_lookup(m->lines, site, &file, &line) == 0) {
        const char *b = strrchr(file, '/');
        snprintf(buf, len, "%s:%u", b ? b + 1 : file, line);
    }
}

/* Sites of one kind for function f (waits: the waiting function), most
 * buggy events first. Caller frees. */
static size_t *sites_of(const struct vpr_latency *L, uint8_t kind, long f, size_t *n);
static int cmp_site(const void *a, const void *b, void *ctx)
{
    const struct vpr_latency *L = ctx;
    const struct vpr_lsite *x = &L->sites[*(const size_t *)a], *y = &L->sites[*(const size_t *)b];
    double sx = 0, sy = 0;
    for (size_t i = 0; i < x->d.n[1]; i++) sx += x->d.v[1][i];
    for (size_t i = 0; i < y->d.n[1]; i++) sy += y->d.v[1][i];
    if (sx != sy) return sx > sy ? -1 : 1;
    if (x->d.n[0] != y->d.n[0]) return x->d.n[0] > y->d.n[0] ? -1 : 1;
    return x->site < y->site ? -1 : x->site > y->site;
}

static size_t *sites_of(const struct vpr_latency *L, uint8_t kind, long f, size_t *n)
{
    size_t *ix = vpf_xcalloc(L->n_sites ? L->n_sites : 1, sizeof *ix);
    *n = 0;
    for (size_t i = 0; i < L->n_sites; i++)
        if (L->sites[i].kind == kind && (f < 0 || L->sites[i].f == f)) ix[(*n)++] = i;
    qsort_r(ix, *n, sizeof *ix, cmp_site, (void *)L);
    return ix;
}

static void text_stats(FILE *out, const struct vpr_ldist *d, int s)
{
    struct vpr_lstats st = vpr_lat_stats(d, s);
    if (!d->n[s]) { fprintf(out, "%7s %9s %9s %9s %9s\n", "0", "-", "-", "-", "-"); return; }
    fprintf(out, "%7zu %9.1f %9.1f %9.1f %9.1f\n", d->n[s], st.p50, st.p99, st.p999, st.max);
}

static void short_stats(FILE *out, const char *label, const struct vpr_ldist *d, int s)
{
    struct vpr_lstats st = vpr_lat_stats(d, s);
    if (!d->n[s]) { fprintf(out, "%s n=0", label); return; }
    fprintf(out, "%s n=%zu p50 %.1f p99 %.1f max %.1f", label, d->n[s], st.p50, st.p99, st.max);
}

void vpr_lat_text(FILE *out, const struct vpr_model *m)
{
    const struct vpr_latency *L = m->lat;
    if (!L) return;
    fprintf(out, "\nLatency (stack scanner, polling %u µs)\nnormal %llu events (%llu "
            "dropped), buggy %llu (%llu dropped)\n", L->scan_ns / 1000,
            (unsigned long long)L->events[0], (unsigned long long)L->dropped[0],
            (unsigned long long)L->events[1], (unsigned long long)L->dropped[1]);
    fprintf(out, "calls seen per function, µs (nearest rank; calls shorter than the "
            "polling\ninterval are mostly not seen)\n");
    fprintf(out, "%4s %-18s %-6s %7s %9s %9s %9s %9s\n", "rank", "function", "side",
            "count", "p50", "p99", "p99.9", "max");
    size_t shown = vpr_n_shown(m);
    for (size_t i = 0; i < shown; i++) {
        size_t fi = m->order[i];
        if (fi >= L->n_f) continue;
        const struct vpr_lfunc *lf = &L->f[fi];
        if (!lf->d.n[0] && !lf->d.n[1]) continue;
        char fn[80];
        vpr_dm_fit(fn, sizeof fn, m->f[fi].name, 18, 1);
        fprintf(out, "%4zu %s %-6s ", i + 1, fn, "normal");
        text_stats(out, &lf->d, 0);
        fprintf(out, "%4s %-18s %-6s ", "", "", "buggy");
        text_stats(out, &lf->d, 1);
        fprintf(out, "%6slatency %s r=%.2f", "", vpr_state_name(lf->st), lf->r);
        if (!isnan(lf->p)) fprintf(out, " p=%.3g", lf->p);
        if (!isnan(lf->h)) fprintf(out, " H=%.2f", lf->h);
        fprintf(out, "\n%6ssummed latency: normal %.4f s, buggy %.4f s\n", "", lf->cost[0],
                lf->cost[1]);
        size_t n, *ix = sites_of(L, VPF_LAT_CALL, (long)fi, &n);
        for (size_t k = 0; k < n && k < SITES_SHOWN; k++) {
            const struct vpr_lsite *s = &L->sites[ix[k]];
            char loc[64];
            site_loc(m, s->site, loc, sizeof loc);
            fprintf(out, "%6sfrom %s%s%s%s\n", "", fname(m, s->caller), *loc ? " (" : "",
                    loc, *loc ? ")" : "");
            short_stats(out, "        normal", &s->d, 0);
            short_stats(out, "\n        buggy ", &s->d, 1);
            fputc('\n', out);
        }
        free(ix);
    }
    size_t n, *ix = sites_of(L, VPF_LAT_MUTEX_WAIT, -1, &n);
    if (n) fprintf(out, "\nLock waits per waiting site, µs (holder: the holder thread's "
                   "functions during\nthe buggy runs' waits, by overlap)\n");
    size_t limit = m->o->top > 0 ? (size_t)m->o->top : n;
    for (size_t k = 0; k < n && k < limit; k++) {
        const struct vpr_lsite *s = &L->sites[ix[k]];
        char loc[64];
        site_loc(m, s->site, loc, sizeof loc);
        fprintf(out, "  %s%s%s%s\n", fname(m, s->f), *loc ? " (" : "", loc, *loc ? ")" : "");
        short_stats(out, "    normal", &s->d, 0);
        short_stats(out, "\n    buggy ", &s->d, 1);
        fputc('\n', out);
        for (size_t h = 0; h < s->n_hold && h < HOLDERS_SHOWN; h++)
            fprintf(out, "    holder %s: %.0f µs overlap in %zu calls\n", fname(m, s->hold[h].f),
                    s->hold[h].overlap_us, s->hold[h].n);
    }
    free(ix);
}

static void json_stats(FILE *o, const struct vpr_ldist *d, int s)
{
    struct vpr_lstats st = vpr_lat_stats(d, s);
    fprintf(o, "{\"count\":%zu,\"p50_us\":", d->n[s]);
    vpr_jnum(o, st.p50);
    fputs(",\"p99_us\":", o); vpr_jnum(o, st.p99);
    fputs(",\"p999_us\":", o); vpr_jnum(o, st.p999);
    fputs(",\"max_us\":", o); vpr_jnum(o, st.max);
    fputc('}', o);
}

static void json_site_head(FILE *o, const struct vpr_model *m, const struct vpr_lsite *s,
                           const char *key, long f)
{
    const char *file = NULL;
    unsigned line = 0;
    if (m->lines) vpr_lines_lookup(m->lines, s->site, &file, &line);
    fprintf(o, "{\"%s\":", key); vpr_jstr(o, fname(m, f));
    fprintf(o, ",\"%s_symbol\":", key); vpr_jstr(o, sym(m, f));
    fprintf(o, ",\"site\":\"0x%llx\",\"file\":", (unsigned long long)s->site);
    vpr_jstr(o, file);
    fprintf(o, ",\"line\":%u,\"normal\":", line);
    json_stats(o, &s->d, 0);
    fputs(",\"buggy\":", o);
    json_stats(o, &s->d, 1);
}

void vpr_lat_json_func(FILE *o, const struct vpr_model *m, size_t fi)
{
    const struct vpr_latency *L = m->lat;
    if (!L || fi >= L->n_f || (!L->f[fi].d.n[0] && !L->f[fi].d.n[1])) {
        fputs("null", o);
        return;
    }
    const struct vpr_lfunc *lf = &L->f[fi];
    fputs("{\"state\":", o); vpr_jstr(o, vpr_state_name(lf->st));
    fputs(",\"discount\":", o); vpr_jnum(o, lf->r);
    fputs(",\"ad_statistic\":", o); vpr_jnum(o, lf->stat);
    fputs(",\"pvalue\":", o); vpr_jnum(o, lf->p);
    fputs(",\"hellinger\":", o); vpr_jnum(o, lf->h);
    fputs(",\"normal_cost\":", o); vpr_jnum(o, lf->cost[0]);
    fputs(",\"buggy_cost\":", o); vpr_jnum(o, lf->cost[1]);
    fputs(",\"normal\":", o); json_stats(o, &lf->d, 0);
    fputs(",\"buggy\":", o); json_stats(o, &lf->d, 1);
    fputs(",\"sites\":[", o);
    size_t n, *ix = sites_of(L, VPF_LAT_CALL, (long)fi, &n);
    for (size_t k = 0; k < n; k++) {
        if (k) fputc(',', o);
        json_site_head(o, m, &L->sites[ix[k]], "caller", L->sites[ix[k]].caller);
        fputc('}', o);
    }
    free(ix);
    fputs("]}", o);
}

void vpr_lat_json_summary(FILE *o, const struct vpr_model *m)
{
    const struct vpr_latency *L = m->lat;
    if (!L) { fputs("null", o); return; }
    fprintf(o, "{\"scan_ns\":%u,\"normal_events\":%llu,\"buggy_events\":%llu,"
            "\"normal_dropped\":%llu,\"buggy_dropped\":%llu,\"normal_open\":%llu,"
            "\"buggy_open\":%llu,\"lock_waits\":[", L->scan_ns,
            (unsigned long long)L->events[0], (unsigned long long)L->events[1],
            (unsigned long long)L->dropped[0], (unsigned long long)L->dropped[1],
            (unsigned long long)L->open[0], (unsigned long long)L->open[1]);
    size_t n, *ix = sites_of(L, VPF_LAT_MUTEX_WAIT, -1, &n);
    for (size_t k = 0; k < n; k++) {
        const struct vpr_lsite *s = &L->sites[ix[k]];
        if (k) fputc(',', o);
        fputc('\n', o);
        json_site_head(o, m, s, "function", s->f);
        fputs(",\"holders\":[", o);
        for (size_t h = 0; h < s->n_hold; h++) {
            if (h) fputc(',', o);
            fputs("{\"function\":", o); vpr_jstr(o, fname(m, s->hold[h].f));
            fputs(",\"function_symbol\":", o); vpr_jstr(o, sym(m, s->hold[h].f));
            fputs(",\"overlap_us\":", o); vpr_jnum(o, s->hold[h].overlap_us);
            fprintf(o, ",\"calls\":%zu}", s->hold[h].n);
        }
        fputs("]}", o);
    }
    free(ix);
    fputs("]}", o);
}

/* ---- HTML (out_html.c calls these) ---- */
static void hesc(FILE *o, const char *s)
{
    for (; s && *s; s++) {
        if (*s == '<') fputs("&lt;", o);
        else if (*s == '>') fputs("&gt;", o);
        else if (*s == '&') fputs("&amp;", o);
        else if (*s == '"') fputs("&quot;", o);
        else fputc(*s, o);
    }
}

static void html_row(FILE *o, const char *label, const struct vpr_ldist *d, int s)
{
    struct vpr_lstats st = vpr_lat_stats(d, s);
    fprintf(o, "<tr><td>%s</td><td class=\"n\">%zu</td>", label, d->n[s]);
    double v[4] = {st.p50, st.p99, st.p999, st.max};
    for (int i = 0; i < 4; i++) {
        if (d->n[s]) fprintf(o, "<td class=\"n\">%.1f</td>", v[i]);
        else fputs("<td class=\"n\">-</td>", o);
    }
    fputs("</tr>\n", o);
}

static void html_table(FILE *o, const char *cls, const struct vpr_ldist *d)
{
    fprintf(o, "<table class=\"%s\"><tr><th>side</th><th>count</th><th>p50 µs</th>"
            "<th>p99 µs</th><th>p99.9 µs</th><th>max µs</th></tr>\n", cls);
    html_row(o, "normal", d, 0);
    html_row(o, "buggy", d, 1);
    fputs("</table>\n", o);
}

void vpr_lat_html_func(FILE *o, const struct vpr_model *m, size_t fi)
{
    const struct vpr_latency *L = m->lat;
    if (!L || fi >= L->n_f || (!L->f[fi].d.n[0] && !L->f[fi].d.n[1])) return;
    const struct vpr_lfunc *lf = &L->f[fi];
    fprintf(o, "<h3>call latency &mdash; %s, discount %.2f; summed %.4f s normal, %.4f s "
            "buggy</h3>\n", vpr_state_name(lf->st), lf->r, lf->cost[0], lf->cost[1]);
    html_table(o, "latency", &lf->d);
}

void vpr_lat_html_waits(FILE *o, const struct vpr_model *m)
{
    const struct vpr_latency *L = m->lat;
    if (!L) return;
    size_t n, *ix = sites_of(L, VPF_LAT_MUTEX_WAIT, -1, &n);
    if (n) fputs("<h2 id=\"lockwaits\">Lock waits</h2>\n", o);
    size_t limit = m->o->top > 0 ? (size_t)m->o->top : n;
    for (size_t k = 0; k < n && k < limit; k++) {
        const struct vpr_lsite *s = &L->sites[ix[k]];
        char loc[64];
        site_loc(m, s->site, loc, sizeof loc);
        fputs("<h3>", o);
        hesc(o, fname(m, s->f));
        if (*loc) { fputs(" (", o); hesc(o, loc); fputc(')', o); }
        fputs("</h3>\n", o);
        html_table(o, "lockwait", &s->d);
        if (s->n_hold) fputs("<ul class=\"holders\">\n", o);
        for (size_t h = 0; h < s->n_hold && h < HOLDERS_SHOWN; h++) {
            fputs("<li>holder ", o);
            hesc(o, fname(m, s->hold[h].f));
            fprintf(o, ": %.0f µs overlap in %zu calls</li>\n", s->hold[h].overlap_us,
                    s->hold[h].n);
        }
        if (s->n_hold) fputs("</ul>\n", o);
    }
    free(ix);
}
