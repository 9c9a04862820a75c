/* variance.h - vprof-report --variance: which functions make request latency
 * vary (VProfiler, papers/001 §3; docs/vprof-report.md "Variance").
 *
 * Semantic intervals are requests (vprof_req_start .. vprof_req_end, across
 * threads) or, with --root FUNC, the calls of one function. Each interval's
 * time is walked backwards from its end along hand-off and wake-up edges
 * (Algorithm 2, variance_walk.c) and split exactly over the nodes of a
 * variance tree: call paths, waits, queueing. Across intervals every node's
 * variance and every pair of siblings' covariance are summed in exact
 * integer arithmetic, so Var(parent) = Σ Var(child) + 2 Σ Cov(child_i,
 * child_j) holds to the last bit of the sums (variance_tree.c); factors are
 * ranked by specificity² × contribution (Eq. 3-4, Algorithm 1). */
#ifndef VPR_VARIANCE_H
#define VPR_VARIANCE_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "latency.h"
#include "model.h"
#include "runs.h"

/* Options of --variance, with their defaults (docs/vprof-report.md). */
struct vpr_vopts {
    int k;                  /* --factors: top-k factors (3, paper §3.4) */
    double d;               /* --min-contribution: factor threshold, fraction
                               of the total variance (0.05) */
    double inherent_r2;     /* --inherent-r2: share of a factor's variance the
                               request's work explains linearly (0.5) */
    double show;            /* --show: smallest node share printed (0.01) */
    int depth;              /* --edge-depth: edges followed from one wait (4) */
    const char *work_var;   /* --work-var [FUNC:]NAME: the work of an interval is
                               the largest value of this variable sampled on its
                               threads during it, instead of vprof_req_work (none) */
    const char *root;       /* --root FUNC: calls of FUNC are the intervals */
    const char *export_path;/* --export FILE: per-interval node times */
    int plain;              /* --plain-selection: Algorithm 1 without dropping
                               factors that repeat a selected one below them */
};

/* Kinds of tree nodes. */
enum vpr_vtype {
    VT_ROOT, VT_FUNC, VT_BODY, VT_MUTEX, VT_COND, VT_SYSCALL, VT_QUEUED, VT_UNEXPLAINED,
    /* the other waits of --latency programs (FORMATS.md §5.1) */
    VT_SEM, VT_JOIN, VT_SPIN, VT_RWLOCK, VT_BARRIER,
    VT_N
};

/* Exact sums of one node over the intervals of one side. */
struct vpr_vacc {
    __int128 s1, s2;        /* Σ x, Σ x² (ns, ns²) */
    long double sw;         /* Σ x·w (w = the interval's work) */
    uint64_t present;       /* intervals with x > 0 */
};

struct vpr_vnode {
    uint32_t parent;        /* UINT32_MAX for the root */
    uint32_t body;          /* the body child, UINT32_MAX for body nodes */
    uint8_t type;           /* enum vpr_vtype */
    uint16_t depth;
    long f;                 /* function (VT_FUNC), syscall number (VT_SYSCALL) */
    uint32_t first_child, next_sibling;     /* real children (not the body) */
    int height;             /* 0 for a node without real children */
    struct vpr_vacc acc[2];
    /* results per side */
    double var[2];          /* sample variance, ns² */
    double mean[2];         /* ns */
    double r2[2];           /* Cov(x, w)² / (Var x · Var w), 0 if Cov <= 0 */
};

/* Σ x_a·x_b of two siblings, per side. */
struct vpr_vpair { uint32_t a, b; __int128 s[2]; double cov[2]; };

/* One ranked factor (Algorithm 1): a function (all its nodes), a body, a
 * wait kind, or a pair of them (covariance). */
struct vpr_vfactor {
    int is_pair;
    uint8_t type[2];
    long f[2];              /* key of each member (body: type VT_BODY, f of
                               the parent's key, parent type in ptype) */
    uint8_t ptype[2];
    int height;
    double spec;            /* (H - height)² */
    double contri[2];       /* Σ (co)variance terms, ns², per side */
    double share;           /* contri of the side ranked / its total variance */
    double score;
    double r2;              /* variance-weighted R² with the work */
    int inherent;           /* -1 unknown (no work measure), 0, 1 */
};

struct vpr_vside {
    uint64_t n;             /* intervals */
    uint64_t incomplete;    /* requests without an end (or start), left out */
    uint64_t unexplained;   /* intervals with an unexplained gap */
    uint64_t with_work;     /* intervals with a work measure */
    long double sw, sww;    /* Σ w, Σ w² */
    uint64_t *lat;          /* every interval's latency, ns (sorted at the end) */
    size_t cap_lat;
    uint64_t max_lat;
    size_t runs, limited;   /* run directories, latency files under VPROF_LATENCY_FUNCS */
    double var_w;           /* variance of the work */
};

/* Samples of the --work-var variable in one process (latency process index),
 * sorted by (tid, t). */
struct vpr_wsmp { uint32_t tid; uint64_t t; double x; };
struct vpr_vwork { struct vpr_wsmp *s; size_t n, cap; };

