/* model.h - what vprof-report knows about a pair of sides (normal, buggy):
 * functions with their costs per run, variables with their bounded samples
 * per dimension, and the results of the discounters. */
#ifndef VPR_MODEL_H
#define VPR_MODEL_H
#include <stddef.h>
#include <stdint.h>

#include "lines.h"
#include "reservoir.h"
#include "runs.h"
#include "symbols.h"
#include "vprof_format.h"

enum { VPR_NORMAL = 0, VPR_BUGGY = 1 };
/* Attribution of a global's discount ratio (--globals): to the functions
 * the schema's `@uses` lines name (by the global's base name), to every
 * function whose PCs sampled it (the paper's text), or to none (the paper's
 * artifact: globals only feed variable-based cost and are reported apart). */
/* Bug pattern rules (--pattern-rules): the paper's §5.2 text, or its
 * artifact's (pattern.c). */
/* --rank: the paper's calibrated cost (1 - r) x max(PC cost, variable
 * cost), or tick-level blame (blame.c). */
enum vpr_rank { VPR_RANK_PAPER, VPR_RANK_BLAME, VPR_RANK_ADDED, VPR_RANK_BLEND };
/* --blame: the frame of a buggy tick that takes its cost, among the frames
 * with anomalous evidence. */
enum vpr_blame { VPR_BLAME_DEEPEST, VPR_BLAME_SHALLOWEST, VPR_BLAME_SPLIT, VPR_BLAME_MAX };
enum vpr_stack_raw { VPR_STACK_RAW_OFF, VPR_STACK_RAW_BRANCH, VPR_STACK_RAW_ALL };
enum vpr_pattern_rules { VPR_PATTERN_ARTIFACT, VPR_PATTERN_PAPER };
enum vpr_globals { VPR_GLOBALS_USES, VPR_GLOBALS_SAMPLED, VPR_GLOBALS_NONE };
/* --hist-rule: the hist-discounter compares shares of the run (default) or ranks */
enum vpr_hist_rule { VPR_HIST_SHARE, VPR_HIST_RANK };
enum vpr_dim { VPR_DIM_VALUE, VPR_DIM_DELTA, VPR_DIM_PROC, VPR_N_DIMS };
extern const char *const vpr_dim_name[VPR_N_DIMS];

