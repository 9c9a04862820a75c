/* out_text.c - the default report: a ranked table in gprof's style that
 * fits 80 columns, a short verdict for each of the top functions (the
 * deciding variable, its values in both runs, the code, the pattern and
 * why), a note on thin evidence, and with --verbose every variable of every
 * shown function. */
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "ctx_rank.h"
#include "demangle.h"
#include "output.h"
#include "pattern.h"
#include "source.h"
#include "verdict.h"

size_t vpr_n_shown(const struct vpr_model *m)
{
    size_t top = m->o->top > 0 ? (size_t)m->o->top : m->n_order;
    return top < m->n_order ? top : m->n_order;
}

const char *vpr_disc_name(int d)
{
    return d == VPR_DISC_VARIABLE ? "variable" : d == VPR_DISC_HIST ? "hist"
         : d == VPR_DISC_LATENCY ? "latency" : d == VPR_DISC_LOCK ? "lock" : d == VPR_DISC_ARC ? "calls"
         : d == VPR_DISC_CONTEXT ? "contexts" : "none";
}

const char *vpr_state_name(int st)
{
    static const char *n[] = {"unused", "same", "differs", "no-normal-samples",
                              "undefined"};
    return st >= 0 && st <= 4 ? n[st] : "?";
}

void vpr_tags_str(uint16_t tags, char *buf, size_t len)
{
    vpf_tags_format(tags & (VPF_TAG_LOOP | VPF_TAG_COND | VPF_TAG_ARGS), buf, len);
    if (tags & VPF_TAG_GLOBAL) {
        size_t n = strlen(buf);
        if (!strcmp(buf, "none")) snprintf(buf, len, "global");
        else snprintf(buf + n, len - n, "|global");
    }
}

static const char *short_dim(int d)
{
    static const char *n[] = {"value", "delta", "proc"};
    return d >= 0 && d < VPR_N_DIMS ? n[d] : "-";
}

static void fit(char *dst, const char *s, size_t w)
{
    size_t n = strlen(s);
    if (n <= w) { snprintf(dst, w + 1, "%s", s); return; }
    snprintf(dst, w + 1, "%.*s~", (int)(w - 1), s);    /* mark truncation */
}

static void print_range(FILE *out, const char *label, double lo, double hi)
{
    if (lo > hi) fprintf(out, "%s none", label);
    else fprintf(out, "%s [%.6g, %.6g]", label, lo, hi);
}

/* Prints text after `lead` (already printed, `col` columns wide), wrapped
 * at 80 columns with continuation lines indented by `indent`. */
static void wrap(FILE *out, size_t col, size_t indent, const char *text)
{
    const size_t width = 80;
    const char *p = text;
    while (*p) {
        size_t room = width > col ? width - col : 20;
        size_t n = strlen(p);
        if (n <= room) { fputs(p, out); break; }
        size_t cut = room;
        while (cut > 0 && p[cut] != ' ') cut--;
        if (cut == 0) cut = room;                   /* one long word: break it */
        fprintf(out, "%.*s\n%*s", (int)cut, p, (int)indent, "");
        p += cut;
        while (*p == ' ') p++;
        col = indent;
    }
    fputc('\n', out);
}

/* printf into buf after its first *n bytes; a write that does not fit is
 * cut and fills the buffer, and later ones add nothing. */
__attribute__((format(printf, 4, 5)))
static void append(char *buf, size_t size, size_t *n, const char *fmt, ...)
{
    if (*n + 1 >= size) return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(buf + *n, size - *n, fmt, ap);
    va_end(ap);
    if (k > 0) *n = *n + (size_t)k < size ? *n + (size_t)k : size - 1;
}

static const char *base(const char *path)
{
    const char *b = path ? strrchr(path, '/') : NULL;
    return b ? b + 1 : path ? path : "?";
}

/* The short verdict of one ranked function: what decided, its values in
 * both runs, where (with the code), the pattern and why. */
