/* waits_main.c - the --waits mode of vprof-report (docs/vprof-report.md
 * "Waits"): reads the run directories' latency events (or `perf script`
 * output of the scheduler's tracepoints), analyses each process as wPerf
 * does and prints text, JSON and/or an HTML page with the graph. main.c
 * hands it the whole command line when --waits is present. */
#include "vprof_xalloc.h"
#include "waits.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runs.h"
#include "demangle.h"

struct wopt {
    struct vpr_wopts w;
    const char *exe, *html, *perf;
    int json, top, quiet, timeline, perf_pid;
};

static void usage(FILE *o)
{
    fputs("usage: vprof-report --waits [options] RUN_DIR...\n"
          "       vprof-report --waits [options] --perf-script FILE\n"
          "options:\n"
          "  --exe PATH           executable (default: from the layout logs)\n"
          "  --perf-script FILE   `perf script` output of sched:sched_switch,\n"
          "                       sched:sched_waking and sched:sched_wakeup instead of\n"
          "                       latency events\n"
          "  --perf-pid PID       with --perf-script: only this process (for perf record -a)\n"
          "  --waits-keep R       refinement keeps edges weighing >= R x the observed\n"
          "                       time (0.2; 0 = stop only at a vertex or a simple cycle)\n"
          "  --waits-min R        leave out edges lighter than R x the observed time\n"
          "                       (0.01: noise)\n"
          "  --waits-timeline     print every waiting segment (tab-separated) instead\n"
          "  --waits-merge M      start: merge threads with the same start routine\n"
          "                       (default); none: one vertex per thread\n"
          "  --waits-depth N      cascade recursion bound (64)\n"
          "  --top N              edges detailed per knot (10; 0 = all)\n"
          "  --json               JSON instead of text\n"
          "  --html FILE          also write an HTML page with the graph (SVG)\n"
          "  --no-demangle        C++ names as linked (mangled), as gprof --no-demangle\n"
          "  -q, --quiet          no notes\n", o);
}

static int num(const char *opt, const char *s, double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !(v >= lo && v <= hi)) {
        fprintf(stderr, "vprof-report: %s: '%s' is not a number in [%g, %g]\n", opt, s, lo, hi);
        return -1;
    }
    *out = v;
    return 0;
}

static int parse(int argc, char **argv, struct wopt *o)
{
    enum { O_WAITS = 256, O_EXE, O_PERF, O_KEEP, O_MERGE, O_DEPTH, O_TOP, O_JSON, O_HTML,
           O_PROG, O_MIN, O_TL, O_PPID, O_NODM };
    static const struct option lo[] = {
        {"waits", 0, 0, O_WAITS}, {"exe", 1, 0, O_EXE}, {"perf-script", 1, 0, O_PERF},
        {"perf-pid", 1, 0, O_PPID},
        {"waits-keep", 1, 0, O_KEEP}, {"waits-min", 1, 0, O_MIN},
        {"waits-timeline", 0, 0, O_TL}, {"waits-merge", 1, 0, O_MERGE},
        {"waits-depth", 1, 0, O_DEPTH}, {"top", 1, 0, O_TOP}, {"json", 0, 0, O_JSON},
        {"html", 1, 0, O_HTML}, {"progress", 0, 0, O_PROG}, {"no-progress", 0, 0, O_PROG},
        {"no-demangle", 0, 0, O_NODM}, {"quiet", 0, 0, 'q'}, {"help", 0, 0, 'h'}, {0, 0, 0, 0}};
    int c;
    double x;
    optind = 1;
    while ((c = getopt_long(argc, argv, "qh", lo, NULL)) != -1) {
        switch (c) {
        case O_WAITS: case O_PROG: break;
        case O_EXE: o->exe = optarg; break;
        case O_PERF: o->perf = optarg; break;
        case O_PPID: if (num("--perf-pid", optarg, 1, 4194304, &x)) return -1; o->perf_pid = (int)x; break;
        case O_KEEP: if (num("--waits-keep", optarg, 0, 1e6, &o->w.keep)) return -1; break;
        case O_MIN: if (num("--waits-min", optarg, 0, 1, &o->w.min)) return -1; break;
        case O_TL: o->timeline = 1; break;
        case O_MERGE:
            if (!strcmp(optarg, "start")) o->w.merge = 1;
            else if (!strcmp(optarg, "none")) o->w.merge = 0;
            else {
                fprintf(stderr, "vprof-report: --waits-merge: '%s' is not start or none\n", optarg);
                return -1;
            }
            break;
        case O_DEPTH: if (num("--waits-depth", optarg, 1, 256, &x)) return -1; o->w.max_depth = (int)x; break;
        case O_TOP: if (num("--top", optarg, 0, 1e9, &x)) return -1; o->top = (int)x; break;
        case O_JSON: o->json = 1; break;
        case O_HTML: o->html = optarg; break;
        case O_NODM: vpr_demangle_enable(0); break;
        case 'q': o->quiet = 1; break;
        case 'h': usage(stdout); exit(0);
        default: usage(stderr); return -1;
        }
    }
    return 0;
}

static void analyse(struct vpr_wproc *p, const struct wopt *o)
{
    vpr_wait_graph(&p->tl, &o->w, &p->g);
    p->d = vpr_wait_details(&p->g);
}

