/* waits_perf.c - the kernel's view of waits as an alternative input to
 * --waits: `perf script` output of
 *     perf record -e sched:sched_switch,sched:sched_waking,sched:sched_wakeup[,sched:sched_wakeup_new]
 *                 [-e irq:softirq_entry,irq:softirq_exit] [-g] -- PROGRAM
 * (as root). This is what wPerf itself records (paper 003 §4.1: switch_to
 * and try_to_wake_up): a thread switched out asleep (state S or D) waits
 * until a sched_waking or sched_wakeup names it; the task current on the CPU
 * of that event is the waker - a thread of the process, another process's task
 * ([comm]), or, when the CPU ran no task or was inside a softirq, an
 * interrupt: [network] for NET_RX/NET_TX, a disk for BLOCK, [timer] for
 * TIMER/HRTIMER, [interrupt] otherwise. From the wakeup until the thread
 * runs again it is runnable. sched_waking is the one to trust: it fires in
 * the waker's context, while the kernel queues a wake-up of a task on
 * another CPU to that CPU (TTWU_QUEUE) and emits sched_wakeup there, from
 * the IPI - in whatever task, often the idle one, ran on it. When both are
 * recorded the waking ends the wait and the later wakeup finds nothing to
 * end; sched_wakeup_new (a new thread, no waking) names the creator. With -g, the first frame outside the kernel
 * and libc of the switch-out is the waiting site, that of the wakeup the
 * waker's site.
 *
 * Lines: "COMM TID [CPU] SECS.FRAC: EVENT: FIELDS" or, with -F
 * comm,pid,tid,cpu,time,event,trace, "COMM PID/TID [CPU] ...": then every
 * process (thread group) gets its own timeline; without the PID column all
 * tasks that were current in an event form one process. Fields in the raw
 * form (prev_comm=.. prev_pid=.. prev_state=.. ==> next_comm=.. next_pid=..;
 * comm=.. pid=..) or in perf's sched plugin form (COMM:PID [PRIO] S ==>
 * COMM:PID [PRIO]). Other events and lines are ignored; a file with no
 * scheduler event is an error. */
#include "perf_script.h"
#include "vprof_xalloc.h"
#include "waits.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct task {                   /* per thread of a traced process */
    uint32_t tid;
    uint32_t v;                 /* vertex in its process's timeline */
    size_t proc;
    uint64_t wait_start;        /* 0: not waiting */
    char wait_state;
    const char *wait_site;
    long pending;               /* segment whose end (next run) is not known, -1 */
    uint64_t runnable_since;    /* preempted (state R), 0: not */
};

struct proc {
    int pid;
    struct vpr_wtimeline tl;
    size_t cap_seg;
};

struct pctx {
    const char *path;
    int has_pid;
    struct proc *pr;
    size_t n_pr, cap_pr;
    struct task *t;             /* open-addressed by tid */
    size_t cap_t, n_t;
    const char *softirq[1024];  /* per CPU: the softirq running, or NULL */
    uint64_t events;
    struct born { uint32_t tid; uint64_t t; } *born;   /* sched_wakeup_new: creation times */
    size_t n_born, cap_born;
};

/* ---- strings owned by a timeline ---- */
static const char *own(struct vpr_wtimeline *tl, const char *s)
{
    for (size_t i = tl->n_strings; i-- > 0 && i + 64 > tl->n_strings;)
        if (!strcmp(tl->strings[i], s)) return tl->strings[i];
    tl->strings = vpf_grow(tl->strings, &tl->cap_strings, tl->n_strings + 1, sizeof *tl->strings);
    return tl->strings[tl->n_strings++] = vpf_xstrdup(s);
}