static void verdict_text(FILE *out, const struct vpr_model *m, size_t rank,
                         const struct vpr_func *f, struct vpr_source *src)
{
    struct vpr_verdict vd;
    vpr_verdict(m, f, &vd);
    vpr_verdict_writers(m, f, &vd);
    char head[200];
    /* a C++ name may fill the screen: its short form (Cls<…>::f(...)), the
     * whole name is in --verbose and the JSON */
    char nm[160];
    vpr_dm_fit(nm, sizeof nm, f->name, 64, 0);
    size_t n = 0;
    append(head, sizeof head, &n, "[%zu] %s", rank, nm);
    if (f->file) append(head, sizeof head, &n, "  %s:%u", base(f->file), f->line);
    /* why gprof and perf never name it, and where they count it: on the
     * heading's line when it fits 80 columns, else on its own */
    char inl[160] = "";
    long host = f->inl_only ? vpr_model_host(f) : -1;
    if (host >= 0) {
        char hn[96];
        vpr_dm_fit(hn, sizeof hn, m->f[host].name, 40, 0);
        snprintf(inl, sizeof inl, "(inlined into %s: no symbol of its own)", hn);
    } else if (f->inl_only) {
        snprintf(inl, sizeof inl, "(inlined: no symbol of its own)");
    }
    if (*inl && n + 2 + strlen(inl) <= 80) append(head, sizeof head, &n, "  %s", inl);
    else if (*inl) append(head, sizeof head, &n, "\n    %s", inl);
    fprintf(out, "\n%s\n", head);
    char ev[200];
    int k = snprintf(ev, sizeof ev, "pattern %s; evidence %s", f->pattern ? f->pattern : "none",
                     vpr_evidence_name(vd.evidence));
    /* a function ranked for another's evidence counts that one's */
    long link = vpr_pattern_link(m, f);
    const struct vpr_func *ef = link >= 0 ? &m->f[link] : f;
    if (vd.evidence != VPR_EV_NONE)
        snprintf(ev + k, sizeof ev - (size_t)k, " (%llu normal, %llu buggy %s%s%s)",
                 (unsigned long long)vd.n[0], (unsigned long long)vd.n[1],
                 ef->disc != VPR_DISC_HIST ? "observations"
                 : ef->share[0] > 0 || ef->share[1] > 0 ? "ticks" : "runs",
                 link >= 0 ? " of " : "", link >= 0 ? vpr_dm(ef->name) : "");
    fputs("    ", out);
    wrap(out, 4, 6, ev);
    fputs("    ", out);
    wrap(out, 4, 6, vd.what);
    if (vd.values[0]) { fputs("      ", out); wrap(out, 6, 8, vd.values); }
    if (vd.var_also[0]) { fputs("    ", out); wrap(out, 4, 6, vd.var_also); }
    if (vd.after[0]) { fputs("    ", out); wrap(out, 4, 6, vd.after); }
    const char *df = vd.def_line ? vd.def_file : vd.decl_file;
    unsigned dl = vd.def_line ? vd.def_line : vd.decl_line;
    const char *decl = vpr_source_line(src, df, dl);
    /* a definition's line is its opening brace when that stands alone: the
     * signature is the line above */
    if (vd.def_line && decl && !strcmp(decl, "{") && dl > 1)
        decl = vpr_source_line(src, df, --dl);
    if (decl) {
        char line[256];
        int w = snprintf(line, sizeof line, "      %s %s:%u: %s",
                         vd.def_line ? "defined" : "declared", base(df), dl, decl);
        if (w > 79) memcpy(line + 76, "...", 4);
        fprintf(out, "%s\n", line);
    }
    if (vd.calls[0]) { fputs("      also ", out); wrap(out, 11, 8, vd.calls); }
    if (vd.writers[0]) { fputs("      ", out); wrap(out, 6, 8, vd.writers); }
    if (vd.returned[0]) { fputs("      ", out); wrap(out, 6, 8, vd.returned); }
    if (f->n_loc) fputs("    where (anomalous samples):\n", out);
    for (size_t k = 0; k < f->n_loc && k < 2; k++) {
        const struct vpr_location *l = &f->loc[k];
        char where[128], line[256];
        snprintf(where, sizeof where, "%s:%u (%llu)", base(l->file), l->line,
                 (unsigned long long)l->n);
        const char *code = vpr_source_line(src, l->file, l->line);
        int w = snprintf(line, sizeof line, "      %-20s %s", where, code ? code : "");
        if (w > 79) memcpy(line + 76, "...", 4);      /* fits 80 columns */
        fprintf(out, "%s\n", line);
        if (l->inlined && strcmp(l->inlined, f->name)) {
            w = snprintf(line, sizeof line, "      %-20s (code of %s, inlined here)", "",
                         vpr_dm(l->inlined));
            if (w > 79) memcpy(line + 76, "...", 4);
            fprintf(out, "%s\n", line);
        }
    }
    fputs("    why: ", out);
    wrap(out, 9, 9, vd.why);
    vpr_mctx_text_func(out, m, (size_t)(f - m->f));
}

