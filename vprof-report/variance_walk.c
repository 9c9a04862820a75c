/* variance_walk.c - VProfiler's Algorithm 2 (papers/001 §3.3.3) on the
 * stack scanner's events: every interval's time, walked backwards from its
 * end, split over the nodes of the variance tree.
 *
 * Segments. A request's stay on a thread (vprof_req_start up to the next
 * vprof_req_block/end of that id on that thread) is a segment executing
 * for it. The walk starts at the stay holding vprof_req_end and charges
 * the stay's time to the thread's call tree in it (calls nested by time,
 * clipped to the stay; the thread's own frames that began well before the
 * stay, like a worker loop, are left out: "the topmost function whose
 * execution is included within the segment", §3.2.1). Before the stay
 * the request was either
 *   - handed off: the latest vprof_req_block of the id before the stay's
 *     start (the created-by edge, §3.3.1 4-tuple). The gap between the two
 *     is queueing: the paper accumulates it as wait time; here it becomes
 *     a "[queued]" node whose children are what the thread that resumed
 *     the request was doing meanwhile (another request, housekeeping: what
 *     delayed the pick-up), and the walk goes on at the blocking thread at
 *     the block's time;
 *   - spawned: another thread's stay of the id was live at the stay's
 *     start; the walk goes on there;
 *   - neither: the rest, back to the request's first start, is an
 *     "[unexplained wait]".
 * Inside a segment, a wait (mutex, condition, semaphore, rwlock, barrier,
 * join or annotated wait, blocking call) with an incoming edge becomes a node whose children are the waker's
 * call tree during the wait ("processes the waker segment up to the point
 * where the blocked segment starts, and then returns to the thread of the
 * blocked segment", §3.3.3), recursively up to --edge-depth edges.
 *
 * Edges (struct vedge: from_tid, to_tid, time, kind). Filled from mutex
 * and rwlock waits (kinds 2 and 15: the (writing) holder read before
 * blocking -> the waiter, at the wait's end), the wait/wake events of
 * --latency programs (kind 9: waker -> wakee of a condition, semaphore,
 * rwlock, barrier, pipe or annotated wait; kind 12: the
 * joined thread -> the joiner; both at the wait's end) and request wakes
 * (kind 21: the waking thread -> every thread where the request stays at
 * that moment). Further wake-up events are one more case in
 * edges_collect(); nothing else changes.
 *
 * With --root FUNC the intervals are FUNC's outermost calls instead, each
 * on its own thread, with the same treatment of waits. */
#include "vprof_xalloc.h"
#include "variance.h"

#include <stdlib.h>
#include <string.h>

#define NONE32 UINT32_MAX
enum { MAX_FRAMES = 256, MAX_TREE_DEPTH = 64, MAX_HOPS = 100000 };

enum vedge_kind { VE_MUTEX = 1, VE_REQ_WAKE, VE_WAKE, VE_JOIN };

struct vedge { uint64_t time; uint32_t from, to; uint8_t kind; };

/* A call or wait of the process, with times adjusted so that they nest
 * (build_nesting): the walk's own copy, sorted by (thread, start). */
struct wev {
    uint64_t s, e;          /* adjusted start and end, e clipped into the parent */
    uint64_t obj;           /* syscall number */
    long f;                 /* function of a call */
    uint32_t tid, par;      /* par: enclosing event, NONE32 at the top */
    uint32_t orig;          /* index in the process's events (sort ties) */
    uint8_t kind;
};

struct wproc {
    struct vpr_variance *v;
    const struct vpr_lproc *lp;
    const struct vpr_vwork *wk;     /* --work-var samples of the process, or NULL */
    int side;
    struct wev *w;
    size_t n_w;
    struct vedge *ed;
    size_t n_ed, cap_ed;
    uint64_t slack;         /* frames older than this before a stay: thread's */
    uint32_t path[16];      /* threads on the current edge path */
    int n_path;
};

/* The waits that become nodes: every wait event except the fd wait, which
 * twins a syscall event of the same call. A wait without a node would hide
 * the edge into it (the waker's work would be the waiting caller's self). */
