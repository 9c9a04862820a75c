/* main.c - vprof-report: the three modes and the order of the report's
 * steps. Options are in cli.c; see vprof-report.1 and docs/vprof-report.md. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>

#include "ad_test.h"
#include "arcs.h"
#include "checks.h"
#include "cli.h"
#include "discount.h"
#include "gprof_mode.h"
#include "latency.h"
#include "model.h"
#include "output.h"
#include "pattern.h"
#include "runs.h"
#include "scan.h"
#include "variance.h"
#include "vprof_xalloc.h"
#include "waits.h"
#include "contexts.h"
#include "ctx_rank.h"

/* ---------- --ad-test ---------- */

static int read_numbers(const char *path, double **out, size_t *n)
{
    FILE *f = fopen(path, "r");
    if (!f) { fprintf(stderr, "vprof-report: %s: %s\n", path, strerror(errno)); return -1; }
    size_t cap = 0, line = 0;
    char buf[256];
    *out = NULL; *n = 0;
    while (fgets(buf, sizeof buf, f)) {
        line++;
        char *p = buf;
        while (*p == ' ' || *p == '\t') p++;
        if (*p == '\n' || *p == 0 || *p == '#') continue;
        char *end;
        double v = strtod(p, &end);
        while (*end == ' ' || *end == '\t' || *end == '\r' || *end == '\n') end++;
        if (end == p || *end || isnan(v)) {
            fprintf(stderr, "vprof-report: %s:%zu: not a number\n", path, line);
            fclose(f); free(*out); return -1;
        }
        *out = vpf_grow(*out, &cap, *n + 1, sizeof **out);
        (*out)[(*n)++] = v;
    }
    fclose(f);
    return 0;
}

static int ad_test_mode(const char *a, const char *b)
{
    double *s[2];
    size_t n[2];
    if (read_numbers(a, &s[0], &n[0]) < 0) return 2;
    if (read_numbers(b, &s[1], &n[1]) < 0) { free(s[0]); return 2; }
    struct vpr_ad_result r;
    const char *why;
    int rc = vpr_ad_ksamp(s, n, 2, &r, &why);
    free(s[0]); free(s[1]);
    if (rc < 0) { fprintf(stderr, "vprof-report: --ad-test: %s\n", why); return 2; }
    printf("statistic %.17g\npvalue %.17g\n", r.statistic, r.pvalue);
    return 0;
}

/* ---------- the report ---------- */

/* What one report holds, step by step. */
struct report {
    const struct vpr_cli *c;
    const struct vpr_opts *o;
    char *exe;                  /* the executable the layouts recorded */
    struct vpr_side sides[2];
    struct vpr_side hsides[2];  /* --hist-normal/--hist-buggy runs */
    size_t other[2];            /* processes of other executables, ignored */
    struct vpr_model m;
    int have_model;
    char err[1024];
};

static int fail(const char *msg)
{
    fprintf(stderr, "vprof-report: %s\n", msg);
    return 1;
}

static int load_side(struct report *r, int side, const char *exe)
{
    return vpr_side_load(r->c->dirs[side], r->c->n_dirs[side], r->o->per_pid, exe,
                         &r->sides[side], &r->other[side], r->err, sizeof r->err);
}

/* The buggy side decides the executable: --exe, else what its layouts
 * recorded. An --exe that no layout recorded is a copy of the program at
 * another path: processes are selected by the recorded path, symbols come
 * from the copy. */
static int load_buggy(struct report *r)
{
    const char *first_dir = r->c->dirs[VPR_BUGGY][0];
    r->exe = r->o->exe ? vpf_xstrdup(r->o->exe) : vpr_first_exe(first_dir, r->err, sizeof r->err);
    if (!r->exe) return fail(r->err);
    int rc = load_side(r, VPR_BUGGY, r->exe);
    if (rc == -2 && r->o->exe) {
        free(r->exe);
        r->exe = vpr_first_exe(first_dir, r->err, sizeof r->err);
        if (!r->exe) return fail(r->err);
        if (!r->o->quiet)
            fprintf(stderr, "vprof-report: note: the runs recorded %s; reading its "
                    "symbols from --exe %s\n", r->exe, r->o->exe);
        rc = load_side(r, VPR_BUGGY, r->exe);
    }
    return rc < 0 ? fail(r->err) : 0;
}

/* The normal side may be another build of the program: only with --force,
 * and then functions and variables meet by name. */
