/* variance_main.c - vprof-report --variance: options, reading the run
 * directories (one run, or normal and buggy runs), the walk and the tree
 * (variance_walk.c, variance_tree.c), the call graph for the refinement
 * advice, and the outputs (out_variance*.c). See docs/vprof-report.md,
 * "Variance". */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "vprof_xalloc.h"
#include "hist_assign.h"
#include "variance.h"
#include "demangle.h"

static void usage(FILE *o)
{
    fputs("usage: vprof-report --variance [options] RUN_DIR\n"
          "       vprof-report --variance [options] NORMAL_DIR BUGGY_DIR\n"
          "       vprof-report --variance [options] --normal DIR... --buggy DIR...\n"
          "options:\n"
          "  --factors K           top factors reported (3)\n"
          "  --min-contribution D  a factor must explain more than this fraction of\n"
          "                        the variance (0.05)\n"
          "  --inherent-r2 R       a factor is inherent when the request's work\n"
          "                        explains at least this share of its variance (0.5)\n"
          "  --root FUNC           intervals are FUNC's calls instead of requests\n"
          "  --work-var [FUNC:]NAME  an interval's work is the largest value of this\n"
          "                        sampled variable in it (default: vprof_req_work)\n"
          "  --edge-depth N        wake-up/hand-off edges followed from one wait (4)\n"
          "  --show S              smallest variance share printed in the tree (0.01)\n"
          "  --export FILE         every interval's time per node (text)\n"
          "  --plain-selection     keep factors that only repeat a selected one below them\n"
          "  --exe PATH, --json, --html FILE, --force, --no-demangle, -q/--quiet as for\n"
          "                        the ranking\n", o);
}

static int num_opt(const char *opt, const char *s, double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    double x = strtod(s, &end);
    if (errno || end == s || *end || !(x >= lo && x <= hi)) {
        fprintf(stderr, "vprof-report: %s: '%s' is not a number in [%g, %g]\n", opt, s, lo, hi);
        return -1;
    }
    *out = x;
    return 0;
}

/* Callees of every function from the gmon arcs of all processes (for the
 * "open next" advice); empty when no gmon file was written. */
static void load_callgraph(struct vpr_model *m, struct vpr_side *sides, struct vpr_vnext *nx)
{
    size_t n = 0, cap = 0;
    struct { long a, b; } *e = NULL;
    for (int s = 0; s < 2; s++)
        for (size_t r = 0; r < sides[s].n; r++)
            for (size_t p = 0; p < sides[s].runs[r].n; p++) {
                const struct vpr_proc *pr = &sides[s].runs[r].procs[p];
                struct vpf_gmon g;
                vpf_err err;
                if (!pr->gmon_path || vpf_gmon_load(pr->gmon_path, &g, &err) < 0) continue;
                uint64_t bias = vpr_gmon_bias(&g, &m->sym, m->sym.is_pie ? pr->layout.load_bias : 0, 1);
                for (size_t i = 0; i < g.n_arcs; i++) {
                    long a = vpr_sym_find(&m->sym, g.arcs[i].from_pc - bias);
                    long b = vpr_sym_find(&m->sym, g.arcs[i].self_pc - bias);
                    if (a < 0 || b < 0 || a == b) continue;
                    if (n == cap) { cap = cap ? 2 * cap : 256; e = vpf_xrealloc(e, cap, sizeof *e); }
                    e[n].a = a;
                    e[n++].b = b;
                }
                vpf_gmon_free(&g);
            }
    nx->n_f = m->n_f;
    nx->n_callee = vpf_xcalloc(m->n_f + 1, sizeof *nx->n_callee);
    nx->off = vpf_xcalloc(m->n_f + 1, sizeof *nx->off);
    nx->callee = vpf_xmalloc((n + 1) * sizeof *nx->callee);
    for (size_t i = 0; i < n; i++) nx->n_callee[e[i].a]++;
    for (size_t f = 1; f <= m->n_f; f++) nx->off[f] = nx->off[f - 1] + nx->n_callee[f - 1];
    size_t *fill = vpf_xcalloc(m->n_f + 1, sizeof *fill);
    for (size_t i = 0; i < n; i++) {
        size_t a = (size_t)e[i].a, k;
        for (k = 0; k < fill[a]; k++)           /* duplicates (several runs) */
            if (nx->callee[nx->off[a] + k] == e[i].b) break;
        if (k == fill[a]) nx->callee[nx->off[a] + fill[a]++] = e[i].b;
    }
    for (size_t f = 0; f < m->n_f; f++) nx->n_callee[f] = fill[f];
    free(fill);
    free(e);
}

