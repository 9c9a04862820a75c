/* contexts_main.c - vprof-report --contexts: which calling contexts the
 * buggy input made hot (contexts.h), from vprof's own stack samples (run
 * directories, stacks.<id>: contexts_runs.c) or from `perf script` output
 * of `perf record -g` (frame pointers) or `--call-graph dwarf` runs of an
 * unmodified program: no rebuild, no instrumentation. Reads the runs,
 * builds one calling-context tree per side, prints the top paths as text
 * or JSON (and HTML). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "contexts.h"
#include "contexts_runs.h"
#include "demangle.h"
#include "output.h"
#include "perf_script.h"
#include "vprof_xalloc.h"

struct copt {
    char **files[2];
    size_t n[2];
    size_t top;
    int est, json, kernel, quiet, clock, inline_frames;
    const char *html, *exe;
};

static void usage(FILE *o)
{
    fputs("usage: vprof-report --contexts [options] NORMAL... BUGGY...\n"
          "       vprof-report --contexts [options] --normal RUN... --buggy RUN...\n"
          "Each RUN is a run directory (VPROF_OUT) with vprof's stack samples\n"
          "(stacks.<id>), or the output of `perf script` for one run recorded with\n"
          "`perf record -g` (or --call-graph dwarf).\n"
          "options:\n"
          "  --normal RUN / --buggy RUN  a run of that side (repeatable)\n"
          "  --exe FILE            read the program's symbols from FILE (a copy of the\n"
          "                        executable the run directories recorded)\n"
          "  --top N               paths shown (10; 0 = all)\n"
          "  --estimate E          function latency: conservative (the default: first to\n"
          "                        last sample of an unchanged context) or aggressive (to\n"
          "                        the sample that changed it)\n"
          "  --clock C             when samples happened: cpu (the default: each thread's\n"
          "                        CPU time, from its ticks' periods) or wall (timestamps:\n"
          "                        time off the CPU counts too)\n"
          "  --kernel              keep kernel frames (default: the program's frames only)\n"
          "  --no-inline-functions code the compiler inlined is its caller's (default: a\n"
          "                        function inlined at a PC is a frame of its own, from\n"
          "                        the program's DWARF, as the ranking counts it)\n"
          "  --json                JSON instead of text\n"
          "  --html FILE           also write an HTML page: heat map of the top paths and\n"
          "                        a differential flame graph (inline SVG)\n"
          "  --no-demangle         C++ names as linked (mangled), as gprof --no-demangle\n"
          "  -q, --quiet           no warnings\n", o);
}

static int parse(int argc, char **argv, struct copt *o)
{
    enum { O_CTX = 256, O_NORMAL, O_BUGGY, O_TOP, O_EST, O_KERNEL, O_JSON, O_HTML, O_EXE, O_CLOCK,
           O_INL, O_NOINL, O_NODM };
    static const struct option lo[] = {
        {"contexts", 0, 0, O_CTX}, {"normal", 1, 0, O_NORMAL}, {"buggy", 1, 0, O_BUGGY},
        {"top", 1, 0, O_TOP}, {"estimate", 1, 0, O_EST}, {"kernel", 0, 0, O_KERNEL},
        {"json", 0, 0, O_JSON}, {"html", 1, 0, O_HTML}, {"exe", 1, 0, O_EXE}, {"clock", 1, 0, O_CLOCK},
        {"inline-functions", 0, 0, O_INL}, {"no-inline-functions", 0, 0, O_NOINL},
        {"no-demangle", 0, 0, O_NODM}, {"quiet", 0, 0, 'q'}, {"help", 0, 0, 'h'}, {0, 0, 0, 0}};
    for (int s = 0; s < 2; s++) o->files[s] = vpf_xcalloc((size_t)argc, sizeof *o->files[s]);
    int c;
    char *end;
    optind = 1;
    while ((c = getopt_long(argc, argv, "qh", lo, NULL)) != -1) {
        switch (c) {
        case O_CTX: break;
        case O_NORMAL: o->files[0][o->n[0]++] = optarg; break;
        case O_BUGGY: o->files[1][o->n[1]++] = optarg; break;
        case O_TOP:
            errno = 0;
            o->top = strtoul(optarg, &end, 10);
            if (errno || *end || end == optarg || *optarg == '-') {
                fprintf(stderr, "vprof-report: --top: '%s' is not a count\n", optarg);
                return -1;
            }
            break;
        case O_EST:
            if (!strcmp(optarg, "conservative")) o->est = VPR_CTX_CONSERVATIVE;
            else if (!strcmp(optarg, "aggressive")) o->est = VPR_CTX_AGGRESSIVE;
            else {
                fprintf(stderr, "vprof-report: --estimate: '%s' is not conservative or "
                        "aggressive\n", optarg);
                return -1;
            }
            break;
        case O_KERNEL: o->kernel = 1; break;
        case O_INL: o->inline_frames = 1; break;
        case O_NOINL: o->inline_frames = 0; break;
        case O_JSON: o->json = 1; break;
        case O_HTML: o->html = optarg; break;
        case O_EXE: o->exe = optarg; break;
        case O_CLOCK:
            if (!strcmp(optarg, "cpu")) o->clock = VPR_CLOCK_CPU;
            else if (!strcmp(optarg, "wall")) o->clock = VPR_CLOCK_WALL;
            else {
                fprintf(stderr, "vprof-report: --clock: '%s' is not cpu or wall\n", optarg);
                return -1;
            }
            break;
        case O_NODM: vpr_demangle_enable(0); break;
        case 'q': o->quiet = 1; break;
        case 'h': usage(stdout); exit(0);
        default: usage(stderr); return -1;
        }
    }
    int rest = argc - optind;
    if (rest) {
        if (o->n[0] || o->n[1] || rest % 2) {
            fprintf(stderr, "vprof-report: --contexts: give an even number of files (normal "
                    "runs, then as many buggy runs), or use --normal/--buggy\n");
            return -1;
        }
        for (int i = 0; i < rest / 2; i++) o->files[0][o->n[0]++] = argv[optind + i];
        for (int i = rest / 2; i < rest; i++) o->files[1][o->n[1]++] = argv[optind + i];
    }
    if (!o->n[0] || !o->n[1]) {
        fprintf(stderr, "vprof-report: --contexts: need at least one normal and one buggy "
                "run (a run directory or a perf script file)\n");
        usage(stderr);
        return -1;
    }
    return 0;
}

static int is_kernel(const char *dso)
{
    return strstr(dso, "kernel.kallsyms") || strstr(dso, "vmlinux") || !strncmp(dso, "[kernel", 7);
}

/* One event's call chain, leaf first as perf prints it, fed bottom first. */
static void flush_event(struct vpr_cbuild *b, const struct vpr_perf_head *h, uint32_t *leaf_first,
                        size_t n, uint32_t *frames)
{
    if (!n) return;
    for (size_t i = 0; i < n; i++) frames[i] = leaf_first[n - 1 - i];
    vpr_cbuild_sample(b, h->tid, h->t, frames, n);
}

