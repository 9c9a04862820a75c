/* vprof-glibc.h - the calls that the patched glibc (gmon/gmon.c and the
 * SIGPROF handler of sysdeps/posix/profil.c) makes into vprof.
 *
 * This glue is the glibc counterpart of libvprof's interposition shell: it
 * decides where this process's files go and feeds glibc's profiling tick to
 * the libvprof sampling core (core.h). glibc keeps its own mcount, its own
 * histogram, its own ITIMER_PROF at __profile_frequency() and its own
 * gmon.out writer; vprof only adds value samples, the layout log and the
 * per-process naming of the gmon file. The code is plain C against the
 * public libc API, so it builds both inside glibc (gmon/vprof/) and on the
 * host for tests. */
#ifndef VPROF_GLIBC_H
#define VPROF_GLIBC_H

/* Inside libc.so these stay out of the dynamic symbol table. */
#ifdef attribute_hidden
# define VPROF_GLIBC_API attribute_hidden
#else
# define VPROF_GLIBC_API
#endif

/* From __monstartup, after glibc allocated its buffers and before it arms
 * the timer: reads the VPROF_* environment, loads the variable metadata
 * and creates layout.<id> (and values.<id>). hz is glibc's tick rate.
 * Returns 1 when vprof manages this process's files (VPROF_OUT is set or
 * metadata was loaded), 0 when the process is profiled by plain glibc. */
extern int __vprof_glibc_start (unsigned long lowpc, unsigned long highpc,
                                int hz) VPROF_GLIBC_API;

/* From the SIGPROF handler, with its ucontext_t. Async-signal-safe. */
extern void __vprof_glibc_tick (void *ucontext) VPROF_GLIBC_API;

/* From write_gmon: a descriptor for DIR/gmon.<id>.out when VPROF_OUT names
 * the files, or -1 to keep glibc's naming (gmon.out, GMON_OUT_PREFIX). */
extern int __vprof_glibc_gmon_open (void) VPROF_GLIBC_API;

/* In a fork child (atfork handler), single-threaded: new id, new files.
 * Returns 1 when vprof is active, in which case the caller resets the
 * child's histogram and arcs (they are the parent's) and re-arms the
 * profiling timer, which fork does not inherit. */
extern int __vprof_glibc_fork_child (void) VPROF_GLIBC_API;

/* From _mcleanup after the gmon file is written (the timer is already
 * stopped): waits for ticks in flight, closes the sample file cleanly and
 * ends the layout log. */
extern void __vprof_glibc_stop (void) VPROF_GLIBC_API;

#endif
