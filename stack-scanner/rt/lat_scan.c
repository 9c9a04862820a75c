/* lat_scan.c - the stack scanner thread (LDB §3.2). Every VPROF_SCAN_NS (or
 * continuously when 0) it visits every registered thread: if the thread's
 * TLS (top, gen) pair is unchanged since the last good scan nothing happened
 * and the walk is skipped; otherwise it walks the frame chain from the top
 * down to the first record it already knows (everything below a live record
 * is unchanged), validating every record, then re-reads (top, gen): a
 * change means the thread raced with the walk and the walk is retried.
 * Records seen for the first time get the walk's time as their start; known
 * records that are gone produce a call event. Each end is placed midway
 * between the last good look at the thread and the look that saw the
 * change, so the error per end is at most half the time between two looks
 * (the polling interval plus scanning time, more when the scanner thread
 * is not scheduled) and averages out.
 *
 * The scanner never faults: it reads another thread's stack only inside the
 * bounds pthread_getattr_np gave for that thread, only while the thread is
 * registered (slot.busy handshake with the thread's exit), and for the main
 * thread, whose stack grows on demand, below the part known to be mapped it
 * reads through process_vm_readv. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "hooks.h"
#include "lat_rt.h"
#include "lat_stats.h"

#define VL_MAX_WALK 4096        /* records newer than the last known one per walk */
#define VL_MAX_RETRY 4          /* consistent-walk attempts per thread and pass */

VL_HIDDEN int vl_safe_read(void *dst, const void *src, size_t n);
VL_HIDDEN int vl_text_ok(uintptr_t a);

static int running, done, started;  /* atomics */
static struct vprof_latency_stats st;
static struct vl_srec walk_buf[VL_MAX_WALK];

void vprof_latency_stats(struct vprof_latency_stats *out)
{
    struct vprof_latency_stats c;
    uint64_t *d = (uint64_t *)&c, *s = (uint64_t *)&st;
    for (size_t i = 0; i < sizeof c / sizeof(uint64_t); i++)
        d[i] = __atomic_load_n(&s[i], __ATOMIC_RELAXED);
    c.registered = __atomic_load_n(&vl_n_registered, __ATOMIC_RELAXED);
    c.registry_full = __atomic_load_n(&vl_n_full, __ATOMIC_RELAXED);
    *out = c;
}

struct find_map { uintptr_t addr, found; };

static int contains(uintptr_t lo, uintptr_t hi, int exec, void *ctx)
{
    struct find_map *f = ctx;
    (void)exec;
    if (f->addr < lo || f->addr >= hi)
        return 0;
    f->found = lo;
    return 1;
}

/* Start of the mapping that contains addr; 0 if not found. */
static uintptr_t mapping_start(uintptr_t addr)
{
    struct find_map f = {addr, 0};
    vl_maps_each(contains, &f);
    return f.found;
}

static void get_bounds(struct vl_slot *s)
{
    pthread_attr_t a;
    void *addr;
    size_t size;
    s->bounds_ok = -1;
    if (pthread_getattr_np(s->thread, &a))
        return;
    if (!pthread_attr_getstack(&a, &addr, &size)) {
        s->lo = (uintptr_t)addr;
        s->hi = (uintptr_t)addr + size;
        s->is_main = s->tid == getpid();
        s->mapped_lo = s->lo;
        if (s->is_main) {
            /* Only the part the kernel has grown so far is mapped. */
            uintptr_t m = mapping_start((uintptr_t)__atomic_load_n(&s->tls->top, __ATOMIC_ACQUIRE));
            s->mapped_lo = !m ? s->hi : m > s->lo ? m : s->lo;
            s->maps_refresh_ns = vl_now();
        }
        s->bounds_ok = 1;
    }
    pthread_attr_destroy(&a);
}

/* Copies one record; 0 if readable. Reading other threads' stacks,
 * possibly where a frame just died, is this function's job: exempt from
 * AddressSanitizer (SAN=1 builds), whose redzones may cover such memory. */
__attribute__((no_sanitize_address))
static int read_frame(struct vl_slot *s, uintptr_t p, struct vl_frame *f)
{
    if (p >= s->mapped_lo) {
        const volatile struct vl_frame *v = (const volatile struct vl_frame *)p;
        f->word = v->word;
        f->prev = v->prev;
        f->func = v->func;
        f->site = v->site;
        return 0;
    }
    st.safe_reads++;
    if (vl_safe_read(f, (const void *)p, sizeof *f) < 0)
        return -1;
    if (!s->is_main || s->bounds_ok <= 0)
        return 0;
    uint64_t now = vl_now();
    if (now - s->maps_refresh_ns > 10000000u) {   /* the stack grew: re-learn */
        s->maps_refresh_ns = now;
        uintptr_t m = mapping_start(p);
        if (m >= s->lo && m < s->mapped_lo)
            s->mapped_lo = m;
    }
    return 0;
}