static int wait_kind(uint8_t kind)
{
    switch (kind) {
    case VPF_LAT_MUTEX_WAIT: case VPF_LAT_COND_WAIT: case VPF_LAT_SYSCALL:
    case VPF_LAT_SEM_WAIT: case VPF_LAT_JOIN_WAIT: case VPF_LAT_ANNOT_WAIT:
    case VPF_LAT_RWLOCK_WAIT: case VPF_LAT_BARRIER_WAIT:
        return 1;
    default:
        return 0;
    }
}

static int nests(uint8_t kind)
{
    return kind == VPF_LAT_CALL || wait_kind(kind);
}

static int cmp_wev(const void *a, const void *b)
{
    const struct wev *x = a, *y = b;
    if (x->tid != y->tid) return x->tid < y->tid ? -1 : 1;
    if (x->s != y->s) return x->s < y->s ? -1 : 1;
    if (x->e != y->e) return x->e > y->e ? -1 : 1;          /* outer first */
    if ((x->kind == VPF_LAT_CALL) != (y->kind == VPF_LAT_CALL))
        return x->kind == VPF_LAT_CALL ? -1 : 1;            /* a call holds a wait */
    return (x->orig > y->orig) - (x->orig < y->orig);
}

/* Whether call [cs, ce) holds wait [ws, we) that it partly overlaps. The
 * scanner places a call's ends up to half the time between two looks at
 * the thread off (more when it is starved of CPU), while waits are timed
 * exactly; a call cannot start or end during a wait of its own thread. So
 * the call's end that falls inside the wait really lies at one of the
 * wait's ends: the nearer one, the smaller error. Holding means the call's
 * start moves back to ws (or its end on to we). */
static int holds(uint64_t cs, uint64_t ce, uint64_t ws, uint64_t we)
{
    if (cs > ws) return cs - ws <= we - cs;     /* starts inside the wait */
    return we - ce <= ce - ws;                  /* ends inside the wait */
}

/* The process's calls and waits, adjusted to nest (see holds()), sorted,
 * with each one's parent and its end clipped into the parent's. */
static int build_nesting(struct wproc *P)
{
    const struct vpr_lproc *lp = P->lp;
    size_t n = 0;
    for (size_t i = 0; i < lp->n; i++) n += nests(lp->ev[i].kind);
    struct wev *w = P->w = vpf_xmalloc((n + 1) * sizeof *w);
    uint32_t *st = vpf_xmalloc((n + 1) * sizeof *st);
    if (!w || !st) { free(st); return -1; }
    P->n_w = n;
    n = 0;
    for (size_t i = 0; i < lp->n; i++) {
        const struct vpr_lev *e = &lp->ev[i];
        if (nests(e->kind))
            w[n++] = (struct wev){e->start, e->start + e->dur, e->obj, e->f, e->tid, NONE32,
                                  (uint32_t)i, e->kind};
    }
    qsort(w, n, sizeof *w, cmp_wev);
    /* calls that start during a wait: held (start with it) or after it */
    for (size_t k = 0; k < n; k++) {
        if (w[k].kind == VPF_LAT_CALL) continue;
        uint64_t ws = w[k].s, we = w[k].e;
        for (size_t j = k + 1; j < n && w[j].tid == w[k].tid && w[j].s < we; j++) {
            if (w[j].kind != VPF_LAT_CALL || w[j].s <= ws) continue;
            if (holds(w[j].s, w[j].e, ws, we)) {
                w[j].s = ws;
                if (w[j].e < we) w[j].e = we;
            } else {
                w[j].s = we;
                if (w[j].e < we) w[j].e = we;
            }
        }
    }
    qsort(w, n, sizeof *w, cmp_wev);
    size_t sp = 0;
    for (size_t i = 0; i < n; i++) {
        struct wev *e = &w[i];
        if (i && e->tid != w[i - 1].tid) sp = 0;
        while (sp && w[st[sp - 1]].e <= e->s) sp--;
        if (e->kind != VPF_LAT_CALL) {
            /* calls that end during this wait: they hold it, or ended
             * before it (and so did every call they hold) */
            for (size_t k = 0; k < sp; k++) {
                struct wev *c = &w[st[k]];
                if (c->e >= e->e || c->kind != VPF_LAT_CALL) continue;
                if (holds(c->s, c->e, e->s, e->e)) { c->e = e->e; continue; }
                for (size_t j = k; j < sp; j++)
                    if (w[st[j]].e > e->s) w[st[j]].e = e->s;
                sp = k;
                break;
            }
        }
        e->par = sp ? st[sp - 1] : NONE32;
        if (sp && e->e > w[st[sp - 1]].e) e->e = w[st[sp - 1]].e;
        if (e->e > e->s) st[sp++] = (uint32_t)i;
    }
    free(st);
    return 0;
}