static int emit(const struct wopt *o, struct vpr_model *m, struct vpr_wproc *p, size_t n)
{
    char err[1024];
    if (o->timeline) {
        for (size_t i = 0; i < n; i++) vpr_waits_timeline_tsv(stdout, m, &p[i]);
        return 0;
    }
    if (o->json) vpr_waits_json(stdout, m, p, n, o->top);
    else for (size_t i = 0; i < n; i++) { if (i) fputs("\n", stdout); vpr_waits_text(stdout, m, &p[i], o->top); }
    if (o->html && vpr_waits_html(o->html, m, p, n, o->top, err, sizeof err) < 0) {
        fprintf(stderr, "vprof-report: %s\n", err);
        return 1;
    }
    return 0;
}

static void free_procs(struct vpr_wproc *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        vpr_wait_details_free(p[i].d, p[i].g.n_e);
        vpr_wait_graph_free(&p[i].g);
        vpr_wait_timeline_free(&p[i].tl);
        free(p[i].input);
    }
    free(p);
}

static int perf_mode(const struct wopt *o)
{
    char err[1024];
    struct vpr_wtimeline *tls;
    size_t n;
    if (vpr_wait_perf_load(o->perf, o->perf_pid, &tls, &n, err, sizeof err) < 0) {
        fprintf(stderr, "vprof-report: %s\n", err);
        return 1;
    }
    if (!n) {
        fprintf(stderr, "vprof-report: %s: no waits%s\n", o->perf,
                o->perf_pid ? " of that process" : "");
        free(tls);
        return 1;
    }
    struct vpr_wproc *p = vpf_xcalloc(n, sizeof *p);
    for (size_t i = 0; i < n; i++) {
        p[i].tl = tls[i];
        p[i].input = vpf_xstrdup(o->perf);
        analyse(&p[i], o);
    }
    free(tls);
    int rc = emit(o, NULL, p, n);
    free_procs(p, n);
    return rc;
}

int vpr_waits_main(int argc, char **argv)
{
    struct wopt o = {.w = {.keep = 0.2, .min = 0.01, .merge = 1, .max_depth = 64}, .top = 10};
    if (parse(argc, argv, &o) < 0) return 2;
    int rest = argc - optind;
    if (o.perf) {
        if (rest) { fprintf(stderr, "vprof-report: --perf-script takes no run directories\n"); return 2; }
        return perf_mode(&o);
    }
    if (rest < 1) {
        fprintf(stderr, "vprof-report: --waits needs a run directory (or --perf-script FILE)\n");
        usage(stderr);
        return 2;
    }
    char err[1024];
    char **dirs = argv + optind;
    char *exe = o.exe ? vpf_xstrdup(o.exe) : vpr_first_exe(dirs[0], err, sizeof err);
    if (!exe) { fprintf(stderr, "vprof-report: %s\n", err); return 1; }
    struct vpr_side side;
    size_t other = 0;
    if (vpr_side_load(dirs, (size_t)rest, 1, exe, &side, &other, err, sizeof err) < 0) {
        fprintf(stderr, "vprof-report: %s\n", err[0] ? err : "no process of the executable");
        free(exe);
        return 1;
    }
    struct vpr_opts mo = {.default_discount = 0.8, .valid_discount = 0.1, .pvalue = 0.05,
                          .top = 10, .reservoir = 4096, .bins = 32, .quiet = o.quiet};
    struct vpr_model m;
    if (vpr_model_init(&m, &mo, exe, 0, side.n, 0, 0, err, sizeof err) < 0) {
        fprintf(stderr, "vprof-report: %s\n", err);
        vpr_side_free(&side);
        free(exe);
        return 1;
    }
    const struct vpr_proc **procs = NULL;
    const char **proc_dir = NULL;
    size_t np = 0, cap_procs = 0, cap_dirs = 0;
    int rc = 0;
    for (size_t r = 0; r < side.n && !rc; r++)
        for (size_t k = 0; k < side.runs[r].n && !rc; k++) {
            const struct vpr_proc *pr = &side.runs[r].procs[k];
            if (!pr->latency_path) continue;
            if (vpr_lat_load(&m, VPR_BUGGY, r, &side.runs[r], pr, err, sizeof err) < 0) {
                fprintf(stderr, "vprof-report: %s\n", err);
                rc = 1;
                break;
            }
            procs = vpf_grow(procs, &cap_procs, np + 1, sizeof *procs);
            proc_dir = vpf_grow(proc_dir, &cap_dirs, np + 1, sizeof *proc_dir);
            proc_dir[np] = side.runs[r].dir;
            procs[np++] = pr;
        }
    if (!rc && !np) {
        fprintf(stderr, "vprof-report: --waits: no latency.<id> files of %s in the run "
                "directories (build with vprof-cc --latency, run with VPROF_LATENCY=1; or "
                "give --perf-script FILE)\n", exe);
        rc = 1;
    }
    if (!rc && other && !o.quiet)
        fprintf(stderr, "vprof-report: note: %zu process(es) of other executables ignored\n", other);
    struct vpr_wproc *p = vpf_xcalloc(np, sizeof *p);
    for (size_t i = 0; i < np && !rc; i++) {
        vpr_wait_timeline(&m, &m.lat->procs[i], &p[i].tl);
        p[i].exe = exe;
        p[i].dir = proc_dir[i];
        p[i].input = vpf_xstrdup(procs[i]->latency_path);
        if (vpr_wait_samples(&m, &p[i].tl, procs[i], err, sizeof err) < 0) {
            fprintf(stderr, "vprof-report: %s\n", err);
            rc = 1;
            break;
        }
        analyse(&p[i], &o);
    }
    if (!rc) rc = emit(&o, &m, p, np);
    free_procs(p, np);
    free(procs);
    free(proc_dir);
    vpr_model_free(&m);
    vpr_side_free(&side);
    free(exe);
    return rc;
}
