/* cli.c - vprof-report's options: the table below is the only list of them.
 * Each row says how its argument is checked and where it goes; getopt's
 * table and the usage text are both made from it. */
#include "cli.h"
#include "ctx_rank.h"
#include "demangle.h"
#include "vprof_xalloc.h"

#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum kind {
    K_FLAG,                     /* int field = value */
    K_REAL,                     /* double field, in [lo, hi] */
    K_INT,                      /* int field, a number in [lo, hi] */
    K_SIZE,                     /* size_t field, a number in [lo, hi] */
    K_STR,                      /* const char * field = the argument */
    K_CHOICE,                   /* int field = position of the argument in choices */
    K_FN,                       /* fn(cli, argument) */
};

struct row {
    const char *name;           /* long name, without "--" */
    char short_name;            /* or 0 */
    const char *arg;            /* argument's name in the usage, NULL: none */
    enum kind kind;
    size_t off;                 /* the field of struct vpr_cli */
    int value;                  /* K_FLAG */
    double lo, hi;              /* K_REAL, K_INT, K_SIZE */
    const char *choices;        /* K_CHOICE: "first|second|...", in enum order */
    int (*fn)(struct vpr_cli *c, const char *arg);   /* K_FN: 0, or -1 (said why) */
    const char *help;           /* lines after the first are indented */
};

static int add_normal(struct vpr_cli *c, const char *a);
static int add_buggy(struct vpr_cli *c, const char *a);
static int add_hist_normal(struct vpr_cli *c, const char *a);
static int add_hist_buggy(struct vpr_cli *c, const char *a);
static int set_dim_order(struct vpr_cli *c, const char *a);
static int set_timeline(struct vpr_cli *c, const char *a);
static int set_no_demangle(struct vpr_cli *c, const char *a);

#define F(field) offsetof(struct vpr_cli, field)

