/* main.c - vprof-report: options and the order of the steps. See
 * vprof-report.1 and docs/vprof-report.md. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ad_test.h"
#include "demangle.h"
#include "discount.h"
#include "gprof_mode.h"
#include "latency.h"
#include "model.h"
#include "output.h"
#include "pattern.h"
#include "runs.h"
#include "scan.h"

static void usage(FILE *o)
{
    fputs("usage: vprof-report [options] NORMAL_DIR... BUGGY_DIR...\n"
          "       vprof-report [options] --normal DIR... --buggy DIR...\n"
          "       vprof-report --gprof EXE GMON...\n"
          "       vprof-report --ad-test FILE_A FILE_B\n"
          "options:\n"
          "  --normal DIR / --buggy DIR  a run directory of that side (repeatable)\n"
          "  --exe PATH            executable to analyse (default: from the layout logs)\n"
          "  --default-discount R  ratio when the distributions agree (0.8)\n"
          "  --valid-discount R    ratios below this become 0 (0.1)\n"
          "  --pvalue P            Anderson-Darling significance level (0.05)\n"
          "  --top N               functions shown (10; 0 = all)\n"
          "  --per-pid             each process is its own profile\n"
          "  --force               analyse even if the executables differ\n"
          "  --json                JSON instead of text\n"
          "  --html FILE           also write a self-contained HTML report\n"
          "  --reservoir N         samples kept per variable/dimension/side (4096)\n"
          "  --bins N              Hellinger histogram bins (32)\n"
          "  --all-global-users    attribute a global to every function that sampled it,\n"
          "                        even when the schema lists its users (paper's rule)\n"
          "  --progress / --no-progress  progress on stderr (default: if a TTY)\n"
          "  --timeline REQ        per-thread timeline of request REQ (latency events)\n"
          "                        instead of the ranking\n"
          "  --trace FILE          also write every latency event as Chrome trace JSON\n"
          "  --no-demangle         C++ names as linked (mangled), as gprof --no-demangle\n"
          "  -q, --quiet           no warnings\n", o);
}

static int parse_double(const char *opt, const char *s, double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || *end || end == s || !(v >= lo && v <= hi)) {
        fprintf(stderr, "vprof-report: %s: '%s' is not a number in [%g, %g]\n", opt, s, lo, hi);
        return -1;
    }
    *out = v;
    return 0;
}

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
        if (*n == cap) { cap = cap ? 2 * cap : 256; *out = realloc(*out, cap * sizeof **out); }
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

enum { O_NORMAL = 256, O_BUGGY, O_EXE, O_DD, O_VD, O_P, O_TOP, O_PERPID, O_FORCE,
       O_JSON, O_HTML, O_GPROF, O_AD, O_RES, O_BINS, O_PROG, O_NOPROG, O_ALLGLOB,
       O_TIMELINE, O_TRACE, O_NODEMANGLE };

int main(int argc, char **argv)
{
    struct vpr_opts o = {.default_discount = 0.8, .valid_discount = 0.1,
                         .pvalue = 0.05, .top = 10, .reservoir = 4096, .bins = 32,
                         .progress = -1};
    static const struct option lo[] = {
        {"normal", 1, 0, O_NORMAL}, {"buggy", 1, 0, O_BUGGY}, {"exe", 1, 0, O_EXE},
        {"default-discount", 1, 0, O_DD}, {"valid-discount", 1, 0, O_VD},
        {"pvalue", 1, 0, O_P}, {"top", 1, 0, O_TOP}, {"per-pid", 0, 0, O_PERPID},
        {"force", 0, 0, O_FORCE}, {"json", 0, 0, O_JSON}, {"html", 1, 0, O_HTML},
        {"gprof", 0, 0, O_GPROF}, {"ad-test", 0, 0, O_AD}, {"reservoir", 1, 0, O_RES},
        {"bins", 1, 0, O_BINS}, {"progress", 0, 0, O_PROG}, {"no-progress", 0, 0, O_NOPROG},
        {"all-global-users", 0, 0, O_ALLGLOB},
        {"timeline", 1, 0, O_TIMELINE}, {"trace", 1, 0, O_TRACE},
        {"no-demangle", 0, 0, O_NODEMANGLE},
        {"quiet", 0, 0, 'q'}, {"help", 0, 0, 'h'}, {0, 0, 0, 0}};
    char **nd = calloc((size_t)argc, sizeof *nd), **bd = calloc((size_t)argc, sizeof *bd);
    size_t nn = 0, nb = 0;
    int gprof = 0, adt = 0, c;
    double x;
    while ((c = getopt_long(argc, argv, "qh", lo, NULL)) != -1) {
        switch (c) {
        case O_NORMAL: nd[nn++] = optarg; break;
        case O_BUGGY: bd[nb++] = optarg; break;
        case O_EXE: o.exe = optarg; break;
        case O_DD: if (parse_double("--default-discount", optarg, 0, 1, &o.default_discount)) return 2; break;
        case O_VD: if (parse_double("--valid-discount", optarg, 0, 1, &o.valid_discount)) return 2; break;
        case O_P: if (parse_double("--pvalue", optarg, 0, 1, &o.pvalue)) return 2; break;
        case O_TOP: if (parse_double("--top", optarg, 0, 1e9, &x)) return 2; o.top = (int)x; break;
        case O_RES: if (parse_double("--reservoir", optarg, 16, 1e8, &x)) return 2; o.reservoir = (size_t)x; break;
        case O_BINS: if (parse_double("--bins", optarg, 1, 1e6, &x)) return 2; o.bins = (size_t)x; break;
        case O_PERPID: o.per_pid = 1; break;
        case O_ALLGLOB: o.all_global_users = 1; break;
        case O_FORCE: o.force = 1; break;
        case O_JSON: o.json = 1; break;
        case O_HTML: o.html = optarg; break;
        case O_GPROF: gprof = 1; break;
        case O_AD: adt = 1; break;
        case O_PROG: o.progress = 1; break;
        case O_TIMELINE: {
            char *end;
            errno = 0;
            o.timeline_req = strtoull(optarg, &end, 0);
            if (errno || end == optarg || *end || *optarg == '-') {
                fprintf(stderr, "vprof-report: --timeline: '%s' is not a request id "
                        "(an unsigned integer)\n", optarg);
                return 2;
            }
            o.timeline = 1;
            break;
        }
        case O_TRACE: o.trace = optarg; break;
        case O_NODEMANGLE: vpr_demangle_enable(0); break;
        case O_NOPROG: o.progress = 0; break;
        case 'q': o.quiet = 1; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    int rest = argc - optind;
    if (adt || gprof) {
        free(nd);
        free(bd);
    }
    if (adt) {
        if (rest != 2) { usage(stderr); return 2; }
        return ad_test_mode(argv[optind], argv[optind + 1]);
    }
    if (gprof) {
        if (rest < 1) { usage(stderr); return 2; }
        return vpr_gprof_main(argv[optind], rest > 1 ? argv + optind + 1 : NULL,
                              rest > 1 ? (size_t)(rest - 1) : 0, stdout);
    }
    /* positional directories: first half normal, second half buggy */
    if (rest) {
        if (nn || nb || rest % 2) {
            fprintf(stderr, "vprof-report: give an even number of directories "
                    "(normal ones, then as many buggy ones), or use --normal/--buggy\n");
            return 2;
        }
        for (int i = 0; i < rest / 2; i++) nd[nn++] = argv[optind + i];
        for (int i = rest / 2; i < rest; i++) bd[nb++] = argv[optind + i];
    }
    if (!nn || !nb) {
        fprintf(stderr, "vprof-report: need at least one normal and one buggy run directory\n");
        usage(stderr);
        return 2;
    }

    char err[1024];
    /* exe: the executable path the layouts recorded, which selects the
     * processes; --exe is also where symbols come from, and may be a copy
     * of the program at another path */
    char *exe = o.exe ? strdup(o.exe) : vpr_first_exe(bd[0], err, sizeof err);
    if (!exe) { fprintf(stderr, "vprof-report: %s\n", err); return 1; }
    struct vpr_side sides[2];
    size_t other[2];
    int brc = vpr_side_load(bd, nb, o.per_pid, exe, &sides[1], &other[1], err, sizeof err);
    if (brc == -2 && o.exe) {
        free(exe);
        exe = vpr_first_exe(bd[0], err, sizeof err);
        if (!exe) { fprintf(stderr, "vprof-report: %s\n", err); return 1; }
        if (!o.quiet)
            fprintf(stderr, "vprof-report: note: the runs recorded %s; reading its "
                    "symbols from --exe %s\n", exe, o.exe);
        brc = vpr_side_load(bd, nb, o.per_pid, exe, &sides[1], &other[1], err, sizeof err);
    }
    if (brc < 0) {
        fprintf(stderr, "vprof-report: %s\n", err);
        return 1;
    }
    int lrc = vpr_side_load(nd, nn, o.per_pid, exe, &sides[0], &other[0], err, sizeof err);
    if (lrc == -1) {
        fprintf(stderr, "vprof-report: %s\n", err);
        return 1;
    }
    if (lrc == -2) {
        /* the normal side may be another build of the program */
        char exe_n[4096] = "";
        char *en = vpr_first_exe(nd[0], err, sizeof err);
        if (en) { snprintf(exe_n, sizeof exe_n, "%s", en); free(en); }
        if (!exe_n[0] || !o.force) {
            fprintf(stderr, "vprof-report: the normal runs are of another executable "
                    "(%s) than the buggy runs (%s); use --force to compare them anyway\n",
                    exe_n[0] ? exe_n : "?", exe);
            return 1;
        }
        if (!o.quiet)
            fprintf(stderr, "vprof-report: warning: executables differ (%s vs %s); "
                    "--force: comparing by function and variable names\n", exe_n, exe);
        if (vpr_side_load(nd, nn, o.per_pid, exe_n, &sides[0], &other[0], err, sizeof err) < 0) {
            fprintf(stderr, "vprof-report: %s\n", err);
            return 1;
        }
    }
    /* same path but rebuilt: compare build-ids recorded in the layouts */
    const char *bid_b = sides[1].runs[0].procs[0].layout.build_id;
    const char *bid_n = sides[0].runs[0].procs[0].layout.build_id;
    if (bid_b && bid_n && *bid_b && *bid_n && strcmp(bid_b, bid_n)) {
        if (!o.force) {
            fprintf(stderr, "vprof-report: build-id differs between normal (%s) and "
                    "buggy (%s) runs of %s; use --force to compare them anyway\n",
                    bid_n, bid_b, exe);
            return 1;
        }
        if (!o.quiet) fprintf(stderr, "vprof-report: warning: build-ids differ (--force)\n");
    }
    if (!o.quiet && (other[0] || other[1]))
        fprintf(stderr, "vprof-report: note: %zu process(es) of other executables ignored\n",
                other[0] + other[1]);

    struct vpr_model m;
    if (vpr_model_init(&m, &o, o.exe ? o.exe : exe, sides[0].n, sides[1].n, err,
                       sizeof err) < 0) {
        fprintf(stderr, "vprof-report: %s\n", err);
        return 1;
    }
    if (!o.quiet && *bid_b && *m.sym.build_id && strcmp(bid_b, m.sym.build_id))
        fprintf(stderr, "vprof-report: warning: %s has build-id %s but the runs recorded "
                "%s: symbols may be wrong\n", exe, m.sym.build_id, bid_b);
    for (int s = 0; s < 2; s++)
        for (size_t r = 0; r < sides[s].n; r++)
            for (size_t p = 0; p < sides[s].runs[r].n; p++)
                if (vpr_scan_process(&m, s, r, &sides[s].runs[r].procs[p], err, sizeof err) < 0 ||
                    vpr_lat_load(&m, s, r, &sides[s].runs[r], &sides[s].runs[r].procs[p],
                                 err, sizeof err) < 0) {
                    fprintf(stderr, "vprof-report: %s\n", err);
                    return 1;
                }
    for (int s = 0; s < 2 && !o.quiet; s++)
        if (m.st[s].unknown_var)
            fprintf(stderr, "vprof-report: warning: %s runs: %llu value samples name a "
                    "variable id missing from their layout log; skipped\n",
                    s ? "buggy" : "normal", (unsigned long long)m.st[s].unknown_var);
    if (!o.quiet && m.st[VPR_NORMAL].value_samples == 0 && m.st[VPR_BUGGY].value_samples)
        fprintf(stderr, "vprof-report: warning: the normal runs have no value samples: "
                "every sampled variable counts as anomalous (discount 0)\n");
    if (!m.lat && (o.timeline || o.trace)) {
        fprintf(stderr, "vprof-report: --timeline/--trace: no latency.<id> files in the "
                "run directories (build with vprof-cc --latency, run with VPROF_LATENCY=1)\n");
        return 1;
    }
    vpr_lat_analyse(&m);
    vpr_discount_vars(&m);
    vpr_rank_functions(&m);
    vpr_patterns(&m, 5);
    int rc = 0;
    if (o.timeline) rc = vpr_out_timeline(stdout, &m, o.timeline_req);
    else if (o.json) vpr_out_json(stdout, &m);
    else { vpr_out_text(stdout, &m); vpr_lat_text(stdout, &m); }
    if (o.trace && vpr_out_trace(o.trace, &m, err, sizeof err) < 0) {
        fprintf(stderr, "vprof-report: %s\n", err);
        rc = 1;
    }
    if (o.html && vpr_out_html(o.html, &m, err, sizeof err) < 0) {
        fprintf(stderr, "vprof-report: %s\n", err);
        rc = 1;
    }
    vpr_model_free(&m);
    vpr_side_free(&sides[0]);
    vpr_side_free(&sides[1]);
    free(exe); free(nd); free(bd);
    return rc;
}
