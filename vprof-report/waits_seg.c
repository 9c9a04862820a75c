/* waits_seg.c - a process's latency events as waiting segments with their
 * wakers (docs/vprof-report.md "Waits", FORMATS.md §5.1).
 *
 * Each wait event (mutex, condition, semaphore, rwlock, barrier, join,
 * annotated, fd, the remaining syscalls) is one segment of its thread. Its
 * waker is the thread of the wake event that ended it (same thread, same end
 * time, same object); without one, a mutex or rwlock wait falls back on the
 * (writing) holder seen when it began, a join on the joined thread, an fd wait on the pseudo-thread of
 * its device or peer, a sleep on [timer], a poll on [poll], and anything
 * else on [unknown]. A thread's segments never overlap (a later one is cut
 * at the end of the earlier: an annotated wait around a lock wait counts
 * once). Disks get segments too: a disk with no request in flight waits,
 * and the thread whose request ends the idle time woke it (paper §4.1: the
 * device waits for new I/Os from the threads). */
#include "vprof_xalloc.h"
#include "waits.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>

const char *vpr_wv_kind_name(int kind)
{
    static const char *n[] = {"thread", "disk", "network", "pipe", "device", "timer",
                              "poll", "unknown", "outside"};
    return kind >= 0 && kind < (int)(sizeof n / sizeof *n) ? n[kind] : "?";
}

const char *vpr_ws_kind_name(int kind)
{
    static const char *n[] = {"?", "mutex", "condition", "semaphore", "join", "spin",
                              "io", "sleep", "poll", "syscall", "idle", "blocked", "rwlock",
                              "barrier"};
    return kind >= 0 && kind < (int)(sizeof n / sizeof *n) ? n[kind] : "?";
}

uint32_t vpr_wait_vertex(struct vpr_wtimeline *tl, int kind, uint32_t tid, uint64_t id,
                         const char *name)
{
    for (size_t i = 0; i < tl->n_v; i++)
        if (tl->v[i].kind == kind && tl->v[i].tid == tid && tl->v[i].id == id)
            return (uint32_t)i;
    tl->v = vpf_grow(tl->v, &tl->cap_v, tl->n_v + 1, sizeof *tl->v);
    struct vpr_wvertex *v = &tl->v[tl->n_v];
    memset(v, 0, sizeof *v);
    v->kind = kind;
    v->tid = tid;
    v->id = id;
    v->role = -1;
    v->cpu_s = -1;
    v->runnable_s = -1;
    v->name = vpf_xstrdup(name ? name : "?");
    return (uint32_t)tl->n_v++;
}

static uint32_t thread_vertex(struct vpr_wtimeline *tl, uint32_t tid)
{
    char nm[32];
    snprintf(nm, sizeof nm, "tid %u", tid);
    return vpr_wait_vertex(tl, VPR_WV_THREAD, tid, 0, nm);
}

static uint32_t pseudo(struct vpr_wtimeline *tl, int kind, uint64_t id)
{
    char nm[64];
    switch (kind) {
    case VPR_WV_DISK:
        snprintf(nm, sizeof nm, "disk %u:%u", major((dev_t)id), minor((dev_t)id));
        break;
    case VPR_WV_NET: snprintf(nm, sizeof nm, "network"); id = 0; break;
    case VPR_WV_PIPE: snprintf(nm, sizeof nm, "pipe %llu", (unsigned long long)id); break;
    case VPR_WV_DEVICE: snprintf(nm, sizeof nm, "device %llx", (unsigned long long)id); break;
    default: snprintf(nm, sizeof nm, "[%s]", vpr_wv_kind_name(kind)); id = 0; break;
    }
    return vpr_wait_vertex(tl, kind, 0, id, nm);
}

/* A wake event, for the lookup by (tid, end, obj). */
struct wk { uint32_t tid; uint64_t end, obj; const struct vpr_lev *e; };

static int cmp_wk(const void *a, const void *b)
{
    const struct wk *x = a, *y = b;
    if (x->tid != y->tid) return x->tid < y->tid ? -1 : 1;
    if (x->end != y->end) return x->end < y->end ? -1 : 1;
    return (x->obj > y->obj) - (x->obj < y->obj);
}

