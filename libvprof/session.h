/* session.h - one profiled process's vprof files, shared by both shells.
 *
 * libvprof's interposition shell (runtime.c) and the glibc patch's glue
 * (glibc-patch/src/vprof-glibc.c) own the timer, the histogram and gmon
 * themselves, but name, open and close vprof's own files the same way
 * (docs/FORMATS.md "Output naming", §3, §4): that part lives here, once. */
#ifndef VPROF_SESSION_H
#define VPROF_SESSION_H

#include <limits.h>
#include <stdint.h>

#include "core.h"
#include "exeinfo.h"

struct vprof_file_id { uint64_t dev, ino; int ok; };

struct vprof_session {
    struct vprof_exeinfo exe;
    int core_status;                    /* 1 values, 0 none, -1 rejected */
    char meta_path[PATH_MAX];
    char meta_err[800];
    char out_dir[PATH_MAX];             /* absolute; "" = no vprof files */
    char id[64];                        /* <pid> or <pid>.<k> */
    char layout_path[PATH_MAX], values_path[PATH_MAX], stacks_path[PATH_MAX];
    int have_layout, have_values, have_stacks;
    struct vprof_file_id layout_file, values_file, stacks_file;  /* reopened by name at exit */
    uint64_t start_ns;
    unsigned hz;                        /* recorded in the layout and values */
    const char *timer;          /* the layout's "timer" line: perf or posix */
};

/* Finds the metadata ($VPROF_META, else <exe>.vmeta if it exists) and
 * initialises the sampling core with it; s->exe must be filled. A rejected
 * file is reported once on stderr and profiling goes on without values. */
void vprof_session_load_metadata(struct vprof_session *s);

/* Picks the output directory and id, creates layout.<id> (and values.<id>
 * when there is metadata, stacks.<id> unless VPROF_STACKS=0) and writes the layout head, the executable
 * mappings and the variables. Also after fork, in the child. */
void vprof_session_open_outputs(struct vprof_session *s);

/* Creates DIR/name in the output directory, exclusively as every vprof
 * file (session.c, "creating files"), for the stack scanner (its
 * latency.<id>, hooks.h). Returns the descriptor (O_RDWR) or -1. */
int vprof_session_create(const struct vprof_session *s, const char *name);

/* Creates this process's gmon file at exit: DIR/gmon.<id>.out with
 * VPROF_OUT, else $GMON_OUT_PREFIX.<pid> or gmon.out in the working
 * directory (glibc's naming); its name goes to path. Returns the
 * descriptor, or -1 with errno. */
int vprof_session_open_gmon(const struct vprof_session *s, char *path, size_t len);

/* Closes the value and stack samples (trimmed to what was used) and
 * appends the layout's end line. The caller has stopped ticks first. */
void vprof_session_close(struct vprof_session *s, struct vprof_core_counts *c);

#endif
