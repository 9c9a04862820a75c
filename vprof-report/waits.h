/* waits.h - `vprof-report --waits`: the waiting events that limit
 * throughput (wPerf, paper 003 §3-§4; docs/vprof-report.md "Waits").
 *
 * Two parts. The timeline (waits_seg.c from latency events, waits_perf.c
 * from `perf script` output of the scheduler's tracepoints) is a reader API
 * other analyses reuse: per process, every thread's and pseudo-thread's
 * waiting segments with their wakers, and the wake edges in time order. The
 * graph (waits_graph.c) is wPerf's analysis on a timeline: cascaded
 * redistribution, the wait-for graph, knots and sinks, refinement. */
#ifndef VPR_WAITS_H
#define VPR_WAITS_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "latency.h"
#include "model.h"

/* ---------------- timeline (reader API) ---------------- */

/* What a vertex is. Pseudo-threads stand for what threads wait on that is
 * not a thread of the process (paper §3.3: a device is a pseudo-thread). */
enum vpr_wv_kind {
    VPR_WV_THREAD,      /* a thread of the process */
    VPR_WV_DISK,        /* a file system's device (fd waits on files) */
    VPR_WV_NET,         /* the network: every socket's peer (one vertex) */
    VPR_WV_PIPE,        /* one pipe or socket pair whose writer was not seen */
    VPR_WV_DEVICE,      /* another descriptor (character device, eventfd...) */
    VPR_WV_TIMER,       /* sleeps and timed-out waits */
    VPR_WV_POLL,        /* poll/select/epoll: the descriptors are not recorded */
    VPR_WV_UNKNOWN,     /* a wait whose waker was not found (left out of the graph) */
    VPR_WV_OUTSIDE,     /* perf input: a task of another process, or an interrupt */
};
const char *vpr_wv_kind_name(int kind);

struct vpr_wvertex {
    int kind;
    uint32_t tid;               /* threads (0 for pseudo-threads) */
    uint64_t id;                /* pseudo-threads: device, pipe or peer id */
    char *name;                 /* "main", "worker_main#2", "disk 254:1", ... */
    long role;                  /* start routine (model function) or -1 */
    char *role_name;            /* its name (or the perf comm), NULL if none */
    uint32_t creator;           /* tid of the creating thread, 0 if not known */
    uint64_t first, last;       /* observed span of a thread (ns) */
    double cpu_s;               /* CPU time from PC samples (-1: no samples) */
    double runnable_s;          /* perf input: time preempted (runnable, not running);
                                   -1: unknown. The time from a wake-up to the end of
                                   a wait is in the segments (end - wake). */
};

/* Why a vertex waited (the event that recorded the segment). */
enum vpr_ws_kind {
    VPR_WS_MUTEX = 1, VPR_WS_COND, VPR_WS_SEM, VPR_WS_JOIN, VPR_WS_SPIN, VPR_WS_IO,
    VPR_WS_SLEEP, VPR_WS_POLL, VPR_WS_SYSCALL, VPR_WS_IDLE /* a device had no request */,
    VPR_WS_BLOCKED /* perf: switched out sleeping */, VPR_WS_RWLOCK, VPR_WS_BARRIER,
};
const char *vpr_ws_kind_name(int kind);

/* A waiting segment of vertex v: from start to end it waited for waker,
 * which woke it at wake (<= end; == end when the time is not known). */
struct vpr_wseg {
    uint64_t start, end, wake;
    uint32_t v, waker;          /* vertex indices */
    uint8_t kind;               /* enum vpr_ws_kind */
    uint8_t fd_class;           /* I/O: enum vpf_fd_class */
    uint16_t nr;                /* syscall number (I/O, syscall) */
    uint64_t obj;               /* lock/cond/sem address, device id, ... */
    long site_f, wsite_f;       /* waiter's / waker's call site: model function or -1 */
    uint64_t site, wsite;       /* link-time addresses (0: none) */
    const char *site_name;      /* perf input: the waiter's frame, or NULL */
    const char *wsite_name;     /* perf input: the waker's frame, or NULL */
    double w;                   /* analysis: cascaded weight charged here (ns) */
};

/* One wake edge: at t, waker ended wakee's wait (a segment). */
struct vpr_wwake { uint64_t t; uint32_t waker, wakee; size_t seg; };

/* A PC sample of a thread (value samples, depth 0): for what a waker ran. */
struct vpr_wsample { uint64_t t; long f; };