static const struct row rows[] = {
    {"normal", 0, "DIR", K_FN, 0, 0, 0, 0, NULL, add_normal,
     "a run directory of the normal side (repeatable)"},
    {"buggy", 0, "DIR", K_FN, 0, 0, 0, 0, NULL, add_buggy,
     "a run directory of the buggy side (repeatable)"},
    {"exe", 0, "PATH", K_STR, F(o.exe), 0, 0, 0, NULL, NULL,
     "executable to analyse (default: from the layout logs)"},
    {"default-discount", 0, "R", K_REAL, F(o.default_discount), 0, 0, 1, NULL, NULL,
     "ratio when the distributions agree (0.8)"},
    {"valid-discount", 0, "R", K_REAL, F(o.valid_discount), 0, 0, 1, NULL, NULL,
     "ratios below this become 0 (0.1)"},
    {"pvalue", 0, "P", K_REAL, F(o.pvalue), 0, 0, 1, NULL, NULL,
     "Anderson-Darling significance level (0.05)"},
    {"top", 0, "N", K_INT, F(o.top), 0, 0, 1e9, NULL, NULL,
     "functions shown (10; 0 = all)"},
    {"per-pid", 0, NULL, K_FLAG, F(o.per_pid), 1, 0, 0, NULL, NULL,
     "each process is its own profile"},
    {"force", 0, NULL, K_FLAG, F(o.force), 1, 0, 0, NULL, NULL,
     "analyse even if the executables differ"},
    {"json", 0, NULL, K_FLAG, F(o.json), 1, 0, 0, NULL, NULL, "JSON instead of text"},
    {"html", 0, "FILE", K_STR, F(o.html), 0, 0, 0, NULL, NULL,
     "also write a self-contained HTML report"},
    {"reservoir", 0, "N", K_SIZE, F(o.reservoir), 0, 16, 1e8, NULL, NULL,
     "samples kept per variable/dimension/side (4096)"},
    {"bins", 0, "N", K_SIZE, F(o.bins), 0, 1, 1e6, NULL, NULL,
     "Hellinger histogram bins (32)"},
    {"globals", 0, "MODE", K_CHOICE, F(o.globals), 0, 0, 0, "uses|sampled|none", NULL,
     "a global's discount goes to the functions that use it\n"
     "(uses: the schema's @uses lines, the default), to every\n"
     "function that sampled it (sampled: the paper's text), or\n"
     "to none (none: the paper's artifact)"},
    {"all-global-users", 0, NULL, K_FLAG, F(o.globals), VPR_GLOBALS_SAMPLED, 0, 0, NULL, NULL,
     "the same as --globals sampled"},
    {"dim-order", 0, "LIST", K_FN, 0, 0, 0, 0, NULL, set_dim_order,
     "preferred dimension when ratios tie\n(processing-cost,delta,value)"},
    {"pattern-rules", 0, "R", K_CHOICE, F(o.pattern_rules), 0, 0, 0, "artifact|paper", NULL,
     "bug pattern rules: artifact (the vProf artifact's, the\n"
     "default) or paper (§5.2's text: anomalous evidence only)"},
    {"rank", 0, "RULE", K_CHOICE, F(o.rank), 0, 0, 0, "paper|blame|added|blend", NULL,
     "calibrated cost: blend (the default: the cost the buggy\n"
     "runs added beyond the normal runs' proportions, plus the\n"
     "rest at DefaultDiscount, x (1 - discount)), paper ((1 -\n"
     "discount) x max(PC cost, variable-based cost)), added (the\n"
     "added cost only) or blame (each buggy tick's cost goes to\n"
     "one frame with anomalous values)"},
    {"blame", 0, "WHICH", K_CHOICE, F(o.blame), 0, 0, 0, "deepest|shallowest|split|max", NULL,
     "with --rank blame, the frame that takes a tick: deepest,\n"
     "shallowest, split or max (deepest)"},
    {"blame-range", 0, NULL, K_FLAG, F(o.blame_range), 1, 0, 0, NULL, NULL,
     "with --rank blame, a value sample counts only outside\nthe normal run's range"},
    {"min-samples", 0, "N", K_SIZE, F(o.min_samples), 0, 1, 1e9, NULL, NULL,
     "a dimension with fewer buggy observations (ticks covered,\n"
     "for processing cost) is undefined (DefaultDiscount) (8)"},
    {"whole-run", 0, "R", K_REAL, F(o.whole_run), 0, 0, 1, NULL, NULL,
     "with --rank blend, a function whose cost is at least R of\nthe largest function's on both sides (main, a thread's\nstart routine, an event loop) keeps only the cost the\nbuggy runs added (0.9; 0: off)"},
    {"arcs-added", 0, NULL, K_FLAG, F(o.arcs_added), 1, 0, 0, NULL, NULL,
     "with --arcs, the cost of the calls a function made beyond\nthe normal runs' proportion is cost it added"},
    {"no-arcs-added", 0, NULL, K_FLAG, F(o.arcs_added), 0, 0, 0, NULL, NULL,
     "extra calls add no cost of their own"},
    {"arc-rare", 0, NULL, K_FLAG, F(o.arc_rare), 1, 0, 0, NULL, NULL,
     "with --arcs, test a caller called fewer than --arc-min-calls\ntimes against the workload's growth"},
    {"no-arc-rare", 0, NULL, K_FLAG, F(o.arc_rare), 0, 0, 0, NULL, NULL,
     "leave callers called fewer than --arc-min-calls times out"},
    {"call-counts", 0, NULL, K_FLAG, F(o.call_counts), 1, 0, 0, NULL, NULL,
     "with --arcs, take the counts of calls.<id> files (built\nwith vprof-cc --calls) instead of gmon's arcs of the same\npair (the default)"},
    {"no-call-counts", 0, NULL, K_FLAG, F(o.call_counts), 0, 0, 0, NULL, NULL,
     "ignore calls.<id> files: gmon's arcs only"},
    {"tail-calls", 0, NULL, K_FLAG, F(o.tail_calls), 1, 0, 0, NULL, NULL,
     "with --arcs, a call gmon records from f to h that went\nthrough g's sibling call (f calls g, g jumps to h) is\ng's (the default)"},
    {"no-tail-calls", 0, NULL, K_FLAG, F(o.tail_calls), 0, 0, 0, NULL, NULL,
     "take gmon's arcs as recorded (gprof's view)"},
    {"address-filter", 0, NULL, K_FLAG, F(o.addr_filter), 1, 0, 0, NULL, NULL,
     "leave out of the value and delta dimensions values that\nlook like addresses (ASLR: stack garbage, pointers in\nintegers) (the default)"},
    {"no-address-filter", 0, NULL, K_FLAG, F(o.addr_filter), 0, 0, 0, NULL, NULL,
     "compare such values like any other"},
    {"run-constants", 0, NULL, K_FLAG, F(o.run_constants), 1, 0, 0, NULL, NULL,
     "a variable whose value never changed in a thread of a\nrun gives a processing-cost sample: its first to last\nsample (the vProf artifact's reading)"},
    {"no-run-constants", 0, NULL, K_FLAG, F(o.run_constants), 0, 0, 0, NULL, NULL,
     "no processing-cost sample from a variable constant in a\nthread of a run: its stretch is the run's length, not\nthe code's (the default)"},
    {"inline-functions", 0, NULL, K_FLAG, F(o.inline_funcs), 1, 0, 0, NULL, NULL,
     "a function the compiler inlined is ranked as a function:\nthe PC time, variables and ticks of its inlined copies\nare its own (DWARF inlined subroutines) (the default)"},
    {"no-inline-functions", 0, NULL, K_FLAG, F(o.inline_funcs), 0, 0, 0, NULL, NULL,
     "inlined code belongs to the function it was inlined into\n(gprof's view)"},
    {"specificity", 0, NULL, K_FLAG, F(o.specificity), 1, 0, 0, NULL, NULL,
     "a global's anomaly counts 1/k for each of the k functions\nit is attributed to (the default)"},
    {"no-specificity", 0, NULL, K_FLAG, F(o.specificity), 0, 0, 0, NULL, NULL,
     "a global's anomaly counts fully wherever it is attributed\n(the paper)"},
    {"fdr", 0, NULL, K_FLAG, F(o.fdr), 1, 0, 0, NULL, NULL,
     "Benjamini-Hochberg: reject only what survives the false\n"
     "discovery rate --pvalue over all tests of the report"},
    {"arcs", 0, NULL, K_FLAG, F(o.arcs), 1, 0, 0, NULL, NULL,
     "a significant change in how often a function calls a\n"
     "callee per call (gmon arcs) is evidence about it (the\ndefault)"},
    {"no-arcs", 0, NULL, K_FLAG, F(o.arcs), 0, 0, 0, NULL, NULL,
     "call counts are no evidence (the paper)"},
    {"arc-ratio", 0, "K", K_REAL, F(o.arc_ratio), 0, 1, 1e9, NULL, NULL,
     "... of at least K-fold (4)"},
    {"arc-min-calls", 0, "N", K_SIZE, F(o.arc_min_calls), 0, 1, 1e12, NULL, NULL,
     "... of callers called at least N times a side (10)"},
    {"hist-normal", 0, "DIR", K_FN, 0, 0, 0, 0, NULL, add_hist_normal,
     "extra normal run (repeatable) for the hist-discounter's\nrank comparison only"},
    {"hist-buggy", 0, "DIR", K_FN, 0, 0, 0, 0, NULL, add_hist_buggy,
     "extra buggy run (repeatable) for the hist-discounter's\nrank comparison only"},
    {"verdicts", 0, "N", K_SIZE, F(o.verdicts), 0, 0, 1e6, NULL, NULL,
     "short verdicts for the top N functions (3)"},
    {"min-evidence", 0, "N", K_SIZE, F(o.min_evidence), 0, 1, 1e12, NULL, NULL,
     "fewer observations on a side make evidence thin (20)"},
    {"verbose", 'v', NULL, K_FLAG, F(o.verbose), 1, 0, 0, NULL, NULL,
     "every variable of every shown function"},
    {"context-discount", 0, "MODE", K_CHOICE, F(o.ctx_discount), 0, 0, 0, "novalues|all|off",
     NULL,
     "when runs have stack samples, a function without variables\n"
     "is discounted by how much its calling contexts grew instead\n"
     "of by the hist-discounter: novalues (only when the runs have\n"
     "no value samples at all), all, or off (the default)"},
    {"guards", 0, NULL, K_FLAG, F(o.guards), 1, 0, 0, NULL, NULL,
     "a predicate whose answer a caller's changed calls waited\n"
     "for (the schema's @guard lines) ranks right after it (on)"},
    {"no-guards", 0, NULL, K_FLAG, F(o.guards), 0, 0, 0, NULL, NULL,
     "predicates rank by their own cost"},
    {"pure-guards", 0, NULL, K_FLAG, F(o.pure_guards), 1, 0, 0, NULL, NULL,
     "with --guards, a predicate that answers a truth value and\n"
     "changes nothing (the schema's @predicate lines) ranks right\n"
     "above its caller instead: the decision is inside it (on)"},
    {"no-pure-guards", 0, NULL, K_FLAG, F(o.pure_guards), 0, 0, 0, NULL, NULL,
     "every predicate ranks right after its caller"},
    {"producers", 0, NULL, K_FLAG, F(o.producers), 1, 0, 0, NULL, NULL,
     "the function whose answer a ranked function's deciding\n"
     "local takes (the schema's @from lines) ranks right after it (on)"},
    {"no-producers", 0, NULL, K_FLAG, F(o.producers), 0, 0, 0, NULL, NULL,
     "producers rank by their own cost"},
    {"state-writers", 0, "N", K_SIZE, F(o.state_writers), 0, 0, 1e6, NULL, NULL,
     "the functions that write the global or member whose value\n"
     "decided a ranked function's changed calls (the schema's\n"
     "@guardstate lines) rank right after it, when at most N\n"
     "functions write it (3; 0: off)"},
    {"adders", 0, "N", K_SIZE, F(o.adders), 0, 0, 1e6, NULL, NULL,
     "the functions that add to a std:: container (the schema's\n"
     "@items lines) whose walk a ranked function runs longer per\n"
     "call rank right after it, unless more than N add (3; 0: off)"},
    {"count-links", 0, NULL, K_FLAG, F(o.count_links), 1, 0, 0, NULL, NULL,
     "a ranked function whose calls (or calls of a callee) changed,\n"
     "counted 1-4 times over in each run by a call elsewhere made\n"
     "under a predicate's or a state's say (@guard, @guardstate: a\n"
     "thread's queue push feeding another thread's job, an expiry's\n"
     "frees per re-creation), brings that call's caller and\n"
     "predicate right after it (on)"},
    {"no-count-links", 0, NULL, K_FLAG, F(o.count_links), 0, 0, 0, NULL, NULL,
     "equal counts are no evidence"},
    {"deciders-above", 0, NULL, K_FLAG, F(o.deciders_above), 1, 0, 0, NULL, NULL,
     "a function placed as the decider of another's evidence (a\n"
     "producer, a count link, a filler, a size, range, stop or\n"
     "choice decider, an adder's predicate) ranks right above it (on)"},
    {"no-deciders-above", 0, NULL, K_FLAG, F(o.deciders_above), 0, 0, 0, NULL, NULL,
     "placed deciders rank right after the evidence that placed them"},
    {"alternatives", 0, NULL, K_FLAG, F(o.alternatives), 1, 0, 0, NULL, NULL,
     "a ranked function whose work per call grew, called on a\n"
     "predicate's answer whose other answer calls another function\n"
     "(@guard lines of one caller and predicate: a planner's choice\n"
     "of algorithm), brings that predicate right after it (on)"},
    {"no-alternatives", 0, NULL, K_FLAG, F(o.alternatives), 0, 0, 0, NULL, NULL,
     "a choice between two ways is no evidence"},
    {"stops", 0, "N", K_SIZE, F(o.stops), 0, 0, 1e6, NULL, NULL,
     "the functions that decide the limit a ranked function's loop\n"
     "stops at (the schema's @stops: if (len >= plan->nice_len)\n"
     "break;) rank right after it when it walks further per call,\n"
     "unless more than N functions write the limit (3; 0: off)"},
    {"ranges", 0, "N", K_SIZE, F(o.ranges), 0, 0, 1e6, NULL, NULL,
     "the writers of a range a ranked function walks further per\n"
     "call (the schema's @bounds: for (c = d->lo; c < d->hi; c++))\n"
     "whose calls grew more than the walk's, each with its caller\n"
     "that called it far more often, rank right after it, unless\n"
     "more than N functions write the range (3; 0: off)"},
    {"limits", 0, "N", K_SIZE, F(o.limits), 0, 0, 1e6, NULL, NULL,
     "the functions that decide a limit a ranked function's calls\n"
     "are paced by (`if (since_gc >= allowance) collect();`: the\n"
     "schema's @guardstate, @writes and @setfrom lines) rank right\n"
     "after it when each of its calls costs --arc-ratio times more\n"
     "and the limit did not grow, unless more than N write it (3;\n"
     "0: off)"},
    {"sizers", 0, "N", K_SIZE, F(o.sizers), 0, 0, 1e6, NULL, NULL,
     "the functions that write the size of a table a ranked\n"
     "function indexes (the schema's @sizes lines: hash &\n"
     "(ht->nbuckets - 1)), and those that store into it or its\n"
     "count, rank right after it, when at most N of each (3; 0: off)"},
    {"library-last", 0, NULL, K_FLAG, F(o.library_last), 1, 0, 0, NULL, NULL,
     "functions defined in the system's headers (libstdc++'s\n"
     "templates, inline libc helpers) rank after the program's\n"
     "own ranked functions: a fix is never there (on)"},
    {"no-library-last", 0, NULL, K_FLAG, F(o.library_last), 0, 0, 0, NULL, NULL,
     "they rank by their calibrated cost like any function"},
    {"thin-yields", 0, NULL, K_FLAG, F(o.thin_yields), 1, 0, 0, NULL, NULL,
     "a function ranked right after another for that one's evidence\n"
     "(a predicate, producer or state writer) whose own deciding\n"
     "variable has fewer than --min-evidence observations on a side\n"
     "takes the pattern of that evidence (on)"},
    {"no-thin-yields", 0, NULL, K_FLAG, F(o.thin_yields), 0, 0, 0, NULL, NULL,
     "its own anomalous variable gives its pattern, however few its samples"},
    {"inside-yields", 0, NULL, K_FLAG, F(o.inside_yields), 1, 0, 0, NULL, NULL,
     "a function placed for another's evidence whose own variable's\n"
     "buggy observations lie mostly inside the normal range takes\n"
     "the pattern of that evidence (on)"},
    {"no-inside-yields", 0, NULL, K_FLAG, F(o.inside_yields), 0, 0, 0, NULL, NULL,
     "its own anomalous variable gives its pattern, however close to normal"},
    {"branch-calls", 0, NULL, K_FLAG, F(o.branch_calls), 1, 0, 0, NULL, NULL,
     "a function whose calls of a callee changed, at most once per\n"
     "call in both sides (a branch) or once per call repeated (a\n"
     "retry), has the pattern wrong constraint (on)"},
    {"no-branch-calls", 0, NULL, K_FLAG, F(o.branch_calls), 0, 0, 0, NULL, NULL,
     "its variables' tags and the call direction give the pattern"},
    {"loop-first", 0, NULL, K_FLAG, F(o.loop_first), 1, 0, 0, NULL, NULL,
     "a function whose deciding condition says wrong constraint,\n"
     "and whose loop variable reaches larger values than in the\n"
     "normal runs, has the pattern scalability (the paper's rule 2\n"
     "before rule 3) (on)"},
    {"no-loop-first", 0, NULL, K_FLAG, F(o.loop_first), 0, 0, 0, NULL, NULL,
     "the deciding variable alone gives the pattern"},
    {"dispatch-cap", 0, NULL, K_FLAG, F(o.dispatch_cap), 1, 0, 0, NULL, NULL,
     "a function without values or code time of its own ranks\n"
     "below its highest-ranked callee"},
    {"no-dispatch-cap", 0, NULL, K_FLAG, F(o.dispatch_cap), 0, 0, 0, NULL, NULL,
     "such a function ranks by its inherited cost"},
    {"stack-raw", 0, "WHO", K_CHOICE, F(o.stack_raw), 0, 0, 0, "off|branch|all", NULL,
     "with stack samples, whose raw cost is at least the ticks\n"
     "whose whole stack holds it: branch (the default: a function\n"
     "whose branch calls a program callee more often, at most\n"
     "once per call in the normal runs), all, or off"},
    {"main-root", 0, NULL, K_FLAG, F(o.main_root), 1, 0, 0, NULL, NULL,
     "with --whole-run: the program's main is a root when it\n"
     "holds the buggy run, whatever the normal run's unwinding\n"
     "reached"},
    {"no-main-root", 0, NULL, K_FLAG, F(o.main_root), 0, 0, 0, NULL, NULL,
     "main is a root by the same rule as every function"},
    {"entry-guards", 0, NULL, K_FLAG, F(o.entry_guards), 1, 0, 0, NULL, NULL,
     "with --arcs: an entry function's (main, a thread's start\n"
     "routine) calls that a predicate guards (@guard) are tested\n"
     "as a rare caller's, once a run (on)"},
    {"no-entry-guards", 0, NULL, K_FLAG, F(o.entry_guards), 0, 0, 0, NULL, NULL,
     "an entry function's calls are never tested"},
    {"hist-rule", 0, "R", K_CHOICE, F(o.hist_rule), 0, 0, 0, "share|rank", NULL,
     "hist-discounter: share (the default: a function whose share\n"
     "of the run grew beyond sampling noise keeps the part its\n"
     "normal share does not explain) or rank (the paper's rank\n"
     "comparison, with --hist-window)"},
    {"hist-window", 0, "N", K_INT, F(o.hist_window), 0, -1, 1e6, NULL, NULL,
     "with --hist-rule rank: ranks at most N places apart count\n"
     "as similar (3); -1: count a strictly higher normal rank"},
    {"progress", 0, NULL, K_FLAG, F(o.progress), 1, 0, 0, NULL, NULL,
     "progress on stderr (default: if a TTY)"},
    {"no-progress", 0, NULL, K_FLAG, F(o.progress), 0, 0, 0, NULL, NULL, "no progress"},
    {"timeline", 0, "REQ", K_FN, 0, 0, 0, 0, NULL, set_timeline,
     "per-thread timeline of request REQ (latency events)\ninstead of the ranking"},
    {"trace", 0, "FILE", K_STR, F(o.trace), 0, 0, 0, NULL, NULL,
     "also write every latency event as Chrome trace JSON"},
    {"no-demangle", 0, NULL, K_FN, 0, 0, 0, 0, NULL, set_no_demangle,
     "C++ names as linked (mangled), as gprof --no-demangle"},
    {"gprof", 0, NULL, K_FLAG, F(mode), VPR_MODE_GPROF, 0, 0, NULL, NULL,
     "print what gprof -b prints, from EXE and GMON files"},
    {"ad-test", 0, NULL, K_FLAG, F(mode), VPR_MODE_AD_TEST, 0, 0, NULL, NULL,
     "k-sample Anderson-Darling test of two files of numbers"},
    {"quiet", 'q', NULL, K_FLAG, F(o.quiet), 1, 0, 0, NULL, NULL, "no warnings"},
    {"help", 'h', NULL, K_FLAG, 0, 0, 0, 0, NULL, NULL, "this text"},
};

