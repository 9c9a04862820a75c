/* contexts_runs.h - vprof's own stack samples (stacks.<id>, FORMATS.md §7,
 * written with VPROF_STACKS) as input of the calling-context analysis
 * (contexts.h): every process of a run directory into one side's tree,
 * its PCs symbolized with the executable's symbols (symbols.h, as the
 * rest of the report) and, for library frames, the library's own. */
#ifndef VPR_CONTEXTS_RUNS_H
#define VPR_CONTEXTS_RUNS_H
#include <stddef.h>

#include "contexts.h"
#include "runs.h"
#include "lines.h"
#include "symbols.h"

/* The symbol tables stack PCs are named with, loaded once per file. */
struct vpr_csyms {
    const struct vpr_symtab *exe;       /* given (the model's), or NULL */
    const char *exe_path;               /* the file exe was read from */
    const char *exe_override;           /* --exe: read the program's symbols here */
    const struct vpr_lines *exe_lines;  /* exe's inlined code (given), or NULL:
                                           inlined functions become frames */
    int inline_frames;                  /* the same for programs read here */
    int force;                          /* --force: a program whose build-id is not
                                           the runs' is read anyway (the user asked) */
    struct vpr_csym_file *files;        /* loaded on demand */
    size_t n, cap;
};

void vpr_csyms_free(struct vpr_csyms *sy);

/* One run directory's processes (run r of side s) as one run of tree t:
 * their stacks.<id> files, each thread's ticks in time order. A process
 * without the file adds nothing; a run without any is an error, as is a
 * file that does not parse (messages name the file). clock: enum
 * vpr_ctx_clock (CPU: each tick advances its thread's clock by its weight
 * times the sampling period). *n_files: files read. */
int vpr_ctx_load_run(const struct vpr_run *r, struct vpr_ctree *t, struct vpr_cnames *nm,
                     struct vpr_csyms *sy, int clock, size_t *n_files, char *err,
                     size_t errlen);

#endif