/* The event's period in ns when it is a clock event (cpu-clock,
 * task-clock: "500000 cpu-clock:ppp"), else 0. */
static uint64_t clock_period(const struct vpr_perf_head *h)
{
    char *end;
    uint64_t p = strtoull(h->name, &end, 10);
    if (end == h->name) return 0;
    while (*end == ' ') end++;
    return !strncmp(end, "cpu-clock", 9) || !strncmp(end, "task-clock", 10) ? p : 0;
}

/* One run: a perf script file into tree t. */
static int load_run(const char *path, struct vpr_ctree *t, struct vpr_cnames *nm,
                    const struct copt *o, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) { snprintf(err, errlen, "%s: %s", path, strerror(errno)); return -1; }
    struct vpr_cbuild b;
    vpr_cbuild_begin(&b, t, nm);
    enum { MAXF = 1024 };
    uint32_t *chain = vpf_xcalloc(MAXF, sizeof *chain), *frames = vpf_xcalloc(MAXF, sizeof *frames);
    struct vpr_perf_head h = {0};
    char *line = NULL, *cur = NULL, sym[1024], dso[1024], name[2100];
    size_t cap = 0, n = 0, events = 0, chains = 0;
    int have = 0, has_pid = 0, clock = o->clock;
    uint64_t before = t->samples;
    struct vpr_tclock tc = {0};
    while (getline(&line, &cap, f) >= 0) {
        if (line[0] == '\t') {                      /* a frame of the event's call chain */
            if (!have || !vpr_perf_frame_parse(line, sym, sizeof sym, dso, sizeof dso)) continue;
            if (!o->kernel && is_kernel(dso)) continue;
            if (n == MAXF) continue;                /* deeper than that: the bottom is cut */
            if (!strcmp(sym, "[unknown]")) {
                const char *base = strrchr(dso, '/');
                snprintf(name, sizeof name, "[unknown] (%s)", base ? base + 1 : dso);
            } else {
                snprintf(name, sizeof name, "%s", sym);
            }
            chain[n++] = vpr_cname(nm, name);
            continue;
        }
        char *copy = vpf_xstrdup(line);
        struct vpr_perf_head next;
        if (!vpr_perf_head_parse(copy, &next, &has_pid)) { free(copy); continue; }
        if (clock == VPR_CLOCK_CPU) {
            /* a thread's CPU time: the periods of its clock events so far */
            uint64_t per = clock_period(&next);
            if (per) {
                next.t = vpr_tclock_add(&tc, next.tid, per);
            } else {
                if (!o->quiet)
                    fprintf(stderr, "vprof-report: %s: '%s' is not a cpu-clock or task-clock "
                            "event: samples placed by their timestamps (--clock wall)\n", path,
                            next.name);
                if (events) {           /* the events so far: start again in wall time */
                    free(copy);
                    vpr_cbuild_end(&b);
                    free(cur); free(line); free(chain); free(frames);
                    fclose(f);
                    vpr_tclock_free(&tc);
                    snprintf(err, errlen, "%s: event '%s' is not a clock event, unlike the "
                             "events before it (use --clock wall)", path, next.name);
                    return -1;
                }
                clock = VPR_CLOCK_WALL;
            }
        }
        if (have) { chains += n > 0; flush_event(&b, &h, chain, n, frames); }
        free(cur);
        cur = copy;
        h = next;
        have = 1;
        n = 0;
        events++;
    }
    if (have) { chains += n > 0; flush_event(&b, &h, chain, n, frames); }
    vpr_cbuild_end(&b);
    vpr_tclock_free(&tc);
    free(cur);
    free(line);
    free(chain);
    free(frames);
    fclose(f);
    if (!events) {
        snprintf(err, errlen, "%s: no perf script events (expected the output of perf script "
                 "for a perf record -g run)", path);
        return -1;
    }
    if (!chains || t->samples == before) {
        snprintf(err, errlen, "%s: %zu events but no call chains%s (record with perf record -g "
                 "or --call-graph dwarf)", path, events, o->kernel ? "" : " outside the kernel");
        return -1;
    }
    return 0;
}