static struct proc *proc_of(struct pctx *c, int pid)
{
    for (size_t i = 0; i < c->n_pr; i++) if (c->pr[i].pid == pid) return &c->pr[i];
    c->pr = vpf_grow(c->pr, &c->cap_pr, c->n_pr + 1, sizeof *c->pr);
    struct proc *p = &c->pr[c->n_pr++];
    memset(p, 0, sizeof *p);
    p->pid = pid;
    p->tl.pid = pid;
    p->tl.source = "perf sched tracepoints";
    p->tl.label = c->path;
    p->tl.t0 = UINT64_MAX;
    return p;
}

static struct task *task_find(struct pctx *c, uint32_t tid)
{
    if (!c->cap_t) return NULL;
    for (size_t h = (tid * 2654435761u) & (c->cap_t - 1); c->t[h].tid; h = (h + 1) & (c->cap_t - 1))
        if (c->t[h].tid == tid) return &c->t[h];
    return NULL;
}

/* The task tid of process pid, created with comm as its name. */
static struct task *task_get(struct pctx *c, uint32_t tid, int pid, const char *comm)
{
    struct task *t = task_find(c, tid);
    if (t) return t;
    if (2 * (c->n_t + 1) > c->cap_t) {
        size_t oc = c->cap_t;
        struct task *old = c->t;
        c->cap_t = oc ? 2 * oc : 256;
        c->t = vpf_xcalloc(c->cap_t, sizeof *c->t);
        for (size_t i = 0; i < oc; i++) {
            if (!old[i].tid) continue;
            size_t h = (old[i].tid * 2654435761u) & (c->cap_t - 1);
            while (c->t[h].tid) h = (h + 1) & (c->cap_t - 1);
            c->t[h] = old[i];
        }
        free(old);
    }
    size_t h = (tid * 2654435761u) & (c->cap_t - 1);
    while (c->t[h].tid) h = (h + 1) & (c->cap_t - 1);
    t = &c->t[h];
    memset(t, 0, sizeof *t);
    t->tid = tid;
    t->pending = -1;
    struct proc *p = proc_of(c, pid);
    t->proc = (size_t)(p - c->pr);
    char nm[300];
    snprintf(nm, sizeof nm, "%s", comm);
    t->v = vpr_wait_vertex(&p->tl, VPR_WV_THREAD, tid, 0, nm);
    p->tl.v[t->v].role_name = vpf_xstrdup(comm);
    /* Threads sharing a name are numbered by first appearance; a thread's
     * creation, not its first run (which the scheduler orders), makes that
     * stable between recordings. */
    for (size_t i = c->n_born; i-- > 0;)
        if (c->born[i].tid == tid) { p->tl.v[t->v].first = c->born[i].t; break; }
    c->n_t++;
    return t;
}

static void push_seg(struct proc *p, const struct vpr_wseg *s)
{
    p->tl.seg = vpf_grow(p->tl.seg, &p->cap_seg, p->tl.n_seg + 1, sizeof *p->tl.seg);
    p->tl.seg[p->tl.n_seg++] = *s;
}

/* ---- one event ---- */
struct ev {
    char comm[256];
    int pid;                    /* -1 when the line has no PID column */
    uint32_t tid;
    unsigned cpu;
    uint64_t t;
    char name[64];
    char *fields;
    char frame[512];            /* first user frame of the call chain, or "" */
    int irq;                    /* from the kernel frames: what interrupt ran (below) */
};

/* A wakeup from an interrupt runs in whatever task it interrupted, so the
 * current task is not the waker: the kernel frames of the call chain say
 * which interrupt it was (hardirq timers have no softirq event). */
enum { IRQ_NONE, IRQ_TIMER, IRQ_DISK, IRQ_NET, IRQ_OTHER };