#define N_ROWS (sizeof rows / sizeof rows[0])

static void *field(struct vpr_cli *c, const struct row *r)
{
    return (char *)c + r->off;
}

static int add_dir(struct vpr_cli *c, int side, const char *a)
{
    c->dirs[side][c->n_dirs[side]++] = (char *)a;
    return 0;
}

static int add_normal(struct vpr_cli *c, const char *a) { return add_dir(c, VPR_NORMAL, a); }
static int add_hist_normal(struct vpr_cli *c, const char *a)
{
    c->hist_dirs[VPR_NORMAL][c->n_hist_dirs[VPR_NORMAL]++] = (char *)a;
    return 0;
}
static int add_hist_buggy(struct vpr_cli *c, const char *a)
{
    c->hist_dirs[VPR_BUGGY][c->n_hist_dirs[VPR_BUGGY]++] = (char *)a;
    return 0;
}
static int add_buggy(struct vpr_cli *c, const char *a) { return add_dir(c, VPR_BUGGY, a); }

/* "processing-cost,delta,value" (any order, each once) -> dimension ids */
static int set_dim_order(struct vpr_cli *c, const char *s)
{
    char buf[128];
    snprintf(buf, sizeof buf, "%s", s);
    int order[VPR_N_DIMS], n = 0, seen = 0;
    for (char *save, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int d = -1;
        for (int i = 0; i < VPR_N_DIMS; i++)
            if (!strcmp(t, vpr_dim_name[i]) || (i == VPR_DIM_PROC && !strcmp(t, "proc"))) d = i;
        if (d < 0 || (seen & (1 << d)) || n == VPR_N_DIMS) { n = -1; break; }
        seen |= 1 << d;
        order[n++] = d;
    }
    if (n != VPR_N_DIMS) {
        fprintf(stderr, "vprof-report: --dim-order: '%s' must name value, delta and "
                "processing-cost once each\n", s);
        return -1;
    }
    memcpy(c->o.dim_order, order, sizeof order);
    return 0;
}