/* One run directory: the processes of its program (the one with the
 * most samples) into tree t. */
static int load_dir(const char *dir, struct vpr_ctree *t, struct vpr_cnames *nm,
                    struct vpr_csyms *sy, int clock, char *err, size_t errlen)
{
    char *exe = vpr_first_exe(dir, err, errlen);
    if (!exe) return -1;
    struct vpr_side side;
    size_t other, n_files;
    char *dirs[1] = {(char *)dir};
    int rc = vpr_side_load(dirs, 1, 0, exe, &side, &other, err, errlen);
    if (rc == 0) rc = vpr_ctx_load_run(&side.runs[0], t, nm, sy, clock, &n_files, err, errlen);
    vpr_side_free(&side);
    free(exe);
    return rc < 0 ? -1 : 0;
}

static int is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static size_t count_paths(const struct vpr_ctree *t)
{
    size_t n = 0;
    for (size_t i = 1; i < t->nn; i++) n += t->n[i].child == UINT32_MAX;
    return n;
}

static const char *est_name(int e) { return e == VPR_CTX_AGGRESSIVE ? "aggressive" : "conservative"; }

static void print_text(const struct copt *o, const struct vpr_ctree *t[2],
                       const struct vpr_cnames *nm, const struct vpr_cpath *p, size_t np)
{
    printf("vprof-report --contexts: calling contexts the buggy input made hot\n");
    for (int s = 0; s < 2; s++)
        printf("%-7s %zu run(s), %llu stack samples, %zu calling contexts\n",
               s ? "buggy:" : "normal:", t[s]->runs, (unsigned long long)t[s]->samples,
               count_paths(t[s]));
    for (int s = 0; s < 2; s++)
        if (t[s]->truncated)
            printf("(%s: %llu stacks deeper than recorded, their bottom frames cut: raise "
                   "VPROF_STACKS)\n", s ? "buggy" : "normal", (unsigned long long)t[s]->truncated);
    printf("function latency: %s estimate\n(%s);\n"
           "in brackets each function's own time per run (its latency minus its callees');\n"
           "a path's cost: its functions' buggy own time minus the normal runs' (a new\n"
           "path: all of it), ms per run\n",
           est_name(o->est), o->est == VPR_CTX_AGGRESSIVE
               ? "until the sample that changed its context"
               : "first to last sample of an unchanged context");
    size_t shown = o->top && o->top < np ? o->top : np;
    double rb = t[1]->runs ? (double)t[1]->runs : 1;
    for (size_t i = 0; i < shown; i++) {
        uint32_t nodes[256];
        size_t k = vpr_ctx_path_nodes(t[1], p[i].leaf, nodes, 256);
        size_t hot = vpr_ctx_hottest(t[1], nodes, k, o->est);
        char fit[400];
        vpr_dm_fit(fit, sizeof fit, k ? nm->name[t[1]->n[nodes[hot]].f] : "-", 60, 0);
        printf("\n[%zu] %+.3f ms/run%s\n    hottest: %s\n    ", i + 1, p[i].cost / 1e6,
               p[i].is_new ? " (a path only the buggy runs had)" : "", fit);
        size_t col = 4;
        for (size_t j = 0; j < k; j++) {
            char item[600];
            vpr_dm_fit(fit, sizeof fit, nm->name[t[1]->n[nodes[j]].f], 50, 0);
            snprintf(item, sizeof item, "%s%s (%.3f)", j ? " > " : "", fit,
                     t[1]->n[nodes[j]].own[o->est] / rb / 1e6);
            size_t w = (size_t)vpr_cols(item);
            if (col + w > 80 && col > 4) { printf("\n    "); col = 4; }
            fputs(item, stdout);
            col += w;
        }
        putchar('\n');
    }
    if (!np) printf("\n(no calling context in the buggy runs)\n");
}

