/* checks.h - whether the inputs can answer the question, decided before
 * anything is ranked: every process must be of the build of the executable
 * that is analysed, every value sample must name a variable its layout log
 * describes, and every profile must hold something to compare. What is
 * missing is said first, and a report that would be empty or wrong is not
 * printed (exit 1); --force turns the mismatches into warnings. */
#ifndef VPR_CHECKS_H
#define VPR_CHECKS_H
#include "model.h"
#include "runs.h"

/* Build-ids: the layouts of the two sides against each other, and every
 * layout against the executable the symbols come from (sym). Returns 0 to
 * go on, 1 after printing why not. */
int vpr_check_build_ids(const struct vpr_side sides[2], const struct vpr_symtab *sym,
                        const struct vpr_opts *o);

/* What the scan found (vpr_proc.found): unknown variable ids, profiles
 * with nothing in them, processes cut short (no 'end' line, no gmon file:
 * SIGKILL or _exit), sides without value samples. Returns 0 to go on
 * (after the warnings), 1 after printing why the report cannot be made. */
int vpr_check_data(const struct vpr_side sides[2], const struct vpr_opts *o);

#endif
