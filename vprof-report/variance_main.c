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

int vpr_variance_main(int argc, char **argv)
{
    struct vpr_vopts vo = {.k = 3, .d = 0.05, .inherent_r2 = 0.5, .show = 0.01, .depth = 4};
    struct vpr_opts mo = {.default_discount = 0.8, .valid_discount = 0.1, .pvalue = 0.05,
                          .top = 10, .reservoir = 4096, .bins = 32, .progress = 0};
    static const struct option lo[] = {
        {"variance", 0, 0, O_VAR}, {"normal", 1, 0, O_NORMAL}, {"buggy", 1, 0, O_BUGGY},
        {"exe", 1, 0, O_EXE}, {"json", 0, 0, O_JSON}, {"html", 1, 0, O_HTML},
        {"force", 0, 0, O_FORCE}, {"factors", 1, 0, O_K}, {"min-contribution", 1, 0, O_D},
        {"inherent-r2", 1, 0, O_R2}, {"root", 1, 0, O_ROOT}, {"edge-depth", 1, 0, O_DEPTH},
        {"show", 1, 0, O_SHOW}, {"export", 1, 0, O_EXPORT}, {"quiet", 0, 0, 'q'},
        {"plain-selection", 0, 0, O_PLAIN}, {"no-demangle", 0, 0, O_NODM},
        {"work-var", 1, 0, O_WORKVAR},
        {"help", 0, 0, 'h'}, {0, 0, 0, 0}};
    char **dirs[2] = {vpf_xcalloc((size_t)argc + 1, sizeof(char *)), vpf_xcalloc((size_t)argc + 1, sizeof(char *))};
    size_t nd[2] = {0, 0};
    int json = 0, force = 0, quiet = 0, c;
    const char *html = NULL;
    double x;
    optind = 1;
    while ((c = getopt_long(argc, argv, "qh", lo, NULL)) != -1) {
        switch (c) {
        case O_VAR: break;
        case O_NORMAL: dirs[0][nd[0]++] = optarg; break;
        case O_BUGGY: dirs[1][nd[1]++] = optarg; break;
        case O_EXE: mo.exe = optarg; break;
        case O_JSON: json = 1; break;
        case O_HTML: html = optarg; break;
        case O_FORCE: force = 1; break;
        case O_K: if (num_opt("--factors", optarg, 1, 16, &x)) return 2; vo.k = (int)x; break;
        case O_D: if (num_opt("--min-contribution", optarg, 0, 1, &vo.d)) return 2; break;
        case O_R2: if (num_opt("--inherent-r2", optarg, 0, 1, &vo.inherent_r2)) return 2; break;
        case O_DEPTH: if (num_opt("--edge-depth", optarg, 0, 16, &x)) return 2; vo.depth = (int)x; break;
        case O_SHOW: if (num_opt("--show", optarg, 0, 1, &vo.show)) return 2; break;
        case O_ROOT: vo.root = optarg; break;
        case O_EXPORT: vo.export_path = optarg; break;
        case O_PLAIN: vo.plain = 1; break;
        case O_WORKVAR:
            if (!*optarg || optarg[strlen(optarg) - 1] == ':') {
                fprintf(stderr, "vprof-report: --work-var: '%s' is not NAME or FUNC:NAME\n", optarg);
                return 2;
            }
            vo.work_var = optarg;
            break;
        case O_NODM: vpr_demangle_enable(0); break;
        case 'q': quiet = 1; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    int rest = argc - optind;
    if (rest && (nd[0] || nd[1])) {
        fprintf(stderr, "vprof-report: --variance: give directories either positionally or "
                "with --normal/--buggy\n");
        return 2;
    }
    if (rest == 1) dirs[1][nd[1]++] = argv[optind];    /* one run: analysed alone */
    else if (rest) {
        if (rest % 2) {
            fprintf(stderr, "vprof-report: --variance: give one run directory, or as many "
                    "normal as buggy ones\n");
            return 2;
        }
        for (int i = 0; i < rest; i++) dirs[i >= rest / 2][nd[i >= rest / 2]++] = argv[optind + i];
    }
    if (!nd[1]) {
        fprintf(stderr, "vprof-report: --variance: no run directory%s\n",
                nd[0] ? " on the buggy side" : "");
        usage(stderr);
        return 2;
    }

    char err[1024];
    int rc = 1;
    char *exe = mo.exe ? vpf_xstrdup(mo.exe) : vpr_first_exe(dirs[1][0], err, sizeof err);
    struct vpr_side sides[2] = {{0}, {0}};
    struct vpr_model m;
    memset(&m, 0, sizeof m);
    struct vpr_variance v;
    memset(&v, 0, sizeof v);
    struct vpr_vnext nx = {0};
    int have_model = 0;
    if (!exe) goto fail;
    for (int s = 1; s >= 0; s--) {
        size_t other;
        if (nd[s] && vpr_side_load(dirs[s], nd[s], 0, exe, &sides[s], &other, err, sizeof err) < 0)
            goto fail;
    }
    if (nd[0]) {
        const char *a = sides[0].runs[0].procs[0].layout.build_id,
                   *b = sides[1].runs[0].procs[0].layout.build_id;
        if (a && b && *a && *b && strcmp(a, b) && !force) {
            snprintf(err, sizeof err, "build-id differs between normal (%s) and buggy (%s) "
                     "runs of %s; use --force to compare them anyway", a, b, exe);
            goto fail;
        }
    }
    if (vpr_model_init(&m, &mo, exe, sides[0].n, sides[1].n, 0, 0, err, sizeof err) < 0) goto fail;
    have_model = 1;
    for (int s = 0; s < 2; s++)
        for (size_t r = 0; r < sides[s].n; r++)
            for (size_t p = 0; p < sides[s].runs[r].n; p++)
                if (vpr_lat_load(&m, s, r, &sides[s].runs[r], &sides[s].runs[r].procs[p],
                                 err, sizeof err) < 0)
                    goto fail;
    if (!m.lat || !(m.lat->events[0] + m.lat->events[1])) {
        snprintf(err, sizeof err, "--variance: no latency events in the run directories "
                 "(build with vprof-cc --latency, run with VPROF_LATENCY=1)");
        goto fail;
    }
    v.m = &m;
    v.o = &vo;
    v.root_f = -1;
    v.rank_side = 1;
    if (vo.root && (v.root_f = vpr_sym_by_name(&m.sym, vo.root)) < 0) {
        snprintf(err, sizeof err, "--root: %s is not a function of %s", vo.root, exe);
        goto fail;
    }
    for (int s = 0; s < 2; s++) {
        v.side[s].runs = sides[s].n;
        v.side[s].limited = m.lat->funcs_limited[s];
    }
    if (vo.export_path) {
        if (!(v.export_f = fopen(vo.export_path, "w"))) {
            snprintf(err, sizeof err, "%s: cannot write: %s", vo.export_path, strerror(errno));
            goto fail;
        }
        fputs("# vprof variance export 1\n", v.export_f);
    }
    if (vo.work_var && vpr_vwork_load(&v, sides, err, sizeof err) < 0) goto fail;
    if (vpr_vwalk_all(&v, err, sizeof err) < 0) goto fail;
    if (v.side[1].n < 2 && !quiet)
        fprintf(stderr, "vprof-report: warning: %s: %llu %s; a variance needs at least 2\n",
                nd[0] ? "buggy runs" : "the run", (unsigned long long)v.side[1].n,
                vo.root ? "calls" : "complete requests");
    if (!v.side[1].n) {
        snprintf(err, sizeof err, "--variance: no %s in %s%s", vo.root ? "call of --root" :
                 "complete request (vprof_req_start ... vprof_req_end)", dirs[1][0],
                 vo.root ? "" : "; --root FUNC analyses the calls of one function instead");
        goto fail;
    }
    vpr_vtree_finish(&v);
    if (v.overflow) {
        snprintf(err, sizeof err, "--variance: %llu intervals of up to %llu ns are too many "
                 "for exact 128-bit sums", (unsigned long long)v.side[1].n,
                 (unsigned long long)v.side[1].max_lat);
        goto fail;
    }
    if (v.export_f) {
        write_nodes(v.export_f, &v);
        if (fclose(v.export_f)) {
            v.export_f = NULL;
            snprintf(err, sizeof err, "%s: write error", vo.export_path);
            goto fail;
        }
        v.export_f = NULL;
    }
    load_callgraph(&m, sides, &nx);
    if (!quiet && v.side[1].incomplete)
        fprintf(stderr, "vprof-report: note: %llu request(s) without a start or an end left out\n",
                (unsigned long long)(v.side[0].incomplete + v.side[1].incomplete));
    if (json) vpr_vout_json(stdout, &v, &nx);
    else vpr_vout_text(stdout, &v, &nx);
    rc = 0;
    if (html && vpr_vout_html(html, &v, err, sizeof err) < 0) {
        fprintf(stderr, "vprof-report: %s\n", err);
        rc = 1;
    }
    goto done;
fail:
    fprintf(stderr, "vprof-report: %s\n", err);
done:
    if (v.export_f) fclose(v.export_f);
    vpr_variance_free(&v);
    free(nx.callee); free(nx.n_callee); free(nx.off);
    if (have_model) vpr_model_free(&m);
    for (int s = 0; s < 2; s++) if (sides[s].runs) vpr_side_free(&sides[s]);
    free(exe);
    free(dirs[0]);
    free(dirs[1]);
    return rc;
}
