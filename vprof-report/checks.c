/* checks.c - what the inputs lack, said before the report (checks.h).
 *
 * The rule: a report that would be empty, or whose numbers would belong to
 * another program, is not printed (exit 1, what is missing on the first
 * line); one that is incomplete but still answers is printed after a
 * warning that says what is missing and what that does to the ranking. */
#include "checks.h"

#include <stdio.h>
#include <string.h>

static const char *side_name(int s) { return s == VPR_BUGGY ? "buggy" : "normal"; }

static const char *recorded_build_id(const struct vpr_proc *p)
{
    return p->layout.build_id ? p->layout.build_id : "";
}

/* Same path, rebuilt between the runs: the two sides' layouts differ. */
static int sides_differ(const struct vpr_side sides[2], const struct vpr_opts *o)
{
    const char *bn = recorded_build_id(&sides[VPR_NORMAL].runs[0].procs[0]);
    const char *bb = recorded_build_id(&sides[VPR_BUGGY].runs[0].procs[0]);
    if (!*bn || !*bb || !strcmp(bn, bb)) return 0;
    if (!o->force) {
        fprintf(stderr, "vprof-report: build-id differs between normal (%s) and buggy (%s) "
                "runs of %s; use --force to compare them anyway\n", bn, bb,
                sides[VPR_BUGGY].runs[0].procs[0].layout.exe);
        return 1;
    }
    if (!o->quiet) fprintf(stderr, "vprof-report: warning: build-ids differ (--force)\n");
    return 0;
}

/* Rebuilt after the runs: a layout recorded another build-id than the
 * executable's symbols have. One message per side. */
static int exe_differs(const struct vpr_side *sd, int s, const struct vpr_symtab *sym,
                       const struct vpr_opts *o)
{
    const struct vpr_proc *first = NULL;
    size_t n = 0;
    for (size_t r = 0; r < sd->n; r++)
        for (size_t k = 0; k < sd->runs[r].n; k++) {
            const struct vpr_proc *p = &sd->runs[r].procs[k];
            const char *b = recorded_build_id(p);
            if (*b && strcmp(b, sym->build_id)) { if (!first) first = p; n++; }
        }
    if (!first) return 0;
    if (!o->force) {
        fprintf(stderr, "vprof-report: %s: the %s run recorded build-id %s, but %s has "
                "build-id %s (%zu process(es)): the program was rebuilt after the run; its "
                "symbols would name the wrong functions (use --force to analyse anyway)\n",
                first->layout_path, side_name(s), recorded_build_id(first), sym->path,
                sym->build_id, n);
        return 1;
    }
    if (!o->quiet)
        fprintf(stderr, "vprof-report: warning: %s has build-id %s but the %s runs recorded "
                "%s: symbols may be wrong (--force)\n", sym->path, sym->build_id,
                side_name(s), recorded_build_id(first));
    return 0;
}

int vpr_check_build_ids(const struct vpr_side sides[2], const struct vpr_symtab *sym,
                        const struct vpr_opts *o)
{
    if (sides_differ(sides, o)) return 1;
    if (!*sym->build_id) return 0;
    int bad = 0;
    for (int s = VPR_BUGGY; s >= VPR_NORMAL && !bad; s--)
        bad = exe_differs(&sides[s], s, sym, o);
    return bad;
}

/* ---------- what the scan found ---------- */

static uint64_t usable_values(const struct vpr_proc *p)
{
    return p->found.values - p->found.unknown;
}

static int has_data(const struct vpr_proc *p)
{
    return usable_values(p) > 0 || p->found.lat_events > 0 ||
           (p->found.gmon_used && (p->found.gmon_ticks > 0 || p->found.gmon_arcs > 0));
}

static int cut_short(const struct vpr_proc *p)
{
    return !p->layout.has_end && !p->gmon_path;
}

/* " (variable metadata: none)" when the layout says none was loaded */
static const char *meta_hint(const struct vpr_proc *p, char *buf, size_t len)
{
    const char *st = p->layout.meta_status;
    if (!st || !strcmp(st, "ok")) return "";
    snprintf(buf, len, " (layout.%s: variable metadata %s%s)", p->id, st,
             !strcmp(st, "none") ? ": build with vprof-cc, or make a .vmeta with vprof-meta" : "");
    return buf;
}

/* Samples of variable ids the layout does not describe: the layout was cut
 * (the runtime writes every descriptor before the first tick) or belongs to
 * another run. Without them the anomalous variable may be the one missing. */
static int unknown_ids(const struct vpr_side sides[2], const struct vpr_opts *o)
{
    int bad = 0;
    for (int s = 0; s < 2; s++)
        for (size_t r = 0; r < sides[s].n; r++)
            for (size_t k = 0; k < sides[s].runs[r].n; k++) {
                const struct vpr_proc *p = &sides[s].runs[r].procs[k];
                if (!p->found.unknown) continue;
                if (!o->force) {
                    fprintf(stderr, "vprof-report: %s: %llu of %llu value samples name "
                            "variable ids (e.g. %u) that %s does not describe: the layout "
                            "log is truncated or of another run (use --force to analyse "
                            "without them)\n", p->values_path,
                            (unsigned long long)p->found.unknown,
                            (unsigned long long)p->found.values, p->found.unknown_id,
                            p->layout_path);
                    bad = 1;
                } else if (!o->quiet) {
                    fprintf(stderr, "vprof-report: warning: %s runs: %llu value samples name "
                            "a variable id missing from their layout log; skipped (--force)\n",
                            side_name(s), (unsigned long long)p->found.unknown);
                }
            }
    return bad;
}