static void print_json(const struct copt *o, const struct vpr_ctree *t[2],
                       const struct vpr_cnames *nm, const struct vpr_cpath *p, size_t np)
{
    printf("{\"vprof_contexts\":1,\"estimate\":\"%s\"", est_name(o->est));
    for (int s = 0; s < 2; s++)
        printf(",\"%s\":{\"runs\":%zu,\"samples\":%llu,\"truncated\":%llu,\"paths\":%zu}",
               s ? "buggy" : "normal", t[s]->runs, (unsigned long long)t[s]->samples,
               (unsigned long long)t[s]->truncated, count_paths(t[s]));
    fputs(",\"paths\":[", stdout);
    size_t shown = o->top && o->top < np ? o->top : np;
    double r[2] = {t[0]->runs ? (double)t[0]->runs : 1, t[1]->runs ? (double)t[1]->runs : 1};
    for (size_t i = 0; i < shown; i++) {
        uint32_t nodes[256];
        size_t k = vpr_ctx_path_nodes(t[1], p[i].leaf, nodes, 256);
        uint32_t eq = vpr_ctx_equivalent(t[0], t[1], p[i].leaf), en[256];
        size_t ke = eq == UINT32_MAX ? 0 : vpr_ctx_path_nodes(t[0], eq, en, 256);
        printf("%s\n{\"rank\":%zu,\"cost_ms\":%.17g,\"new\":%s,\"functions\":[", i ? "," : "",
               i + 1, p[i].cost / 1e6, p[i].is_new ? "true" : "false");
        for (size_t j = 0; j < k; j++) {
            const struct vpr_cnode *v = &t[1]->n[nodes[j]];
            size_t rank = 1;            /* its rank by own time inside the path */
            for (size_t q = 0; q < k; q++)
                if (t[1]->n[nodes[q]].own[o->est] > v->own[o->est]) rank++;
            printf("%s{\"name\":", j ? "," : "");
            vpr_jstr(stdout, vpr_dm(nm->name[v->f]));
            if (strcmp(vpr_dm(nm->name[v->f]), nm->name[v->f])) {
                fputs(",\"symbol\":", stdout);
                vpr_jstr(stdout, nm->name[v->f]);
            }
            printf(",\"own_ms\":%.17g,\"normal_own_ms\":%.17g,\"latency_ms\":%.17g,"
                   "\"conservative_ms\":%.17g,\"aggressive_ms\":%.17g,\"instances\":%.17g,"
                   "\"rank_in_path\":%zu}",
                   v->own[o->est] / r[1] / 1e6,
                   ke == k ? t[0]->n[en[j]].own[o->est] / r[0] / 1e6 : 0.0,
                   v->lat[o->est] / r[1] / 1e6, v->lat[VPR_CTX_CONSERVATIVE] / r[1] / 1e6,
                   v->lat[VPR_CTX_AGGRESSIVE] / r[1] / 1e6, (double)v->count / r[1], rank);
        }
        fputs("]}", stdout);
    }
    fputs("\n]}\n", stdout);
}