static int set_timeline(struct vpr_cli *c, const char *a)
{
    char *end;
    errno = 0;
    c->o.timeline_req = strtoull(a, &end, 0);
    if (errno || end == a || *end || *a == '-') {
        fprintf(stderr, "vprof-report: --timeline: '%s' is not a request id "
                "(an unsigned integer)\n", a);
        return -1;
    }
    c->o.timeline = 1;
    return 0;
}

/* Process-wide: names are demangled where they are printed, in every mode. */
static int set_no_demangle(struct vpr_cli *c, const char *a)
{
    (void)c;
    (void)a;
    vpr_demangle_enable(0);
    return 0;
}

static int parse_real(const struct row *r, const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || *end || end == s || !(v >= r->lo && v <= r->hi)) {
        fprintf(stderr, "vprof-report: --%s: '%s' is not a number in [%g, %g]\n", r->name, s,
                r->lo, r->hi);
        return -1;
    }
    *out = v;
    return 0;
}

/* Position of s in "a|b|c", or -1 after saying which words are allowed. */
static int parse_choice(const struct row *r, const char *s)
{
    int i = 0;
    for (const char *p = r->choices;; i++) {
        size_t n = strcspn(p, "|");
        if (strlen(s) == n && !strncmp(p, s, n)) return i;
        if (!p[n]) break;
        p += n + 1;
    }
    fprintf(stderr, "vprof-report: --%s: '%s' is not ", r->name, s);
    for (const char *p = r->choices; *p;) {
        size_t n = strcspn(p, "|");
        const char *next = p[n] ? p + n + 1 : p + n;
        fprintf(stderr, "%.*s%s", (int)n, p,
                !*next ? "" : strchr(next, '|') ? ", " : " or ");
        p = next;
    }
    fputc('\n', stderr);
    return -1;
}

