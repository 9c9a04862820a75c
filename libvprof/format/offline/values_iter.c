/* values_iter.c - the walk over the samples of a values.<id> file
 * (FORMATS.md §3), version 1 or 2, for every reader (vprof_format.h,
 * vpf_values_next).
 *
 * Version 2 writes a tick's always-live globals once, as its global group
 * (depth bit 7), at the innermost frame the tick samples, and for each
 * further frame a frame record where version 1 wrote the globals again.
 * The walk hands out what version 1 would have written, in the same order:
 * the group's records as they are (group bit cleared), and at each frame
 * record the group's records again with the frame's PC and depth. A group
 * is one claim of the writer, so its records are contiguous in the file;
 * the walk remembers, per thread, where its last group lies. */
#include <stdlib.h>
#include <string.h>

#include "vprof_format.h"
#include "vprof_xalloc.h"

void vpf_values_iter_init(struct vpf_values_iter *it, const struct vpf_recfile_r *r)
{
    memset(it, 0, sizeof *it);
    it->recs = vpf_values_recs(r);
    it->n = r->n;
    it->version = vpf_values_hdr(r)->version;
}

void vpf_values_iter_free(struct vpf_values_iter *it)
{
    free(it->grp);
    it->grp = NULL;
    it->grp_cap = it->grp_n = 0;
}

static size_t tid_slot(uint32_t tid, size_t cap)
{
    return (size_t)((tid * 0x9e3779b97f4a7c15ull) >> 32) & (cap - 1);
}

/* The thread's group slot; create: make one when it has none (else NULL). */
static struct vpf_values_group *group_of(struct vpf_values_iter *it, uint32_t tid, int create)
{
    if (it->grp_cap) {
        for (size_t h = tid_slot(tid, it->grp_cap);; h = (h + 1) & (it->grp_cap - 1)) {
            if (!it->grp[h].used)
                break;
            if (it->grp[h].tid == tid)
                return &it->grp[h];
        }
    }
    if (!create)
        return NULL;
    if (2 * (it->grp_n + 1) > it->grp_cap) {            /* rebuild, twice as big */
        size_t oc = it->grp_cap, nc = oc ? 2 * oc : 16;
        struct vpf_values_group *old = it->grp;
        it->grp = vpf_xcalloc(nc, sizeof *it->grp);
        it->grp_cap = nc;
        for (size_t i = 0; i < oc; i++) {
            if (!old[i].used)
                continue;
            size_t h = tid_slot(old[i].tid, nc);
            while (it->grp[h].used)
                h = (h + 1) & (nc - 1);
            it->grp[h] = old[i];
        }
        free(old);
    }
    size_t h = tid_slot(tid, it->grp_cap);
    while (it->grp[h].used)
        h = (h + 1) & (it->grp_cap - 1);
    it->grp_n++;
    it->grp[h] = (struct vpf_values_group){.tid = tid, .used = 1};
    it->grp[h].end = UINT64_MAX;        /* no group yet: never contiguous */
    return &it->grp[h];
}

const struct vpf_value_rec *vpf_values_next(struct vpf_values_iter *it, uint64_t *pos)
{
    for (;;) {
        if (it->frame) {                /* a frame record: its group again */
            const struct vpf_value_rec *f = it->frame;
            while (it->rep < it->rep_end) {
                const struct vpf_value_rec *g = &it->recs[it->rep++];
                if (!(g->flags & VPF_REC_COMMITTED) || !(g->depth & VPF_DEPTH_GROUP) ||
                    g->var == VPF_VAR_FRAME || g->tid != f->tid || g->tick != f->tick)
                    continue;
                it->out = *g;
                it->out.pc = f->pc;
                it->out.depth = (uint8_t)(f->depth & VPF_DEPTH_MASK);
                if (pos)
                    *pos = (uint64_t)(f - it->recs);
                return &it->out;
            }
            it->frame = NULL;
        }
        if (it->i >= it->n)
            return NULL;
        uint64_t k = it->i++;
        const struct vpf_value_rec *r = &it->recs[k];
        if (!(r->flags & VPF_REC_COMMITTED)) {
            it->uncommitted++;
            continue;
        }
        uint64_t prev = it->last;
        it->last = k + 1;
        if (pos)
            *pos = k;
        if (it->version < 2)
            return r;
        if (r->var == VPF_VAR_FRAME) {
            it->frames++;
            struct vpf_values_group *g = group_of(it, r->tid, 0);
            if (!g || g->end == UINT64_MAX || g->tick != r->tick) {
                it->orphans++;
                continue;
            }
            it->frame = r;
            it->rep = g->first;
            it->rep_end = g->end;
            continue;
        }
        if (r->depth & VPF_DEPTH_GROUP) {
            struct vpf_values_group *g = group_of(it, r->tid, 1);
            if (g->tick == r->tick && g->end == prev) {
                g->end = k + 1;         /* the next record of the same group */
            } else {
                g->tick = r->tick;
                g->first = k;
                g->end = k + 1;
            }
            it->out = *r;
            it->out.depth = (uint8_t)(r->depth & VPF_DEPTH_MASK);
            return &it->out;
        }
        return r;
    }
}
