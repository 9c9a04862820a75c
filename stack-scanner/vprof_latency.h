/* vprof_latency.h - the request and wait APIs of the vprof stack scanner (public;
 * included from vprof.h). Each call records one event in latency.<id> when
 * VPROF_LATENCY=on, and costs a load and a branch otherwise. A request id is
 * any 64-bit number the program chooses (e.g. its RPC id); the report joins
 * events of all threads by it (LDB §3.3, §4.2).
 *
 *   vprof_req_start(id)  this thread starts (or resumes) working on request id
 *   vprof_req_block(id)  this thread hands id off (queues it); another thread,
 *                        or this one later, resumes it with vprof_req_start
 *   vprof_req_end(id)    request id is finished on this thread
 *   vprof_req_work(id, n) request id does n more units of work (items, bytes:
 *                        a size measure of the program's choice; summed). The
 *                        variance report labels time that grows with it as
 *                        inherent rather than pathological
 *   vprof_req_wake(id)   this thread made request id able to go on (finished
 *                        an I/O, a reply, a group commit it waits for) without
 *                        handing it off: the report follows this edge back
 *
 * Waits the OS does not see (spin loops, busy waiting; `vprof-report --waits`,
 * paper 003 §4.1). obj is any address both sides agree on, e.g. the flag:
 *
 *   vprof_wait_begin(obj) this thread starts waiting for obj (before the loop)
 *   vprof_wait_end(obj)   ... and stops (after the loop); a wait shorter than
 *                         VPROF_WAIT_NS is not recorded
 *   vprof_wake(obj)       this thread is about to release the waiters of obj:
 *                         call it BEFORE the store that ends their loop, so
 *                         that a waiter that leaves its loop finds the note
 *
 *   vprof_wait_begin(&ready); while (!atomic_load(&ready)) pause();
 *   vprof_wait_end(&ready);                  ...   vprof_wake(&ready); ready = 1; */
#ifndef VPROF_LATENCY_H
#define VPROF_LATENCY_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

void vprof_req_start(uint64_t id);
void vprof_req_block(uint64_t id);
void vprof_req_end(uint64_t id);
void vprof_req_work(uint64_t id, uint64_t units);
void vprof_req_wake(uint64_t id);

void vprof_wait_begin(const void *obj);
void vprof_wait_end(const void *obj);
void vprof_wake(const void *obj);

#ifdef __cplusplus
}
#endif
#endif