struct vpr_variance {
    const struct vpr_model *m;
    struct vpr_vwork *work; /* --work-var: per latency process, else NULL */
    const struct vpr_vopts *o;
    long root_f;            /* --root function, or -1 (requests) */
    int sides;              /* bit 0 normal present, bit 1 buggy present */
    struct vpr_vnode *nodes;
    size_t n_nodes, cap_nodes;
    size_t *nh, nh_cap;     /* hash (parent, type, f) -> node + 1 */
    struct vpr_vpair *pairs;
    size_t n_pairs, cap_pairs;
    size_t *ph, ph_cap;     /* hash (a, b) -> pair + 1 */
    struct vpr_vside side[2];
    /* results */
    struct vpr_vfactor *factors;    /* every factor, ranked by score (buggy
                                       side, or the only side) */
    size_t n_factors;
    size_t top[16], n_top;  /* indices of the selected top-k */
    struct vpr_vfactor *delta;      /* two sides: factors of the increase */
    size_t n_delta, dtop[16], n_dtop;
    int rank_side;          /* the side ranked: buggy if present */
    FILE *export_f;
    int overflow;           /* exact sums would overflow: error */
    uint8_t *ntop;          /* per node: rank of the top factor it is in, 0 */
    /* scratch of the interval being built */
    int64_t *x;             /* per node, ns */
    uint32_t *tl;           /* touched nodes */
    uint32_t *heap;
    size_t n_tl, cap_tl;
};

/* --work-var: reads the variable's samples of every process with latency
 * events (values.<id>) into v->work; -1 with a message when no process
 * samples a variable of that name. */
int vpr_vwork_load(struct vpr_variance *v, struct vpr_side sides[2], char *err, size_t errlen);
/* The work of a stay: the largest sampled value on tid in [a, b], or -1. */
double vpr_vwork_max(const struct vpr_vwork *w, uint32_t tid, uint64_t a, uint64_t b);

/* Node of (parent, type, f), created on first sight (with its body). */
uint32_t vpr_vnode_get(struct vpr_variance *v, uint32_t parent, uint8_t type, long f);
/* Building one interval: ns of its time spent directly in node (charged to
 * the node's body), then commit: inclusive times of every node it touched,
 * added to the sums of side s with its work w (< 0: none). The interval's
 * (pid, id) name it in --export. */
void vpr_vtree_time(struct vpr_variance *v, uint32_t node, uint64_t ns);
void vpr_vtree_commit(struct vpr_variance *v, int s, int64_t w, int pid, uint64_t id);
/* The exact numerators n·Σxy − Σx·Σy of a node's variance and a pair's
 * covariance on side s; (co)variance = numerator / (n(n-1)). */
__int128 vpr_vnum_node(const struct vpr_variance *v, uint32_t id, int s);
__int128 vpr_vnum_pair(const struct vpr_variance *v, const struct vpr_vpair *p, int s);
/* Variances, covariances, heights, factors (Algorithm 1), labels. */
void vpr_vtree_finish(struct vpr_variance *v);
void vpr_variance_free(struct vpr_variance *v);

/* Walks every interval of every process of the model (Algorithm 2) into
 * v's tree; -1 with a message when --root names no function. */
int vpr_vwalk_all(struct vpr_variance *v, char *err, size_t errlen);

/* Names for output: "lookup_item", "lookup_item (self)", "[mutex wait]". */
void vpr_vnode_name(const struct vpr_variance *v, uint32_t id, char *buf, size_t len);
void vpr_vfactor_name(const struct vpr_variance *v, const struct vpr_vfactor *f, char *buf,
                      size_t len);
/* Real children of node id, by variance of side s, largest first (caller
 * frees). */
uint32_t *vpr_vchildren(const struct vpr_variance *v, uint32_t id, int s, size_t *n);
/* The pair of siblings a, b (a != b), or NULL. */
const struct vpr_vpair *vpr_vpair_find(const struct vpr_variance *v, uint32_t a, uint32_t b);
/* Whether node id belongs to a selected top factor of variance (not a
 * covariance pair): its rank (1-based), or 0. */
int vpr_vnode_top(const struct vpr_variance *v, uint32_t id);
double vpr_vpct(const struct vpr_vside *s, double q);    /* latency percentile, ns */
/* A time in ns as people read it, 3 digits: "15.2 ms", "44.1 µs" (text and HTML). */
void vpr_vfmt_ns(char *buf, size_t len, double ns);

/* Outputs (out_variance.c, out_variance_html.c). The "next" advice needs
 * the call graph: callees[f] lists f's callees from gmon arcs. */
struct vpr_vnext { long *callee; size_t *n_callee, *off; size_t n_f; };
void vpr_vout_text(FILE *o, const struct vpr_variance *v, const struct vpr_vnext *nx);
void vpr_vout_json(FILE *o, const struct vpr_variance *v, const struct vpr_vnext *nx);
int vpr_vout_html(const char *path, const struct vpr_variance *v, char *err, size_t errlen);
/* Functions to add to VPROF_LATENCY_FUNCS to open the top factors'
 * subtrees: their callees (gmon arcs) that have no node below them.
 * Returns a malloc'd comma list ("" if none). */
char *vpr_vnext_list(const struct vpr_variance *v, const struct vpr_vnext *nx, int with_seen);

/* The --variance mode (variance_main.c): argv as given to vprof-report. */
int vpr_variance_main(int argc, char **argv);

#endif