/* First event of thread tid starting at or after t. */
static size_t w_lower(const struct wproc *P, uint32_t tid, uint64_t t)
{
    size_t lo = 0, hi = P->n_w;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        const struct wev *e = &P->w[mid];
        if (e->tid < tid || (e->tid == tid && e->s < t)) lo = mid + 1; else hi = mid;
    }
    return lo;
}

static void edge_push(struct wproc *P, uint32_t from, uint32_t to, uint64_t t, uint8_t kind)
{
    if (P->n_ed == P->cap_ed) {
        P->cap_ed = P->cap_ed ? 2 * P->cap_ed : 256;
        P->ed = vpf_xrealloc(P->ed, P->cap_ed, sizeof *P->ed);
    }
    P->ed[P->n_ed++] = (struct vedge){t, from, to, kind};
}

static int cmp_edge(const void *a, const void *b)
{
    const struct vedge *x = a, *y = b;
    if (x->to != y->to) return x->to < y->to ? -1 : 1;
    return (x->time > y->time) - (x->time < y->time);
}

/* Edges from single events. Wake-up events of other kinds go here. */
static void edges_collect(struct wproc *P)
{
    const struct vpr_lproc *lp = P->lp;
    for (size_t i = 0; i < lp->n; i++) {
        const struct vpr_lev *e = &lp->ev[i];
        switch (e->kind) {
        case VPF_LAT_MUTEX_WAIT:
        case VPF_LAT_RWLOCK_WAIT:       /* the writer holding it, when one did */
            if (e->other && e->other != e->tid)
                edge_push(P, e->other, e->tid, e->start + e->dur, VE_MUTEX);
            break;
        /* wait/wake events (FORMATS.md §5.1): the waker that ended a wait
         * on a condition, semaphore, pipe or annotated object, and the
         * thread a join waited for; the edge lands when the wait ended */
        case VPF_LAT_WAKE:
        case VPF_LAT_JOIN_WAIT:
            if (e->other && e->other != e->tid)
                edge_push(P, e->other, e->tid, e->start + e->dur,
                          e->kind == VPF_LAT_WAKE ? VE_WAKE : VE_JOIN);
            break;
        default:
            break;
        }
    }
}

/* The latest edge into thread `to` at a time in [ws, we]: its source
 * thread, or 0. */
static uint32_t edge_into(const struct wproc *P, uint32_t to, uint64_t ws, uint64_t we)
{
    size_t lo = 0, hi = P->n_ed;
    while (lo < hi) {           /* first edge after (to, we) */
        size_t mid = (lo + hi) / 2;
        const struct vedge *x = &P->ed[mid];
        if (x->to < to || (x->to == to && x->time <= we)) lo = mid + 1; else hi = mid;
    }
    if (!lo) return 0;
    const struct vedge *x = &P->ed[lo - 1];
    return x->to == to && x->time >= ws ? x->from : 0;
}

