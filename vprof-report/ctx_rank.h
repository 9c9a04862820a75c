/* ctx_rank.h - calling contexts in the main ranking (issue 16): when the
 * runs recorded stack samples (stacks.<id>, VPROF_STACKS), the report
 * builds IntroPerf's calling-context trees of both sides (contexts.h) and
 * tells, for each function it ranks, the contexts it was hot in; where a
 * function has no value samples, the contexts' evidence can stand in for
 * the hist-discounter (--context-discount); and the outputs say when the
 * context ranking and vprof's ranking disagree. */
#ifndef VPR_CTX_RANK_H
#define VPR_CTX_RANK_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "contexts.h"
#include "model.h"

/* --context-discount: when the contexts' ratio replaces the
 * hist-discounter's rank comparison for a function without variables. */
enum vpr_ctx_discount { VPR_CTXD_NOVALUES, VPR_CTXD_ALL, VPR_CTXD_OFF };

#define VPR_MCTX_TOP 3          /* contexts kept per function */

/* One calling context of a function: a node of the buggy tree. */
struct vpr_fctx {
    uint32_t node;
    double own[2];              /* its own time, ns per run (normal: the equivalent node) */
    double added;               /* own[1] - scale x own[0], ns per run (>= 0) */
    size_t path_rank;           /* best rank of a differential path through it (1-based) */
};

struct vpr_mctx {
    struct vpr_cnames nm;
    struct vpr_ctree t[2];
    struct vpr_cpath *paths;    /* the differential path ranking */
    size_t np;
    int est;
    double scale;               /* total own time, buggy / normal runs */
    size_t n_f;                 /* per function of the model: */
    double *own[2];             /* own time over its contexts, ns per run */
    double *added;              /* its contexts' growth beyond the runs' proportions */
    uint64_t *inst[2];          /* its instances (Algorithm 2), per run */
    double *incl[2];            /* samples whose stack holds it, per run (each
                                   sample once, recursion or not) */
    struct vpr_fctx *top;       /* VPR_MCTX_TOP per function, most added first */
    size_t *n_top;
    size_t *best_path;          /* best path rank through it, 0: none */
};

/* Builds the trees from the runs' stacks.<id> when every run of both sides
 * has them (m->ctx stays NULL, and *note says why, when none or only some
 * have); symbols from the model's (exe_path: the file they were read
 * from, exe_override: --exe). 0, or -1 with err (a file that does not
 * parse). */
int vpr_mctx_load(struct vpr_model *m, const struct vpr_side sides[2], const char *exe_path,
                  const char *exe_override, char *note, size_t notelen, char *err, size_t errlen);
void vpr_mctx_free(struct vpr_mctx *c);

/* The contexts' discount ratio of function i: 1 - (the own time its
 * contexts added beyond the runs' proportions) / (its buggy own time),
 * below --valid-discount 0; NaN when the stack samples never saw it. */
double vpr_mctx_ratio(const struct vpr_model *m, size_t i);

/* The stand-in (called by vpr_attribute for a function without
 * variables, after the hist-discounter): per --context-discount, the
 * contexts' ratio replaces the rank comparison (disc VPR_DISC_CONTEXT). */
void vpr_mctx_discount(struct vpr_model *m, size_t i);

/* A context as a compact chain "main > serve > lookup" (the last `last`
 * functions, "... > " before them when cut), demangled, into buf. */
void vpr_mctx_chain(const struct vpr_model *m, uint32_t node, size_t last, char *buf, size_t len);

/* Where the two rankings disagree, for the outputs: vprof's first
 * function, when its contexts did not grow (its contexts' ratio at least
 * DefaultDiscount); and the context ranking's first path's hottest
 * function, when vprof ranks it below its shown functions. */
struct vpr_mctx_disagree {
    long vprof_top;             /* function whose contexts did not grow, -1 */
    double vprof_top_r;
    long ctx_top;               /* the top path's hottest function, -1 */
    size_t ctx_top_rank;        /* its vprof rank (0: not ranked) */
    uint32_t ctx_top_node;
};
int vpr_mctx_disagree(const struct vpr_model *m, struct vpr_mctx_disagree *d);

/* Outputs (out_text.c, out_json.c, out_html.c call these; no-ops without
 * contexts). */
void vpr_mctx_text_func(FILE *o, const struct vpr_model *m, size_t f);
void vpr_mctx_text_summary(FILE *o, const struct vpr_model *m);
void vpr_mctx_json_func(FILE *o, const struct vpr_model *m, size_t f);
void vpr_mctx_json_summary(FILE *o, const struct vpr_model *m);
void vpr_mctx_html_func(FILE *o, const struct vpr_model *m, size_t f);
void vpr_mctx_html_summary(FILE *o, const struct vpr_model *m);

#endif