static int apply(struct vpr_cli *c, const struct row *r, const char *arg)
{
    double x;
    switch (r->kind) {
    case K_FLAG: *(int *)field(c, r) = r->value; return 0;
    case K_STR: *(const char **)field(c, r) = arg; return 0;
    case K_FN: return r->fn(c, arg);
    case K_REAL: return parse_real(r, arg, (double *)field(c, r));
    case K_INT:
        if (parse_real(r, arg, &x) < 0) return -1;
        *(int *)field(c, r) = (int)x;
        return 0;
    case K_SIZE:
        if (parse_real(r, arg, &x) < 0) return -1;
        *(size_t *)field(c, r) = (size_t)x;
        return 0;
    case K_CHOICE: {
        int k = parse_choice(r, arg);
        if (k < 0) return -1;
        *(int *)field(c, r) = k;
        return 0;
    }
    }
    return -1;
}

void vpr_cli_usage(FILE *out)
{
    fputs("usage: vprof-report [options] NORMAL_DIR... BUGGY_DIR...\n"
          "       vprof-report [options] --normal DIR... --buggy DIR...\n"
          "       vprof-report --gprof EXE GMON...\n"
          "       vprof-report --ad-test FILE_A FILE_B\n"
          "       vprof-report --variance [options] RUN_DIR | NORMAL_DIR BUGGY_DIR\n"
          "                    (request-latency variance; --variance --help lists its options)\n"
          "       vprof-report --waits [options] RUN_DIR...\n"
          "                    (the waits that limit throughput; --waits --help lists its options)\n"
          "options:\n", out);
    for (size_t i = 0; i < N_ROWS; i++) {
        const struct row *r = &rows[i];
        char left[64];
        int n = r->short_name ? snprintf(left, sizeof left, "-%c, --%s", r->short_name, r->name)
                              : snprintf(left, sizeof left, "--%s", r->name);
        if (r->arg) n += snprintf(left + n, sizeof left - (size_t)n, " %s", r->arg);
        fprintf(out, "  %-20s%s", left, n > 20 ? "\n" : "");
        for (const char *h = r->help; *h;) {
            size_t len = strcspn(h, "\n");
            fprintf(out, "%*s%.*s\n", n > 20 || h != r->help ? 24 : 2, "", (int)len, h);
            h += len + (h[len] == '\n');
        }
    }
}