struct vpr_opts {
    double default_discount, valid_discount, pvalue;
    int top, per_pid, force, json, quiet;
    int globals;                /* enum vpr_globals: where a global's discount goes */
    int dim_order[3];           /* dimensions by preference on equal ratios */
    int pattern_rules;          /* enum vpr_pattern_rules */
    int rank;                   /* enum vpr_rank: the calibrated cost's rule */
    int blame;                  /* enum vpr_blame: which anomalous frame of a tick */
    int blame_range;
    size_t min_samples;         /* fewer buggy observations: undefined */
    double whole_run;           /* share of the largest cost on both sides that
                                   makes a function a root of the run (0: off) */
    int specificity;            /* weigh a global's anomaly by 1/(its users) */
    int fdr;                    /* Benjamini-Hochberg over all tests */
    int arcs;                   /* call-frequency changes are evidence */
    int arcs_added;             /* ... and their extra calls' cost is added cost */
    int arc_rare;               /* ... also for callers called too rarely for a rate */
    int call_counts;            /* ... with vprof-cc --calls' counts (calls.<id>) */
    int tail_calls;             /* ... with arcs through sibling calls given to the
                                   function called (tailcalls.c) */
    int addr_filter;            /* values that look like ASLR addresses are left out */
    int run_constants;          /* a variable that never changed in a run gives a
                                   processing-cost sample of the run's length */
    int inline_funcs;           /* inlined functions are functions of their own (model.c) */
    double arc_ratio;           /* ... of at least this factor */
    size_t arc_min_calls;       /* ... of callers called this often a side */
    size_t min_evidence;        /* fewer observations a side: thin evidence */
    size_t verdicts;            /* top functions with a verdict in the text */
    int verbose;                /* text: every variable of every shown function */            /* a sample counts only outside the normal range */
    int ctx_discount;           /* enum vpr_ctx_discount (ctx_rank.h) */
    int hist_rule;              /* enum vpr_hist_rule */
    int guards;                 /* a changed call's predicate ranks after its caller */
    int pure_guards;            /* ... above it when the schema calls it pure (@predicate) */
    int producers;              /* a deciding local's producer ranks after its reader */
    int library_last;           /* system-header functions after the program's */
    int loop_first;             /* a loop variable grown beats a deciding condition
                                   (pattern.c, vpr_loop_grew) */
    int thin_yields;            /* a function placed for another's evidence takes
                                   its pattern when its own variable is thin */
    int inside_yields;          /* ... or when most of that variable's buggy
                                   observations lie inside the normal range */
    int branch_calls;           /* a changed call made at most once per call on both
                                   sides, or once per call then repeated: wrong
                                   constraint (pattern.c) */
    size_t state_writers;       /* writers of a guard's state rank after its holder
                                   when at most this many (0: off) */
    size_t adders;              /* the functions that add to a container whose walk
                                   a ranked function runs longer per call rank after
                                   it, when at most this many (0: off) */
    size_t ranges;              /* the writers of a range a ranked function walks further
                                   rank after it, when at most this many (0: off) */
    size_t stops;               /* the deciders of a walk's stopping limit rank after it
                                   when at most N write it (@stops; 0: off) */
    int count_links;            /* a function called as often as a guarded call elsewhere
                                   is made brings that call's caller and predicate */
    int deciders_above;         /* a placed decider (a producer, a count link, a
                                   filler, a size, range, stop or choice decider)
                                   ranks right above its anchor, not after */
    int alternatives;           /* the predicate that chose a ranked function over
                                   another way of doing its job ranks after it */
    size_t sizers;              /* the functions that size or fill a table whose
                                   index a ranked function uses rank after it,
                                   when at most this many of each (0: off) */
    size_t limits;              /* the functions that decide a limit that did not keep
                                   pace with the work it paces rank after that work,
                                   when at most this many write it (0: off) */
    int dispatch_cap;           /* a callees-only function ranks below its callees */
    int main_root;              /* main is a root of the run when it holds the buggy one */
    int stack_raw;              /* whose raw cost is at least the stack samples'
                                   through it (enum vpr_stack_raw) */
    int entry_guards;           /* an entry function's guarded calls are tested (arcs.c) */
    int hist_window;            /* hist-discounter by rank: ranks within this many
                                   places count as similar; -1: strictly higher in normal */
    const char *exe, *html;
    const char *trace;          /* --trace FILE, or NULL */
    int timeline;               /* --timeline given */
    uint64_t timeline_req;      /* its request id */
    size_t reservoir;           /* samples kept per variable, dimension, side */
    size_t bins;                /* Hellinger bins */
    int progress;               /* -1 auto (TTY), 0 off, 1 on */
};

/* Outcome of one dimension of one variable. */
enum vpr_dim_state {
    VPR_DS_NONE = 0,            /* no buggy samples: not used */
    VPR_DS_SAME,                /* AD not rejected: DefaultDiscount */
    VPR_DS_DIFFERS,             /* AD rejected: 1 - Hellinger (or 0) */
    VPR_DS_NO_NORMAL,           /* buggy samples only: anomalous, r = 0 */
    VPR_DS_UNDEFINED,           /* too few / identical values: DefaultDiscount */
};

struct vpr_pccount { uint64_t pc; uint64_t n; };

