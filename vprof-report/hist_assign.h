/* hist_assign.h - PC histogram of a gmon file -> ticks per function. */
#ifndef VPR_HIST_ASSIGN_H
#define VPR_HIST_ASSIGN_H
#include "symbols.h"
#include "vprof_format.h"

/* Adds to ticks[i] (one per symbol) the histogram counts of g whose bins
 * overlap symbol i, split in proportion to the overlap exactly as binutils
 * gprof (hist.c, hist_assign_samples) does; a symbol extends to the next
 * symbol's start, or only to its own end when t->exact (the ranking: time
 * in PLT stubs and padding is no function's). bias is subtracted from the histogram's run-time addresses
 * (PIE). Returns the sum of all bin counts (gprof's total_time, the
 * denominator of its flat-profile percentages). */
double vpr_hist_assign(const struct vpf_gmon *g, uint64_t bias,
                       const struct vpr_symtab *t, double *ticks);
/* The same pieces handed to each(ctx, symbol, link-time address of the
 * piece's middle, credit): the ranking gives code inlined from another
 * function to that function. */
double vpr_hist_assign_each(const struct vpf_gmon *g, uint64_t bias,
                            const struct vpr_symtab *t,
                            void (*each)(void *ctx, size_t sym, uint64_t addr, double credit),
                            void *ctx);

/* The bias to remove from a gmon file's addresses. glibc (and the vprof
 * runtime, like it) write PIE addresses relative to the load address, while
 * FORMATS.md allows run-time ones: a histogram that already lies inside the
 * symbols' link-time range needs no bias; otherwise run_bias (the layout's
 * load bias) if known, else the page distance from the histogram start to
 * the first symbol. */
uint64_t vpr_gmon_bias(const struct vpf_gmon *g, const struct vpr_symtab *t,
                       uint64_t run_bias, int have_run_bias);

/* Is g a profile of the program t describes (bias as vpr_gmon_bias gave)?
 * glibc and the vprof runtime write a histogram from the start of the
 * program's image to its etext: one that overlaps none of t's code, runs
 * more than a few bytes past its end, or starts before it and ends well
 * before etext, is another program's; and call arcs
 * lead to function entries (mcount is called in the prologue), so when most
 * arcs land elsewhere the file is of another program or build. Returns 0, or
 * -1 with a message naming path and what does not fit. */
int vpr_gmon_check(const struct vpf_gmon *g, uint64_t bias, const struct vpr_symtab *t,
                   const char *path, char *err, size_t errlen);

#endif
