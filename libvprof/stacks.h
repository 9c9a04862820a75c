/* stacks.h - VPROF_STACKS: the call chain of every tick (return addresses,
 * the program's frames and its libraries'), into stacks.<id> (FORMATS.md
 * §7), for vprof-report --contexts (IntroPerf's calling-context analysis).
 *
 * Part of the sampling core: vprof_core_tick calls vprof_stacks_tick, so
 * both shells (libvprof and the glibc patch) record stacks; the session
 * (session.c) opens and closes the file. Everything named *_tick is
 * async-signal-safe: no allocation, no lock, bounded. */
#ifndef VPROF_STACKS_H
#define VPROF_STACKS_H

#include <stddef.h>
#include <stdint.h>
#include <ucontext.h>

/* Creates the stack sample file on fd (owned from now on: closed once it
 * is mapped) for up to `frames` PCs per tick (1..VPF_STACKS_FRAMES_MAX)
 * and `capacity` ticks. text_lo/hi: the executable's run-time text, where
 * frames are followed by their frame pointers. 0, or -1 with err. */
int vprof_stacks_open(int fd, unsigned frames, uint64_t capacity, uint32_t hz,
                      uint64_t start_ns, uint64_t text_lo, uint64_t text_hi,
                      char *err, size_t errlen);

/* Records the interrupted thread's call chain; no-op without a file. */
void vprof_stacks_tick(const ucontext_t *uc, uint64_t now_ns, unsigned weight, uint32_t tid);

/* After fork, in the child: forget the parent's file without touching it. */
void vprof_stacks_fork_child(void);

/* Normal exit (no tick may run during or after it): marks the file closed
 * cleanly and unmaps it; *records: ticks stored, *dropped: not stored
 * because the file was full. */
void vprof_stacks_close(uint64_t *records, uint64_t *dropped);

#endif
