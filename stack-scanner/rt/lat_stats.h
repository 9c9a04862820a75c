/* lat_stats.h - counters of the scanner thread, for the benchmark
 * (bench/latency) and tests; not part of the public API. */
#ifndef VPROF_LAT_STATS_H
#define VPROF_LAT_STATS_H

#include <stdint.h>

struct vprof_latency_stats {
    uint64_t passes;        /* rounds over all registered threads */
    uint64_t fast;          /* thread scans skipped: TLS (top, gen) unchanged */
    uint64_t walks;         /* thread scans that walked and validated */
    uint64_t retries;       /* walks discarded by the sequence lock */
    uint64_t invalid;       /* walks that stopped at a frame failing validation */
    uint64_t safe_reads;    /* records read through the non-faulting syscall */
    uint64_t call_events;   /* latency events of kind call emitted */
    uint64_t first_ns, last_ns;   /* first and latest pass */
    uint64_t max_gap_ns;    /* longest time between the starts of two passes */
    uint64_t registered;    /* threads registered (slots are recycled) */
    uint64_t registry_full; /* threads left untraced: all slots in use */
};

/* Copies the counters (relaxed reads; the scanner may be running). */
void vprof_latency_stats(struct vprof_latency_stats *out);

#endif