static uint8_t wait_type(uint8_t kind)
{
    switch (kind) {
    case VPF_LAT_MUTEX_WAIT: return VT_MUTEX;
    case VPF_LAT_COND_WAIT: return VT_COND;
    case VPF_LAT_SEM_WAIT: return VT_SEM;
    case VPF_LAT_JOIN_WAIT: return VT_JOIN;
    case VPF_LAT_ANNOT_WAIT: return VT_SPIN;
    case VPF_LAT_RWLOCK_WAIT: return VT_RWLOCK;
    case VPF_LAT_BARRIER_WAIT: return VT_BARRIER;
    default: return VT_SYSCALL;
    }
}

struct frame { uint32_t node; uint64_t end; };

struct attr_st {
    struct frame fr[MAX_FRAMES];
    int sp;
    uint64_t cur;
    int own;                /* a segment of the interval itself: [a, b) */
    uint64_t a, b;
};

static void attr(struct wproc *P, uint32_t tid, uint64_t a, uint64_t b, uint32_t node,
                 int depth, int own, size_t first);

/* Charges [cur, t) to the top frame's body and moves cur to t. */
static void advance(struct wproc *P, struct attr_st *S, uint64_t t)
{
    if (t > S->cur) {
        vpr_vtree_time(P->v, S->fr[S->sp - 1].node, t - S->cur);
        S->cur = t;
    }
}

/* Closes every frame that ends by t. */
static void pop_to(struct wproc *P, struct attr_st *S, uint64_t t)
{
    while (S->sp > 1 && S->fr[S->sp - 1].end <= t) {
        advance(P, S, S->fr[S->sp - 1].end);
        S->sp--;
    }
}

static int on_path(const struct wproc *P, uint32_t tid)
{
    for (int i = 0; i < P->n_path; i++)
        if (P->path[i] == tid) return 1;
    return 0;
}

/* Event i of thread tid enters at time s (>= S->cur): a frame, or a wait
 * followed along its edge. */
static void enter(struct wproc *P, struct attr_st *S, size_t i, uint64_t s, int depth,
                  uint32_t tid)
{
    const struct wev *e = &P->w[i];
    struct frame *top = &S->fr[S->sp - 1];
    uint64_t end = e->e < top->end ? e->e : top->end;
    if (end <= s) return;
    /* A call of the interval's own thread that lies mostly outside the
     * segment ran before or after it: the request events are exact, a
     * call's ends are not (a call after vprof_req_end may be placed to
     * start before it). Its time inside goes to the frame below. */
    if (S->own && e->kind == VPF_LAT_CALL) {
        uint64_t lo = e->s > S->a ? e->s : S->a, hi = e->e < S->b ? e->e : S->b;
        if (hi <= lo || 2 * (hi - lo) < e->e - e->s) return;
    }
    advance(P, S, s);
    uint32_t node = top->node;
    if (P->v->nodes[top->node].depth < MAX_TREE_DEPTH) {
        if (e->kind == VPF_LAT_CALL)
            node = vpr_vnode_get(P->v, top->node, VT_FUNC, e->f);
        else
            node = vpr_vnode_get(P->v, top->node, wait_type(e->kind),
                                 e->kind == VPF_LAT_SYSCALL ? (long)e->obj : -1);
    }
    if (e->kind != VPF_LAT_CALL && depth < P->v->o->depth && P->n_path < 16) {
        uint32_t from = edge_into(P, tid, e->s, e->e);
        if (from && from != tid && !on_path(P, from)) {
            P->path[P->n_path++] = tid;
            attr(P, from, s, end, node, depth + 1, 0, SIZE_MAX);
            P->n_path--;
            S->cur = end;
            return;
        }
    }
    if (S->sp < MAX_FRAMES) S->fr[S->sp++] = (struct frame){node, end};
}

/* Splits [a, b) of thread tid under node: the thread's calls and waits in
 * that time, nested. own: a segment of the interval itself (frames that
 * began more than slack before a belong to the thread, not the interval).
 * first: index of the first event to look at (its enclosing frames are
 * then not looked for), or SIZE_MAX. */
