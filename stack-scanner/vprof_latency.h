/* vprof_latency.h - the request API of the vprof stack scanner (public;
 * included from vprof.h). Each call records one event in latency.<id> when
 * VPROF_LATENCY=on, and costs a load and a branch otherwise. A request id is
 * any 64-bit number the program chooses (e.g. its RPC id); the report joins
 * events of all threads by it (LDB §3.3, §4.2).
 *
 *   vprof_req_start(id)  this thread starts (or resumes) working on request id
 *   vprof_req_block(id)  this thread hands id off (queues it); another thread,
 *                        or this one later, resumes it with vprof_req_start
 *   vprof_req_end(id)    request id is finished on this thread */
#ifndef VPROF_LATENCY_H
#define VPROF_LATENCY_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

void vprof_req_start(uint64_t id);
void vprof_req_block(uint64_t id);
void vprof_req_end(uint64_t id);

#ifdef __cplusplus
}
#endif
#endif