static void emit_call(const struct vl_slot *s, const struct vl_srec *r,
                      uint64_t end_ns, uint8_t flags)
{
    if (vl_funcs_limited && !vl_func_allowed(r->func))
        return;                         /* VPROF_LATENCY_FUNCS */
    struct vpf_latency_rec e = {
        .start_ns = r->first_ns,
        .duration_ns = end_ns > r->first_ns ? end_ns - r->first_ns : 0,
        .func = r->func,
        .site = r->site ? r->site - 1 : 0,   /* the call instruction, as in values.<id> */
        .tid = (uint32_t)s->tid,
        .generation = (uint32_t)r->gen,
        .kind = VPF_LAT_CALL,
        .flags = flags,
    };
    vl_file_put(&e);
    st.call_events++;
}

static int ensure_cap(struct vl_slot *s, uint32_t need)
{
    if (!s->recs) {
        s->recs = s->inline_recs;
        s->cap_recs = VL_INLINE_RECS;
    }
    if (need <= s->cap_recs)
        return 1;
    /* Deep chains only: malloc may wait for a lock that a preempted
     * application thread holds, so the common case stays inline. */
    uint32_t cap = s->cap_recs;
    while (cap < need)
        cap *= 2;
    struct vl_srec *n = s->recs == s->inline_recs ? malloc(cap * sizeof *n)
                                                  : realloc(s->recs, cap * sizeof *n);
    if (!n)
        return 0;
    if (s->recs == s->inline_recs)
        memcpy(n, s->inline_recs, s->n_recs * sizeof *n);
    s->recs = n;
    s->cap_recs = cap;
    return 1;
}

enum { WALK_SAME, WALK_DONE, WALK_RACE };

static int walk(struct vl_slot *s, uint64_t pass_ns)
{
    uint64_t now = pass_ns;
    struct vl_tls *T = s->tls;
    uintptr_t top1 = (uintptr_t)__atomic_load_n(&T->top, __ATOMIC_ACQUIRE);
    uint64_t gen1 = __atomic_load_n(&T->gen, __ATOMIC_ACQUIRE);
    if (top1 == s->last_top && gen1 == s->last_gen) {
        s->last_ok_ns = now;    /* known records were live at the pass start */
        return WALK_SAME;
    }
    /* Something changed: stamp this look itself, not the pass start (the
     * scanner may have been preempted since). */
    now = vl_now();
    /* A change seen now happened after the last good look at this thread:
     * both a new record's start and a gone record's end are put midway. */
    uint64_t mid = s->last_ok_ns ? s->last_ok_ns + (now - s->last_ok_ns) / 2 : now;

    enum { END_SENTINEL, END_MATCH, END_INVALID } end = END_INVALID;
    uintptr_t p = top1, prev_addr = 0;
    uint64_t prev_gen = (gen1 & VL_GEN_MASK) + 1;
    long j = (long)s->n_recs - 1;
    uint32_t n = 0;
    for (;;) {
        if (p == VL_SENTINEL) {
            end = END_SENTINEL;
            break;
        }
        if ((p & 7) || p < s->lo || p > s->hi - sizeof(struct vl_frame) || p <= prev_addr)
            break;                  /* (before get_bounds: lo 0, hi max, safe reads) */
        struct vl_frame f;
        if (read_frame(s, p, &f) < 0 || (f.word >> VL_CANARY_SHIFT) != VL_CANARY)
            break;
        uint64_t g = f.word & VL_GEN_MASK;
        if (g >= prev_gen)
            break;
        while (j >= 0 && s->recs[j].gen > g)
            j--;
        if (j >= 0 && s->recs[j].gen == g && s->recs[j].addr == p &&
            s->recs[j].func == (uint64_t)f.func) {
            end = END_MATCH;
            break;
        }
        if (!vl_text_ok((uintptr_t)f.func) || !vl_text_ok((uintptr_t)f.site))
            break;
        if (n == VL_MAX_WALK)
            break;
        walk_buf[n++] = (struct vl_srec){ g, p, (uint64_t)f.func, (uint64_t)f.site, mid };
        prev_gen = g;
        prev_addr = p;
        p = (uintptr_t)f.prev;
    }
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    uintptr_t top2 = (uintptr_t)__atomic_load_n(&T->top, __ATOMIC_ACQUIRE);
    if (top2 != top1 || __atomic_load_n(&T->gen, __ATOMIC_ACQUIRE) != gen1) {
        s->race_top = top2;
        return WALK_RACE;
    }

    if (end == END_INVALID)
        st.invalid++;
    /* Known records above the matched one (or all, at the chain's end) have
     * returned. After an invalid record, records below it are unknown and
     * kept. */
    uint32_t keep = end == END_SENTINEL ? 0 : (uint32_t)(j + 1);
    for (uint32_t i = keep; i < s->n_recs; i++)
        emit_call(s, &s->recs[i], mid, 0);
    s->n_recs = keep;
    if (n && ensure_cap(s, keep + n)) {
        for (uint32_t i = 0; i < n; i++)
            s->recs[keep + i] = walk_buf[n - 1 - i];
        s->n_recs = keep + n;
    }
    s->last_top = top1;
    s->last_gen = gen1;
    s->last_ok_ns = now;
    return WALK_DONE;
}

