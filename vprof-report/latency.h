/* latency.h - the stack scanner's events (latency.<id>, FORMATS.md §5) in
 * the report: per-function and per-call-site latency distributions, lock
 * waits with the holder's functions, the latency discount dimension, and
 * the events themselves for --timeline and --trace. */
#ifndef VPR_LATENCY_H
#define VPR_LATENCY_H
#include <stddef.h>
#include <stdint.h>

#include "discount.h"
#include "model.h"
#include "runs.h"

/* One event, addresses already mapped: f is the model function holding
 * the function entry (calls; thread starts: the start routine) or the call
 * site (waits, holds, syscalls, requests, wakes); site is the link-time
 * site (run-time inside libraries), but for request work events
 * (VPF_LAT_REQ_WORK) the work units (dur 0). */
struct vpr_lev {
    uint64_t start, dur;        /* ns, the runtime's CLOCK_MONOTONIC */
    uint64_t obj;               /* lock/cond address, request id, syscall nr */
    uint64_t site;
    long f;                     /* function of the event (see above) */
    long site_f;                /* calls: function holding the call site */
    uint32_t tid, other;
    uint32_t gen;               /* the record's generation field (calls, wait events) */
    uint8_t kind, flags;
};

/* One process's events, sorted by (tid, start). */
struct vpr_lproc {
    int side;
    size_t run;
    int pid;
    const char *label;          /* the run's label (not owned) */
    struct vpr_lev *ev;
    size_t n;
};

/* Latency of one group of events, per side: every duration (µs), kept
 * for exact percentiles, and the per-run sums (seconds). */
struct vpr_ldist {
    double *v[2];
    size_t n[2], cap[2];
    double *sum[2];             /* per run: summed duration, s */
};

struct vpr_lstats { double p50, p99, p999, max; };

/* The holder's functions during the waits of one lock site. */
struct vpr_lholder { long f; double overlap_us; double mean_dur_us; size_t n; };

/* A call site (calls: the caller's instruction calling f; waits: the
 * caller of pthread_mutex_lock). */
struct vpr_lsite {
    uint8_t kind;               /* VPF_LAT_CALL or VPF_LAT_MUTEX_WAIT */
    long f;                     /* called function (calls) or waiting function */
    long caller;                /* function holding the site */
    uint64_t site;
    struct vpr_ldist d;
    struct vpr_lholder *hold;   /* waits: sorted, most overlap first */
    size_t n_hold, cap_hold;
    struct vpr_lholder *own;    /* waits: functions that took the lock the
                                   waiters waited for (the holder's hold
                                   events), by overlap */
    size_t n_own;
    enum vpr_dim_state st;      /* waits: normal vs buggy wait durations */
    double r;
};

/* Per model function: its call latencies and the discount dimension. */
struct vpr_lfunc {
    struct vpr_ldist d;
    double cost[2];             /* mean over runs of the summed latency, s */
    enum vpr_dim_state st;
    double r, p, stat, h;
    /* as the owner of locks others waited for: the wait time the buggy
     * runs added at those sites (s per run), shared among the owners by
     * overlap, and the lowest ratio of those sites' wait durations */
    double lock_cost, lock_r;
    /* the share of the threads it was called in, per side, where one of
     * its calls lasted the thread's span (first event to last end): 1 for
     * a function as long-lived as its threads - main, a start routine and
     * the frames under it */
    double cover[2];
    int thread_root;            /* cover >= --whole-run on both sides */
    long lock_site;             /* the site that gave most of lock_cost, -1 */
    double lock_site_cost;      /* ... and how much */
};

struct vpr_latency {
    struct vpr_lproc *procs;
    size_t n_procs, cap_procs;
    struct vpr_lfunc *f;        /* m->n_f of them after vpr_lat_analyse */
    size_t n_f;
    struct vpr_lsite *sites;
    size_t n_sites, cap_sites;
    size_t *sh, sh_cap;         /* hash of sites, index + 1 */
    uint64_t events[2], dropped[2], files[2], open[2];
    unsigned scan_ns;           /* largest polling interval seen */
    size_t funcs_limited[2];    /* files written under VPROF_LATENCY_FUNCS */
};

/* Reads p->latency_path (if any) into the model's latency events; the
 * message names the file on error. */
int vpr_lat_load(struct vpr_model *m, int side, size_t run,
                 const struct vpr_run *r, const struct vpr_proc *p,
                 char *err, size_t errlen);
/* Distributions, sites, holders, and the latency dimension of every
 * function (AD + Hellinger as for value samples). Call once, after every
 * process was loaded and before vpr_rank_functions. */
void vpr_lat_analyse(struct vpr_model *m);
/* Percentiles of one side of a distribution (nearest rank, µs). */
struct vpr_lstats vpr_lat_stats(const struct vpr_ldist *d, int side);
/* Nearest-rank percentile q (0..1] of sorted v[0..n). */
double vpr_lat_pct(const double *v, size_t n, double q);
void vpr_lat_free(struct vpr_latency *l);
/* Index of the first event of lp (sorted by thread, start) at or after
 * (tid, start), or lp->n. */
size_t vpr_lat_lower_bound(const struct vpr_lproc *lp, uint32_t tid, uint64_t start);

/* A request's stay on one thread: from vprof_req_start to the next
 * vprof_req_block/end of the same id on that thread (or the thread's last
 * event, flagged open). */
struct vpr_lreq { uint64_t id, start, end; uint32_t tid; int open; };
/* Every stay in lp (all ids when all is set, else only id), in thread and
 * time order. Caller frees *out. */
size_t vpr_lat_requests(const struct vpr_lproc *lp, int all, uint64_t id,
                        struct vpr_lreq **out);
const char *vpr_lat_kind_name(unsigned kind);
/* Model function holding run-time address a of a process with layout lay
 * and load bias (0 unless PIE); *link: the link-time address in the
 * executable, the file offset in a library. */
long vpr_lat_func_at(struct vpr_model *m, const struct vpf_layout *lay, uint64_t bias,
                     uint64_t a, uint64_t *link);

#endif