static void write_nodes(FILE *o, const struct vpr_variance *v)
{
    static const char *tn[VT_N] = {"root", "func", "body", "mutex", "cond", "syscall",
                                   "queued", "unexplained", "sem", "join", "spin",
                                   "rwlock", "barrier"};
    for (size_t i = 0; i < v->n_nodes; i++) {
        char nm[512];
        vpr_vnode_name(v, (uint32_t)i, nm, sizeof nm);
        fprintf(o, "node %zu %ld %s %u %s\n", i,
                v->nodes[i].parent == UINT32_MAX ? -1L : (long)v->nodes[i].parent,
                tn[v->nodes[i].type], v->nodes[i].depth, nm);
    }
}

enum { O_NORMAL = 300, O_BUGGY, O_EXE, O_JSON, O_HTML, O_FORCE, O_K, O_D, O_R2, O_ROOT,
       O_DEPTH, O_SHOW, O_EXPORT, O_VAR, O_PLAIN, O_NODM, O_WORKVAR };

/* The command line of --variance. */
struct vcli {
    struct vpr_vopts vo;
    struct vpr_opts mo;         /* the model's options: the ranking's defaults, --exe */
    char **dirs[2];             /* normal, buggy run directories */
    size_t nd[2];
    int json, force, quiet;
    const char *html;
};

/* Takes option c (getopt_long's code; its argument in optarg). -1 to go
 * on, or the exit status: 2 for a bad value, 0 after --help. */
static int take_option(struct vcli *cl, int c)
{
    double x;
    switch (c) {
    case O_VAR: break;
    case O_NORMAL: cl->dirs[0][cl->nd[0]++] = optarg; break;
    case O_BUGGY: cl->dirs[1][cl->nd[1]++] = optarg; break;
    case O_EXE: cl->mo.exe = optarg; break;
    case O_JSON: cl->json = 1; break;
    case O_HTML: cl->html = optarg; break;
    case O_FORCE: cl->force = 1; break;
    case O_K: if (num_opt("--factors", optarg, 1, 16, &x)) return 2; cl->vo.k = (int)x; break;
    case O_D: if (num_opt("--min-contribution", optarg, 0, 1, &cl->vo.d)) return 2; break;
    case O_R2: if (num_opt("--inherent-r2", optarg, 0, 1, &cl->vo.inherent_r2)) return 2; break;
    case O_DEPTH: if (num_opt("--edge-depth", optarg, 0, 16, &x)) return 2; cl->vo.depth = (int)x; break;
    case O_SHOW: if (num_opt("--show", optarg, 0, 1, &cl->vo.show)) return 2; break;
    case O_ROOT: cl->vo.root = optarg; break;
    case O_EXPORT: cl->vo.export_path = optarg; break;
    case O_PLAIN: cl->vo.plain = 1; break;
    case O_WORKVAR:
        if (!*optarg || optarg[strlen(optarg) - 1] == ':') {
            fprintf(stderr, "vprof-report: --work-var: '%s' is not NAME or FUNC:NAME\n", optarg);
            return 2;
        }
        cl->vo.work_var = optarg;
        break;
    case O_NODM: vpr_demangle_enable(0); break;
    case 'q': cl->quiet = 1; break;
    case 'h': usage(stdout); return 0;
    default: usage(stderr); return 2;
    }
    return -1;
}

/* The directories after the options: one run (the buggy side, analysed
 * alone), or as many normal as buggy ones. 0, or 2 with a message. */
static int place_dirs(struct vcli *cl, int rest, char **argv)
{
    if (rest && (cl->nd[0] || cl->nd[1])) {
        fprintf(stderr, "vprof-report: --variance: give directories either positionally or "
                "with --normal/--buggy\n");
        return 2;
    }
    if (rest == 1) cl->dirs[1][cl->nd[1]++] = argv[0];
    else if (rest) {
        if (rest % 2) {
            fprintf(stderr, "vprof-report: --variance: give one run directory, or as many "
                    "normal as buggy ones\n");
            return 2;
        }
        for (int i = 0; i < rest; i++) cl->dirs[i >= rest / 2][cl->nd[i >= rest / 2]++] = argv[i];
    }
    if (!cl->nd[1]) {
        fprintf(stderr, "vprof-report: --variance: no run directory%s\n",
                cl->nd[0] ? " on the buggy side" : "");
        usage(stderr);
        return 2;
    }
    return 0;
}