/* Without a consistent walk (the thread keeps calling and returning), the
 * scanner can still tell which known records are gone, newest first: a
 * record below the thread's top has returned, and so has one whose word no
 * longer holds its canary and generation. The first record that passes both
 * is live, and so are its callers. New records wait for a consistent walk. */
static void reap(struct vl_slot *s, uintptr_t top, uint64_t now)
{
    uint64_t mid = s->last_ok_ns ? s->last_ok_ns + (now - s->last_ok_ns) / 2 : now;
    uint32_t i = s->n_recs;
    while (i > 0) {
        const struct vl_srec *r = &s->recs[i - 1];
        if (r->addr >= top) {
            struct vl_frame f;
            if (read_frame(s, r->addr, &f) == 0 &&
                f.word == (VL_CANARY << VL_CANARY_SHIFT | r->gen))
                break;
        }
        emit_call(s, r, mid, 0);
        i--;
    }
    s->n_recs = i;
    s->last_ok_ns = now;
}

/* The first look at a new thread walks with non-faulting reads and only
 * then asks for the stack bounds (pthread_getattr_np may block on malloc's
 * lock), so that the records it finds are stamped without that delay. */
static void scan_thread(struct vl_slot *s, uint64_t now)
{
    if (s->bounds_ok < 0)
        return;
    if (!s->last_ok_ns)
        s->last_ok_ns = s->reg_ns;  /* no record of it is older than that */
    int attempt;
    for (attempt = 0; attempt < VL_MAX_RETRY; attempt++) {
        int r = walk(s, now);
        if (r == WALK_SAME) {
            st.fast++;
            break;
        }
        if (r == WALK_DONE) {
            st.walks++;
            break;
        }
        st.retries++;
    }
    if (attempt == VL_MAX_RETRY)
        reap(s, s->race_top, vl_now());
    if (!s->bounds_ok)
        get_bounds(s);
}

static void reset_private(struct vl_slot *s)
{
    s->n_recs = 0;
    s->bounds_ok = 0;
    s->is_main = 0;
    s->lo = 0;                      /* until get_bounds: any address, */
    s->hi = UINTPTR_MAX;
    s->mapped_lo = UINTPTR_MAX;     /* read without faulting */
    s->last_top = 0;
    s->last_gen = 0;
    s->last_ok_ns = 0;
}

/* A thread that left: its remaining records ended when it did. */
static void finalize(struct vl_slot *s)
{
    uint64_t end = s->death_ns ? s->death_ns : vl_now();
    for (uint32_t i = 0; i < s->n_recs; i++)
        emit_call(s, &s->recs[i], end, 0);
    vl_drain(s);
    reset_private(s);
    __atomic_store_n(&s->state, VL_FREE, __ATOMIC_RELEASE);
}

/* One clock read per pass (not per thread: on this kind of VM a read costs
 * ~80 ns, the largest part of a look at an idle thread); all looks of a
 * pass carry its start time. */
static uint64_t pass(int final, uint64_t now)
{
    int hw = __atomic_load_n(&vl_slots_hw, __ATOMIC_ACQUIRE);
    for (int i = 0; i < hw; i++) {
        struct vl_slot *s = &vl_slots[i];
        int state = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);
        if (state == VL_DEAD) {
            finalize(s);
            continue;
        }
        if (state != VL_LIVE)
            continue;
        __atomic_store_n(&s->busy, 1, __ATOMIC_SEQ_CST);
        if (__atomic_load_n(&s->state, __ATOMIC_SEQ_CST) == VL_LIVE) {
            scan_thread(s, now);
            if (final) {
                /* Still running at stop: report what is known, flagged. */
                for (uint32_t k = 0; k < s->n_recs; k++)
                    emit_call(s, &s->recs[k], now, VL_FLAG_OPEN);
                reset_private(s);
            }
        }
        __atomic_store_n(&s->busy, 0, __ATOMIC_SEQ_CST);
        vl_drain(s);
    }
    /* Two looks at a thread in consecutive passes are at most (end of this
     * pass - start of the previous one) apart: that is the pause reported. */
    uint64_t end = vl_now();
    if (!st.passes)
        st.first_ns = now;
    if (end - st.last_ns > st.max_gap_ns)   /* the first: since the start request */
        st.max_gap_ns = end - st.last_ns;
    st.last_ns = now;
    st.passes++;
    return end;
}

