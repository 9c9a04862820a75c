/* hooks.h - optional parts linked into libvprof (the stack scanner and its
 * shims). The runtime calls these when they are linked in (weak references:
 * absent means no-op), so the sampling core does not depend on them. */
#ifndef VPROF_HOOKS_H
#define VPROF_HOOKS_H

#include <stdint.h>

/* Called once the output directory and this process's file id are known
 * (after the layout log is created). dirfd stays open for the process's
 * life; id is e.g. "4242" or "4242.1" (FORMATS.md "Output naming"). Starts
 * the scanner thread if VPROF_LATENCY asks for it. */
void vprof_latency_start(int dirfd, const char *id, uint64_t start_ns) __attribute__((weak));
/* In the child after fork: new id, fresh latency file, scanner restarted. */
void vprof_latency_atfork_child(int dirfd, const char *id) __attribute__((weak));
/* At exit (from _mcleanup) and on SIGTERM/SIGINT: drain and close. */
void vprof_latency_stop(void) __attribute__((weak));
/* First thing in a thread started by libvprof's pthread_create: who
 * created it (tid), when pthread_create was called (CLOCK_MONOTONIC ns),
 * the start routine and the creator's return address. Writes a thread
 * start event (FORMATS.md §5.1). */
void vprof_latency_thread_start(uint32_t creator, uint64_t t0, void *fn,
                                void *site) __attribute__((weak));

#endif