static const struct vpr_lev *find_wake(const struct wk *w, size_t n, uint32_t tid,
                                       uint64_t end, uint64_t obj)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        struct wk k = {tid, end, obj, NULL};
        if (cmp_wk(&w[mid], &k) < 0) lo = mid + 1; else hi = mid;
    }
    return lo < n && w[lo].tid == tid && w[lo].end == end && w[lo].obj == obj ? w[lo].e : NULL;
}

static int is_sleep(unsigned nr)
{
    return nr == SYS_nanosleep || nr == SYS_clock_nanosleep;
}

static int is_poll(unsigned nr)
{
    return nr == SYS_poll || nr == SYS_select || nr == SYS_epoll_wait ||
           nr == SYS_epoll_pwait || nr == SYS_pselect6 || nr == SYS_ppoll;
}

static void push_seg(struct vpr_wtimeline *tl, size_t *cap, const struct vpr_wseg *s)
{
    tl->seg = vpf_grow(tl->seg, cap, tl->n_seg + 1, sizeof *tl->seg);
    tl->seg[tl->n_seg++] = *s;
}

/* True when lp->ev[i] (a syscall event) has an fd wait twin (same thread,
 * start and duration): the fd wait says more. */
static int has_fd_twin(const struct vpr_lproc *lp, size_t i)
{
    const struct vpr_lev *e = &lp->ev[i];
    for (size_t j = i + 1; j < lp->n && lp->ev[j].tid == e->tid && lp->ev[j].start == e->start; j++)
        if (lp->ev[j].kind == VPF_LAT_FD_WAIT && lp->ev[j].dur == e->dur) return 1;
    for (size_t j = i; j-- > 0 && lp->ev[j].tid == e->tid && lp->ev[j].start == e->start;)
        if (lp->ev[j].kind == VPF_LAT_FD_WAIT && lp->ev[j].dur == e->dur) return 1;
    return 0;
}

static int fd_vertex_kind(unsigned cls)
{
    switch (cls) {
    case VPF_FD_FILE: return VPR_WV_DISK;
    case VPF_FD_SOCKET: return VPR_WV_NET;
    case VPF_FD_PIPE: case VPF_FD_SOCKPAIR: return VPR_WV_PIPE;
    default: return VPR_WV_DEVICE;
    }
}

/* The segment of wait event e of thread vertex v; waker from the wakes. */
static void wait_seg(struct vpr_wtimeline *tl, const struct vpr_lev *e, uint32_t v,
                     const struct wk *wks, size_t n_wk, struct vpr_wseg *s)
{
    memset(s, 0, sizeof *s);
    s->start = e->start;
    s->end = e->start + e->dur;
    s->wake = s->end;
    s->v = v;
    s->obj = e->obj;
    s->site_f = e->site_f;
    s->site = e->site;
    s->wsite_f = -1;
    const struct vpr_lev *wk = find_wake(wks, n_wk, e->tid, s->end, e->obj);
    int fallback = VPR_WV_UNKNOWN;
    uint32_t fb_tid = 0;
    switch (e->kind) {
    case VPF_LAT_MUTEX_WAIT: s->kind = VPR_WS_MUTEX; fb_tid = e->other; break;
    case VPF_LAT_COND_WAIT: s->kind = VPR_WS_COND; break;
    case VPF_LAT_SEM_WAIT: s->kind = VPR_WS_SEM; break;
    case VPF_LAT_JOIN_WAIT: s->kind = VPR_WS_JOIN; fb_tid = e->other; break;
    case VPF_LAT_ANNOT_WAIT: s->kind = VPR_WS_SPIN; break;
    case VPF_LAT_RWLOCK_WAIT: s->kind = VPR_WS_RWLOCK; fb_tid = e->other; break;
    case VPF_LAT_BARRIER_WAIT: s->kind = VPR_WS_BARRIER; break;
    case VPF_LAT_FD_WAIT:
        s->kind = VPR_WS_IO;
        s->fd_class = (uint8_t)VPF_FD_CLASS(e->gen);
        s->nr = (uint16_t)VPF_FD_NR(e->gen);
        fallback = fd_vertex_kind(s->fd_class);
        break;
    default:                                    /* VPF_LAT_SYSCALL */
        s->nr = (uint16_t)e->obj;
        s->kind = is_sleep(s->nr) ? VPR_WS_SLEEP : is_poll(s->nr) ? VPR_WS_POLL : VPR_WS_SYSCALL;
        fallback = s->kind == VPR_WS_SLEEP ? VPR_WV_TIMER
                   : s->kind == VPR_WS_POLL ? VPR_WV_POLL : VPR_WV_UNKNOWN;
        break;
    }
    if (wk && wk->other) {
        s->waker = thread_vertex(tl, wk->other);
        s->wake = wk->start;
        s->wsite_f = wk->site ? wk->site_f : -1;
        s->wsite = wk->site;
    } else if (fb_tid) {
        s->waker = thread_vertex(tl, fb_tid);
    } else {
        s->waker = pseudo(tl, fallback, fallback == VPR_WV_UNKNOWN ? 0 : e->obj);
    }
}

