/* arcs.h - call-frequency evidence from gmon's call arcs: a callee called
 * far more (or far less) often per call of its caller in the buggy runs
 * than in the normal ones shows a branch in the caller that started (or
 * stopped) being taken: a decision made in a function that may cost
 * nothing itself. */
#ifndef VPR_ARCS_H
#define VPR_ARCS_H
#include <stdint.h>

#include "model.h"
#include "vprof_format.h"

/* Adds one process's arcs (a main run of side) to the model; bias is the
 * one its histogram was assigned with. */
void vpr_arcs_add(struct vpr_model *m, int side, const struct vpf_gmon *g, uint64_t bias);
/* Adds one process's call counts (vprof-cc --calls: counted before
 * inlining) to the model; vpr_arcs_analyse keeps those gmon has no arc
 * for (calls the compiler inlined). */
void vpr_arcs_add_counts(struct vpr_model *m, int side, const struct vpf_calls *c);
/* Per function, its most significantly changed outgoing arc (m->f[].arc),
 * tested against the normal runs' rate (Poisson); call before
 * vpr_attribute, which may take it as evidence (--arcs). */
void vpr_arcs_analyse(struct vpr_model *m);

#endif