static void attr(struct wproc *P, uint32_t tid, uint64_t a, uint64_t b, uint32_t node,
                 int depth, int own, size_t first)
{
    if (b <= a) return;
    struct attr_st S;
    S.sp = 1;
    S.fr[0] = (struct frame){node, b};
    S.cur = a;
    S.own = own;
    S.a = a;
    S.b = b;
    size_t i = first;
    if (first == SIZE_MAX) {
        i = w_lower(P, tid, a);
        /* frames live at a: the innermost one that started before a, and
         * its parents */
        uint32_t chain[MAX_FRAMES];
        int nc = 0;
        if (i > 0 && P->w[i - 1].tid == tid) {
            uint32_t c = (uint32_t)(i - 1);
            while (c != NONE32 && P->w[c].e <= a) c = P->w[c].par;
            for (; c != NONE32 && nc < MAX_FRAMES; c = P->w[c].par) chain[nc++] = c;
        }
        while (nc-- > 0) {
            const struct wev *e = &P->w[chain[nc]];
            if (own && e->s + P->slack < a) continue;
            if (e->e <= S.cur) continue;
            enter(P, &S, chain[nc], S.cur, depth, tid);
        }
    }
    for (; i < P->n_w && P->w[i].tid == tid && P->w[i].s < b; i++) {
        const struct wev *e = &P->w[i];
        pop_to(P, &S, e->s);
        if (e->e <= S.cur) continue;            /* inside a wait followed elsewhere */
        enter(P, &S, i, e->s > S.cur ? e->s : S.cur, depth, tid);
    }
    pop_to(P, &S, b);
    advance(P, &S, b);
}

/* ------------------------------------------------------------- requests */

struct rev { uint64_t id, t, arg; uint32_t tid; uint8_t kind; };

static int kind_order(uint8_t k)
{
    /* at equal times: a start opens before work/wake, a block or end closes after */
    return k == VPF_LAT_REQ_START ? 0 : k == VPF_LAT_REQ_BLOCK ? 3 : k == VPF_LAT_REQ_END ? 4 : 1;
}

static int cmp_rev(const void *a, const void *b)
{
    const struct rev *x = a, *y = b;
    if (x->id != y->id) return x->id < y->id ? -1 : 1;
    if (x->t != y->t) return x->t < y->t ? -1 : 1;
    if (kind_order(x->kind) != kind_order(y->kind)) return kind_order(x->kind) - kind_order(y->kind);
    return (x->tid > y->tid) - (x->tid < y->tid);
}

struct stay { uint32_t tid; uint64_t s, e; };
struct rblock { uint32_t tid; uint64_t t; };

/* One request instance: its events r[lo, hi) (sorted by time), from its
 * first start to its end. */
struct inst {
    uint64_t id, start, end;
    uint32_t end_tid;
    int64_t work;           /* -1: none */
    struct stay *st;
    size_t n_st;
    struct rblock *bl;
    size_t n_bl;
};

/* Stays and blocks of the instance; a start never closed on its thread
 * stays open to the request's end. */
static void inst_build(struct inst *q, const struct rev *r, size_t lo, size_t hi)
{
    q->st = vpf_xmalloc((hi - lo + 1) * sizeof *q->st);
    q->bl = vpf_xmalloc((hi - lo + 1) * sizeof *q->bl);
    q->n_st = q->n_bl = 0;
    q->work = -1;
    for (size_t i = lo; i < hi; i++) {
        const struct rev *e = &r[i];
        if (e->kind == VPF_LAT_REQ_WORK) {
            q->work = (q->work < 0 ? 0 : q->work) + (int64_t)e->arg;
            continue;
        }
        if (e->kind == VPF_LAT_REQ_START) {
            size_t k = q->n_st;
            while (k > 0 && !(q->st[k - 1].tid == e->tid && q->st[k - 1].e == UINT64_MAX)) k--;
            if (k == 0) q->st[q->n_st++] = (struct stay){e->tid, e->t, UINT64_MAX};
            continue;
        }
        if (e->kind != VPF_LAT_REQ_BLOCK && e->kind != VPF_LAT_REQ_END) continue;
        for (size_t k = q->n_st; k-- > 0;)
            if (q->st[k].tid == e->tid && q->st[k].e == UINT64_MAX) { q->st[k].e = e->t; break; }
        if (e->kind == VPF_LAT_REQ_BLOCK) q->bl[q->n_bl++] = (struct rblock){e->tid, e->t};
    }
    for (size_t k = 0; k < q->n_st; k++)
        if (q->st[k].e == UINT64_MAX) q->st[k].e = q->end;
}