static void *scanner_main(void *arg)
{
    (void)arg;
    __vprof_lat_tls.internal = 1;       /* never registers, shims pass through */
    prctl(PR_SET_TIMERSLACK, 1UL);      /* short sleeps must stay short */
    prctl(PR_SET_NAME, "vprof-scan");
    struct timespec ts = { (time_t)(vl_cfg.scan_ns / 1000000000u),
                           (long)(vl_cfg.scan_ns % 1000000000u) };
    uint64_t t = vl_now();
    while (__atomic_load_n(&running, __ATOMIC_ACQUIRE)) {
        uint64_t end = pass(0, t);
        /* Busy mode polls in a tight loop, as LDB does: the looks at an
         * unchanged thread read only its (top, gen) cache line, and the
         * end of a pass is the start of the next. */
        if (vl_cfg.scan_ns) {
            syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, &ts, NULL);
            t = vl_now();
        } else {
            t = end;
        }
    }
    pass(1, vl_now());
    __atomic_store_n(&done, 1, __ATOMIC_RELEASE);
    return NULL;
}

int vl_scanner_start(const struct vprof_rt_services *rt)
{
    if (!rt || !rt->thread_create) {
        vl_warn("no thread service from the runtime: scanner not started", NULL);
        return -1;
    }
    memset(&st, 0, sizeof st);
    st.last_ns = vl_now();
    for (int i = 0; i < VL_MAX_THREADS; i++)
        reset_private(&vl_slots[i]);    /* bounds unknown: non-faulting reads */
    __atomic_store_n(&running, 1, __ATOMIC_RELEASE);
    __atomic_store_n(&done, 0, __ATOMIC_RELEASE);
    pthread_attr_t a;
    pthread_t th;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    /* VPROF_SCAN_PRIO=rt: the sleeping scanner runs as soon as it wakes,
     * however loaded the machine (SCHED_FIFO 1; it sleeps most of the
     * time), from its creation on. Not for busy polling, which would then
     * starve a core. */
    int prio_rt = vl_cfg.scan_rt && vl_cfg.scan_ns;
    if (vl_cfg.scan_rt && !vl_cfg.scan_ns)
        vl_warn("VPROF_SCAN_PRIO=rt is ignored with busy polling (VPROF_SCAN_NS=0)", NULL);
    if (prio_rt) {
        struct sched_param sp = { .sched_priority = 1 };
        pthread_attr_setinheritsched(&a, PTHREAD_EXPLICIT_SCHED);
        pthread_attr_setschedpolicy(&a, SCHED_FIFO);
        pthread_attr_setschedparam(&a, &sp);
    }
    /* A thread of vprof's own: it takes no signals (the program's handlers,
     * and vprof's own SIGTERM handling, which stops the scanner, run
     * elsewhere) and is never profiled. */
    int rc = rt->thread_create(&th, &a, scanner_main, NULL);
    if (rc == EPERM && prio_rt) {
        vl_warn("VPROF_SCAN_PRIO=rt: not permitted (needs CAP_SYS_NICE); normal priority", NULL);
        pthread_attr_setinheritsched(&a, PTHREAD_INHERIT_SCHED);
        rc = rt->thread_create(&th, &a, scanner_main, NULL);
    }
    pthread_attr_destroy(&a);
    if (rc) {
        __atomic_store_n(&running, 0, __ATOMIC_RELEASE);
        vl_warn("cannot start the scanner thread", NULL);
        return -1;
    }
    __atomic_store_n(&started, 1, __ATOMIC_RELEASE);
    /* Let the scanner take its first look before the program runs on, so
     * that calls made right after start-up are not seen late (bounded: a
     * starved scanner must not hold the program up for long). */
    struct timespec nap = { 0, 20000 };
    for (int i = 0; i < 5000 && !__atomic_load_n(&st.passes, __ATOMIC_ACQUIRE); i++)
        syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, &nap, NULL);
    return 0;
}

void vl_scanner_stop(void)
{
    if (!__atomic_exchange_n(&started, 0, __ATOMIC_ACQ_REL))
        return;
    __atomic_store_n(&running, 0, __ATOMIC_RELEASE);
    /* Bounded wait: stop may run from a signal handler (no pthread_join). */
    struct timespec nap = { 0, 100000 };
    for (int i = 0; i < 20000 && !__atomic_load_n(&done, __ATOMIC_ACQUIRE); i++)
        syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, &nap, NULL);
}

void vl_scanner_atfork_child(void)
{
    running = done = started = 0;
    for (int i = 0; i < VL_MAX_THREADS; i++)
        reset_private(&vl_slots[i]);
}
