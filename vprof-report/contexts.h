/* contexts.h - differential calling-context ranking from stack samples
 * (IntroPerf, paper 002 §3: Algorithms 1-3).
 *
 * A side's stack samples (time, thread, call chain from the bottom) build a
 * calling-context tree (Algorithm 1: a node per function per context,
 * paths identified by their leaf). Function instance latencies come from
 * the continuity of calling context (Algorithm 2): a frame whose function
 * and everything below it stay the same from one sample of its thread to
 * the next is the same instance; a change at depth d ends every instance
 * at depth >= d. An instance seen first at t_s and last at t_e, whose
 * context changed at t_k, lasted t_e - t_s (conservative) or t_k - t_s
 * (aggressive); the sample interval bounds the error of both. Latencies
 * are summed per node and per run; a node's own latency is its latency
 * minus its children's (top-down normalization, Algorithm 3). Paths of the
 * buggy tree are ranked by the sum over their nodes of (buggy - normal) own
 * latency, a path the normal runs never had counting its normal side as 0
 * (DiffRankPaths); within a path, its functions are ranked by own latency. */
#ifndef VPR_CONTEXTS_H
#define VPR_CONTEXTS_H
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

enum vpr_ctx_estimate { VPR_CTX_CONSERVATIVE, VPR_CTX_AGGRESSIVE };

struct vpr_cnode {
    uint32_t f;                 /* function (index in the shared name table) */
    uint32_t parent;            /* UINT32_MAX for the root */
    uint32_t child, sibling;    /* first child, next sibling; UINT32_MAX: none */
    uint64_t count;             /* function instances */
    double lat[2];              /* summed latency, ns: conservative, aggressive */
    double own[2];              /* lat minus the children's (>= 0) */
    uint64_t leaf;              /* samples whose innermost frame it was */
};

/* Function names shared by both sides' trees, so that equivalent paths
 * (the same functions in the same order) compare by index. */
struct vpr_cnames {
    char **name;
    size_t n, cap;
    uint32_t *h;                /* open addressing: index + 1 */
    size_t hcap;
};

struct vpr_ctree {
    struct vpr_cnode *n;        /* n[0] is the root */
    size_t nn, cap;
    uint32_t *h;                /* (parent, f) -> node + 1 */
    size_t hcap;
    size_t runs;                /* latencies are per run: divided by this */
    uint64_t samples;
    uint64_t truncated;         /* samples whose stack was cut (deeper than recorded) */
};

/* One thread's state while its samples are read in time order. */
struct vpr_cthread;

struct vpr_cbuild {
    struct vpr_ctree *t;
    struct vpr_cnames *names;
    struct vpr_cthread *th;     /* by tid */
    size_t n_th, cap_th;
};

uint32_t vpr_cname(struct vpr_cnames *nm, const char *s);
void vpr_cnames_free(struct vpr_cnames *nm);
void vpr_ctree_init(struct vpr_ctree *t);
void vpr_ctree_free(struct vpr_ctree *t);

/* Algorithm 2, one run: feed its samples in time order per thread (threads
 * may interleave), then finish. frames[0] is the bottom of the stack
 * (main or the thread's start routine). */
void vpr_cbuild_begin(struct vpr_cbuild *b, struct vpr_ctree *t, struct vpr_cnames *nm);
void vpr_cbuild_sample(struct vpr_cbuild *b, uint32_t tid, uint64_t t_ns,
                       const uint32_t *frames, size_t depth);
void vpr_cbuild_end(struct vpr_cbuild *b);

/* The time stack samples are placed at (--clock): wall (their timestamps)
 * or the thread's CPU time, counted as the sampling periods of its ticks
 * so far (ticks follow CPU time: the gaps between a thread's ticks are then
 * free of the time it spent off the CPU, blocked or waiting for a core). */
enum vpr_ctx_clock { VPR_CLOCK_CPU, VPR_CLOCK_WALL };

/* Per-thread CPU time summed from tick periods. */
struct vpr_tclock {
    uint32_t *tid;
    uint64_t *ns;
    size_t n, cap;              /* open addressing, cap a power of two */
};
/* Adds ns to thread tid's clock and returns it. */
uint64_t vpr_tclock_add(struct vpr_tclock *c, uint32_t tid, uint64_t ns);
void vpr_tclock_free(struct vpr_tclock *c);

/* Algorithm 3's normalization: own latencies of every node. */
void vpr_ctree_normalize(struct vpr_ctree *t);

struct vpr_cpath {
    uint32_t leaf;              /* node of the buggy tree */
    double cost;                /* ns per run */
    int is_new;                 /* absent from the normal tree */
};

/* DiffRankPaths: the buggy tree's paths, highest cost first (ties by leaf
 * id). Returns a malloc'd array of *n. */
struct vpr_cpath *vpr_ctx_rank(const struct vpr_ctree *normal, const struct vpr_ctree *buggy,
                               int est, size_t *n);
/* The node of `tree` with the same functions from the root as node `leaf`
 * of `from`, or UINT32_MAX. */
uint32_t vpr_ctx_equivalent(const struct vpr_ctree *tree, const struct vpr_ctree *from,
                            uint32_t leaf);

/* For every node of `from`, its equivalent node of `to` (the same
 * functions from the root) or UINT32_MAX: a malloc'd array of from->nn. */
uint32_t *vpr_ctx_map(const struct vpr_ctree *to, const struct vpr_ctree *from);

/* The nodes of the path ending at leaf, bottom first, into out (at most
 * cap: a deeper path loses its bottom); returns how many. */
size_t vpr_ctx_path_nodes(const struct vpr_ctree *t, uint32_t leaf, uint32_t *out, size_t cap);

/* Index in nodes[0..k) of the node with the most own time (the first of
 * equals): the path's hottest function. */
size_t vpr_ctx_hottest(const struct vpr_ctree *t, const uint32_t *nodes, size_t k, int est);

/* Index in nodes[0..k) of the node most samples ended in (their innermost
 * frame; the first of equals), the hottest by own time when none did: the
 * function a sampling profiler would call the path's hottest. The
 * conservative estimate gives a function whose calls are shorter than a
 * tick no latency, and their time to the first long-lived caller (main, in
 * a deep recursion of short calls), which suits IntroPerf's ranking of
 * paths (--contexts keeps vpr_ctx_hottest) but not a sentence naming the
 * function the time was spent in. */
size_t vpr_ctx_busiest(const struct vpr_ctree *t, const uint32_t *nodes, size_t k, int est);

/* A ranked comparison, as the renderers take it. */
struct vpr_ctx_view {
    const struct vpr_ctree *t[2];       /* normal, buggy (normalized) */
    const struct vpr_cnames *nm;
    const struct vpr_cpath *p;          /* vpr_ctx_rank's paths */
    size_t np;
    int est;
    size_t top;                         /* paths shown (0 = all) */
};

/* The HTML views (out_contexts_html.c): the heat map of the top paths
 * (rows: paths in rank order, columns: their functions from the bottom,
 * colour: own latency on a log scale, each cell numbered by its distance
 * from the path's hottest function, as the paper's Figure 7) and the
 * differential flame graph (widths: the buggy runs' time, colour: the
 * change against the normal runs), as sections of a page... */
void vpr_ctx_html_sections(FILE *o, const struct vpr_ctx_view *v);
/* ...or as a page of their own (--contexts --html FILE). */
int vpr_ctx_html(const char *path, const struct vpr_ctx_view *v, char *err, size_t errlen);

/* vprof-report --contexts (contexts_main.c). */
int vpr_contexts_main(int argc, char **argv);

#endif
