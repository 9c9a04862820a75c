/* vprof-gen-runs - writes a synthetic run directory (layout.<id>,
 * values.<id>, gmon.<id>.out) for a known scenario, through the format
 * module's writers, so vprof-report can be tested and benchmarked without
 * the runtime. Not installed.
 *
 * usage: vprof-gen-runs SCENARIO normal|buggy OUTDIR EXE
 *            [--func NAME=ADDR]... [--bias HEX] [--ticks N] [--seed N]
 *            [--bytes N] [--id ID] [--build-id HEX] [--hz N]
 *
 * ADDR is a function's link-time address (nm); --bias is the load bias
 * written to the layout and added to every PC (PIE).
 *
 * Scenarios (every function named below needs --func):
 *   rank    hot (called by caller) takes 90% of the ticks, caller 10%.
 *           caller's loop variable i (tags loop) is sampled every tick, at
 *           depth 1 while hot runs: i cycles 0..99 (normal) or 0..999
 *           (buggy). hot's n is uniform 0..49 in both. The global g_count
 *           is uniform in both. Right answer: caller first (scalability),
 *           hot discounted by DefaultDiscount. --param V: hot also has
 *           param (tags cond), V at every tick of hot: a setting constant
 *           in the run, whose only stretch is the run's length.
 *   hist    like rank, plus worker, which has no variables: normal ticks
 *           hot 30%, caller 10%, worker 60%; buggy 80/10/10. worker ranks
 *           first in the normal run and last in the buggy one, so the
 *           hist-discounter gives it h/c = 1/1. --worker-pct P: worker
 *           takes 10% of the normal run's ticks and P% of the buggy run's
 *           (hot the rest but caller's 10%): by raw cost it rises from 3rd
 *           to 1st, its share grows P/10 times.
 *   driver  caller is the run's driver loop: every tick passes through
 *           it (its i, tags loop, cycles 0..99 normal or 0..999 buggy, at
 *           depth 1 under its callees), its own code 5% of the ticks; hot
 *           (n uniform 0..49 in both) 75% normal, 65% buggy; worker (w,
 *           tags cond: 0..9 normal, 0..99 buggy) 20% normal, 30% buggy.
 *           Arcs caller->hot 1000, caller->worker 100 on both sides.
 *           Right answer: worker first (the time the buggy run added);
 *           caller holds the whole run on both sides (--whole-run) and,
 *           having added nothing, is not ranked by its inherited cost.
 *           --worker-pct P: worker takes P% of the ticks on both sides
 *           (hot the rest but caller's 5%): a cheap decision whose values
 *           still differ. --func main=ADDR: an arc main -> caller too
 *           (main has no ticks: the unwinding stopped below it).
 *           --main-pct P (with --func main, instead of its arc): in the
 *           normal run P% of the ticks land in main's own code, outside
 *           caller, so caller's share of the run grows by P% in the buggy
 *           one: what its callees added, not its own code.
 *           --main-reach N,B (with --func main): main's "clients"
 *           (tags cond: 8 normal, 40 buggy, the workload's size) is
 *           recorded on N% of the normal ticks and B% of the buggy ones,
 *           a frame above caller: how far the unwinding reached main.
 *           --func entry=ADDR (the ELF entry, _start): one tick in ten
 *           unwinds to it, a frame above caller with no variable of its
 *           own (no arc: libc calls main).
 *   arcvar  main calls caller 100 times a run; caller calls hot 10 times
 *           per call (normal) or 1000 (buggy): arcs main->caller 100,
 *           caller->hot 1000 or 100000. Ticks: hot 95% (n uniform 0..49
 *           in both), caller 5%. caller's i (tags from --var-tags, default
 *           loop) is recorded on 1 tick in 1000: about 20 samples a side,
 *           0..9 normal, 0..999 buggy - anomalous but thin, so the call
 *           counts decide. Needs --func main. Right answer: caller decided
 *           by its calls; pattern from i's tags (loop: scalability; no
 *           loop or condition tag: missing constraint, more calls).
 *           --arc-normal N: caller calls hot N times in the normal run
 *           (1000 by default): under 100, at most once per call - a
 *           branch, whose changed rate is a wrong constraint.
 *   tie     hot loops (step, tags loop: 0..99 normal, 0..999 buggy) calling
 *           caller, which takes every tick; both see the same argument now
 *           (no tags: 0..9 normal, 100..109 buggy), caller at depth 0, hot
 *           at depth 1. Their costs tie exactly and now decides both.
 *           Right answer: hot first (its loop variable is anomalous too:
 *           the tie goes to the function that chose to do the work).
 *   stuck   worker takes all ticks; its state (tags loop|cond) cycles over
 *           0..3 changing every 5 ticks (normal) or every 50 (buggy).
 *           Right answer: worker, dimension processing-cost, pattern
 *           missing-constraint.
 *   bench   hot and caller, 64 variables, 4 threads, records until the
 *           values file reaches --bytes.
 *   latency rank, plus latency.<id> with known events (durations exact,
 *           both sides unless said): thread 1: hot called 1000 times from
 *           caller+12, durations 1..1000 µs (p50 500, p99 990, p99.9 999,
 *           max 1000). Thread 2: worker called 200 times from caller+20,
 *           100 µs each (normal) or 5000 µs (buggy: 1.0 s in all); in the
 *           buggy run each worker call waits 4000 µs for mutex 0x1234 at
 *           worker+8 held by thread 3, which runs caller for 4200 µs
 *           around each wait. Request id k+1 is worker call k's stay on
 *           thread 2 (vprof_req_start 10 µs before the call, end 10 µs
 *           after). Right answer: worker first (latency, r 0), hot's
 *           latency the same (DefaultDiscount), holder caller.
 *           --thread-roots N (needs --func root): threads 10..10+N-1 each
 *           one call of root lasting the run, 2 s (normal) or 3 s (buggy):
 *           thread start routines. Right answer: worker first, root a root
 *           of the run, not ranked.
 *   variance no value samples; latency.<id> with --ticks N requests (default
 *           2000; --seed varies them) for vprof-report --variance, needs
 *           --func handle, parse, lookup, crawl, housekeep, flush. Request
 *           k (id k+1), times in µs from t0 = 1000 + 3000 k: thread 1 starts
 *           it, records work w = 1 + rnd % 20, runs parse for 5 w (inherent)
 *           and blocks it (hand-off) at tb; thread 2 starts it at tb + 2..4,
 *           except when k % 50 == 7: then thread 2 runs housekeep from
 *           tb - 5 to tb + 400 and starts it at tb + 401 (queueing behind the
 *           consumer). Thread 2 runs handle (10..14 µs more than lookup,
 *           20..26 µs, inside it) and ends it. Buggy only, k % 100 == 3: lookup waits 1500 µs for a mutex
 *           held by thread 3, which runs crawl around the wait. Both sides,
 *           k % 50 == 20: lookup waits 700 µs on a condition until thread 4,
 *           running flush, calls vprof_req_wake 1 µs before the wait ends.
 *           --wake-event 1: flush's thread ends that wait with a wake event
 *           (kind 9, waker tid 4, class condition) instead of vprof_req_wake.
 *           --limited 1 drops lookup's call events and sets the header's
 *           VPROF_LATENCY_FUNCS flag. Writes OUTDIR/truth.<id>: "id work
 *           latency_ns" per request. gmon: arc handle->lookup. Right answer: buggy top factor crawl; parse
 *           inherent; housekeep under [queued]; flush under [cond wait].
 *   waits-fig2  rank, plus latency.<id> with paper 003's Figure 1 (its
 *           wait-for graph is Figure 2), 100 requests of 10 ms: thread 1
 *           (start routine caller) runs 2 ms, then waits on a condition
 *           until thread 2 wakes it 8 ms later; thread 2 (worker) runs 5 ms,
 *           then waits 5 ms in fsync on disk 8:1. Right answer (--waits):
 *           caller -> worker 0.8 s, worker -> disk 1.0 s (5 ms own + 5 ms
 *           cascaded from caller's wait per request), disk -> worker 0.5 s
 *           (idle, woken by worker's fsync); one knot {worker, disk}.
 *   waits-fig3  rank, plus paper 003's Figure 3 nesting, one level deeper,
 *           100 periods of 10 ms from t: thread 1 (hot) waits on a mutex
 *           [t, t+6 ms) woken by thread 2 (caller), which waits [t, t+4)
 *           woken by thread 3 (worker), which waits [t, t+2) woken by
 *           thread 4 (its start routine: hot, so --waits-merge none). Right
 *           answer (cascaded redistribution): 1->2 0.6 s, 2->3 0.8 s
 *           (4 own + 4 from 1's wait), 3->4 0.6 s (2 own + 2 + 2); thread 4
 *           a sink, no knot.

 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vprof_elf.h"
#include "vprof_format.h"
#include "vprof_xalloc.h"

struct fn { const char *name; uint64_t addr; };
static struct fn fns[16];
static int n_fns;
static uint64_t rng_state = 88172645463325252ull;

static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static uint64_t faddr(const char *name)
{
    for (int i = 0; i < n_fns; i++)
        if (!strcmp(fns[i].name, name)) return fns[i].addr;
    fprintf(stderr, "vprof-gen-runs: scenario needs --func %s=ADDR\n", name);
    exit(2);
}

static int has_func(const char *name)
{
    for (int i = 0; i < n_fns; i++)
        if (!strcmp(fns[i].name, name)) return 1;
    return 0;
}

static void die(const char *what, const vpf_err *e)
{
    fprintf(stderr, "vprof-gen-runs: %s: %s\n", what, e ? e->msg : strerror(errno));
    exit(1);
}

struct gen {
    struct vpf_recfile_w w;
    uint16_t *bins;
    uint64_t lowpc, highpc, bias, now_ns;
    uint32_t nbins;
    uint64_t n;
    unsigned hz;
};

static void rec(struct gen *g, uint32_t var, uint64_t value, uint64_t link_pc,
                uint32_t tid, uint8_t depth, uint16_t tick)
{
    struct vpf_value_rec *r = vpf_recfile_claim(&g->w);
    if (!r) return;
    r->value = value;
    r->pc = link_pc + g->bias;
    r->time_ns = g->now_ns;
    r->var = var;
    r->tid = tid;
    r->depth = depth;
    r->tick = tick;
    r->entry = 0;
    r->flags = 0;
    vpf_commit_flag(&r->flags);
    g->n++;
}

static void pc_tick(struct gen *g, uint64_t link_pc)
{
    uint64_t pc = link_pc + g->bias;
    if (pc >= g->lowpc && pc < g->highpc) {
        uint32_t b = (uint32_t)((pc - g->lowpc) / 4);
        if (g->bins[b] < 65535) g->bins[b]++;
    }
}

static void lat_rec_g(struct vpf_recfile_w *w, uint8_t kind, uint64_t start_us, uint64_t dur_us,
                      uint64_t func, uint64_t site, uint32_t tid, uint32_t other, uint32_t gen)
{
    struct vpf_latency_rec *r = vpf_recfile_claim(w);
    if (!r) return;
    memset(r, 0, sizeof *r);
    r->start_ns = start_us * 1000;
    r->duration_ns = dur_us * 1000;
    r->func = func;
    r->site = site;
    r->tid = tid;
    r->other_tid = other;
    r->generation = gen;
    r->kind = kind;
    vpf_commit_flag(&r->flags);
}

static void lat_rec(struct vpf_recfile_w *w, uint8_t kind, uint64_t start_us, uint64_t dur_us,
                    uint64_t func, uint64_t site, uint32_t tid, uint32_t other)
{
    lat_rec_g(w, kind, start_us, dur_us, func, site, tid, other, 0);
}

/* DIR/latency.ID for cap events, header filled; its mapping in w. */
static struct vpf_latency_header *lat_create(const char *dir, const char *id, uint64_t cap,
                                             uint64_t start_ns, struct vpf_recfile_w *w)
{
    char path[4096];
    vpf_err e;
    snprintf(path, sizeof path, "%s/latency.%s", dir, id);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) die(path, NULL);
    if (vpf_recfile_create(fd, VPF_LATENCY_MAGIC, VPF_LATENCY_VERSION,
                           sizeof(struct vpf_latency_rec), cap, w, &e) < 0)
        die(path, &e);
    struct vpf_latency_header *h = (struct vpf_latency_header *)w->base;
    h->start_ns = start_ns;
    h->scan_ns = 20000;
    return h;
}