struct vpr_var {
    char *file, *function, *name, *type;
    uint32_t line;
    uint16_t tags;
    uint8_t kind, size;
    struct vpr_reservoir res[2][VPR_N_DIMS];
    uint64_t n[2][VPR_N_DIMS];
    double lo[VPR_N_DIMS], hi[VPR_N_DIMS];      /* normal range; lo > hi: none */
    double blo[VPR_N_DIMS], bhi[VPR_N_DIMS];    /* buggy range, likewise */
    struct vpr_pccount *out[VPR_N_DIMS];        /* buggy samples out of it, per PC */
    size_t n_out[VPR_N_DIMS], cap_out[VPR_N_DIMS];
    uint32_t *out_ix[VPR_N_DIMS];               /* hash PC -> out index + 1 */
    size_t out_ix_cap[VPR_N_DIMS];
    uint64_t n_outside[VPR_N_DIMS];
    uint64_t addr_like[2];      /* samples whose bits look like an address under
                                   ASLR (scan.c): left out of value and delta */
    long *funcs;                /* functions whose PCs sampled it */
    size_t n_funcs, cap_funcs;
    /* discounter results */
    enum vpr_dim_state st[VPR_N_DIMS];
    double dim_r[VPR_N_DIMS], dim_p[VPR_N_DIMS], dim_stat[VPR_N_DIMS],
           dim_h[VPR_N_DIMS];
    double r;                   /* lowest dimension */
    int dim;                    /* which, -1 if none */
    double spec;                /* specificity: 1, or 1/k for a global
                                   attributed to k functions (--specificity) */
    size_t n_attr;              /* functions it is attributed to */
};

/* VPR_DISC_LATENCY: the function's own latency dimension (latency.h) gave
 * the lowest ratio. */
/* VPR_DISC_LOCK: it held locks others waited for longer in the buggy run
 * (latency.c, charge_owners). */
/* VPR_DISC_CONTEXT: its calling contexts' growth (ctx_rank.c) stood in
 * for the hist-discounter (--context-discount). */
enum vpr_discounter { VPR_DISC_NONE, VPR_DISC_VARIABLE, VPR_DISC_HIST, VPR_DISC_LATENCY,
                      VPR_DISC_LOCK, VPR_DISC_ARC, VPR_DISC_CONTEXT };

/* inlined: the function whose inlined code the line is (lines.c), NULL if
 * the function's own; owned by the model's line table. */
struct vpr_location { char *file; unsigned line; long block; const char *block_kind; uint64_t n;
                      const char *inlined; };

/* A call arc between two functions: calls summed over the main runs. */
/* from: the function making the call (under --inline-functions the
 * innermost one inlined at the call instruction); host: the symbol's
 * function holding that instruction, whose calls the rate is per (an
 * inlined copy has no call count of its own). from == host when nothing is
 * inlined there. */
struct vpr_arc {
    uint32_t from, to, host;
    double count[2];
    int sibling;                /* made through a sibling call (tailcalls.c) */
    int src;                    /* VPR_ARC_GMON, _COUNTER (vprof-cc --calls), _DROPPED */
};
enum { VPR_ARC_GMON = 0, VPR_ARC_COUNTER, VPR_ARC_DROPPED };

/* A counted call (vprof-cc's calls.<id>) of a function outside the
 * program - free(), close() - which gmon never sees: it has no model
 * function, only its name and counts (--count-links reads them). */
struct vpr_libarc {
    uint32_t from;
    char *callee;               /* the counts file's name */
    double count[2];
};

/* A function's calls (in, summed over the main runs) and its most
 * significantly changed outgoing arc (arcs.c). */
struct vpr_arcinfo {
    double calls[2];
    double ccalls[2];           /* calls of it counted by vprof-cc --calls */
    long to;                    /* callee, -1: no significant change */
    double per[2];              /* the calls its rate of `to` is per: its own,
                                   or for an inlined copy its host symbol's */
    double count[2];            /* its calls of `to` */
    double expected;            /* buggy calls of `to` at the normal rate */
    double p, change;           /* Poisson tail; |log(rate_b / rate_n)| */
    int dir;                    /* +1 more calls per call, -1 fewer */
    int rare;                   /* caller too rarely called for a rate: expected
                                   from the workload's growth (--arc-rare) */
    int sibling;                /* its calls of `to` are sibling calls, which gmon
                                   records as its callers' (--tail-calls) */
};