static int load_normal(struct report *r)
{
    int rc = load_side(r, VPR_NORMAL, r->exe);
    if (rc == -1) return fail(r->err);
    if (rc == 0) return 0;
    char exe_n[4096] = "";
    char *en = vpr_first_exe(r->c->dirs[VPR_NORMAL][0], r->err, sizeof r->err);
    if (en) { snprintf(exe_n, sizeof exe_n, "%s", en); free(en); }
    if (!exe_n[0] || !r->o->force) {
        fprintf(stderr, "vprof-report: the normal runs are of another executable "
                "(%s) than the buggy runs (%s); use --force to compare them anyway\n",
                exe_n[0] ? exe_n : "?", r->exe);
        return 1;
    }
    if (!r->o->quiet)
        fprintf(stderr, "vprof-report: warning: executables differ (%s vs %s); "
                "--force: comparing by function and variable names\n", exe_n, r->exe);
    return load_side(r, VPR_NORMAL, exe_n) < 0 ? fail(r->err) : 0;
}

/* The hist-discounter's own runs: the same executable, costs only. */
static int load_hist(struct report *r)
{
    for (int s = 0; s < 2; s++) {
        size_t oth = 0;
        if (!r->c->n_hist_dirs[s]) continue;
        int rc = vpr_side_load(r->c->hist_dirs[s], r->c->n_hist_dirs[s], r->o->per_pid, r->exe,
                               &r->hsides[s], &oth, r->err, sizeof r->err);
        if (rc == -2) {
            fprintf(stderr, "vprof-report: --hist-%s: the runs are of another executable "
                    "than %s\n", s ? "buggy" : "normal", r->exe);
            return 1;
        }
        if (rc < 0) return fail(r->err);
    }
    return 0;
}

/* The model: symbols, lines and schema of the executable; then every
 * layout's build-id must be the executable's. */
static int init_model(struct report *r)
{
    const char *path = r->o->exe ? r->o->exe : r->exe;
    if (vpr_model_init(&r->m, r->o, path, r->sides[0].n, r->sides[1].n, r->hsides[0].n,
                       r->hsides[1].n, r->err, sizeof r->err) < 0)
        return fail(r->err);
    r->have_model = 1;
    if (vpr_check_build_ids(r->sides, &r->m.sym, r->o)) return 1;
    for (int s = 0; s < 2; s++) {       /* each hist side against the main runs */
        if (!r->hsides[s].n) continue;
        struct vpr_side pair[2] = {r->sides[VPR_NORMAL], r->hsides[s]};
        if (vpr_check_build_ids(pair, &r->m.sym, r->o)) return 1;
    }
    return 0;
}

/* One process: its files into the model, and what they held into
 * p->found (the differences of the side's counters). */
static int scan_one(struct report *r, int s, size_t k, struct vpr_proc *p)
{
    const struct vpr_side_stats before = r->m.st[s], *now = &r->m.st[s];
    uint64_t lat_before = r->m.lat ? r->m.lat->events[s] : 0;
    if (vpr_scan_process(&r->m, s, k, p, r->err, sizeof r->err) < 0 ||
        vpr_lat_load(&r->m, s, k, &r->sides[s].runs[k], p, r->err, sizeof r->err) < 0)
        return fail(r->err);
    p->found.values = now->value_samples - before.value_samples;
    p->found.unknown = now->unknown_var - before.unknown_var;
    p->found.unknown_id = now->unknown_id;
    p->found.gmon_used = now->gmon_files > before.gmon_files;
    p->found.gmon_ticks = now->gmon_ticks - before.gmon_ticks;
    p->found.gmon_arcs = now->gmon_arcs - before.gmon_arcs;
    p->found.lat_events = (r->m.lat ? r->m.lat->events[s] : 0) - lat_before;
    return 0;
}

/* Every process of both sides, normal first (the buggy pass needs the
 * normal ranges); then whether that is enough to compare. */
static int scan_all(struct report *r)
{
    for (int s = 0; s < 2; s++)
        for (size_t k = 0; k < r->sides[s].n; k++)
            for (size_t p = 0; p < r->sides[s].runs[k].n; p++)
                if (scan_one(r, s, k, &r->sides[s].runs[k].procs[p])) return 1;
    if (vpr_check_data(r->sides, r->o)) return 1;
    for (int s = 0; s < 2; s++)           /* after the main runs: costs only */
        for (size_t k = 0; k < r->hsides[s].n; k++) {
            struct vpr_run *run = &r->hsides[s].runs[k];
            for (size_t p = 0; p < run->n; p++)
                if (vpr_scan_process(&r->m, s, r->m.n_runs[s] + k, &run->procs[p], r->err,
                                     sizeof r->err) < 0)
                    return fail(r->err);
        }
    if (!r->o->quiet && (r->other[0] || r->other[1]))
        fprintf(stderr, "vprof-report: note: %zu process(es) of other executables ignored\n",
                r->other[0] + r->other[1]);
    return 0;
}

/* Calling contexts from the runs' stack samples (ctx_rank.h), when every
 * run has them. */