static void inst_free(struct inst *q)
{
    free(q->st);
    free(q->bl);
}

/* The stay of q on tid that holds time t (start < t <= end), the latest. */
static const struct stay *stay_at(const struct inst *q, uint32_t tid, uint64_t t)
{
    for (size_t k = q->n_st; k-- > 0;)
        if (q->st[k].tid == tid && q->st[k].s < t && q->st[k].e >= t) return &q->st[k];
    return NULL;
}

static void walk_request(struct wproc *P, const struct inst *q)
{
    struct vpr_variance *v = P->v;
    uint32_t tid = q->end_tid;
    uint64_t t = q->end;
    int unexplained = 0;
    for (int hop = 0; hop < MAX_HOPS; hop++) {
        const struct stay *S = stay_at(q, tid, t);
        if (!S) {                       /* an end without a stay on its thread */
            if (t > q->start) {
                vpr_vtree_time(v, vpr_vnode_get(v, 0, VT_UNEXPLAINED, -1), t - q->start);
                unexplained = 1;
            }
            break;
        }
        uint64_t a = S->s > q->start ? S->s : q->start;
        attr(P, tid, a, t, 0, 0, 1, SIZE_MAX);
        if (a <= q->start) break;
        /* the hand-off that led here: the latest block at or before a */
        const struct rblock *g = NULL;
        for (size_t k = q->n_bl; k-- > 0;)
            if (q->bl[k].t <= a && q->bl[k].t >= q->start) { g = &q->bl[k]; break; }
        if (g) {
            attr(P, tid, g->t, a, vpr_vnode_get(v, 0, VT_QUEUED, -1), 0, 0, SIZE_MAX);
            tid = g->tid;
            t = g->t;
            continue;
        }
        /* spawned: another thread's stay live at a */
        const struct stay *sp = NULL;
        for (size_t k = q->n_st; k-- > 0;)
            if (&q->st[k] != S && q->st[k].s < a && q->st[k].e >= a) { sp = &q->st[k]; break; }
        if (sp) {
            tid = sp->tid;
            t = a;
            continue;
        }
        vpr_vtree_time(v, vpr_vnode_get(v, 0, VT_UNEXPLAINED, -1), a - q->start);
        unexplained = 1;
        break;
    }
    v->side[P->side].unexplained += unexplained;
    int64_t work = q->work;
    if (P->wk) {                    /* --work-var: the largest sample in a stay */
        double best = -1;
        for (size_t k = 0; k < q->n_st; k++) {
            double x = vpr_vwork_max(P->wk, q->st[k].tid, q->st[k].s, q->st[k].e);
            if (x > best) best = x;
        }
        work = best < 0 ? -1 : best > 9e18 ? INT64_MAX : (int64_t)(best + 0.5);
    }
    vpr_vtree_commit(v, P->side, work, P->lp->pid, q->id);
}

/* Request events of the process, sorted by (id, time); calls fn on every
 * complete instance. */