static int irq_class(const char *sym)
{
    static const struct { const char *s; int c; } t[] = {
        {"hrtimer_wakeup", IRQ_TIMER}, {"process_timeout", IRQ_TIMER}, {"it_real_fn", IRQ_TIMER},
        {"hrtimer_interrupt", IRQ_TIMER}, {"blk_mq_complete", IRQ_DISK}, {"bio_endio", IRQ_DISK},
        {"blk_update_request", IRQ_DISK}, {"end_buffer", IRQ_DISK}, {"nvme_irq", IRQ_DISK},
        {"virtblk_done", IRQ_DISK}, {"scsi_io_completion", IRQ_DISK}, {"net_rx_action", IRQ_NET},
        {"napi_", IRQ_NET}, {"netif_receive", IRQ_NET}, {"virtnet_poll", IRQ_NET},
        {"common_interrupt", IRQ_OTHER}, {"sysvec_", IRQ_OTHER}, {"handle_irq_event", IRQ_OTHER},
    };
    for (size_t i = 0; i < sizeof t / sizeof *t; i++)
        if (strstr(sym, t[i].s)) return t[i].c;
    return IRQ_NONE;
}

/* Value of "key=" in f (the key must start f or follow a space). */
static const char *field(const char *f, const char *key)
{
    size_t n = strlen(key);
    for (const char *p = f; (p = strstr(p, key)); p += n)
        if ((p == f || p[-1] == ' ' || p[-1] == '[') && p[n] == '=') return p + n + 1;
    return NULL;
}

/* The plugin form "COMM:PID [PRIO] STATE": pid and state of the part
 * starting at s (up to "==>" or the end). */
static int plugin_task(const char *s, const char *end, uint32_t *pid, char *state)
{
    const char *br = strstr(s, " [");
    if (!br || (end && br > end)) return -1;
    const char *colon = br;
    while (colon > s && *colon != ':') colon--;
    if (*colon != ':') return -1;
    *pid = (uint32_t)strtoul(colon + 1, NULL, 10);
    if (state) {
        const char *q = strchr(br, ']');
        if (!q) return -1;
        q++;
        while (*q == ' ') q++;
        *state = *q;
    }
    return 0;
}

static uint32_t vertex_of_waker(struct pctx *c, struct proc *p, const struct ev *e,
                                char wait_state)
{
    const char *irq = e->cpu < 1024 ? c->softirq[e->cpu] : NULL;
    struct task *w = e->tid ? task_find(c, e->tid) : NULL;
    switch (e->irq) {
    case IRQ_TIMER: return vpr_wait_vertex(&p->tl, VPR_WV_TIMER, 0, 0, "[timer]");
    case IRQ_DISK: return vpr_wait_vertex(&p->tl, VPR_WV_DISK, 0, 0, "disk");
    case IRQ_NET: return vpr_wait_vertex(&p->tl, VPR_WV_NET, 0, 0, "network");
    case IRQ_OTHER:
        if (!irq) return vpr_wait_vertex(&p->tl, VPR_WV_OUTSIDE, 0, 0, "[interrupt]");
        break;
    }
    if (irq) {
        if (!strcmp(irq, "NET_RX") || !strcmp(irq, "NET_TX"))
            return vpr_wait_vertex(&p->tl, VPR_WV_NET, 0, 0, "network");
        if (!strcmp(irq, "BLOCK")) return vpr_wait_vertex(&p->tl, VPR_WV_DISK, 0, 0, "disk");
        if (!strcmp(irq, "TIMER") || !strcmp(irq, "HRTIMER"))
            return vpr_wait_vertex(&p->tl, VPR_WV_TIMER, 0, 0, "[timer]");
    }
    if (w && w->proc == (size_t)(p - c->pr) && e->tid) return w->v;
    if (!e->tid || irq)
        return wait_state == 'D' ? vpr_wait_vertex(&p->tl, VPR_WV_DISK, 0, 0, "disk")
                                 : vpr_wait_vertex(&p->tl, VPR_WV_OUTSIDE, 0, 0, "[interrupt]");
    /* another process's task: one vertex per command (kworker/0:1 -> kworker) */
    char base[256], nm[300];
    snprintf(base, sizeof base, "%s", e->comm);
    char *sl = strchr(base, '/');
    if (sl) *sl = 0;
    uint64_t h = vpf_hash_str(VPF_FNV_BASIS, base);
    snprintf(nm, sizeof nm, "[%s]", base);
    return vpr_wait_vertex(&p->tl, VPR_WV_OUTSIDE, 0, h | 1, nm);
}