struct vpr_func {
    char *name;
    int is_lib;                 /* pseudo-function "[libfoo.so]" */
    int inl_only;               /* a function the compiler inlined everywhere: no
                                   symbol, only its inlined copies (model.c) */
    long host[4];               /* inl_only: the symbols its PC time was in (-1 none),
                                   host_sec their shares: where gprof counts it */
    double host_sec[4];
    char *src_name;             /* inl_only: its source name when name is the
                                   linkage name (C++), else NULL */
    long sym;                   /* symtab index or -1 */
    double *pc_sec[2], *var_sec[2];             /* per run, seconds */
    double pc_cost[2], var_cost[2], raw[2];     /* mean over runs */
    double r;
    enum vpr_discounter disc;
    long var;                   /* lowest variable, -1 */
    int dim;
    unsigned hist_h, hist_c;
    const struct vpf_schema_from *guard;   /* the @guard line of its calls of arc.to
                                              (writers.c), NULL if none */
    long guard_of;              /* ranked right after this caller, whose changed
                                   calls wait for its answer (-1: not; --guards) */
    int guard_above;            /* with guard_of: ranked right above it instead, a
                                   pure predicate (--pure-guards) */
    int placed_above;           /* ranked right above the function vpr_ranked_after
                                   names, as its decider (--deciders-above) */
    long producer_of;           /* ranked right after this function, whose deciding
                                   local takes its answer (-1: not; --producers) */
    long state_of;              /* ranked right after this function, whose changed
                                   calls a branch on a state it writes decided
                                   (-1: not; --state-writers) */
    const struct vpf_schema_from *state;   /* the first @guardstate line of its calls
                                              of arc.to, NULL if none */
    const struct vpf_schema_from *state_via;  /* with state_of: the @guardstate line
                                                 of state_of's calls whose state this
                                                 function writes */
    long link_of;               /* ranked right after this function, called as many
                                   times in each run as link_from calls link_to on a
                                   predicate's or a state's say (-1: not; --count-links) */
    long link_from;             /* with link_of: that call's caller (this function,
                                   or the predicate deciding its call) */
    const char *link_to;        /* with link_of: its callee (a program function's or
                                   a library function's name) */
    int link_per;               /* with link_of: link_from's calls of link_to per
                                   call of link_of (1: one for one) */
    int link_by_arc;            /* with link_of: per call link_of made of its
                                   changed callee (arc.to), not per call of it */
    long size_of;               /* ranked right after this function, which uses
                                   an index into a table this function sizes or
                                   fills (-1: not; --sizers) */
    const char *size_via;       /* with size_of: the table's size (a @sizes state) */
    int size_role;              /* with size_of: VPR_SIZER (writes the size),
                                   VPR_FILLER (stores into the table, or its count),
                                   VPR_ADDER (adds to a walked container) or
                                   VPR_LIMIT or VPR_LIMIT_LOW (decides the
                                   limit a guard paces calls by) or
                                   VPR_ADD_GUARD (decides an adder's adds) */
    double share[2];            /* --hist-rule share: its raw cost over the runs'
                                   CPU time, per side (0: the rank rule decided) */
    double share_ticks[2];      /* ... and the ticks that cost is, summed over runs */
    double calibrated;
    double blamed;              /* buggy ticks it took the blame for, x (1 - r), s/run */
    double lock_cost;           /* waits it caused others in the buggy runs (added), s/run */
    int system;                 /* defined in the system's headers (libstdc++'s
                                   templates): --library-last */
    int whole_run;              /* holds (almost) the whole run on both sides: main,
                                   a thread's start routine, an event loop */
    double added;               /* raw cost the buggy runs added beyond the normal
                                   runs' proportions (discount.c), s/run */
    double cpu_raw;             /* raw[VPR_BUGGY] from the samples alone, before the
                                   latency, lock and arc dimensions raise it */
    struct vpr_arcinfo arc;
    double blamed_raw;          /* the same ticks, unweighted */
    long blame_var;             /* variable that took most of it, -1 */
    const char *pattern;
    const char *file;           /* where it is defined (DWARF), or NULL */
    unsigned line;
    struct vpr_location *loc;   /* anomalous-sample locations */
    size_t n_loc, cap_loc;
    size_t *vars;               /* variables attributed to it */
    size_t n_vars, cap_vars;
};