/* Fills cl from argv. -1 to go on, or the exit status. */
static int parse_options(struct vcli *cl, int argc, char **argv)
{
    static const struct option lo[] = {
        {"variance", 0, 0, O_VAR}, {"normal", 1, 0, O_NORMAL}, {"buggy", 1, 0, O_BUGGY},
        {"exe", 1, 0, O_EXE}, {"json", 0, 0, O_JSON}, {"html", 1, 0, O_HTML},
        {"force", 0, 0, O_FORCE}, {"factors", 1, 0, O_K}, {"min-contribution", 1, 0, O_D},
        {"inherent-r2", 1, 0, O_R2}, {"root", 1, 0, O_ROOT}, {"edge-depth", 1, 0, O_DEPTH},
        {"show", 1, 0, O_SHOW}, {"export", 1, 0, O_EXPORT}, {"quiet", 0, 0, 'q'},
        {"plain-selection", 0, 0, O_PLAIN}, {"no-demangle", 0, 0, O_NODM},
        {"work-var", 1, 0, O_WORKVAR},
        {"help", 0, 0, 'h'}, {0, 0, 0, 0}};
    int c, st;
    optind = 1;
    while ((c = getopt_long(argc, argv, "qh", lo, NULL)) != -1)
        if ((st = take_option(cl, c)) >= 0) return st;
    st = place_dirs(cl, argc - optind, argv + optind);
    return st ? st : -1;
}

/* What one --variance analysis holds, step by step. */
struct vrun {
    const struct vcli *c;
    char *exe;                  /* the executable the buggy runs recorded, or --exe */
    struct vpr_side sides[2];
    struct vpr_model m;
    int have_model;
    struct vpr_variance v;
    struct vpr_vnext nx;        /* callees, for the "open next" advice */
    char err[1024];
};

static int fail(const char *msg)
{
    fprintf(stderr, "vprof-report: %s\n", msg);
    return 1;
}

/* The run directories of both sides, which must be of one build unless
 * --force. */
static int load_runs(struct vrun *r)
{
    const struct vcli *c = r->c;
    r->exe = c->mo.exe ? vpf_xstrdup(c->mo.exe) : vpr_first_exe(c->dirs[1][0], r->err, sizeof r->err);
    if (!r->exe) return fail(r->err);
    for (int s = 1; s >= 0; s--) {
        size_t other;
        if (c->nd[s] && vpr_side_load(c->dirs[s], c->nd[s], 0, r->exe, &r->sides[s], &other,
                                      r->err, sizeof r->err) < 0)
            return fail(r->err);
    }
    if (!c->nd[0]) return 0;
    const char *a = r->sides[0].runs[0].procs[0].layout.build_id,
               *b = r->sides[1].runs[0].procs[0].layout.build_id;
    if (a && b && *a && *b && strcmp(a, b) && !c->force) {
        snprintf(r->err, sizeof r->err, "build-id differs between normal (%s) and buggy (%s) "
                 "runs of %s; use --force to compare them anyway", a, b, r->exe);
        return fail(r->err);
    }
    return 0;
}

/* The model (symbols) and every process's latency events. */
static int load_latency(struct vrun *r)
{
    struct vpr_model *m = &r->m;
    if (vpr_model_init(m, &r->c->mo, r->exe, r->sides[0].n, r->sides[1].n, 0, 0, r->err,
                       sizeof r->err) < 0)
        return fail(r->err);
    r->have_model = 1;
    for (int s = 0; s < 2; s++)
        for (size_t k = 0; k < r->sides[s].n; k++) {
            struct vpr_run *run = &r->sides[s].runs[k];
            for (size_t p = 0; p < run->n; p++)
                if (vpr_lat_load(m, s, k, run, &run->procs[p], r->err, sizeof r->err) < 0)
                    return fail(r->err);
        }
    if (!m->lat || !(m->lat->events[0] + m->lat->events[1]))
        return fail("--variance: no latency events in the run directories "
                    "(build with vprof-cc --latency, run with VPROF_LATENCY=1)");
    return 0;
}

/* The analysis's settings: --root's function, the sides, the --export
 * file opened. */
static int setup(struct vrun *r)
{
    const struct vpr_vopts *vo = &r->c->vo;
    struct vpr_variance *v = &r->v;
    v->m = &r->m;
    v->o = vo;
    v->root_f = -1;
    v->rank_side = 1;
    if (vo->root && (v->root_f = vpr_sym_by_name(&r->m.sym, vo->root)) < 0) {
        snprintf(r->err, sizeof r->err, "--root: %s is not a function of %s", vo->root, r->exe);
        return fail(r->err);
    }
    for (int s = 0; s < 2; s++) {
        v->side[s].runs = r->sides[s].n;
        v->side[s].limited = r->m.lat->funcs_limited[s];
    }
    if (!vo->export_path) return 0;
    if (!(v->export_f = fopen(vo->export_path, "w"))) {
        snprintf(r->err, sizeof r->err, "%s: cannot write: %s", vo->export_path, strerror(errno));
        return fail(r->err);
    }
    fputs("# vprof variance export 1\n", v->export_f);
    return 0;
}