int vpr_contexts_main(int argc, char **argv)
{
    struct copt o = {.top = 10, .est = VPR_CTX_CONSERVATIVE, .inline_frames = 1};
    int rc = 2;
    struct vpr_cnames nm = {0};
    struct vpr_ctree tn, tb;
    vpr_ctree_init(&tn);
    vpr_ctree_init(&tb);
    struct vpr_ctree *t[2] = {&tn, &tb};
    struct vpr_csyms sy = {0};
    if (parse(argc, argv, &o) == 0) {
        sy.exe_override = o.exe;
        sy.inline_frames = o.inline_frames;
        char err[2400];
        rc = 0;
        for (int s = 0; s < 2 && !rc; s++)
            for (size_t i = 0; i < o.n[s] && !rc; i++)
                if ((is_dir(o.files[s][i])
                         ? load_dir(o.files[s][i], t[s], &nm, &sy, o.clock, err, sizeof err)
                         : load_run(o.files[s][i], t[s], &nm, &o, err, sizeof err)) < 0) {
                    fprintf(stderr, "vprof-report: %s\n", err);
                    rc = 1;
                }
        if (!rc) {
            vpr_ctree_normalize(&tn);
            vpr_ctree_normalize(&tb);
            size_t np;
            struct vpr_cpath *p = vpr_ctx_rank(&tn, &tb, o.est, &np);
            const struct vpr_ctree *ct[2] = {&tn, &tb};
            if (o.json) print_json(&o, ct, &nm, p, np);
            else print_text(&o, ct, &nm, p, np);
            struct vpr_ctx_view view = {{&tn, &tb}, &nm, p, np, o.est, o.top};
            if (o.html && vpr_ctx_html(o.html, &view, err, sizeof err) < 0) {
                fprintf(stderr, "vprof-report: %s\n", err);
                rc = 1;
            }
            free(p);
        }
    }
    for (int s = 0; s < 2; s++) free(o.files[s]);
    vpr_ctree_free(&tn);
    vpr_ctree_free(&tb);
    vpr_cnames_free(&nm);
    vpr_csyms_free(&sy);
    return rc;
}