/* The task current in e (the line's TID) is running at e->t. */
static void running(struct pctx *c, uint32_t tid, uint64_t t)
{
    struct task *k = task_find(c, tid);
    if (!k) return;
    struct proc *p = &c->pr[k->proc];
    struct vpr_wvertex *v = &p->tl.v[k->v];
    if (k->pending >= 0) {                      /* woken: runnable until now */
        struct vpr_wseg *s = &p->tl.seg[k->pending];
        if (t > s->wake) s->end = t;
        k->pending = -1;
    }
    if (k->wait_start && t > k->wait_start) {
        /* running again, but its wakeup was not recorded: it happened in the
         * context of a task that was not traced (an interrupt on an idle CPU,
         * another process: record with -a to see them) */
        struct vpr_wseg s;
        memset(&s, 0, sizeof s);
        s.start = k->wait_start;
        s.end = s.wake = t;
        s.v = k->v;
        s.kind = k->wait_state == 'D' ? VPR_WS_IO : VPR_WS_BLOCKED;
        s.site_f = s.wsite_f = -1;
        s.site_name = k->wait_site;
        s.waker = vpr_wait_vertex(&p->tl, VPR_WV_UNKNOWN, 0, 1, "[not recorded]");
        push_seg(p, &s);
        v = &p->tl.v[k->v];
        k->wait_start = 0;
    }
    if (k->runnable_since && t > k->runnable_since)
        v->runnable_s = (v->runnable_s < 0 ? 0 : v->runnable_s) +
                        (double)(t - k->runnable_since) / 1e9;
    k->runnable_since = 0;
    if (!v->first || t < v->first) v->first = t;
    if (t > v->last) v->last = t;
    if (t < p->tl.t0) p->tl.t0 = t;
    if (t > p->tl.t1) p->tl.t1 = t;
}