static void requests(struct wproc *P, int pass)
{
    const struct vpr_lproc *lp = P->lp;
    size_t n = 0;
    for (size_t i = 0; i < lp->n; i++) n += vpf_lat_is_request(lp->ev[i].kind);
    if (!n) return;
    struct rev *r = vpf_xmalloc(n * sizeof *r);
    n = 0;
    for (size_t i = 0; i < lp->n; i++) {
        const struct vpr_lev *e = &lp->ev[i];
        if (vpf_lat_is_request(e->kind))
            r[n++] = (struct rev){e->obj, e->start, e->kind == VPF_LAT_REQ_WORK ? e->site : 0,
                                  e->tid, e->kind};
    }
    qsort(r, n, sizeof *r, cmp_rev);
    struct vpr_vside *sd = &P->v->side[P->side];
    for (size_t i = 0; i < n;) {
        /* one instance: from the first start to the next end of the id */
        size_t lo = i;
        uint64_t id = r[i].id;
        while (i < n && r[i].id == id && r[i].kind != VPF_LAT_REQ_START) i++;
        size_t s0 = i;
        while (i < n && r[i].id == id && r[i].kind != VPF_LAT_REQ_END) i++;
        int complete = s0 < n && r[s0].id == id && i < n && r[i].id == id;
        if (!complete) {
            if (pass) sd->incomplete += s0 > lo || (s0 < n && r[s0].id == id);
            while (i < n && r[i].id == id) i++;
            continue;
        }
        /* events before the first start (work counted early, a stray
         * block) belong to the instance; stays begin at starts only */
        struct inst q = {.id = id, .start = r[s0].t, .end = r[i].t, .end_tid = r[i].tid};
        size_t hi = i + 1;
        inst_build(&q, r, lo, hi);
        if (!pass) {
            for (size_t k = lo; k < hi; k++)
                if (r[k].kind == VPF_LAT_REQ_WAKE)
                    for (size_t j = 0; j < q.n_st; j++)
                        if (q.st[j].tid != r[k].tid && q.st[j].s <= r[k].t && q.st[j].e >= r[k].t)
                            edge_push(P, r[k].tid, q.st[j].tid, r[k].t, VE_REQ_WAKE);
        } else {
            walk_request(P, &q);
        }
        inst_free(&q);
        i = hi;
    }
    free(r);
}

/* --root FUNC: every outermost call of it that ended before the stop. */
static void root_calls(struct wproc *P)
{
    long f = P->v->root_f;
    for (size_t i = 0; i < P->n_w; i++) {
        const struct wev *e = &P->w[i];
        if (e->kind != VPF_LAT_CALL || e->f != f) continue;
        int nested = 0;
        for (uint32_t c = e->par; c != NONE32 && !nested; c = P->w[c].par)
            nested = P->w[c].kind == VPF_LAT_CALL && P->w[c].f == f;
        if (nested) continue;
        if (P->lp->ev[e->orig].flags & 1) { P->v->side[P->side].incomplete++; continue; }
        attr(P, e->tid, e->s, e->e, 0, 0, 1, i + 1);
        double x = P->wk ? vpr_vwork_max(P->wk, e->tid, e->s, e->e) : -1;
        vpr_vtree_commit(P->v, P->side, x < 0 ? -1 : x > 9e18 ? INT64_MAX : (int64_t)(x + 0.5),
                         P->lp->pid, e->s);
    }
}

int vpr_vwalk_all(struct vpr_variance *v, char *err, size_t errlen)
{
    const struct vpr_latency *L = v->m->lat;
    uint64_t slack = 4ull * L->scan_ns > 1000000 ? 4ull * L->scan_ns : 1000000;
    vpr_vnode_get(v, UINT32_MAX, VT_ROOT, v->root_f);
    for (size_t p = 0; p < L->n_procs; p++) {
        struct wproc P = {.v = v, .lp = &L->procs[p], .side = L->procs[p].side, .slack = slack,
                          .wk = v->work ? &v->work[p] : NULL};
        if (P.lp->n >= NONE32) {
            snprintf(err, errlen, "%s: more than 2^32 latency events in one process",
                     P.lp->label);
            return -1;
        }
        if (build_nesting(&P) < 0) {
            snprintf(err, errlen, "out of memory for %zu latency events", P.lp->n);
            return -1;
        }
        edges_collect(&P);
        if (v->root_f < 0) requests(&P, 0);     /* request wake edges */
        if (P.n_ed) qsort(P.ed, P.n_ed, sizeof *P.ed, cmp_edge);
        if (v->root_f < 0) requests(&P, 1);
        else root_calls(&P);
        free(P.w);
        free(P.ed);
    }
    return 0;
}
