/* lat_wake.h - who woke whom (FORMATS.md §5.1): the wakers' note table, the
 * wake events of the waiters, and the descriptor classes of fd waits.
 * Internal to the stack-scanner runtime. */
#ifndef VPROF_LAT_WAKE_H
#define VPROF_LAT_WAKE_H

#include <stdint.h>

#include "lat_rt.h"

/* Waker side: "this thread releases/signals obj now, from site". Called
 * before the real release, so that a woken thread always finds the note.
 * Lock-free; a note that collides with a concurrent writer is dropped. */
VL_HIDDEN void vl_wake_note(uint64_t obj, uint64_t t, uint64_t site);

/* Waiter side, after a wait on obj that lasted [t0, t1]: when a note on
 * obj was left during the wait, writes the wake event (kind 9, class cls)
 * and returns 1; else 0. */
VL_HIDDEN int vl_wake_event(uint64_t obj, uint64_t t0, uint64_t t1, uint32_t cls);

/* This thread's tid (registering it when recording), else gettid(). */
VL_HIDDEN uint32_t vl_self_tid(void);

/* Descriptor classes (enum vpf_fd_class) and device/peer ids, cached per
 * fd: pipe()/pipe2()/socketpair() fill the cache, close()/dup2()/dup3()
 * clear it, a slow call on an unknown fd asks fstat. 0 = not known. */
VL_HIDDEN uint32_t vl_fd_class(int fd, uint64_t *id);
VL_HIDDEN void vl_fd_set(int fd, uint32_t cls, uint64_t id);
VL_HIDDEN void vl_fd_forget(int fd);
/* Class of a cached fd without a syscall (0 = not cached). */
VL_HIDDEN uint32_t vl_fd_cached(int fd, uint64_t *id);

#endif