static int process(struct pctx *c, struct ev *e)
{
    int sw = !strcmp(e->name, "sched:sched_switch");
    int wk = !strcmp(e->name, "sched:sched_waking") || !strcmp(e->name, "sched:sched_wakeup") ||
             !strcmp(e->name, "sched:sched_wakeup_new");
    if (!strcmp(e->name, "irq:softirq_entry") || !strcmp(e->name, "irq:softirq_exit")) {
        if (e->cpu < 1024) {
            const char *a = field(e->fields, "action");
            static char names[1024][16];
            if (!strcmp(e->name, "irq:softirq_entry") && a) {
                snprintf(names[e->cpu], sizeof names[e->cpu], "%.*s", (int)strcspn(a, "] "), a);
                c->softirq[e->cpu] = names[e->cpu];
            } else {
                c->softirq[e->cpu] = NULL;
            }
        }
        return 0;
    }
    if (!sw && !wk) return 0;
    c->events++;
    if (!strcmp(e->name, "sched:sched_wakeup_new")) {
        const char *np = field(e->fields, "pid");
        uint32_t nt = np ? (uint32_t)strtoul(np, NULL, 10) : 0;
        if (nt && !task_find(c, nt)) {
            c->born = vpf_grow(c->born, &c->cap_born, c->n_born + 1, sizeof *c->born);
            c->born[c->n_born++] = (struct born){nt, e->t};
        }
    }
    /* the current task: a thread of a traced process (known from its own events) */
    if (e->tid && e->tid != UINT32_MAX && (c->has_pid ? e->pid > 0 : 1)) {
        task_get(c, e->tid, c->has_pid ? e->pid : 0, e->comm);
        running(c, e->tid, e->t);
    }
    if (sw) {
        uint32_t prev = 0, next = 0;
        char st = 0;
        const char *ps = field(e->fields, "prev_pid"), *pst = field(e->fields, "prev_state"),
                   *np = field(e->fields, "next_pid");
        if (ps && pst && np) {
            prev = (uint32_t)strtoul(ps, NULL, 10);
            st = *pst;
            next = (uint32_t)strtoul(np, NULL, 10);
        } else {
            const char *arrow = strstr(e->fields, "==>");
            if (!arrow || plugin_task(e->fields, arrow, &prev, &st) < 0 ||
                plugin_task(arrow + 3, NULL, &next, NULL) < 0)
                return -1;
        }
        struct task *k = prev ? task_find(c, prev) : NULL;
        if (k) {
            if (st == 'S' || st == 'D') {
                k->wait_start = e->t;
                k->wait_state = st;
                k->wait_site = e->frame[0] ? own(&c->pr[k->proc].tl, e->frame) : NULL;
            } else if (st == 'R') {
                k->runnable_since = e->t;
            }
        }
        if (next) running(c, next, e->t);
        return 0;
    }
    const char *wp = field(e->fields, "pid");
    uint32_t wakee = 0;
    if (wp) wakee = (uint32_t)strtoul(wp, NULL, 10);
    else if (plugin_task(e->fields, NULL, &wakee, NULL) < 0) return -1;
    struct task *k = task_find(c, wakee);
    if (!k || !k->wait_start || e->t < k->wait_start) return 0;
    struct proc *p = &c->pr[k->proc];
    struct vpr_wseg s;
    memset(&s, 0, sizeof s);
    s.start = k->wait_start;
    s.end = s.wake = e->t;
    s.v = k->v;
    s.kind = k->wait_state == 'D' ? VPR_WS_IO : VPR_WS_BLOCKED;
    s.site_f = s.wsite_f = -1;
    s.site_name = k->wait_site;
    s.waker = vertex_of_waker(c, p, e, k->wait_state);
    if (s.waker == k->v) return 0;                   /* woke itself: not a wait on anyone */
    s.wsite_name = e->frame[0] && p->tl.v[s.waker].kind == VPR_WV_THREAD ? own(&p->tl, e->frame) : NULL;
    push_seg(p, &s);
    k->pending = (long)p->tl.n_seg - 1;
    k->wait_start = 0;
    if (s.start < p->tl.t0) p->tl.t0 = s.start;
    if (s.end > p->tl.t1) p->tl.t1 = s.end;
    return 0;
}

/* "  COMM TID [CPU] SECS.FRAC: EVENT: FIELDS"; 1 parsed, 0 not an event line. */
/* The event line, by the one perf script reader. */
static int parse_line(char *l, struct ev *e, int *has_pid)
{
    struct vpr_perf_head h;
    if (!vpr_perf_head_parse(l, &h, has_pid)) return 0;
    memcpy(e->comm, h.comm, sizeof e->comm);
    e->pid = h.pid;
    e->tid = h.tid;
    e->cpu = h.cpu;
    e->t = h.t;
    memcpy(e->name, h.name, sizeof e->name);
    e->fields = h.fields;
    e->frame[0] = 0;
    e->irq = IRQ_NONE;
    return 1;
}

/* A call-chain line "\t addr sym+off (dso)": keeps the first frame outside
 * the kernel and the C library as "sym (dso)". */
static void frame_line(const char *l, struct ev *e, int *have)
{
    while (*l == ' ' || *l == '\t') l++;
    while ((*l >= '0' && *l <= '9') || (*l >= 'a' && *l <= 'f')) l++;
    while (*l == ' ') l++;
    const char *dso = strrchr(l, '(');
    if (!dso) return;
    if (strstr(dso, "kernel") || strstr(dso, "vmlinux")) {
        if (!e->irq && !*have) e->irq = irq_class(l);
        return;
    }
    if (*have || !strncmp(l, "[unknown]", 9) || strstr(dso, "libc.so") ||
        strstr(dso, "libpthread") || strstr(dso, "ld-linux"))
        return;
    size_t n = (size_t)(dso - l);
    while (n && l[n - 1] == ' ') n--;
    const char *plus = memchr(l, '+', n);
    if (plus) n = (size_t)(plus - l);
    const char *base = strrchr(dso, '/');
    base = base ? base + 1 : dso + 1;
    size_t bl = strcspn(base, ")");
    snprintf(e->frame, sizeof e->frame, "%.*s (%.*s)", (int)n, l, (int)bl, base);
    *have = 1;
}