/* A profile with nothing in it would enter every average as zeros. */
static int empty_runs(const struct vpr_side sides[2])
{
    int bad = 0;
    for (int s = 0; s < 2; s++)
        for (size_t r = 0; r < sides[s].n; r++) {
            const struct vpr_run *run = &sides[s].runs[r];
            size_t with_gmon = 0, ended = 0;
            int any = 0;
            for (size_t k = 0; k < run->n; k++) {
                any |= has_data(&run->procs[k]);
                with_gmon += run->procs[k].gmon_path != NULL;
                ended += run->procs[k].layout.has_end;
            }
            if (any) continue;
            char hint[300];
            fprintf(stderr, "vprof-report: the %s run %s has nothing to compare: its %zu "
                    "process(es) left %s, no value samples and no latency events%s%s\n",
                    side_name(s), run->label, run->n,
                    with_gmon ? "gmon files without samples" : "no gmon file",
                    ended ? "" : "; none of them exited normally",
                    meta_hint(&run->procs[0], hint, sizeof hint));
            bad = 1;
        }
    return bad;
}

/* Values kept, gmon lost: the value samples still give every function
 * whose variables were sampled its variable-based cost, which stands in
 * for the lost PC cost (raw cost = max of the two); functions without
 * sampled variables lose their time in that run. */
static void cut_processes(const struct vpr_side sides[2])
{
    for (int s = 0; s < 2; s++)
        for (size_t r = 0; r < sides[s].n; r++)
            for (size_t k = 0; k < sides[s].runs[r].n; k++) {
                const struct vpr_proc *p = &sides[s].runs[r].procs[k];
                if (!cut_short(p)) continue;
                fprintf(stderr, "vprof-report: WARNING: %s run %s: process %s did not exit "
                        "normally (no 'end' line in %s, no gmon.%s.out: killed, e.g. by "
                        "SIGKILL, or ended by _exit): its PC histogram and call counts are "
                        "lost; ", side_name(s), sides[s].runs[r].label, p->id,
                        p->layout_path, p->id);
                if (usable_values(p))
                    fprintf(stderr, "it is ranked from its %llu value samples alone, so "
                            "functions without sampled variables count less in this run\n",
                            (unsigned long long)usable_values(p));
                else
                    fprintf(stderr, "it has no value samples either and adds nothing\n");
            }
}

struct side_sum { uint64_t values; size_t gmon, cut, procs; const struct vpr_proc *first; };

static struct side_sum sum_side(const struct vpr_side *sd)
{
    struct side_sum t = {0, 0, 0, 0, NULL};
    for (size_t r = 0; r < sd->n; r++)
        for (size_t k = 0; k < sd->runs[r].n; k++) {
            const struct vpr_proc *p = &sd->runs[r].procs[k];
            if (!t.first) t.first = p;
            t.values += usable_values(p);
            t.gmon += p->found.gmon_used;
            t.cut += cut_short(p);
            t.procs++;
        }
    return t;
}

/* Sides without value samples or without any PC histogram. */
static void missing_sources(const struct vpr_side sides[2])
{
    struct side_sum n = sum_side(&sides[VPR_NORMAL]), b = sum_side(&sides[VPR_BUGGY]);
    char hint[300];
    if (!n.values && !b.values)
        fprintf(stderr, "vprof-report: warning: neither side has value samples%s: no variable "
                "can be compared; functions are ranked by PC time, discounted only by their "
                "ranks in the normal runs (hist-discounter)\n",
                meta_hint(b.first, hint, sizeof hint));
    else if (!n.values)
        fprintf(stderr, "vprof-report: warning: the normal runs have no value samples%s: "
                "every sampled variable counts as anomalous (discount 0)\n",
                meta_hint(n.first, hint, sizeof hint));
    else if (!b.values)
        fprintf(stderr, "vprof-report: warning: the buggy runs have no value samples%s: no "
                "variable can be compared; functions are ranked by PC time, discounted only "
                "by their ranks in the normal runs (hist-discounter)\n",
                meta_hint(b.first, hint, sizeof hint));
    for (int s = 0; s < 2; s++) {
        struct side_sum t = s ? b : n;
        if (!t.gmon && t.cut < t.procs)
            fprintf(stderr, "vprof-report: warning: the %s runs have no usable gmon file: "
                    "costs come from value samples alone, and functions without sampled "
                    "variables have none\n", side_name(s));
    }
}

int vpr_check_data(const struct vpr_side sides[2], const struct vpr_opts *o)
{
    int bad = unknown_ids(sides, o);
    bad |= empty_runs(sides);
    if (bad) return 1;
    if (!o->quiet) {
        cut_processes(sides);
        missing_sources(sides);
    }
    return 0;
}