/* Operands: report mode splits directories into the sides (first half
 * normal); the other modes take files. */
static int check_operands(struct vpr_cli *c)
{
    if (c->mode == VPR_MODE_AD_TEST) return c->n_args == 2 ? 0 : -1;
    if (c->mode == VPR_MODE_GPROF) return c->n_args >= 1 ? 0 : -1;
    if (c->n_args) {
        if (c->n_dirs[VPR_NORMAL] || c->n_dirs[VPR_BUGGY] || c->n_args % 2) {
            fprintf(stderr, "vprof-report: give an even number of directories "
                    "(normal ones, then as many buggy ones), or use --normal/--buggy\n");
            return -2;
        }
        for (int i = 0; i < c->n_args; i++)
            add_dir(c, i < c->n_args / 2 ? VPR_NORMAL : VPR_BUGGY, c->args[i]);
    }
    if (!c->n_dirs[VPR_NORMAL] || !c->n_dirs[VPR_BUGGY]) {
        fprintf(stderr, "vprof-report: need at least one normal and one buggy run directory\n");
        return -1;
    }
    return 0;
}

static void defaults(struct vpr_cli *c)
{
    memset(c, 0, sizeof *c);
    c->o = (struct vpr_opts){.default_discount = 0.8, .valid_discount = 0.1,
                             .pvalue = 0.05, .top = 10, .reservoir = 4096, .bins = 32,
                             .progress = -1, .hist_window = 3, .min_samples = 8, .guards = 1, .pure_guards = 1, .producers = 1, .state_writers = 3, .sizers = 3, .adders = 3, .limits = 3, .ranges = 3, .stops = 3, .count_links = 1, .alternatives = 1, .deciders_above = 1, .library_last = 1, .branch_calls = 1, .thin_yields = 1, .inside_yields = 1, .loop_first = 1, .entry_guards = 1, .dispatch_cap = 1, .main_root = 1, .stack_raw = VPR_STACK_RAW_BRANCH, .whole_run = 0.9,
                             .min_evidence = 20, .verdicts = 3,
                             .arc_ratio = 4, .arc_min_calls = 10,
                             /* measured on the bench corpus (RESULTS.md,
                              * "Ranking ablation"): blend + arcs +
                              * specificity put the root cause first in 25%
                              * of runs (paper: 15%), in the top 5 in 62%
                              * (54%); extra calls as added cost and
                              * rare callers tested: 33% first; the
                              * run's roots kept to what was added
                              * (--whole-run 0.9): inlined builds 24 ->
                              * 28 of 90 first, no case lower */
                             .rank = VPR_RANK_BLEND, .arcs = 1, .arcs_added = 1, .arc_rare = 1,
                             .tail_calls = 1, .call_counts = 1, .addr_filter = 1, .inline_funcs = 1,
                             .specificity = 1, .ctx_discount = VPR_CTXD_OFF,
                             .dim_order = {VPR_DIM_PROC, VPR_DIM_DELTA, VPR_DIM_VALUE}};
    c->mode = VPR_MODE_REPORT;
}

