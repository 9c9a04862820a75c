/* reservoir.c - reservoir sampling; the array grows lazily up to cap so
 * variables with few samples cost little. */
#include "reservoir.h"
#include "vprof_xalloc.h"

#include <stdlib.h>

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void vpr_res_init(struct vpr_reservoir *r, size_t cap, uint64_t seed)
{
    r->v = NULL;
    r->n = 0;
    r->cap = cap;
    r->seen = 0;
    r->rng = seed;
}

void vpr_res_add(struct vpr_reservoir *r, double x)
{
    uint64_t i = r->seen++;
    if (r->n < r->cap) {
        if (r->n == 0 || (r->n >= 16 && (r->n & (r->n - 1)) == 0)) {
            size_t nc = r->n ? 2 * r->n : 16;   /* 16, 32, 64, ... */
            if (nc > r->cap) nc = r->cap;
            r->v = vpf_xrealloc(r->v, nc, sizeof *r->v);
        }
        r->v[r->n++] = x;
        return;
    }
    /* unbiased j in [0, i]: multiply-shift on 64 bits is close enough for
     * i < 2^40 and keeps this branch-free */
    uint64_t j = (uint64_t)(((unsigned __int128)splitmix64(&r->rng) * (i + 1)) >> 64);
    if (j < r->cap) r->v[j] = x;
}

void vpr_res_free(struct vpr_reservoir *r)
{
    free(r->v);
    r->v = NULL;
    r->n = r->seen = 0;
}