/* The "variance" scenario (see the top of this file). */
static void write_variance(const char *dir, const char *id, uint64_t bias, int buggy,
                           uint64_t start_ns, uint64_t n_req, int limited, int wake_event)
{
    char path[4096];
    struct vpf_recfile_w w;
    struct vpf_latency_header *h = lat_create(dir, id, 16 * n_req + 16, start_ns, &w);
    if (limited) h->flags |= VPF_LAT_FLAG_FUNCS;
    snprintf(path, sizeof path, "%s/truth.%s", dir, id);
    FILE *tf = fopen(path, "w");
    if (!tf) die(path, NULL);
    uint64_t handle = faddr("handle") + bias, parse = faddr("parse") + bias,
             lookup = faddr("lookup") + bias, crawl = faddr("crawl") + bias,
             housekeep = faddr("housekeep") + bias, flush = faddr("flush") + bias,
             site = handle + 4, base = start_ns / 1000;
    for (uint64_t k = 0; k < n_req; k++) {
        uint64_t rid = k + 1, t0 = base + 1000 + 3000 * k, wk = 1 + rnd() % 20;
        uint64_t P = 5 * wk, tb = t0 + 2 + P, q = 2 + rnd() % 3;
        lat_rec(&w, VPF_LAT_REQ_START, t0, 0, rid, site, 1, 0);
        lat_rec(&w, VPF_LAT_REQ_WORK, t0, wk, rid, site, 1, 0);   /* duration = units */
        lat_rec(&w, VPF_LAT_CALL, t0 + 1, P, parse, site, 1, 0);
        lat_rec(&w, VPF_LAT_REQ_BLOCK, tb, 0, rid, site, 1, 0);
        if (k % 50 == 7) {
            lat_rec(&w, VPF_LAT_CALL, tb - 5, 405, housekeep, site, 2, 0);
            q = 401;
        }
        uint64_t ts = tb + q, L = 20 + rnd() % 7;
        lat_rec(&w, VPF_LAT_REQ_START, ts, 0, rid, site, 2, 0);
        if (buggy && k % 100 == 3) {
            uint64_t M = 1500;
            lat_rec(&w, VPF_LAT_MUTEX_WAIT, ts + 3, M, 0x1234, lookup + 8, 2, 3);
            lat_rec(&w, VPF_LAT_CALL, ts - 100, M + 153, crawl, site, 3, 0);
            L += M;
        }
        if (k % 50 == 20) {
            uint64_t C = 700;
            lat_rec(&w, VPF_LAT_COND_WAIT, ts + 3, C, 0x5678, lookup + 8, 2, 0);
            lat_rec(&w, VPF_LAT_CALL, ts, C + 8, flush, site, 4, 0);
            if (wake_event)     /* the runtime's wake record: flush's thread signalled */
                lat_rec_g(&w, VPF_LAT_WAKE, ts + 3 + C - 1, 1, 0x5678, site, 2, 4, 2);
            else
                lat_rec(&w, VPF_LAT_REQ_WAKE, ts + 3 + C - 1, 0, rid, site, 4, 0);
            L += C;
        }
        uint64_t H = L + 10 + rnd() % 5;
        lat_rec(&w, VPF_LAT_CALL, ts + 1, H, handle, site, 2, 0);
        if (!limited) lat_rec(&w, VPF_LAT_CALL, ts + 2, L, lookup, handle + 20, 2, 0);
        uint64_t te = ts + 2 + H;
        lat_rec(&w, VPF_LAT_REQ_END, te, 0, rid, site, 2, 0);
        fprintf(tf, "%llu %llu %llu\n", (unsigned long long)rid, (unsigned long long)wk,
                (unsigned long long)((te - t0) * 1000));
    }
    fclose(tf);
    vpf_recfile_close(&w, 1);
}