/* Every variable of every shown function, dimension by dimension. */
static void details_text(FILE *out, const struct vpr_model *m, size_t shown)
{
    for (size_t i = 0; i < shown; i++) {
        const struct vpr_func *f = &m->f[m->order[i]];
        if (!f->n_vars) continue;
        fprintf(out, "\n[%zu] %s: %s discount %.2f, pattern %s\n", i + 1, vpr_dm(f->name),
                vpr_disc_name(f->disc), f->r, f->pattern ? f->pattern : "none");
        fprintf(out, "    cost normal %.4f s, buggy %.4f s (raw)\n",
                f->raw[VPR_NORMAL], f->raw[VPR_BUGGY]);
        for (size_t k = 0; k < f->n_vars; k++) {
            const struct vpr_var *v = &m->v[f->vars[k]];
            char tags[64];
            vpr_tags_str(v->tags, tags, sizeof tags);
            fprintf(out, "  %s%s (%s; %s) discount %.2f by %s\n",
                    (long)f->vars[k] == f->var ? "* " : "  ", v->name, v->type,
                    tags, v->r, v->dim >= 0 ? vpr_dim_name[v->dim] : "-");
            char ret[256];
            vpr_returned_line(m, v, ret, sizeof ret);
            if (ret[0]) { fputs("      ", out); wrap(out, 6, 8, ret); }
            if (v->addr_like[0] || v->addr_like[1])
                fprintf(out, "      %llu normal, %llu buggy values left out: they look like\n"
                        "      addresses (stack garbage of an uninitialized variable, or a\n"
                        "      pointer in an integer), which ASLR changes from run to run\n",
                        (unsigned long long)v->addr_like[0], (unsigned long long)v->addr_like[1]);
            for (int d = 0; d < VPR_N_DIMS; d++) {
                if (v->st[d] == VPR_DS_NONE) continue;
                fprintf(out, "      %-15s %-17s r=%.2f", vpr_dim_name[d],
                        vpr_state_name(v->st[d]), v->dim_r[d]);
                if (!isnan(v->dim_p[d])) fprintf(out, " p=%.3g", v->dim_p[d]);
                if (!isnan(v->dim_h[d])) fprintf(out, " H=%.2f", v->dim_h[d]);
                fprintf(out, " out=%llu\n", (unsigned long long)v->n_outside[d]);
                fprintf(out, "%8s", "");
                print_range(out, "normal", v->lo[d], v->hi[d]);
                print_range(out, "  buggy", v->blo[d], v->bhi[d]);
                fputc('\n', out);
            }
        }
        for (size_t k = 0; k < f->n_loc; k++) {
            const struct vpr_location *l = &f->loc[k];
            fprintf(out, "    %s:%u: %llu anomalous samples", l->file, l->line,
                    (unsigned long long)l->n);
            if (l->block >= 0) fprintf(out, ", block %ld (%s)", l->block, l->block_kind);
            if (l->inlined) fprintf(out, ", inlined %s", vpr_dm(l->inlined));
            fputc('\n', out);
        }
    }
}

/* Names the shown functions whose deciding evidence is thin, and how to get
 * more: a ranking among them can change from one pair of runs to the next. */
static void thin_note(FILE *out, const struct vpr_model *m, size_t shown)
{
    char names[400] = "";
    size_t len = 0, count = 0;
    for (size_t i = 0; i < shown; i++) {
        const struct vpr_func *f = &m->f[m->order[i]];
        struct vpr_verdict vd;
        vpr_verdict(m, f, &vd);
        if (vd.evidence != VPR_EV_THIN) continue;
        count++;
        const char *nm = vpr_dm(f->name);
        if (len + strlen(nm) + 16 < sizeof names)
            len += (size_t)snprintf(names + len, sizeof names - len, "%s%s (rank %zu)",
                                    len ? ", " : "", nm, i + 1);
    }
    if (!count) return;
    char text[800];
    snprintf(text, sizeof text, "Thin evidence: %zu of the %zu shown functions were "
             "decided by few observations (fewer than %zu samples of the deciding variable, "
             "or ticks of a share of the run, on a side; fewer than 3 runs a side for a rank "
             "comparison): %s. Their order can "
             "change between runs; for more samples run the workloads longer, give several "
             "run directories a side, or raise VPROF_HZ.", count, shown,
             m->o->min_evidence ? m->o->min_evidence : (size_t)20, names);
    fputc('\n', out);
    wrap(out, 0, 0, text);
}

/* Inlined functions among the shown ones whose calls nothing counted:
 * gmon has no call of theirs, and the default build counts only guarded
 * calls and their holders', so a decision to call made in one is evidence
 * only when the program counts every call (vprof-cc --calls). */
