/* pattern.h - bug pattern inference (vProf §5.2) and the source locations
 * of a function's anomalous samples. */
#ifndef VPR_PATTERN_H
#define VPR_PATTERN_H
#include "model.h"

#define VPR_PAT_MISSING "missing-constraint"
#define VPR_PAT_SCALABILITY "scalability"
#define VPR_PAT_WRONG "wrong-constraint"
#define VPR_PAT_NONE "none"

/* Rules 1-4 in order for function f. top_raw: f has the highest raw cost
 * in the buggy runs (rule 4 applies only to it). */
const char *vpr_infer_pattern(const struct vpr_model *m,
                              const struct vpr_func *f, int top_raw);
/* For every ranked function: pattern, and the lines (and schema basic
 * blocks) where its most anomalous variable's buggy samples fell outside
 * the normal range, most frequent first (at most max_loc). */
void vpr_patterns(struct vpr_model *m, size_t max_loc);
/* The function whose evidence gives f its pattern - the caller f is the
 * predicate of (guard_of) or the reader of f's answer (producer_of) - when
 * f has no anomalous variable of its own; -1 otherwise. */
long vpr_pattern_link(const struct vpr_model *m, const struct vpr_func *f);

/* f's changed calls of its callee (arcs.c) were made at most once per call
 * of f on both sides (a branch taken more or less often), or exactly once
 * per call in the normal runs and repeatedly in the buggy ones (a retry)
 * (--branch-calls). */
int vpr_branch_calls(const struct vpr_model *m, const struct vpr_func *f);

/* --loop-first: a loop variable of f whose values grew beyond the normal
 * runs' (value or delta), which makes a deciding condition's wrong
 * constraint a scalability bug; -1 if none or off. */
long vpr_loop_grew(const struct vpr_model *m, const struct vpr_func *f);

#endif
