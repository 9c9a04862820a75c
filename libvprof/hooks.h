/* hooks.h - the one interface between libvprof's runtime (runtime.c) and
 * the stack scanner (stack-scanner/rt), which libvprof.so and libvprof.a
 * always contain (the scanner stays idle unless VPROF_LATENCY=on).
 *
 * Calls go one way: the runtime calls the scanner's entry points below
 * (strong references, so that a static link with libvprof.a pulls the
 * scanner in), and the scanner reaches
 * the runtime only through the services the runtime hands it in
 * struct vprof_latency_args. In particular the scanner never calls
 * pthread_create or pthread_sigmask itself: inside libvprof those names
 * bind to the interposed wrappers that serve the program's threads (a
 * profiling timer, SIGPROF unblocked), which vprof's own threads must never
 * get. */
#ifndef VPROF_HOOKS_H
#define VPROF_HOOKS_H

#include <pthread.h>
#include <stdint.h>

/* What the runtime offers the scanner. */
struct vprof_rt_services {
    /* Starts a thread of vprof's own: libc's pthread_create, every signal
     * blocked in the new thread (libc's own mask), no profiling timer —
     * before profiling starts, while it runs and in a fork child alike.
     * Returns pthread_create's result. */
    int (*thread_create)(pthread_t *t, const pthread_attr_t *attr,
                         void *(*fn)(void *), void *arg);
    /* Creates the output file `name` (e.g. "latency.4242") beside the
     * process's other files, as the runtime creates all of them:
     * exclusively, never through an existing file or link, with the mode
     * of the run (0600 in a setuid/setgid process). Returns an O_RDWR
     * descriptor, or -1 with errno. */
    int (*create_file)(const char *name);
};

struct vprof_latency_args {
    const char *id;             /* "4242" or "4242.1" (FORMATS.md "Output naming") */
    uint64_t start_ns;          /* CLOCK_MONOTONIC at this process's start */
    const struct vprof_rt_services *rt;
};

/* Binds every interposed function of the scanner's shims (read, write,
 * close, pthread_mutex_lock, ...) to the real one. Called before the first
 * profiling tick: a tick can reach those shims (libunwind calls read), and
 * binding takes dlsym's lock, which a tick must never wait for. */
void vprof_latency_bind(void);
/* Called once the output directory and this process's file id are known
 * (after the layout log is created). Starts the scanner thread if
 * VPROF_LATENCY asks for it. */
void vprof_latency_start(const struct vprof_latency_args *a);
/* In the child after fork: new id, fresh latency file, scanner restarted. */
void vprof_latency_atfork_child(const struct vprof_latency_args *a);
/* At exit (from _mcleanup) and on SIGTERM/SIGINT: drain and close. */
void vprof_latency_stop(void);
/* First thing in a thread started by libvprof's pthread_create: who
 * created it (tid), when pthread_create was called (CLOCK_MONOTONIC ns),
 * the start routine and the creator's return address. Writes a thread
 * start event (FORMATS.md §5.1). */
void vprof_latency_thread_start(uint32_t creator, uint64_t t0, void *fn,
                                void *site) __attribute__((weak));

#endif