static int load_contexts(struct report *r)
{
    const char *path = r->o->exe ? r->o->exe : r->exe;
    if (vpr_mctx_load(&r->m, r->sides, path, r->o->exe, r->m.ctx_note, sizeof r->m.ctx_note,
                      r->err, sizeof r->err) < 0)
        return fail(r->err);
    return 0;
}

/* --rank blame: a second pass over the buggy processes, after attribution;
 * blame is averaged over the buggy runs like every other cost. */
static int blame_pass(struct report *r)
{
    const struct vpr_side *b = &r->sides[VPR_BUGGY];
    for (size_t k = 0; k < b->n; k++)
        for (size_t p = 0; p < b->runs[k].n; p++)
            if (vpr_blame_process(&r->m, k, &b->runs[k].procs[p], r->err, sizeof r->err) < 0)
                return fail(r->err);
    for (size_t i = 0; i < r->m.n_f; i++) {
        r->m.f[i].blamed /= (double)b->n;
        r->m.f[i].blamed_raw /= (double)b->n;
    }
    return 0;
}

static int analyse(struct report *r)
{
    struct vpr_model *m = &r->m;
    if (!m->lat && (r->o->timeline || r->o->trace)) {
        fprintf(stderr, "vprof-report: --timeline/--trace: no latency.<id> files in the "
                "run directories (build with vprof-cc --latency, run with VPROF_LATENCY=1)\n");
        return 1;
    }
    vpr_lat_analyse(m);
    vpr_discount_vars(m);
    vpr_arcs_analyse(m);
    vpr_attribute(m);
    if (r->o->rank == VPR_RANK_BLAME && blame_pass(r)) return 1;
    vpr_rank_functions(m);
    vpr_patterns(m, 5);
    return 0;
}

static int write_outputs(struct report *r)
{
    const struct vpr_opts *o = r->o;
    int rc = 0;
    if (o->timeline) rc = vpr_out_timeline(stdout, &r->m, o->timeline_req);
    else if (o->json) vpr_out_json(stdout, &r->m);
    else { vpr_out_text(stdout, &r->m); vpr_lat_text(stdout, &r->m); }
    if (o->trace && vpr_out_trace(o->trace, &r->m, r->err, sizeof r->err) < 0)
        rc = fail(r->err);
    if (o->html && vpr_out_html(o->html, &r->m, r->err, sizeof r->err) < 0)
        rc = fail(r->err);
    return rc;
}

static int report_mode(const struct vpr_cli *c)
{
    struct report r;
    memset(&r, 0, sizeof r);
    r.c = c;
    r.o = &c->o;
    int rc = load_buggy(&r);
    if (!rc) rc = load_normal(&r);
    if (!rc) rc = load_hist(&r);
    if (!rc) rc = init_model(&r);
    if (!rc) rc = scan_all(&r);
    if (!rc) rc = load_contexts(&r);
    if (!rc) rc = analyse(&r);
    if (!rc) rc = write_outputs(&r);
    if (r.have_model) vpr_model_free(&r.m);
    vpr_side_free(&r.sides[VPR_NORMAL]);
    vpr_side_free(&r.sides[VPR_BUGGY]);
    vpr_side_free(&r.hsides[VPR_NORMAL]);
    vpr_side_free(&r.hsides[VPR_BUGGY]);
    free(r.exe);
    return rc;
}

/* GSL aborts on an error by default. Its allocations follow the tools'
 * policy (vprof_xalloc.h); any other error is a bug of ours, reported. */
static void gsl_failed(const char *reason, const char *file, int line, int gsl_errno)
{
    if (gsl_errno == GSL_ENOMEM) vpf_oom();
    fprintf(stderr, "vprof-report: internal error in GSL (%s:%d): %s\n", file, line, reason);
    exit(1);
}

int main(int argc, char **argv)
{
    gsl_set_error_handler(gsl_failed);
    /* --variance and --waits are modes of their own with their own options */
    for (int i = 1; i < argc && strcmp(argv[i], "--"); i++) {
        if (!strcmp(argv[i], "--variance")) return vpr_variance_main(argc, argv);
        if (!strcmp(argv[i], "--waits")) return vpr_waits_main(argc, argv);
        if (!strcmp(argv[i], "--contexts")) return vpr_contexts_main(argc, argv);
    }
    struct vpr_cli c;
    int rc = vpr_cli_parse(argc, argv, &c);
    if (rc < 0) {
        if (c.mode == VPR_MODE_AD_TEST) rc = ad_test_mode(c.args[0], c.args[1]);
        else if (c.mode == VPR_MODE_GPROF)
            rc = vpr_gprof_main(c.args[0], c.n_args > 1 ? c.args + 1 : NULL,
                                c.n_args > 1 ? (size_t)(c.n_args - 1) : 0, stdout);
        else rc = report_mode(&c);
    }
    vpr_cli_free(&c);
    return rc;
}