static int cmp_seg(const void *a, const void *b)
{
    const struct vpr_wseg *x = a, *y = b;
    if (x->v != y->v) return x->v < y->v ? -1 : 1;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    return (x->end < y->end) - (x->end > y->end);     /* longer first */
}

/* Sorts, cuts overlaps within a vertex, indexes. */
static void normalise(struct vpr_wtimeline *tl)
{
    qsort(tl->seg, tl->n_seg, sizeof *tl->seg, cmp_seg);
    size_t k = 0;
    for (size_t i = 0; i < tl->n_seg; i++) {
        struct vpr_wseg s = tl->seg[i];
        if (k && tl->seg[k - 1].v == s.v && s.start < tl->seg[k - 1].end) {
            s.start = tl->seg[k - 1].end;
            if (s.wake < s.start) s.wake = s.start;
        }
        if (s.end > s.start) tl->seg[k++] = s;
    }
    tl->n_seg = k;
}

static void number_threads(struct vpr_wtimeline *tl);

static int cmp_wake(const void *a, const void *b)
{
    const struct vpr_wwake *x = a, *y = b;
    if (x->t != y->t) return x->t < y->t ? -1 : 1;
    return (x->wakee > y->wakee) - (x->wakee < y->wakee);
}

void vpr_wait_finish(struct vpr_wtimeline *tl)
{
    number_threads(tl);
    normalise(tl);
    for (size_t i = 0; i < tl->n_seg; i++) {    /* a thread's span covers its waits */
        struct vpr_wvertex *v = &tl->v[tl->seg[i].v];
        if (v->kind != VPR_WV_THREAD) continue;
        if (!v->first || tl->seg[i].start < v->first) v->first = tl->seg[i].start;
        if (tl->seg[i].end > v->last) v->last = tl->seg[i].end;
    }
    free(tl->first);
    tl->first = vpf_xcalloc(tl->n_v + 1, sizeof *tl->first);
    for (size_t i = 0; i < tl->n_seg; i++) tl->first[tl->seg[i].v + 1]++;
    for (size_t v = 0; v < tl->n_v; v++) tl->first[v + 1] += tl->first[v];
    free(tl->wake);
    tl->wake = vpf_xrealloc(NULL, tl->n_seg, sizeof *tl->wake);
    tl->n_wake = 0;
    for (size_t i = 0; i < tl->n_seg; i++) {
        const struct vpr_wseg *s = &tl->seg[i];
        if (tl->v[s->waker].kind != VPR_WV_THREAD) continue;
        tl->wake[tl->n_wake++] = (struct vpr_wwake){s->wake, s->waker, s->v, i};
    }
    qsort(tl->wake, tl->n_wake, sizeof *tl->wake, cmp_wake);
}

/* A disk idles between the requests in flight on it (their union); each
 * idle time ends when a thread issues the next request: that thread woke
 * the disk, from the call site of its request. Idle time after the last
 * request woke nobody and is not a segment. */
