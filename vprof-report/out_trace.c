/* out_trace.c - --trace FILE: every latency event of every process as a
 * Chrome trace-event JSON file (the "JSON Object Format" that Perfetto and
 * chrome://tracing open). Each event is a complete event ("ph":"X") with
 * ts and dur in µs from the process's first event; pid is the process's
 * position (1, 2, ...; named "normal|buggy <run> pid <pid>" by a metadata
 * event, since normal and buggy pids may collide), tid the thread id.
 * Calls are named after their function; waits, holds, syscalls and the
 * requests' stays have category and args saying what they are. A mutex
 * wait with a known holder also gets a flow arrow ("ph":"s" -> "f", one id
 * per wait) from the waiter's thread to the holder's thread at the wait's
 * start, so the viewer leads from a waiting request to what held it. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "demangle.h"
#include "latency.h"
#include "output.h"

static const char *fname(const struct vpr_model *m, long f)
{
    return f >= 0 && (size_t)f < m->n_f ? vpr_dm(m->f[f].name) : "?";
}

static void xev(FILE *o, int *first, const char *name, const char *cat, size_t pid,
                uint32_t tid, uint64_t start, uint64_t dur, uint64_t base)
{
    fputs(*first ? "\n" : ",\n", o);
    *first = 0;
    fputs("{\"name\":", o);
    vpr_jstr(o, name);
    fprintf(o, ",\"cat\":\"%s\",\"ph\":\"X\",\"ts\":%.3f,\"dur\":%.3f,\"pid\":%zu,"
            "\"tid\":%u", cat, ((double)start - (double)base) / 1e3, (double)dur / 1e3,
            pid, tid);
}

static void flow(FILE *o, const struct vpr_lev *e, size_t pid, uint64_t base,
                 unsigned long long *id)
{
    double ts = ((double)e->start - (double)base) / 1e3;
    ++*id;
    fprintf(o, ",\n{\"name\":\"holder\",\"cat\":\"wait\",\"ph\":\"s\",\"id\":%llu,"
            "\"ts\":%.3f,\"pid\":%zu,\"tid\":%u}", *id, ts, pid, e->tid);
    fprintf(o, ",\n{\"name\":\"holder\",\"cat\":\"wait\",\"ph\":\"f\",\"bp\":\"e\","
            "\"id\":%llu,\"ts\":%.3f,\"pid\":%zu,\"tid\":%u}", *id, ts, pid, e->other);
}

static void one_proc(FILE *o, int *first, const struct vpr_model *m,
                     const struct vpr_lproc *lp, size_t pid, unsigned long long *flow_id)
{
    uint64_t base = UINT64_MAX;
    for (size_t i = 0; i < lp->n; i++) if (lp->ev[i].start < base) base = lp->ev[i].start;
    char nm[512];
    snprintf(nm, sizeof nm, "%s %s pid %d", lp->side ? "buggy" : "normal", lp->label,
             lp->pid);
    fprintf(o, "%s{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%zu,\"args\":{\"name\":",
            *first ? "\n" : ",\n", pid);
    vpr_jstr(o, nm);
    fputs("}}", o);
    *first = 0;
    for (size_t i = 0; i < lp->n; i++) {
        const struct vpr_lev *e = &lp->ev[i];
        switch (e->kind) {
        case VPF_LAT_CALL:
            xev(o, first, fname(m, e->f), "call", pid, e->tid, e->start, e->dur, base);
            fprintf(o, ",\"args\":{\"caller\":");
            vpr_jstr(o, fname(m, e->site_f));
            fprintf(o, ",\"open\":%s}}", e->flags & 1 ? "true" : "false");
            break;
        case VPF_LAT_MUTEX_WAIT:
        case VPF_LAT_MUTEX_HOLD:
        case VPF_LAT_COND_WAIT:
            snprintf(nm, sizeof nm, "%s 0x%llx", vpr_lat_kind_name(e->kind),
                     (unsigned long long)e->obj);
            xev(o, first, nm, e->kind == VPF_LAT_MUTEX_HOLD ? "hold" : "wait", pid, e->tid,
                e->start, e->dur, base);
            fputs(",\"args\":{\"in\":", o);
            vpr_jstr(o, fname(m, e->f));
            if (e->kind == VPF_LAT_MUTEX_WAIT) fprintf(o, ",\"holder_tid\":%u", e->other);
            fputs("}}", o);
            if (e->kind == VPF_LAT_MUTEX_WAIT && e->other) flow(o, e, pid, base, flow_id);
            break;
        case VPF_LAT_SYSCALL:
            snprintf(nm, sizeof nm, "syscall %llu", (unsigned long long)e->obj);
            xev(o, first, nm, "syscall", pid, e->tid, e->start, e->dur, base);
            fputs(",\"args\":{\"in\":", o);
            vpr_jstr(o, fname(m, e->f));
            fputs("}}", o);
            break;
        default:                        /* request marks: the stays below */
            break;
        }
    }
    struct vpr_lreq *rq;
    size_t n = vpr_lat_requests(lp, 1, 0, &rq);
    for (size_t i = 0; i < n; i++) {
        snprintf(nm, sizeof nm, "request %llu", (unsigned long long)rq[i].id);
        xev(o, first, nm, "request", pid, rq[i].tid, rq[i].start, rq[i].end - rq[i].start,
            base);
        fprintf(o, ",\"args\":{\"request\":%llu,\"open\":%s}}", (unsigned long long)rq[i].id,
                rq[i].open ? "true" : "false");
    }
    free(rq);
}

int vpr_out_trace(const char *path, const struct vpr_model *m, char *err, size_t errlen)
{
    FILE *o = fopen(path, "w");
    if (!o) {
        snprintf(err, errlen, "%s: cannot write the trace: %s", path, strerror(errno));
        return -1;
    }
    int first = 1;
    unsigned long long flow_id = 0;
    fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", o);
    for (size_t p = 0; m->lat && p < m->lat->n_procs; p++)
        one_proc(o, &first, m, &m->lat->procs[p], p + 1, &flow_id);
    fputs("\n]}\n", o);
    if (ferror(o) | fclose(o)) {
        snprintf(err, errlen, "%s: write error while writing the trace", path);
        return -1;
    }
    return 0;
}
