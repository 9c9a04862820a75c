/* hist_assign.h - PC histogram of a gmon file -> ticks per function. */
#ifndef VPR_HIST_ASSIGN_H
#define VPR_HIST_ASSIGN_H
#include "symbols.h"
#include "vprof_format.h"

/* Adds to ticks[i] (one per symbol) the histogram counts of g whose bins
 * overlap symbol i, split in proportion to the overlap exactly as binutils
 * gprof (hist.c, hist_assign_samples) does; a symbol extends to the next
 * symbol's start. bias is subtracted from the histogram's run-time addresses
 * (PIE). Returns the sum of all bin counts (gprof's total_time, the
 * denominator of its flat-profile percentages). */
double vpr_hist_assign(const struct vpf_gmon *g, uint64_t bias,
                       const struct vpr_symtab *t, double *ticks);

#endif
