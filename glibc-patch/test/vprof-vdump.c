/* vprof-vdump.c - prints a value sample file through the format module,
 * one committed record per line, for the demo's checks:
 *   header: "capacity C records N dropped D faults F hz H clean 0|1"
 *   record: "VAR DEPTH PC VALUE TID TICK" (PC in hex, VALUE signed). */
#include <inttypes.h>
#include <stdio.h>

#include "vprof_format.h"

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s values.ID\n", argv[0]);
        return 2;
    }
    struct vpf_recfile_r r;
    vpf_err e;
    if (vpf_values_open(argv[1], &r, &e) < 0) {
        fprintf(stderr, "vprof-vdump: %s\n", e.msg);
        return 1;
    }
    const struct vpf_values_header *h = vpf_values_hdr(&r);
    printf("capacity %" PRIu64 " records %" PRIu64 " dropped %" PRIu64 " faults %" PRIu64
           " hz %u clean %u\n", h->capacity, r.n, h->dropped, h->faults, h->hz,
           h->flags & VPF_VALUES_FLAG_CLEAN);
    struct vpf_values_iter it;
    vpf_values_iter_init(&it, &r);
    for (const struct vpf_value_rec *v; (v = vpf_values_next(&it, NULL));)
        printf("%u %u %" PRIx64 " %" PRId64 " %u %u\n", v->var, v->depth, v->pc,
               (int64_t)v->value, v->tid, v->tick);
    vpf_values_iter_free(&it);
    vpf_recfile_close_r(&r);
    return 0;
}