static void disk_idle(struct vpr_wtimeline *tl, size_t *cap)
{
    size_t n0 = tl->n_seg;
    struct vpr_wseg *io = vpf_xrealloc(NULL, n0, sizeof *io);
    for (size_t d = 0; d < tl->n_v; d++) {
        if (tl->v[d].kind != VPR_WV_DISK) continue;
        size_t n = 0;
        for (size_t i = 0; i < n0; i++)
            if (tl->seg[i].waker == d) {
                io[n] = tl->seg[i];
                io[n].waker = io[n].v;      /* keep the issuer; sort by start alone */
                io[n++].v = 0;
            }
        qsort(io, n, sizeof *io, cmp_seg);
        uint64_t busy_end = tl->t0;
        for (size_t i = 0; i < n; i++) {
            if (io[i].start > busy_end) {
                struct vpr_wseg s;
                memset(&s, 0, sizeof s);
                s.start = busy_end;
                s.end = s.wake = io[i].start;
                s.v = (uint32_t)d;
                s.waker = io[i].waker;
                s.kind = VPR_WS_IDLE;
                s.obj = tl->v[d].id;
                s.site_f = -1;
                s.wsite_f = io[i].site_f;
                s.wsite = io[i].site;
                s.nr = io[i].nr;
                push_seg(tl, cap, &s);
            }
            if (io[i].end > busy_end) busy_end = io[i].end;
        }
    }
    free(io);
}

/* Thread roles: main for the process's first thread; the start routine
 * (thread start events) or else the thread's longest call (its outermost
 * instrumented frame). */
static void name_threads(struct vpr_model *m, struct vpr_wtimeline *tl,
                         const struct vpr_lproc *lp)
{
    for (size_t i = 0; i < tl->n_v; i++) {
        struct vpr_wvertex *v = &tl->v[i];
        if (v->kind != VPR_WV_THREAD) continue;
        uint64_t longest = 0;
        long outer = -1;
        size_t j = vpr_lat_lower_bound(lp, v->tid, 0);
        for (; j < lp->n && lp->ev[j].tid == v->tid; j++) {
            const struct vpr_lev *e = &lp->ev[j];
            if (e->kind == VPF_LAT_THREAD_START) {
                v->role = e->f;
                v->creator = e->other;
            } else if (e->kind == VPF_LAT_CALL && e->dur > longest) {
                longest = e->dur;
                outer = e->f;
            }
        }
        if (v->role < 0) v->role = outer;
        if ((int)v->tid == lp->pid) v->role_name = vpf_xstrdup("main");
        else if (v->role >= 0 && (size_t)v->role < m->n_f)
            v->role_name = vpf_xstrdup(m->f[v->role].name);
    }
}

/* Names threads after their role, numbered #1.. by first appearance when
 * several share it. */
static void number_threads(struct vpr_wtimeline *tl)
{
    for (size_t i = 0; i < tl->n_v; i++) {
        struct vpr_wvertex *v = &tl->v[i];
        if (v->kind != VPR_WV_THREAD) continue;
        const char *r = v->role_name ? v->role_name : "thread";
        size_t same = 0, before = 0;
        for (size_t k = 0; k < tl->n_v; k++) {
            const struct vpr_wvertex *u = &tl->v[k];
            if (u->kind != VPR_WV_THREAD || strcmp(u->role_name ? u->role_name : "thread", r))
                continue;
            same++;
            if (u->first < v->first || (u->first == v->first && u->tid < v->tid)) before++;
        }
        char nm[300];
        if (same > 1) snprintf(nm, sizeof nm, "%s#%zu", r, before + 1);
        else snprintf(nm, sizeof nm, "%s", r);
        free(v->name);
        v->name = vpf_xstrdup(nm);
    }
}

/* Calls made by the profiler itself: libvprof's sampling signal handler
 * unwinds with libunwind, which validates addresses by writing them into a
 * pipe and reading them back - short syscalls that a preemption can make
 * long, and that are no wait of the program. */
static int runtime_own(const struct vpr_model *m, long f)
{
    if (f < 0 || (size_t)f >= m->n_f || !m->f[f].is_lib) return 0;
    return !strncmp(m->f[f].name, "[libunwind", 10) || !strncmp(m->f[f].name, "[libvprof", 9);
}

/* A wait that ended without a waker and is followed at once by another
 * wait of the thread on the same object is a false wake-up (paper 003
 * §4.1: a spurious or stolen condition wake-up, a lock taken by another
 * thread first): one wait, from the first start, woken by the second's
 * waker. Segments are sorted by (v, start). */
enum { FALSE_WAKE_GAP_NS = 100000 };