struct vpr_wtimeline {
    int pid;
    const char *label;          /* run directory or perf file (not owned) */
    const char *source;         /* "vprof latency events" or "perf sched tracepoints" */
    struct vpr_wvertex *v;
    size_t n_v;
    struct vpr_wseg *seg;       /* sorted by (v, start); never overlapping within a v */
    size_t n_seg;
    size_t *first;              /* n_v + 1: segments of v are [first[v], first[v+1]) */
    struct vpr_wwake *wake;     /* segments with a thread waker, by time */
    size_t n_wake;
    struct vpr_wsample **smp;   /* per vertex, by time (NULL: none) */
    size_t *n_smp;
    const struct vpr_lproc *lp; /* the latency events (vprof input), or NULL */
    uint64_t t0, t1;            /* observed span of the process */
    char **strings;             /* owned strings (perf input) */
    size_t n_strings;
    size_t cap_v, cap_strings;  /* allocated v, strings (vpf_grow) */
};

/* Builds the timeline of one process from its latency events (vprof-cc
 * --latency, VPROF_LATENCY=1). lp stays referenced. */
void vpr_wait_timeline(struct vpr_model *m, const struct vpr_lproc *lp,
                       struct vpr_wtimeline *tl);
/* Adds the PC samples of values.<id> (per thread, depth-0 records): CPU
 * time per thread and what a waker ran. 0, or -1 with a message. */
int vpr_wait_samples(struct vpr_model *m, struct vpr_wtimeline *tl,
                     const struct vpr_proc *p, char *err, size_t errlen);
/* Reads `perf script` output of sched:sched_switch and sched:sched_wakeup
 * (optionally irq:softirq_entry/exit and call chains) into one timeline
 * per process with waits (thread group; all traced tasks together when the
 * output has no PID column); only process only_pid unless 0. 0, or -1 with
 * a message naming the file (and line). */
int vpr_wait_perf_load(const char *path, int only_pid, struct vpr_wtimeline **out,
                       size_t *n, char *err, size_t errlen);
/* Every wait segment as a wake edge list (tl->wake) and the first[] index;
 * called by the builders after filling v and seg. */
void vpr_wait_finish(struct vpr_wtimeline *tl);
void vpr_wait_timeline_free(struct vpr_wtimeline *tl);
/* Index of the vertex of kind/tid/id, created (named name) when missing. */
uint32_t vpr_wait_vertex(struct vpr_wtimeline *tl, int kind, uint32_t tid, uint64_t id,
                         const char *name);

/* ---------------- graph (wPerf analysis) ---------------- */

struct vpr_wopts {
    double keep;                /* refinement stops when the lowest edge >= keep x span */
    double min;                 /* edges lighter than min x span are left out (noise) */
    int merge;                  /* merge threads with the same start routine */
    int max_depth;              /* cascade recursion bound */
};

/* A vertex of the graph: one vertex, or threads merged by start routine. */
struct vpr_wgvertex {
    char *name;
    int kind;                   /* of its members */
    uint32_t *members;          /* timeline vertex indices */
    size_t n_members;
    double wait_s, cpu_s;       /* summed over members; cpu -1 if unknown */
    double span_s;              /* summed observed span of members */
    double runnable_s;          /* -1 if unknown */
};

struct vpr_wedge {
    uint32_t a, b;              /* graph vertices: a waits for b */
    double w;                   /* cascaded weight, ns */
    double direct;              /* own waiting time (no cascade), ns */
    size_t n_seg;               /* segments (top level) */
    int removed;                /* by refinement (index of the step, 1-based) */
};

enum { VPR_WK_KNOT, VPR_WK_SINK };

/* A result of the analysis: a knot (after refinement) or a sink. */
struct vpr_wknot {
    int type;                   /* VPR_WK_KNOT or VPR_WK_SINK */
    uint32_t *vs;               /* graph vertices */
    size_t n_vs;
    size_t *edges;              /* edges inside (not removed) */
    size_t n_edges;
    int parent;                 /* index of the unrefined knot in orig[], -1 */
    int background;             /* no pseudo-thread and CPU < 100 % (paper §3.3) */
};

