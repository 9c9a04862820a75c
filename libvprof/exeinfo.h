/* exeinfo.h - facts about the profiled executable, from dl_iterate_phdr
 * (its first entry is the main program) and /proc/self/exe. */
#ifndef VPROF_EXEINFO_H
#define VPROF_EXEINFO_H

#include <limits.h>
#include <stdint.h>

#define VPROF_MAX_SEGS 16

struct vprof_exeinfo {
    char path[PATH_MAX];        /* /proc/self/exe resolved, "" if unknown */
    uint64_t bias;              /* load bias (0 for non-PIE) */
    uint64_t text_lo, text_hi;  /* run-time range of executable PT_LOADs */
    uint64_t seg_lo[VPROF_MAX_SEGS], seg_hi[VPROF_MAX_SEGS];
    int n_segs;                 /* every PT_LOAD, run-time, page-rounded */
    uint8_t build_id[32];
    unsigned build_id_len;
    char build_id_hex[65];
};

int vprof_exeinfo_get(struct vprof_exeinfo *x);

/* Writes a "map" layout line for every executable mapping in
 * /proc/self/maps to fd. */
void vprof_exeinfo_write_maps(int fd);

#endif
