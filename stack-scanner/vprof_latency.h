/* vprof_latency.h - the request API of the vprof stack scanner (public;
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
 *                        handing it off: the report follows this edge back */
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

#ifdef __cplusplus
}
#endif
#endif
