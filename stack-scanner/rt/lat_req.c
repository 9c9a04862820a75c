/* lat_req.c - the request API (vprof_latency.h): one event per call, with
 * the caller's call site, when VPROF_LATENCY=on (FORMATS.md §5, kinds 5-7,
 * 20, 21). */
#include "lat_rt.h"
#include "vprof_latency.h"

/* arg: the duration_ns field, which only kind 20 (work units) uses. */
static void req_event(uint8_t kind, uint64_t id, uint64_t arg, void *ret)
{
    if (!__atomic_load_n(&vl_recording, __ATOMIC_RELAXED) || __vprof_lat_tls.internal)
        return;
    vl_emit(kind, vl_now(), arg, id, (uint64_t)ret - 1, 0, 0);
}

void vprof_req_start(uint64_t id)
{
    req_event(VPF_LAT_REQ_START, id, 0, __builtin_return_address(0));
}

void vprof_req_block(uint64_t id)
{
    req_event(VPF_LAT_REQ_BLOCK, id, 0, __builtin_return_address(0));
}

void vprof_req_end(uint64_t id)
{
    req_event(VPF_LAT_REQ_END, id, 0, __builtin_return_address(0));
}

void vprof_req_work(uint64_t id, uint64_t units)
{
    req_event(VPF_LAT_REQ_WORK, id, units, __builtin_return_address(0));
}

void vprof_req_wake(uint64_t id)
{
    req_event(VPF_LAT_REQ_WAKE, id, 0, __builtin_return_address(0));
}