/* Walks every interval into the tree and computes it (variances,
 * factors); at least one interval of the buggy side is needed. */
static int compute(struct vrun *r)
{
    const struct vcli *c = r->c;
    struct vpr_variance *v = &r->v;
    if (c->vo.work_var && vpr_vwork_load(v, r->sides, r->err, sizeof r->err) < 0)
        return fail(r->err);
    if (vpr_vwalk_all(v, r->err, sizeof r->err) < 0) return fail(r->err);
    if (v->side[1].n < 2 && !c->quiet)
        fprintf(stderr, "vprof-report: warning: %s: %llu %s; a variance needs at least 2\n",
                c->nd[0] ? "buggy runs" : "the run", (unsigned long long)v->side[1].n,
                c->vo.root ? "calls" : "complete requests");
    if (!v->side[1].n) {
        snprintf(r->err, sizeof r->err, "--variance: no %s in %s%s",
                 c->vo.root ? "call of --root" :
                 "complete request (vprof_req_start ... vprof_req_end)", c->dirs[1][0],
                 c->vo.root ? "" : "; --root FUNC analyses the calls of one function instead");
        return fail(r->err);
    }
    vpr_vtree_finish(v);
    if (v->overflow) {
        snprintf(r->err, sizeof r->err, "--variance: %llu intervals of up to %llu ns are too "
                 "many for exact 128-bit sums", (unsigned long long)v->side[1].n,
                 (unsigned long long)v->side[1].max_lat);
        return fail(r->err);
    }
    return 0;
}

/* The --export file's node list, and the file closed. */
static int finish_export(struct vrun *r)
{
    struct vpr_variance *v = &r->v;
    if (!v->export_f) return 0;
    write_nodes(v->export_f, v);
    int bad = fclose(v->export_f);
    v->export_f = NULL;
    if (!bad) return 0;
    snprintf(r->err, sizeof r->err, "%s: write error", r->c->vo.export_path);
    return fail(r->err);
}

/* Text or JSON on stdout, and the HTML page. */
static int print_outputs(struct vrun *r)
{
    const struct vcli *c = r->c;
    struct vpr_variance *v = &r->v;
    load_callgraph(&r->m, r->sides, &r->nx);
    if (!c->quiet && v->side[1].incomplete)
        fprintf(stderr, "vprof-report: note: %llu request(s) without a start or an end left out\n",
                (unsigned long long)(v->side[0].incomplete + v->side[1].incomplete));
    if (c->json) vpr_vout_json(stdout, v, &r->nx);
    else vpr_vout_text(stdout, v, &r->nx);
    if (c->html && vpr_vout_html(c->html, v, r->err, sizeof r->err) < 0) return fail(r->err);
    return 0;
}

static void free_run(struct vrun *r)
{
    if (r->v.export_f) fclose(r->v.export_f);
    vpr_variance_free(&r->v);
    free(r->nx.callee);
    free(r->nx.n_callee);
    free(r->nx.off);
    if (r->have_model) vpr_model_free(&r->m);
    for (int s = 0; s < 2; s++)
        if (r->sides[s].runs) vpr_side_free(&r->sides[s]);
    free(r->exe);
}

int vpr_variance_main(int argc, char **argv)
{
    struct vcli cl = {
        .vo = {.k = 3, .d = 0.05, .inherent_r2 = 0.5, .show = 0.01, .depth = 4},
        .mo = {.default_discount = 0.8, .valid_discount = 0.1, .pvalue = 0.05, .top = 10,
               .reservoir = 4096, .bins = 32, .progress = 0},
        .dirs = {vpf_xcalloc((size_t)argc + 1, sizeof(char *)),
                 vpf_xcalloc((size_t)argc + 1, sizeof(char *))},
    };
    int rc = parse_options(&cl, argc, argv);
    if (rc < 0) {
        struct vrun r;
        memset(&r, 0, sizeof r);
        r.c = &cl;
        rc = load_runs(&r);
        if (!rc) rc = load_latency(&r);
        if (!rc) rc = setup(&r);
        if (!rc) rc = compute(&r);
        if (!rc) rc = finish_export(&r);
        if (!rc) rc = print_outputs(&r);
        free_run(&r);
    }
    free(cl.dirs[0]);
    free(cl.dirs[1]);
    return rc;
}
