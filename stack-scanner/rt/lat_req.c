/* lat_req.c - the request API (vprof_latency.h): one event per call, with
 * the caller's call site, when VPROF_LATENCY=on. */
#include "lat_rt.h"
#include "vprof_latency.h"

static void req_event(uint8_t kind, uint64_t id, void *ret)
{
    if (!__atomic_load_n(&vl_recording, __ATOMIC_RELAXED) || __vprof_lat_tls.internal)
        return;
    vl_emit(kind, vl_now(), 0, id, (uint64_t)ret - 1, 0, 0);
}

void vprof_req_start(uint64_t id)
{
    req_event(VPF_LAT_REQ_START, id, __builtin_return_address(0));
}

void vprof_req_block(uint64_t id)
{
    req_event(VPF_LAT_REQ_BLOCK, id, __builtin_return_address(0));
}

void vprof_req_end(uint64_t id)
{
    req_event(VPF_LAT_REQ_END, id, __builtin_return_address(0));
}
