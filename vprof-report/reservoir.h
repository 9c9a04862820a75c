/* reservoir.h - bounded, deterministic uniform sample of a stream. */
#ifndef VPR_RESERVOIR_H
#define VPR_RESERVOIR_H
#include <stddef.h>
#include <stdint.h>

/* Algorithm R (Vitter) with a splitmix64 generator seeded by the caller, so
 * the same input stream always keeps the same values: memory is
 * cap doubles however long the stream is. */
struct vpr_reservoir {
    double *v;
    size_t n, cap;
    uint64_t seen, rng;
};

void vpr_res_init(struct vpr_reservoir *r, size_t cap, uint64_t seed);
void vpr_res_add(struct vpr_reservoir *r, double x);
void vpr_res_free(struct vpr_reservoir *r);

#endif