static void calls_note(FILE *out, const struct vpr_model *m, size_t shown)
{
    /* only vprof-cc builds (they carry a schema) can be rebuilt with --calls */
    if (!m->o->arcs || !m->has_schema)
        return;
    size_t count = 0;
    for (size_t i = 0; i < shown; i++) {
        const struct vpr_func *f = &m->f[m->order[i]];
        count += f->inl_only && !(f->arc.ccalls[VPR_NORMAL] > 0) && !(f->arc.ccalls[VPR_BUGGY] > 0);
    }
    if (!count) return;
    char text[400];
    int one = count == 1;
    snprintf(text, sizeof text, "Inlined: %zu of the %zu shown functions %s no symbol of "
             "%s own and no counted calls, so none of %s calls is seen (nor a decision to "
             "call inside %s). Build with vprof-cc --calls to count every call before "
             "inlining.", count, shown, one ? "has" : "have", one ? "its" : "their",
             one ? "its" : "their", one ? "it" : "one");
    fputc('\n', out);
    wrap(out, 0, 0, text);
}

void vpr_out_text(FILE *out, const struct vpr_model *m)
{
    const struct vpr_side_stats *n = &m->st[VPR_NORMAL], *b = &m->st[VPR_BUGGY];
    fprintf(out, "vprof-report: %s\n", m->exe);
    fprintf(out, "normal: %zu run(s), %zu process(es), %llu value samples\n",
            m->n_runs[0], n->procs, (unsigned long long)n->value_samples);
    fprintf(out, "buggy:  %zu run(s), %zu process(es), %llu value samples\n",
            m->n_runs[1], b->procs, (unsigned long long)b->value_samples);
    fprintf(out, "DefaultDiscount %.2f, ValidDiscount %.2f, p %.3g; costs in "
            "seconds per run\n\n", m->o->default_discount, m->o->valid_discount,
            m->o->pvalue);
    fprintf(out, "%4s %8s %8s %8s %4s %-5s %-18s %s\n", "rank", "calibr.",
            "raw", "pc cost", "disc", "dim", "pattern", "function");
    size_t shown = vpr_n_shown(m);
    for (size_t i = 0; i < shown; i++) {
        const struct vpr_func *f = &m->f[m->order[i]];
        char fn[80], var[30], disc[8];
        vpr_dm_fit(fn, sizeof fn, f->name, 18, 0);    /* C++: Router::match(...) */
        if (f->disc == VPR_DISC_NONE) snprintf(disc, sizeof disc, "  - ");
        else snprintf(disc, sizeof disc, "%4.2f", f->r);
        fprintf(out, "%4zu %8.3f %8.3f %8.3f %s %-5s %-18s %s\n", i + 1,
                f->calibrated, f->raw[VPR_BUGGY], f->pc_cost[VPR_BUGGY], disc,
                f->disc == VPR_DISC_HIST ? "hist" :
                f->disc == VPR_DISC_LATENCY ? "lat" : f->disc == VPR_DISC_LOCK ? "lock" : f->disc == VPR_DISC_ARC ? "calls" :
                f->disc == VPR_DISC_CONTEXT ? "ctx" : short_dim(f->dim),
                f->pattern ? f->pattern : "none", fn);
        char after[96];
        long by = vpr_ranked_after(f);
        if (by >= 0)
            snprintf(after, sizeof after, "%s %s",
                     f->guard_above || f->placed_above ? "above" : "after",
                     vpr_dm(m->f[by].name));
        fit(var, by >= 0 ? after : f->var >= 0 ? m->v[f->var].name : "-", 24);
        if (f->file) {
            char loc[60];
            snprintf(loc, sizeof loc, "%s:%u", base(f->file), f->line);
            char locf[41];
            fit(locf, loc, 40);
            fprintf(out, "%14s %s %-24s %s\n", "", by >= 0 ? "   " : "var", var, locf);
        } else {
            fprintf(out, "%14s %s %s\n", "", by >= 0 ? "   " : "var", var);
        }
    }
    if (!shown) fprintf(out, "(no function has samples in the buggy runs)\n");

    size_t nv = m->o->verdicts < shown ? m->o->verdicts : shown;
    if (nv) {
        struct vpr_source *src = vpr_source_new();
        for (size_t i = 0; i < nv; i++) verdict_text(out, m, i + 1, &m->f[m->order[i]], src);
        vpr_source_free(src);
    }
    thin_note(out, m, shown);
    calls_note(out, m, shown);
    vpr_mctx_text_summary(out, m);
    if (m->ctx_note[0]) fprintf(out, "\n(%s)\n", m->ctx_note);
    if (m->o->verbose) details_text(out, m, shown);
    else if (shown)
        fprintf(out, "\n(--verbose: every variable of the %zu shown functions, dimension by "
                "dimension)\n", shown);
}