/* The waits-fig2 and waits-fig3 scenarios (see the top of this file). */
static void write_waits(const char *dir, const char *id, uint64_t bias, int fig,
                        uint64_t start_ns)
{
    struct vpf_recfile_w w;
    lat_create(dir, id, 8192, start_ns, &w);
    uint64_t hot = faddr("hot") + bias, caller = faddr("caller") + bias,
             worker = faddr("worker") + bias, t0 = start_ns / 1000, ms = 1000;
    if (fig == 2) {
        uint64_t cond = 0xc0de, dev = (8u << 8) | 1;       /* disk 8:1 */
        lat_rec_g(&w, VPF_LAT_THREAD_START, t0, 0, caller, hot + 4, 1, 9, 0);
        lat_rec_g(&w, VPF_LAT_THREAD_START, t0, 0, worker, hot + 4, 2, 9, 0);
        for (uint64_t k = 0; k < 100; k++) {
            uint64_t t = t0 + 10 * ms * k;
            lat_rec_g(&w, VPF_LAT_CALL, t, 2 * ms, hot, caller + 8, 1, 0, 0);
            lat_rec_g(&w, VPF_LAT_COND_WAIT, t + 2 * ms, 8 * ms, cond, caller + 16, 1, 0, 0);
            lat_rec_g(&w, VPF_LAT_WAKE, t + 10 * ms, 0, cond, worker + 24, 1, 2, VPF_WAKE_COND);
            lat_rec_g(&w, VPF_LAT_CALL, t, 5 * ms, hot, worker + 8, 2, 0, 0);
            lat_rec_g(&w, VPF_LAT_SYSCALL, t + 5 * ms, 5 * ms, 74, worker + 16, 2, 0, 0);
            lat_rec_g(&w, VPF_LAT_FD_WAIT, t + 5 * ms, 5 * ms, dev, worker + 16, 2, 3,
                      74 | VPF_FD_FILE << 16);
        }
    } else {
        static const uint64_t len[3] = {6, 4, 2};
        lat_rec_g(&w, VPF_LAT_THREAD_START, t0, 0, hot, hot + 4, 1, 9, 0);
        lat_rec_g(&w, VPF_LAT_THREAD_START, t0, 0, caller, hot + 4, 2, 9, 0);
        lat_rec_g(&w, VPF_LAT_THREAD_START, t0, 0, worker, hot + 4, 3, 9, 0);
        lat_rec_g(&w, VPF_LAT_THREAD_START, t0, 0, hot, hot + 4, 4, 9, 0);
        for (uint64_t k = 0; k < 100; k++) {
            uint64_t t = t0 + 10 * ms * k;
            for (uint32_t th = 1; th <= 3; th++) {
                uint64_t m = 0x1000 + th;
                lat_rec_g(&w, VPF_LAT_MUTEX_WAIT, t, len[th - 1] * ms, m, caller + 4 * th, th,
                          th + 1, 0);
                lat_rec_g(&w, VPF_LAT_WAKE, t + len[th - 1] * ms, 0, m, worker + 4 * th, th,
                          th + 1, VPF_WAKE_MUTEX);
            }
            lat_rec_g(&w, VPF_LAT_CALL, t, 10 * ms, worker, hot + 8, 4, 0, 0);
        }
    }
    vpf_recfile_close(&w, 1);
}