int vpr_cli_parse(int argc, char **argv, struct vpr_cli *c)
{
    defaults(c);
    for (int s = 0; s < 2; s++) {
        c->dirs[s] = vpf_xcalloc((size_t)argc + 1, sizeof *c->dirs[s]);
        c->hist_dirs[s] = vpf_xcalloc((size_t)argc + 1, sizeof *c->hist_dirs[s]);
    }
    struct option lo[N_ROWS + 1];
    char shorts[2 * N_ROWS + 1];
    size_t ns = 0;
    for (size_t i = 0; i < N_ROWS; i++) {
        lo[i] = (struct option){rows[i].name, rows[i].arg ? required_argument : no_argument,
                                NULL, (int)(256 + i)};
        if (rows[i].short_name) {
            shorts[ns++] = rows[i].short_name;
            if (rows[i].arg) shorts[ns++] = ':';
        }
    }
    lo[N_ROWS] = (struct option){0, 0, 0, 0};
    shorts[ns] = 0;
    int k;
    while ((k = getopt_long(argc, argv, shorts, lo, NULL)) != -1) {
        const struct row *r = NULL;
        if (k >= 256) r = &rows[k - 256];
        for (size_t i = 0; !r && k != '?' && i < N_ROWS; i++)
            if (rows[i].short_name == k) r = &rows[i];
        if (!r) { vpr_cli_usage(stderr); return 2; }
        if (!strcmp(r->name, "help")) { vpr_cli_usage(stdout); return 0; }
        if (apply(c, r, optarg) < 0) return 2;
    }
    c->args = argv + optind;
    c->n_args = argc - optind;
    int rc = check_operands(c);
    if (rc == -1) vpr_cli_usage(stderr);
    return rc < 0 ? 2 : -1;
}

void vpr_cli_free(struct vpr_cli *c)
{
    for (int s = 0; s < 2; s++) {
        free(c->dirs[s]);
        free(c->hist_dirs[s]);
        c->dirs[s] = c->hist_dirs[s] = NULL;
    }
}