/* The function f was ranked right after for that one's evidence (a caller
 * whose changed calls wait for f's answer, a reader of it, or a caller whose
 * changed calls a state f writes decided), or -1. */
static inline long vpr_ranked_after(const struct vpr_func *f)
{
    return f->guard_of >= 0 ? f->guard_of : f->producer_of >= 0 ? f->producer_of :
           f->state_of >= 0 ? f->state_of : f->size_of >= 0 ? f->size_of : f->link_of;
}

enum { VPR_SIZER = 1, VPR_FILLER = 2, VPR_ADDER = 3,
       VPR_LIMIT = 4,           /* a limit that did not keep pace with the paced work */
       VPR_LIMIT_LOW = 5,       /* a limit that made the paced calls far more frequent */
       VPR_ADD_GUARD = 6,       /* a predicate whose answer decides an adder's adds */
       VPR_RANGE = 7,           /* widens a range a walk runs over, or calls what does */
       VPR_SIZE_CHOICE = 8,     /* computed the size a sizer stored (@setfrom) */
       VPR_STOP = 9,            /* decides the limit a walk's loop stops at (@stops) */
       VPR_ALT_CHOICE = 10 };   /* chose the ranked function over another way
                                   (size_via: the way not chosen; --alternatives) */

struct vpr_latency;
struct vpr_mctx;

struct vpr_side_stats {
    size_t runs, procs, values_files, gmon_files, calls_files;
    size_t gmon_skipped;        /* --force: gmon files of another program left out */
    double gmon_ticks;          /* histogram counts read */
    uint64_t gmon_arcs;
    uint64_t value_samples, uncommitted, unknown_var, dropped, faults;
    uint32_t unknown_id;        /* the last variable id missing from a layout */
    uint64_t value_bytes;
    unsigned hz;
};

struct vpr_model {
    const struct vpr_opts *o;
    const char *exe;
    struct vpr_symtab sym;
    struct vpr_lines *lines;
    struct vpf_schema schema;
    int has_schema;
    struct vpr_func *f;
    size_t n_f, cap_f;
    struct vpr_var *v;
    size_t n_v, cap_v;
    size_t *vh;                 /* open-addressing hash of var keys, +1 */
    size_t vh_cap;
    size_t n_runs[2];
    size_t n_hruns[2];
    double *run_cpu[2];         /* per run (n_runs + n_hruns): its processes' ticks
                                   over their rate (the layout logs' end lines) */
    struct vpr_arc *arcs;       /* arcs.c */
    size_t n_arcs, cap_arcs, *arc_h, arc_hcap;
    struct vpr_libarc *libarcs; /* counted calls into other libraries (arcs.c) */
    size_t n_libarcs, cap_libarcs;
    double arc_growth;          /* the buggy workload's size / the normal one's,
                                   bounded from call counts and CPU time (arcs.c) */          /* --hist-normal/--hist-buggy runs, after n_runs in
                                   pc_sec/var_sec: the hist-discounter's only */
    struct vpr_side_stats st[2];
    uint64_t *vf_set;           /* (var + 1) << 32 | function: globals' functions */
    size_t vf_cap, vf_n;
    size_t *order;              /* function indices, ranked */
    struct vpr_latency *lat;    /* latency events (latency.h), NULL if none */
    struct vpr_mctx *ctx;       /* calling contexts (ctx_rank.h), NULL if none */
    char ctx_note[200];         /* why there are none, or "" */
    size_t *uses_h, uses_cap;   /* hash of the schema's @uses, +1 (discount.c) */
    uint64_t *attr_set;         /* (var + 1) << 32 | function: attributions */
    size_t attr_cap, attr_n;
    double *blame_vc;           /* blame per variable (blame.c), for blame_var */
    size_t *clones;             /* symbols of gcc's pieces of a function
                                   ("f.constprop.0", "f.cold"), model.c */
    size_t n_clones;
    long *inl_f;                /* --inline-functions: lines' linkage-name id ->
                                   function, -1 none (model.c) */
    struct vpr_inl_cache *icache;   /* PC -> inlined chain, direct-mapped */
    size_t n_order;
};