/* The "latency" scenario's events (see the top of this file); addresses
 * are run-time (bias added), times from start_ns. */
static void write_latency(const char *dir, const char *id, uint64_t bias, int buggy,
                          uint64_t start_ns, uint64_t thread_roots)
{
    struct vpf_recfile_w w;
    lat_create(dir, id, 4096, start_ns, &w);
    uint64_t hot = faddr("hot") + bias, caller = faddr("caller") + bias,
             worker = faddr("worker") + bias, t0 = start_ns / 1000;
    /* written in a shuffled order: the report must not rely on file order */
    for (uint64_t i = 0; i < 1000; i++) {
        uint64_t k = (i * 7919) % 1000;
        lat_rec(&w, VPF_LAT_CALL, t0 + 2000 * k, k + 1, hot, caller + 12, 1, 0);
    }
    for (uint64_t k = 0; k < 200; k++) {
        uint64_t s = t0 + 10000 * k, d = buggy ? 5000 : 100;
        lat_rec(&w, VPF_LAT_REQ_START, s, 0, k + 1, worker + 40, 2, 0);
        lat_rec(&w, VPF_LAT_CALL, s + 10, d, worker, caller + 20, 2, 0);
        lat_rec(&w, VPF_LAT_REQ_END, s + 20 + d, 0, k + 1, worker + 48, 2, 0);
        if (buggy) {
            lat_rec(&w, VPF_LAT_MUTEX_WAIT, s + 500, 4000, 0x1234, worker + 8, 2, 3);
            lat_rec(&w, VPF_LAT_CALL, s + 400, 4200, caller, worker + 60, 3, 0);
        }
    }
    /* --thread-roots N: threads 10.. each one call of root lasting the
     * run, 2 s, and 1 s longer in the buggy run: their start routines */
    for (uint64_t t = 0; t < thread_roots; t++)
        lat_rec(&w, VPF_LAT_CALL, t0, buggy ? 3000000 : 2000000, faddr("root") + bias,
                faddr("root") + bias + 4, 10 + t, 0);
    vpf_recfile_close(&w, 1);
}