static void merge_false_wakeups(struct vpr_wtimeline *tl)
{
    size_t k = 0;
    for (size_t i = 0; i < tl->n_seg; i++) {
        struct vpr_wseg *s = &tl->seg[i];
        if (k) {
            struct vpr_wseg *p = &tl->seg[k - 1];
            if (p->v == s->v && p->obj == s->obj && p->kind == s->kind &&
                tl->v[p->waker].kind == VPR_WV_UNKNOWN && s->start >= p->end &&
                s->start - p->end <= FALSE_WAKE_GAP_NS) {
                uint64_t start = p->start;
                *p = *s;
                p->start = start;
                continue;
            }
        }
        tl->seg[k++] = *s;
    }
    tl->n_seg = k;
}

void vpr_wait_timeline(struct vpr_model *m, const struct vpr_lproc *lp,
                       struct vpr_wtimeline *tl)
{
    memset(tl, 0, sizeof *tl);
    tl->pid = lp->pid;
    tl->label = lp->label;
    tl->source = "vprof latency events";
    tl->lp = lp;
    tl->t0 = UINT64_MAX;
    size_t n_wk = 0, cap = 0;
    struct wk *wks = vpf_xrealloc(NULL, lp->n, sizeof *wks);
    uint32_t last_tid = 0, v = 0;
    for (size_t i = 0; i < lp->n; i++) {
        const struct vpr_lev *e = &lp->ev[i];
        if (e->start < tl->t0) tl->t0 = e->start;
        if (e->start + e->dur > tl->t1) tl->t1 = e->start + e->dur;
        if (!i || e->tid != last_tid) v = thread_vertex(tl, last_tid = e->tid);  /* sorted by tid */
        struct vpr_wvertex *tv = &tl->v[v];
        uint64_t from = e->kind == VPF_LAT_THREAD_START ? e->start + e->dur : e->start;
        if (!tv->first || from < tv->first) tv->first = from;
        if (e->start + e->dur > tv->last) tv->last = e->start + e->dur;
        if (e->kind == VPF_LAT_WAKE) wks[n_wk++] = (struct wk){e->tid, e->start + e->dur, e->obj, e};
    }
    if (tl->t0 == UINT64_MAX) tl->t0 = 0;
    qsort(wks, n_wk, sizeof *wks, cmp_wk);
    for (size_t i = 0; i < lp->n; i++) {
        const struct vpr_lev *e = &lp->ev[i];
        switch (e->kind) {
        case VPF_LAT_MUTEX_WAIT: case VPF_LAT_COND_WAIT: case VPF_LAT_SEM_WAIT:
        case VPF_LAT_JOIN_WAIT: case VPF_LAT_ANNOT_WAIT: case VPF_LAT_FD_WAIT:
        case VPF_LAT_RWLOCK_WAIT: case VPF_LAT_BARRIER_WAIT:
            break;
        case VPF_LAT_SYSCALL:
            if (has_fd_twin(lp, i)) continue;
            break;
        default:
            continue;
        }
        if (runtime_own(m, e->site_f)) continue;
        struct vpr_wseg s;
        if (e->tid != last_tid) v = thread_vertex(tl, last_tid = e->tid);
        wait_seg(tl, e, v, wks, n_wk, &s);
        push_seg(tl, &cap, &s);
    }
    free(wks);
    /* a thread that only appears as a waker has no span of its own */
    for (size_t i = 0; i < tl->n_v; i++)
        if (tl->v[i].kind == VPR_WV_THREAD && !tl->v[i].last) {
            tl->v[i].first = tl->t0;
            tl->v[i].last = tl->t1;
        }
    normalise(tl);
    merge_false_wakeups(tl);
    disk_idle(tl, &cap);
    name_threads(m, tl, lp);
    vpr_wait_finish(tl);
}

void vpr_wait_timeline_free(struct vpr_wtimeline *tl)
{
    for (size_t i = 0; i < tl->n_v; i++) {
        free(tl->v[i].name);
        free(tl->v[i].role_name);
        if (tl->smp) free(tl->smp[i]);
    }
    free(tl->v);
    free(tl->seg);
    free(tl->first);
    free(tl->wake);
    free(tl->smp);
    free(tl->n_smp);
    for (size_t i = 0; i < tl->n_strings; i++) free(tl->strings[i]);
    free(tl->strings);
    memset(tl, 0, sizeof *tl);
}