int vpr_wait_perf_load(const char *path, int only_pid, struct vpr_wtimeline **out,
                       size_t *n_out, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) { snprintf(err, errlen, "%s: %s", path, strerror(errno)); return -1; }
    struct pctx c;
    memset(&c, 0, sizeof c);
    c.path = path;
    char *line = NULL, *cur_line = NULL;
    size_t cap = 0, lineno = 0, ev_line = 0;
    static struct ev cur, probe;
    int have_cur = 0, have_frame = 0, rc = 0;
    /* an event is processed once its call chain (tab-indented lines) is read */
    while (getline(&line, &cap, f) >= 0) {
        lineno++;
        if (line[0] == '\t') {
            if (have_cur) frame_line(line, &cur, &have_frame);
            continue;
        }
        char *copy = vpf_xstrdup(line);
        if (!parse_line(copy, &probe, &c.has_pid)) { free(copy); continue; }
        if (have_cur && process(&c, &cur) < 0) { free(copy); rc = -1; break; }
        free(cur_line);
        cur_line = copy;                /* probe.fields points into it */
        cur = probe;
        have_cur = 1;
        have_frame = 0;
        ev_line = lineno;
    }
    if (rc == 0 && have_cur && process(&c, &cur) < 0) rc = -1;
    free(cur_line);
    if (rc < 0)
        snprintf(err, errlen, "%s:%zu: a scheduler event whose fields do not parse", path, ev_line);
    free(line);
    fclose(f);
    if (rc == 0 && only_pid && !c.has_pid) {
        snprintf(err, errlen, "%s: --perf-pid needs the PID column (perf script -F "
                 "comm,pid,tid,cpu,time,event,trace)", path);
        rc = -1;
    }
    if (rc == 0 && !c.events) {
        snprintf(err, errlen, "%s: no sched:sched_switch or sched:sched_wakeup events (record "
                 "with perf record -e sched:sched_switch,sched:sched_waking,sched:sched_wakeup, then "
                 "perf script)", path);
        rc = -1;
    }
    *out = NULL;
    *n_out = 0;
    if (rc == 0) {
        *out = vpf_xcalloc(c.n_pr, sizeof **out);
        for (size_t i = 0; i < c.n_pr; i++) {
            struct vpr_wtimeline *tl = &c.pr[i].tl;
            if (!tl->n_seg || (only_pid && c.pr[i].pid != only_pid)) {
                vpr_wait_timeline_free(tl);
                continue;
            }
            if (tl->t0 == UINT64_MAX) tl->t0 = tl->t1;
            for (size_t v = 0; v < tl->n_v; v++) {
                struct vpr_wvertex *x = &tl->v[v];
                if (x->kind != VPR_WV_THREAD) continue;
                if (c.has_pid ? (int)x->tid == c.pr[i].pid : 0) {
                    free(x->role_name);
                    x->role_name = vpf_xstrdup("main");
                }
                if (!x->last) { x->first = tl->t0; x->last = tl->t1; }
                if (!c.has_pid && (!tl->pid || (int)x->tid < tl->pid)) tl->pid = (int)x->tid;
            }
            vpr_wait_finish(tl);
            (*out)[(*n_out)++] = *tl;
        }
    } else {
        for (size_t i = 0; i < c.n_pr; i++) vpr_wait_timeline_free(&c.pr[i].tl);
    }
    free(c.pr);
    free(c.t);
    free(c.born);
    return rc;
}