/* The histogram's range, as glibc's gcrt1 gives it: the EXE's code, start
 * rounded down and end up to 4 bytes (the report checks a gmon file against
 * the program it names). When EXE cannot be read: around the functions. */
static void code_span(const char *exe, uint64_t lo_addr, uint64_t hi_addr, uint64_t *lo,
                      uint64_t *hi)
{
    *lo = lo_addr & ~0xfull;
    *hi = hi_addr + 0x400;
    int fd = open(exe, O_RDONLY);
    if (fd < 0) return;
    elf_version(EV_CURRENT);
    Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
    struct vpf_elf_ident id;
    if (elf && vpf_elf_ident_read(elf, exe, &id, NULL) == 0) {
        if (id.text_hi > id.text_lo) {
            *lo = id.text_lo & ~0xfull;
            *hi = (id.text_hi + 3) & ~3ull;
        }
        vpf_elf_ident_free(&id);
    }
    if (elf) elf_end(elf);
    close(fd);
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: vprof-gen-runs rank|driver|arcvar|tie|stuck|bench normal|buggy OUTDIR EXE "
                "[--func NAME=ADDR]... [--bias HEX] [--ticks N] [--seed N] [--bytes N] "
                "[--id ID] [--build-id HEX] [--hz N] [--worker-pct P] [--thread-roots N]\n"
                "       [--var-tags loop|cond|args] [--param V] [--main-pct P] [--arc-normal N]\n"
                "       [--main-reach N,B]\n");
        return 2;
    }
    const char *scen = argv[1], *dir = argv[3], *exe = argv[4];
    int buggy = !strcmp(argv[2], "buggy");
    if (!buggy && strcmp(argv[2], "normal")) { fprintf(stderr, "vprof-gen-runs: normal or buggy\n"); return 2; }
    uint64_t bias = 0, ticks = 20000, seed = 1, bytes = 0, limited = 0, wake_event = 0;
    uint64_t worker_pct = 0, thread_roots = 0;
    uint16_t var_tags = VPF_TAG_LOOP;
    uint64_t param = 0, main_pct = 0, arc_normal = 1000;
    unsigned reach[2] = {0, 0};                 /* --main-reach N,B */
    int param_given = 0;
    int ticks_given = 0;
    const char *id = "1000", *build_id = "";
    unsigned hz = 1000;
    for (int i = 5; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) { fprintf(stderr, "vprof-gen-runs: %s needs a value\n", a); return 2; }
        i++;
        if (!strcmp(a, "--func")) {
            char *eq = strchr(argv[i], '=');
            if (!eq || n_fns == 16) { fprintf(stderr, "vprof-gen-runs: --func NAME=ADDR\n"); return 2; }
            *eq = 0;
            fns[n_fns].name = argv[i];
            fns[n_fns++].addr = strtoull(eq + 1, NULL, 16);
        } else if (!strcmp(a, "--bias")) bias = strtoull(v, NULL, 16);
        else if (!strcmp(a, "--ticks")) { ticks = strtoull(v, NULL, 10); ticks_given = 1; }
        else if (!strcmp(a, "--limited")) limited = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--wake-event")) wake_event = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--worker-pct")) worker_pct = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--thread-roots")) thread_roots = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--main-pct")) main_pct = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--main-reach")) {
            if (sscanf(v, "%u,%u", &reach[0], &reach[1]) != 2 || reach[0] > 100 || reach[1] > 100) {
                fprintf(stderr, "vprof-gen-runs: --main-reach wants N,B (percent): %s\n", v);
                return 2;
            }
        }
        else if (!strcmp(a, "--arc-normal")) arc_normal = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--param")) { param = strtoull(v, NULL, 10); param_given = 1; }
        else if (!strcmp(a, "--var-tags"))
            var_tags = !strcmp(v, "loop") ? VPF_TAG_LOOP : !strcmp(v, "cond") ? VPF_TAG_COND :
                       !strcmp(v, "args") ? VPF_TAG_ARGS : 0;
        else if (!strcmp(a, "--seed")) seed = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--bytes")) bytes = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--id")) id = v;
        else if (!strcmp(a, "--build-id")) build_id = v;
        else if (!strcmp(a, "--hz")) hz = (unsigned)strtoul(v, NULL, 10);
        else { fprintf(stderr, "vprof-gen-runs: unknown option %s\n", a); return 2; }
    }
    rng_state ^= seed * 0x9e3779b97f4a7c15ull + (uint64_t)buggy;
    if (!rng_state) rng_state = 1;
    mkdir(dir, 0755);

    /* variables of the scenario: id, file, function, line, name, type, tags, kind, size */
    struct vdef { const char *file, *func, *name, *type; uint16_t tags; uint8_t kind, size; };
    struct vdef vars[64];
    int n_vars = 0;
    uint64_t lo_addr = UINT64_MAX, hi_addr = 0;
    for (int i = 0; i < n_fns; i++) {
        if (fns[i].addr < lo_addr) lo_addr = fns[i].addr;
        if (fns[i].addr > hi_addr) hi_addr = fns[i].addr;
    }
    if (!n_fns) { fprintf(stderr, "vprof-gen-runs: no --func given\n"); return 2; }
    int lat = !strcmp(scen, "latency"), var = !strcmp(scen, "variance");
    uint64_t n_req = ticks_given ? ticks : 2000;
    int wfig = !strcmp(scen, "waits-fig2") ? 2 : !strcmp(scen, "waits-fig3") ? 3 : 0;
    if (lat || wfig) scen = "rank";
    if (var) ticks = 0;
    if (!strcmp(scen, "rank") || !strcmp(scen, "hist")) {
        vars[n_vars++] = (struct vdef){"gen.c", "caller", "i", "int", VPF_TAG_LOOP, VPF_KIND_SINT, 4};
        vars[n_vars++] = (struct vdef){"gen.c", "hot", "n", "int", 0, VPF_KIND_SINT, 4};
        vars[n_vars++] = (struct vdef){"gen.c", "#global", "g_count", "unsigned long", VPF_TAG_GLOBAL, VPF_KIND_UINT, 8};
        if (param_given)
            vars[n_vars++] = (struct vdef){"gen.c", "hot", "param", "int", VPF_TAG_COND, VPF_KIND_SINT, 4};
    } else if (!strcmp(scen, "driver")) {
        vars[n_vars++] = (struct vdef){"gen.c", "caller", "i", "int", VPF_TAG_LOOP, VPF_KIND_SINT, 4};
        vars[n_vars++] = (struct vdef){"gen.c", "hot", "n", "int", 0, VPF_KIND_SINT, 4};
        vars[n_vars++] = (struct vdef){"gen.c", "worker", "w", "int", VPF_TAG_COND, VPF_KIND_SINT, 4};
        if (reach[0] || reach[1])
            vars[n_vars++] = (struct vdef){"gen.c", "main", "clients", "int", VPF_TAG_COND, VPF_KIND_SINT, 4};
    } else if (!strcmp(scen, "arcvar")) {
        vars[n_vars++] = (struct vdef){"gen.c", "caller", "i", "int", var_tags, VPF_KIND_SINT, 4};
        vars[n_vars++] = (struct vdef){"gen.c", "hot", "n", "int", 0, VPF_KIND_SINT, 4};
    } else if (!strcmp(scen, "tie")) {
        vars[n_vars++] = (struct vdef){"gen.c", "hot", "step", "int", VPF_TAG_LOOP, VPF_KIND_SINT, 4};
        vars[n_vars++] = (struct vdef){"gen.c", "hot", "now", "long", 0, VPF_KIND_SINT, 8};
        vars[n_vars++] = (struct vdef){"gen.c", "caller", "now", "long", 0, VPF_KIND_SINT, 8};
    } else if (!strcmp(scen, "stuck")) {
        vars[n_vars++] = (struct vdef){"gen.c", "worker", "state", "int", VPF_TAG_LOOP | VPF_TAG_COND, VPF_KIND_SINT, 4};
    } else if (var) {
        /* latency events only */
    } else if (!strcmp(scen, "bench")) {
        static char names[64][16];
        for (int i = 0; i < 64; i++) {
            snprintf(names[i], sizeof names[i], "v%d", i);
            vars[n_vars++] = (struct vdef){"gen.c", i % 2 ? "caller" : "hot", names[i], "long",
                                           VPF_TAG_LOOP, VPF_KIND_SINT, 8};
        }
        if (!bytes) bytes = 100u << 20;
    } else {
        fprintf(stderr, "vprof-gen-runs: unknown scenario %s\n", scen);
        return 2;
    }

    char path[4096];
    vpf_err e;
    /* layout */
    snprintf(path, sizeof path, "%s/layout.%s", dir, id);
    int lfd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (lfd < 0) die(path, NULL);
    struct vpf_layout lay;
    memset(&lay, 0, sizeof lay);
    lay.pid = atoi(id);
    lay.ppid = 1;
    lay.exe = (char *)exe;
    lay.build_id = (char *)build_id;
    lay.load_bias = bias;
    code_span(exe, lo_addr, hi_addr, &lay.text_lo, &lay.text_hi);
    lay.text_lo += bias;
    lay.text_hi += bias;
    lay.hz = hz;
    lay.unwind = 3;
    lay.meta_path = "gen.vmeta";
    lay.meta_status = "ok";
    lay.start_ns = 1000000000ull;
    if (vpf_layout_write_head(lfd, &lay) < 0) die(path, NULL);
    for (int i = 0; i < n_vars; i++)
        vpf_layout_write_var(lfd, (uint32_t)i, vars[i].file, vars[i].func, 10 + (uint32_t)i,
                             vars[i].name, vars[i].type, vars[i].tags, vars[i].kind, vars[i].size);

    /* values */
    struct gen g;
    memset(&g, 0, sizeof g);
    g.bias = bias;
    g.hz = hz;
    g.now_ns = lay.start_ns;
    g.lowpc = lay.text_lo;
    g.highpc = lay.text_hi;
    g.nbins = (uint32_t)((g.highpc - g.lowpc) / 4);
    g.bins = vpf_xcalloc(g.nbins, sizeof *g.bins);
    uint64_t cap = bytes ? (bytes - VPF_HEADER_SIZE) / sizeof(struct vpf_value_rec)
                         : ticks * 8 + 16;
    snprintf(path, sizeof path, "%s/values.%s", dir, id);
    int vfd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (vfd < 0) die(path, NULL);
    if (vpf_recfile_create(vfd, VPF_VALUES_MAGIC, VPF_VALUES_VERSION,
                           sizeof(struct vpf_value_rec), cap, &g.w, &e) < 0)
        die(path, &e);
    struct vpf_values_header *vh = (struct vpf_values_header *)g.w.base;
    vh->hz = hz;
    vh->start_ns = lay.start_ns;
    uint64_t tick_ns = 1000000000ull / hz;

    if (!strcmp(scen, "rank") || !strcmp(scen, "hist")) {
        uint64_t hot = faddr("hot"), caller = faddr("caller");
        int hist = !strcmp(scen, "hist");
        uint64_t worker = hist ? faddr("worker") : 0;
        unsigned p_hot = hist ? (buggy ? 80 : 30) : 90, p_worker = hist ? (buggy ? 10 : 60) : 0;
        if (hist && worker_pct && worker_pct < 90) {   /* worker's share grows */
            p_worker = buggy ? (unsigned)worker_pct : 10;
            p_hot = 90 - p_worker;
        }
        for (uint64_t t = 0; t < ticks; t++, g.now_ns += tick_ns) {
            uint16_t tk = (uint16_t)t;
            unsigned dice = (unsigned)(rnd() % 100);
            if (dice >= 100 - p_worker) {      /* no variables there */
                pc_tick(&g, worker + 4 + rnd() % 16);
                continue;
            }
            int in_hot = dice < p_hot;
            uint64_t pc = in_hot ? hot + 4 + rnd() % 16 : caller + 4 + rnd() % 8;
            pc_tick(&g, pc);
            int64_t i = (int64_t)(t % (buggy ? 1000 : 100));
            if (in_hot) {
                rec(&g, 1, rnd() % 50, pc, 1, 0, tk);
                rec(&g, 2, rnd() % 1000, pc, 1, 0, tk);
                if (param_given) rec(&g, 3, param, pc, 1, 0, tk);
                rec(&g, 0, (uint64_t)i, caller + 12, 1, 1, tk);   /* call site */
            } else {
                rec(&g, 0, (uint64_t)i, pc, 1, 0, tk);
                rec(&g, 2, rnd() % 1000, pc, 1, 0, tk);
            }
        }
    } else if (!strcmp(scen, "driver")) {
        uint64_t hot = faddr("hot"), caller = faddr("caller"), worker = faddr("worker");
        unsigned p_hot = buggy ? 65 : 75, p_worker = buggy ? 30 : 20;
        if (worker_pct && worker_pct < 95) {
            p_worker = (unsigned)worker_pct;
            p_hot = 95 - p_worker;
        }
        uint64_t idle = !buggy && main_pct < 100 ? main_pct : 0;
        uint64_t entry = has_func("entry") ? faddr("entry") : 0;
        for (uint64_t t = 0; t < ticks; t++, g.now_ns += tick_ns) {
            uint16_t tk = (uint16_t)t;
            if (idle && rnd() % 100 < idle) {   /* main's own code, outside caller */
                pc_tick(&g, faddr("main") + 4 + rnd() % 4);
                continue;
            }
            unsigned dice = (unsigned)(rnd() % 100);
            int64_t i = (int64_t)(t % (buggy ? 1000 : 100));
            if (entry && t % 10 == 0)           /* the unwinding reached _start */
                rec(&g, 0, (uint64_t)i, entry + 4, 1, 2, tk);
            if ((reach[0] || reach[1]) && rnd() % 100 < reach[buggy ? 1 : 0])
                rec(&g, 3, buggy ? 40 : 8, faddr("main") + 8, 1, 2, tk);
            if (dice < p_hot) {
                uint64_t pc = hot + 4 + rnd() % 16;
                pc_tick(&g, pc);
                rec(&g, 1, rnd() % 50, pc, 1, 0, tk);
                rec(&g, 0, (uint64_t)i, caller + 12, 1, 1, tk);
            } else if (dice < p_hot + p_worker) {
                uint64_t pc = worker + 4 + rnd() % 16;
                pc_tick(&g, pc);
                rec(&g, 2, rnd() % (buggy ? 100 : 10), pc, 1, 0, tk);
                rec(&g, 0, (uint64_t)i, caller + 20, 1, 1, tk);
            } else {
                uint64_t pc = caller + 4 + rnd() % 8;
                pc_tick(&g, pc);
                rec(&g, 0, (uint64_t)i, pc, 1, 0, tk);
            }
        }
    } else if (!strcmp(scen, "arcvar")) {
        uint64_t hot = faddr("hot"), caller = faddr("caller");
        for (uint64_t t = 0; t < ticks; t++, g.now_ns += tick_ns) {
            uint16_t tk = (uint16_t)t;
            int in_hot = rnd() % 100 < 95;
            uint64_t pc = in_hot ? hot + 4 + rnd() % 16 : caller + 4 + rnd() % 8;
            pc_tick(&g, pc);
            if (in_hot) rec(&g, 1, rnd() % 50, pc, 1, 0, tk);
            if (rnd() % 1000 == 0)
                rec(&g, 0, rnd() % (buggy ? 1000 : 10), in_hot ? caller + 12 : pc, 1, in_hot, tk);
        }
    } else if (!strcmp(scen, "tie")) {
        uint64_t hot = faddr("hot"), caller = faddr("caller");
        for (uint64_t t = 0; t < ticks; t++, g.now_ns += tick_ns) {
            uint16_t tk = (uint16_t)t;
            uint64_t pc = caller + 4 + rnd() % 16;
            uint64_t now = (buggy ? 100 : 0) + rnd() % 10;
            pc_tick(&g, pc);
            rec(&g, 2, now, pc, 1, 0, tk);
            rec(&g, 1, now, hot + 12, 1, 1, tk);
            rec(&g, 0, t % (buggy ? 1000 : 100), hot + 12, 1, 1, tk);
        }
    } else if (!strcmp(scen, "stuck")) {
        uint64_t w = faddr("worker");
        uint64_t every = buggy ? 50 : 5;
        for (uint64_t t = 0; t < ticks; t++, g.now_ns += tick_ns) {
            uint64_t pc = w + 4 + rnd() % 32;
            pc_tick(&g, pc);
            rec(&g, 0, (t / every) % 4, pc, 1, 0, (uint16_t)t);
        }
    } else if (!var) {
        uint64_t hot = faddr("hot"), caller = faddr("caller");
        uint64_t t = 0;
        uint16_t tk[4] = {0};
        while (g.n + 40 <= cap) {
            uint32_t tid = 2000 + (uint32_t)(t % 4);
            uint16_t k = tk[t % 4]++;
            uint64_t pc = t % 3 ? hot + 4 + rnd() % 16 : caller + 4;
            pc_tick(&g, pc);
            for (uint32_t v = 0; v < 32; v++) {
                uint32_t var = 2 * v + (t % 3 ? 0 : 1);
                rec(&g, var, (t / (v + 1)) % (buggy ? 5000 : 500) + (rnd() & 7), pc, tid, 0, k);
            }
            t++;
            g.now_ns += tick_ns / 4;
        }
        ticks = t;
    }
    vpf_recfile_close(&g.w, 1);
    close(vfd);
    vpf_layout_write_end(lfd, ticks, g.n, 0, 0, g.now_ns);
    close(lfd);

    /* gmon */
    snprintf(path, sizeof path, "%s/gmon.%s.out", dir, id);
    int gfd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (gfd < 0) die(path, NULL);
    struct vpf_gmon_writer gw;
    vpf_gmon_w_begin(&gw, gfd);
    vpf_gmon_w_hist(&gw, g.lowpc, g.highpc, g.bins, g.nbins, hz);
    if (var) {
        vpf_gmon_w_arc(&gw, faddr("handle") + 20 + bias, faddr("lookup") + bias, 1000);
    } else if (!strcmp(scen, "tie")) {
        vpf_gmon_w_arc(&gw, faddr("hot") + 12 + bias, faddr("caller") + bias, 1000);
    } else if (!strcmp(scen, "arcvar")) {
        vpf_gmon_w_arc(&gw, faddr("main") + 8 + bias, faddr("caller") + bias, 100);
        vpf_gmon_w_arc(&gw, faddr("caller") + 12 + bias, faddr("hot") + bias, buggy ? 100000 : arc_normal);
    } else if (strcmp(scen, "stuck")) {
        vpf_gmon_w_arc(&gw, faddr("caller") + 12 + bias, faddr("hot") + bias, 1000);
        if (!strcmp(scen, "driver"))
            vpf_gmon_w_arc(&gw, faddr("caller") + 20 + bias, faddr("worker") + bias, 100);
        if (!strcmp(scen, "driver") && has_func("main") && !main_pct)
            vpf_gmon_w_arc(&gw, faddr("main") + 8 + bias, faddr("caller") + bias, 1);
    }
    if (vpf_gmon_w_end(&gw) < 0) die(path, NULL);
    close(gfd);
    free(g.bins);
    if (lat) write_latency(dir, id, bias, buggy, lay.start_ns, thread_roots);
    if (var) write_variance(dir, id, bias, buggy, lay.start_ns, n_req, (int)limited,
                            (int)wake_event);
    if (wfig) write_waits(dir, id, bias, wfig, lay.start_ns);
    return 0;
}
