/* lat_abi.h - the contract between instrumented code (the pass in
 * stack-scanner/pass/LatencyPass.cpp emits exactly this) and the runtime.
 *
 * Every instrumented function keeps one struct vl_frame in its stack frame
 * and links it into a per-thread chain whose head is __vprof_lat_tls.top:
 *
 *   entry:  gen = ++tls.gen;  rec.word = gen;
 *           top = tls.top;  if (top <= &rec) top = __vprof_lat_enter_slow(&rec, top);
 *           rec.prev = top; rec.func = this function; rec.site = return address;
 *           tls.top = &rec;                         (release store)
 *   exit:   tls.top = top;                          (before ret / resume / musttail)
 *   after setjmp-like calls and at landing pads:  tls.top = &rec
 *
 * tls.top and tls.gen form the sequence lock the scanner checks before and
 * after walking a chain (LDB §3.2): a call changes gen, a return changes top
 * to a strictly higher address, so an unchanged pair means an unchanged chain.
 *
 * The canary lives in the top 16 bits of the generation word: the runtime
 * seeds tls.gen with VL_CANARY << 48 at a thread's first instrumented call,
 * so the plain increment at entry stores canary and generation in one move.
 * Records of live callers are always at higher addresses than a callee's
 * record, and the chain ends at VL_SENTINEL (above every address), which is
 * why a top <= &rec at entry means "first call in this thread" (top == NULL)
 * or "the chain points at dead frames" (after longjmp / an exception left
 * through uninstrumented frames): the slow path repairs both. */
#ifndef VPROF_LAT_ABI_H
#define VPROF_LAT_ABI_H

#include <stdint.h>

#define VL_CANARY       0x7f1bULL
#define VL_CANARY_SHIFT 48
#define VL_GEN_MASK     ((1ULL << VL_CANARY_SHIFT) - 1)
#define VL_SENTINEL     ((uintptr_t)-64)   /* chain end, above every record */

struct vl_frame {                 /* 32 bytes, in the instrumented frame */
    uint64_t word;                /* VL_CANARY << 48 | generation */
    struct vl_frame *prev;        /* caller's record, or VL_SENTINEL */
    void *func;                   /* run-time address of the function */
    void *site;                   /* return address into the caller */
};

struct vl_tls {                   /* the hot part: the pass knows offsets 0, 8 */
    struct vl_frame *top;
    uint64_t gen;
    int slot;                     /* registry index + 1; 0 = not registered */
    int internal;                 /* runtime thread or inside a shim: no events */
    int in_emit;                  /* ring producer active (signal reentry guard) */
    int registered_once;          /* slow path ran in this thread */
};

extern __thread struct vl_tls __vprof_lat_tls
    __attribute__((tls_model("initial-exec")));

/* Entry slow path: first instrumented call of a thread (registers it when
 * VPROF_LATENCY is on) or a chain left pointing at dead frames. Returns the
 * record the caller links as its prev. */
struct vl_frame *__vprof_lat_enter_slow(struct vl_frame *rec,
                                        struct vl_frame *top);

#endif
