/* runs.h - run directories (VPROF_OUT) -> profiles -> processes. */
#ifndef VPR_RUNS_H
#define VPR_RUNS_H
#include <stddef.h>
#include "vprof_format.h"

/* What the scan found in one process's files (checks.c judges it). */
struct vpr_found {
    uint64_t values;            /* committed value samples */
    uint64_t unknown;           /* of them, naming a variable id the layout lacks */
    uint32_t unknown_id;        /* one such id */
    int gmon_used;              /* its gmon file was read (and fits the program) */
    double gmon_ticks;          /* histogram counts in it */
    uint64_t gmon_arcs;
    uint64_t lat_events;
};

struct vpr_proc {
    char *id;                   /* the <id> of layout.<id> */
    char *layout_path, *values_path, *gmon_path;  /* NULL if absent */
    char *latency_path;                           /* NULL if absent */
    char *stacks_path;                            /* NULL if absent */
    char *calls_path;                             /* NULL if absent */
    struct vpf_layout layout;
    struct vpr_found found;     /* filled by the scan */
};

/* One profile: the processes of one executable in one run directory (or one
 * process with --per-pid). */
struct vpr_run {
    char *dir;
    char *label;                /* dir, or dir/<id> with --per-pid */
    struct vpr_proc *procs;
    size_t n, cap;
};

struct vpr_side {
    struct vpr_run *runs;
    size_t n, cap;
};

/* Reads the layout logs of every process in each directory (sorted by id,
 * so the result is deterministic). A directory that is missing, has no
 * layout.<id>, or a layout that does not parse is an error (message names
 * the file). Processes of executables other than exe (when exe is non-NULL)
 * are left out and counted in *n_other; -2 when that leaves a directory
 * with none. */
int vpr_side_load(char *const *dirs, size_t n_dirs, int per_pid,
                  const char *exe, struct vpr_side *s, size_t *n_other,
                  char *err, size_t errlen);
void vpr_side_free(struct vpr_side *s);
/* For when no --exe is given: the executable whose processes in dir have
 * the most value-sample bytes (when none has any: stack-sample bytes;
 * first in id order on ties); NULL with a message if there is none.
 * Caller frees. */
char *vpr_first_exe(const char *dir, char *err, size_t errlen);

#endif