struct vpr_wgraph {
    const struct vpr_wtimeline *tl;
    struct vpr_wopts o;
    uint32_t *group;            /* timeline vertex -> graph vertex */
    struct vpr_wgvertex *v;
    size_t n_v;
    struct vpr_wedge *e;        /* by weight, heaviest first */
    size_t n_e;
    struct vpr_wknot *orig;     /* knots before refinement */
    size_t n_orig;
    struct vpr_wknot *res;      /* refined knots and sinks */
    size_t n_res;
    double span_ns;             /* observed span of the process */
    size_t n_unknown;           /* waits without a known waker, left out */
    double unknown_ns;          /* their time */
    size_t n_negl;              /* edges left out as lighter than min x span */
    double negl_ns;             /* their summed weight */
    char *out_of_graph;         /* per vertex: 1 when it has no edge left and is not a
                                   thread that ran for min x span (left out) */
    size_t cascades;            /* recursive steps taken (work measure) */
};

/* Runs the analysis; the segments' w fields get their cascaded weights. */
void vpr_wait_graph(struct vpr_wtimeline *tl, const struct vpr_wopts *o,
                    struct vpr_wgraph *g);
void vpr_wait_graph_free(struct vpr_wgraph *g);
/* Edge index a -> b, or -1. */
long vpr_wait_edge(const struct vpr_wgraph *g, uint32_t a, uint32_t b);

/* ---------------- what each edge is made of ---------------- */

/* A call site of waits (waiter) or wake-ups (waker) on an edge. */
struct vpr_wsite {
    int kind;                   /* enum vpr_ws_kind of the waits */
    long f;                     /* model function holding the site, -1 */
    uint64_t site;              /* link-time address, 0 */
    const char *name;           /* perf input: frame text */
    uint16_t nr;                /* syscall number of I/O and syscall waits */
    double w;                   /* cascaded weight, ns */
    size_t n;                   /* segments */
};
/* What the waker did while the waiter waited, as shares of that time: ran
 * function f (split by its PC samples, or by its call time), or itself
 * waited (wait_kind != 0) at a site in function f (e.g. fsync under a lock). */
struct vpr_wrun { long f; double share; int wait_kind; uint16_t nr; };
#define VPR_WRUN_RUNNABLE (-1)      /* wait_kind: woken, not yet on a CPU */
enum { VPR_WRUN_NONE, VPR_WRUN_SAMPLES, VPR_WRUN_CALLS };

struct vpr_wdetail {
    struct vpr_wsite *wait, *wake;  /* heaviest first */
    size_t n_wait, n_wake;
    struct vpr_wrun *run;           /* largest share first */
    size_t n_run;
    size_t cap_wait, cap_wake, cap_run; /* allocated (vpf_grow) */
    int run_src;                    /* VPR_WRUN_* */
    size_t run_n;                   /* samples (or call events) behind it */
};

/* One detail per edge of g (same index). */
struct vpr_wdetail *vpr_wait_details(const struct vpr_wgraph *g);
void vpr_wait_details_free(struct vpr_wdetail *d, size_t n);
/* "fsync", "read", ... for the shimmed syscalls, else "syscall N". */
const char *vpr_wait_sysname(unsigned nr, char *buf, size_t len);

/* ---------------- output (out_waits.c, out_waits_html.c) ---------------- */

/* One analysed process. */
struct vpr_wproc {
    struct vpr_wtimeline tl;
    struct vpr_wgraph g;
    struct vpr_wdetail *d;
    const char *exe;            /* executable path, or NULL (perf input) */
    const char *dir;            /* run directory it was read from, or NULL (perf input):
                                   what the ranking takes (the label is dir/<id>) */
    char *input;                /* the file read (latency.<id> or the perf file) */
};

/* m may be NULL (perf input: sites are frame texts). top: edges detailed
 * per knot and sink (0 = all). */
void vpr_waits_text(FILE *o, const struct vpr_model *m, const struct vpr_wproc *p, int top);
void vpr_waits_json(FILE *o, const struct vpr_model *m, const struct vpr_wproc *p, size_t n,
                    int top);
int vpr_waits_html(const char *path, const struct vpr_model *m, const struct vpr_wproc *p,
                   size_t n, int top, char *err, size_t errlen);
/* --waits-timeline: every segment, one tab-separated line each. */
void vpr_waits_timeline_tsv(FILE *o, const struct vpr_model *m, const struct vpr_wproc *p);
/* Text of a site: frame text, or "function (file:line)". */
void vpr_wait_site_str(const struct vpr_model *m, long f, uint64_t site, const char *name,
                       char *buf, size_t len);
/* One line saying what limits throughput (the verdict), into buf. */
void vpr_wait_verdict(const struct vpr_wproc *p, char *buf, size_t len);

/* ---------------- the --waits mode ---------------- */
int vpr_waits_main(int argc, char **argv);

#endif
