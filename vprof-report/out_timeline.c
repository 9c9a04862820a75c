/* out_timeline.c - --timeline REQ: for every process that served request
 * REQ, each stay of the request on a thread (start .. block/end) with the
 * calls that thread made meanwhile (nested by start time), its lock and
 * condition waits and blocking calls, and for a mutex wait the holder
 * thread's calls during the wait. Times in µs from the stay's start. */
#include <stdlib.h>
#include <string.h>

#include "demangle.h"
#include "latency.h"
#include "output.h"

enum { MAX_DEPTH = 32, MAX_HOLDER_CALLS = 12 };

static const char *fname(const struct vpr_model *m, long f)
{
    return f >= 0 && (size_t)f < m->n_f ? vpr_dm(m->f[f].name) : "?";
}

static void loc(const struct vpr_model *m, uint64_t site, char *buf, size_t len)
{
    const char *file;
    unsigned line;
    buf[0] = 0;
    if (m->lines && vpr_lines_lookup(m->lines, site, &file, &line) == 0) {
        const char *b = strrchr(file, '/');
        snprintf(buf, len, " (%s:%u)", b ? b + 1 : file, line);
    }
}

static double rel_us(uint64_t t, uint64_t base)
{
    return ((double)t - (double)base) / 1e3;
}

/* The holder's calls overlapping [ws, we), in start order (outer first). */
static void holder_calls(FILE *out, const struct vpr_model *m, const struct vpr_lproc *lp,
                         uint32_t tid, uint64_t ws, uint64_t we, uint64_t base)
{
    size_t shown = 0, more = 0;
    size_t end = vpr_lat_lower_bound(lp, tid, we);
    for (size_t i = vpr_lat_lower_bound(lp, tid, 0); i < end; i++) {
        const struct vpr_lev *c = &lp->ev[i];
        if (c->kind != VPF_LAT_CALL) continue;
        if (c->start >= we || c->start + c->dur <= ws) continue;
        if (shown == MAX_HOLDER_CALLS) { more++; continue; }
        fprintf(out, "%14s holder %+10.1f %10.1f µs  %s%s\n", "", rel_us(c->start, base),
                (double)c->dur / 1e3, fname(m, c->f), c->flags & 1 ? " (open)" : "");
        shown++;
    }
    if (more) fprintf(out, "%14s holder ... %zu more calls\n", "", more);
}

static void one_stay(FILE *out, const struct vpr_model *m, const struct vpr_lproc *lp,
                     const struct vpr_lreq *rq)
{
    fprintf(out, "  thread %u: %.1f µs%s\n", rq->tid, (double)(rq->end - rq->start) / 1e3,
            rq->open ? " (no block/end seen: up to the thread's last event)" : "");
    uint64_t ends[MAX_DEPTH];
    int depth = 0;
    /* The function that calls vprof_req_start starts a little before the
     * request, and the scanner may place a record's ends up to about one
     * polling interval off. Frames that contain the whole stay with more
     * than that to spare (main, a worker's loop) are the thread's, not the
     * request's; so are frames that started well before it. */
    uint64_t slack = 4ull * m->lat->scan_ns > 1000000 ? 4ull * m->lat->scan_ns : 1000000;
    uint64_t from = rq->start > slack ? rq->start - slack : 0;
    size_t last = vpr_lat_lower_bound(lp, rq->tid, rq->end + 1);
    for (size_t i = vpr_lat_lower_bound(lp, rq->tid, from); i < last; i++) {
        const struct vpr_lev *e = &lp->ev[i];
        if (e->start < rq->start && e->start + e->dur > rq->end + slack) continue;
        if (vpf_lat_is_request(e->kind)) continue;
        if (e->kind == VPF_LAT_MUTEX_HOLD) continue;    /* the waits say more */
        while (depth > 0 && ends[depth - 1] <= e->start) depth--;
        char where[80];
        loc(m, e->site, where, sizeof where);
        fprintf(out, "    %+10.1f %10.1f µs  %*s", rel_us(e->start, rq->start),
                (double)e->dur / 1e3, 2 * depth, "");
        switch (e->kind) {
        case VPF_LAT_CALL:
            fprintf(out, "%s%s\n", fname(m, e->f), e->flags & 1 ? " (open)" : "");
            if (depth < MAX_DEPTH) ends[depth++] = e->start + e->dur;
            break;
        case VPF_LAT_MUTEX_WAIT:
            fprintf(out, "wait for mutex 0x%llx in %s%s, holder thread %u\n",
                    (unsigned long long)e->obj, fname(m, e->f), where, e->other);
            if (e->other) holder_calls(out, m, lp, e->other, e->start, e->start + e->dur,
                                       rq->start);
            break;
        case VPF_LAT_COND_WAIT:
            fprintf(out, "wait for condition 0x%llx in %s%s\n", (unsigned long long)e->obj,
                    fname(m, e->f), where);
            break;
        default:
            fprintf(out, "syscall %llu in %s%s\n", (unsigned long long)e->obj,
                    fname(m, e->f), where);
        }
    }
}

int vpr_out_timeline(FILE *out, const struct vpr_model *m, uint64_t req)
{
    const struct vpr_latency *L = m->lat;
    int found = 0;
    for (size_t p = 0; L && p < L->n_procs; p++) {
        const struct vpr_lproc *lp = &L->procs[p];
        struct vpr_lreq *rq;
        size_t n = vpr_lat_requests(lp, 0, req, &rq);
        if (n)
            fprintf(out, "%srequest %llu: %s run %s, pid %d\n", found ? "\n" : "",
                    (unsigned long long)req, lp->side ? "buggy" : "normal", lp->label,
                    lp->pid);
        for (size_t i = 0; i < n; i++) one_stay(out, m, lp, &rq[i]);
        found |= n > 0;
        free(rq);
    }
    if (!found) {
        fprintf(stderr, "vprof-report: --timeline: no run has request %llu (no "
                "vprof_req_start event with that id)\n", (unsigned long long)req);
        return 1;
    }
    return 0;
}