int vpr_model_init(struct vpr_model *m, const struct vpr_opts *o,
                   const char *exe, size_t n_normal, size_t n_buggy,
                   size_t n_hist_normal, size_t n_hist_buggy,
                   char *err, size_t errlen);
void vpr_model_free(struct vpr_model *m);
/* Variable by (file, function, name), created on first sight. */
size_t vpr_model_var(struct vpr_model *m, const struct vpf_layout_var *lv);
/* Function index for a symbol index, or a pseudo-function by name. */
size_t vpr_model_lib_func(struct vpr_model *m, const char *name);
/* A function of the program by symbol name, else by the symbol of a piece
 * gcc made of it ("f.constprop.0", "f.isra.0", "f.part.0"; a ".cold" part
 * only when there is no other), else an inlined-only function by its
 * linkage or source name; -1 if none. */
long vpr_model_func_by_name(const struct vpr_model *m, const char *name);
/* Calls fn(ctx, symbol) for every piece gcc made of source function name
 * (f.constprop.0, f.part.0, f.cold, ...): all of them are its code. */
void vpr_model_each_clone(const struct vpr_model *m, const char *name,
                          void (*fn)(void *ctx, size_t sym), void *ctx);
/* The functions inlined at link-time PC pc of the executable, outermost
 * first, into out (the innermost max of them; never the function holding
 * pc's symbol):
 * with --inline-functions the logical frames above the physical one.
 * Returns how many. */
/* Deepest inline chain kept per PC (innermost functions first to stay):
 * layered code (a write path through ten thin wrappers) inlines deeply. */
#define VPR_INLINE_CHAIN_MAX 32
size_t vpr_model_inline_chain(struct vpr_model *m, uint64_t pc, long *out, size_t max);
/* The function whose code link-time PC pc is: the innermost function
 * inlined there (--inline-functions), else f, the symbol's. What PC time,
 * lock sites and call sites are credited to. */
long vpr_model_code_func(struct vpr_model *m, uint64_t pc, long f);
/* An inlined-only function's PC time found in symbol sym: where gprof
 * counts it (vpr_model_host: the symbol with the most, -1 if none). */
void vpr_model_note_host(struct vpr_func *f, long sym, double credit);
long vpr_model_host(const struct vpr_func *f);
/* Is link-time PC pc code of function fi: in its symbol, or in one of its
 * inlined copies? Pseudo-functions of libraries hold every PC. */
int vpr_model_pc_in(struct vpr_model *m, size_t fi, uint64_t pc);
/* CPU seconds per run the histogram gave the program's functions on side
 * s (PLT stubs left out): the runs' total, for the workload's growth. */
double vpr_program_time(const struct vpr_model *m, int s);
/* A PLT stub (symbols.c add_plt): linker glue, not ranked. */
static inline int vpr_is_plt(const struct vpr_model *m, const struct vpr_func *f)
{
    return f->sym >= 0 && (size_t)f->sym < m->sym.n && m->sym.syms[f->sym].plt;
}

#endif
