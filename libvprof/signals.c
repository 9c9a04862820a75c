/* signals.c - vprof's SIGPROF handler and the program's view of signals.
 *
 * vprof owns the SIGPROF disposition while it profiles. Signals from its own
 * timers (si_code SI_TIMER, sival_ptr = &vprof_timer_magic) are ticks; any
 * other SIGPROF (setitimer, kill, the program's own timers) goes to whatever
 * the program asked for through sigaction()/signal(), which are interposed
 * here and report the program's own settings back to it. vprof keeps
 * SIGPROF unblocked: sigprocmask()/pthread_sigmask() drop it from sets the
 * program blocks, remember per thread that the program believes it is
 * blocked (and say so in the old mask they return), and hold a foreign
 * SIGPROF arriving meanwhile until the program unblocks it.
 *
 * SIGTERM and SIGINT: while their disposition is the default, the
 * runtime's handler (runtime.c) writes gmon.out and the end of the layout
 * log, then re-raises the signal with the default action so the process
 * dies exactly as it would have. This file installs it and keeps the
 * program's view: once the program installs a handler of its own, vprof
 * steps aside. */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "callgraph.h"
#include "config.h"
#include "core.h"
#include "shell.h"
#include "unwind.h"

extern int __sigaction(int, const struct sigaction *, struct sigaction *);

static int installed;                       /* our SIGPROF handler is in */
static struct sigaction user_prof;          /* what the program set for SIGPROF */
static int term_ours[2];                    /* SIGTERM, SIGINT handled by us */
static __thread int prog_blocks __attribute__((tls_model("initial-exec")));
static __thread int held __attribute__((tls_model("initial-exec")));
/* Set while this thread runs vprof's own tick. The tick runs with every
 * signal blocked (the handler's sa_mask is full), so the sigprocmask calls
 * libunwind makes around its locks (to keep signal handlers out of them)
 * have nothing left to do: they are answered without a system call. They
 * must not reach the program's-view logic either, which would unblock
 * SIGPROF inside the handler and let a nested tick deadlock. */
static __thread int in_tick __attribute__((tls_model("initial-exec")));

typedef int (*mask_fn)(int, const sigset_t *, sigset_t *);

/* libunwind's text: its own sigprocmask calls block SIGPROF around its
 * locks, and must keep doing so when the program itself unwinds (glog and
 * others do), or a tick could arrive while the program holds a libunwind
 * lock and wait for it forever. */
static uintptr_t unw_lo, unw_hi;

static int find_unwind_text(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    uintptr_t probe = (uintptr_t)data;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && probe >= lo &&
            probe < lo + ph->p_memsz) {
            unw_lo = lo;
            unw_hi = lo + ph->p_memsz;
            return 1;
        }
    }
    return 0;
}

static int from_libunwind(uintptr_t ra)
{
    return ra >= unw_lo && ra < unw_hi;
}
static mask_fn real_pthread_sigmask, real_sigprocmask;

int vprof_real_sigaction(int sig, const struct sigaction *a, struct sigaction *o)
{
    return __sigaction(sig, a, o);
}

int vprof_real_sigmask(int how, const sigset_t *set, sigset_t *old)
{
    if (!real_pthread_sigmask)
        real_pthread_sigmask = (mask_fn)dlsym(RTLD_NEXT, "pthread_sigmask");
    if (real_pthread_sigmask)
        return real_pthread_sigmask(how, set, old);
    return syscall(SYS_rt_sigprocmask, how, set, old, _NSIG / 8) < 0 ? errno : 0;
}

static int term_index(int sig)
{
    return sig == SIGTERM ? 0 : sig == SIGINT ? 1 : -1;
}

/* ---------- the handler ---------- */

static void deliver_foreign(int sig, siginfo_t *si, void *uc)
{
    struct sigaction ua = user_prof;
    if (ua.sa_flags & SA_SIGINFO) {
        if (!ua.sa_sigaction)
            return;
    } else if (ua.sa_handler == SIG_IGN) {
        return;
    } else if (ua.sa_handler == SIG_DFL) {
        /* SIGPROF's default action is to terminate: do exactly that. */
        struct sigaction dfl;
        memset(&dfl, 0, sizeof dfl);
        dfl.sa_handler = SIG_DFL;
        __sigaction(SIGPROF, &dfl, NULL);
        syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), SIGPROF);
        return;                 /* delivered, fatally, once we return */
    }
    if (ua.sa_flags & SA_RESETHAND) {
        memset(&user_prof, 0, sizeof user_prof);
        user_prof.sa_handler = SIG_DFL;
    }
    sigset_t old;
    vprof_real_sigmask(SIG_BLOCK, &ua.sa_mask, &old);
    if (ua.sa_flags & SA_SIGINFO)
        ua.sa_sigaction(sig, si, uc);
    else
        ua.sa_handler(sig);
    vprof_real_sigmask(SIG_SETMASK, &old, NULL);
}

static uint64_t cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* What two reads of the thread CPU clock add to a measurement by
 * themselves: a system call each (about a microsecond on a VM), so as much
 * as a whole tick. Measured once at start-up as the least of 64
 * back-to-back pairs, and taken off every tick's measurement. */
static uint64_t clock_cost;

static void calibrate_clock(void)
{
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 64; i++) {
        uint64_t a = cpu_ns(), b = cpu_ns();
        if (b - a < best)
            best = b - a;
    }
    clock_cost = best == UINT64_MAX ? 0 : best;
}

static void on_sigprof(int sig, siginfo_t *si, void *ucv)
{
    int saved = errno;
    int pfd = vprof_thread_perf_fd();
    /* this thread's perf event (an overflow: POLL_IN) or its POSIX timer */
    int perf_tick = si && pfd >= 0 && si->si_code == POLL_IN && si->si_fd == pfd;
    if (perf_tick ||
        (si && si->si_code == SI_TIMER && si->si_value.sival_ptr == &vprof_sh.timer_magic)) {
        __atomic_add_fetch(&vprof_sh.inflight, 1, __ATOMIC_SEQ_CST);
        if (__atomic_load_n(&vprof_sh.state, __ATOMIC_SEQ_CST) == VPROF_ON &&
            __atomic_load_n(&vprof_sh.mon_on, __ATOMIC_RELAXED)) {
            const ucontext_t *uc = ucv;
            uint64_t t0 = vprof_mono_ns(), c0 = vprof_cfg.stats ? cpu_ns() : 0;
            in_tick = 1;
            /* The kernel checks CPU-time timers at its own tick: periods
             * that expired while our signal was still pending arrive as
             * si_overrun, and the histogram counts them so that gprof's
             * seconds stay right (value samples are taken once). */
            unsigned weight = 1 + (!perf_tick && si->si_overrun > 0 ? (unsigned)si->si_overrun : 0);
            vprof_cg_hist_tick((uint64_t)uc->uc_mcontext.gregs[REG_RIP], weight);
            vprof_core_tick(uc, t0, weight);
            in_tick = 0;
            if (vprof_cfg.stats) {
                /* thread CPU time, so that preemption on a busy machine
                 * is not counted as handler cost */
                uint64_t d = cpu_ns() - c0;
                d = d > clock_cost ? d - clock_cost : 0;
                __atomic_fetch_add(&vprof_sh.stat_ns, d, __ATOMIC_RELAXED);
                __atomic_fetch_add(&vprof_sh.stat_n, 1, __ATOMIC_RELAXED);
                uint64_t b = d / 100 < VPROF_STAT_BUCKETS ? d / 100 : VPROF_STAT_BUCKETS - 1;
                __atomic_fetch_add(&vprof_sh.stat_hist[b], 1, __ATOMIC_RELAXED);
                uint64_t m = __atomic_load_n(&vprof_sh.stat_max, __ATOMIC_RELAXED);
                while (d > m && !__atomic_compare_exchange_n(&vprof_sh.stat_max, &m, d, 1,
                                                             __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {}
            }
        }
        __atomic_sub_fetch(&vprof_sh.inflight, 1, __ATOMIC_SEQ_CST);
    } else if (prog_blocks) {
        held = 1;               /* the program has it "blocked": keep it */
    } else {
        deliver_foreign(sig, si, ucv);
    }
    errno = saved;
}

void vprof_signals_term_default(int sig)
{
    int i = term_index(sig);
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    __sigaction(sig, &dfl, NULL);
    if (i >= 0)
        term_ours[i] = 0;
}

void vprof_wait_handlers(void)
{
    /* Ticks are bounded (core.c); give them up to 1 s, then go on
     * regardless. By the clock, not by a count of sleeps: on a loaded
     * machine each 10 µs sleep can take a millisecond or more, and
     * 100,000 of them would hold the program's exit for minutes. */
    uint64_t end = vprof_mono_ns() + 1000000000ull;
    while (__atomic_load_n(&vprof_sh.inflight, __ATOMIC_SEQ_CST) && vprof_mono_ns() < end) {
        struct timespec ts = {0, 10000};
        nanosleep(&ts, NULL);
    }
}

void vprof_signals_report_stats(const struct vprof_core_counts *c)
{
    uint64_t n = vprof_sh.stat_n ? vprof_sh.stat_n : 1, pct[3] = {0, 0, 0}, acc = 0;
    const uint64_t want[3] = {n * 50 / 100, n * 90 / 100, n * 99 / 100};
    for (int b = 0, k = 0; b < VPROF_STAT_BUCKETS && k < 3; b++) {
        acc += vprof_sh.stat_hist[b];
        while (k < 3 && acc > want[k])
            pct[k++] = (uint64_t)(b + 1) * 100;
    }
    vprof_warn("stats: ticks=%llu handler_ns avg=%llu p50<=%llu p90<=%llu p99<=%llu "
               "max=%llu samples=%llu samples_per_tick=%.1f dropped=%llu faults=%llu "
               "cut=%llu overdue=%llu clock_ns=%llu",
               (unsigned long long)vprof_sh.stat_n, (unsigned long long)(vprof_sh.stat_ns / n),
               (unsigned long long)pct[0], (unsigned long long)pct[1],
               (unsigned long long)pct[2], (unsigned long long)vprof_sh.stat_max,
               (unsigned long long)c->samples, (double)c->samples / (double)n,
               (unsigned long long)c->dropped, (unsigned long long)c->faults,
               (unsigned long long)c->cut, (unsigned long long)c->overdue,
               (unsigned long long)clock_cost);
}

int vprof_signals_install(void (*term_handler)(int))
{
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigprof;
    /* SA_RESTART: a tick must not make the program's syscalls fail with
     * EINTR. Every other signal waits the few microseconds a tick takes
     * (SIGTERM/SIGINT must not run our exit path inside a tick, and the
     * program's handlers must not interrupt libunwind while it holds its
     * locks). */
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigfillset(&sa.sa_mask);
    if (!unw_hi)
        dl_iterate_phdr(find_unwind_text, (void *)(uintptr_t)vprof_unwind_probe());
    if (vprof_cfg.stats && !clock_cost)
        calibrate_clock();
    if (!installed) {
        if (__sigaction(SIGPROF, &sa, &old) < 0)
            return -1;
        user_prof = old;
        __atomic_store_n(&installed, 1, __ATOMIC_RELEASE);
    }
    int sigs[2] = {SIGTERM, SIGINT};
    for (int k = 0; k < 2; k++) {
        if (__sigaction(sigs[k], NULL, &old) == 0 && !(old.sa_flags & SA_SIGINFO) &&
            old.sa_handler == SIG_DFL) {
            struct sigaction t;
            memset(&t, 0, sizeof t);
            t.sa_handler = term_handler;
            t.sa_flags = SA_RESTART;
            sigemptyset(&t.sa_mask);
            sigaddset(&t.sa_mask, SIGPROF);
            if (__sigaction(sigs[k], &t, NULL) == 0)
                term_ours[k] = 1;
        }
    }
    return 0;
}

/* ---------- the program's view: sigaction, signal ---------- */

int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    if (sig == SIGPROF && __atomic_load_n(&installed, __ATOMIC_ACQUIRE)) {
        struct sigaction prev = user_prof;
        if (act)
            user_prof = *act;
        if (old)
            *old = prev;
        return 0;
    }
    int i = term_index(sig);
    if (i >= 0 && term_ours[i]) {
        struct sigaction prev;
        int rc = __sigaction(sig, act, &prev);
        if (rc == 0) {
            if (old) {
                memset(old, 0, sizeof *old);
                old->sa_handler = SIG_DFL;      /* what the program had */
            }
            if (act)
                term_ours[i] = 0;
        }
        return rc;
    }
    return __sigaction(sig, act, old);
}

/* glibc's signal() calls its internal sigaction, so it needs its own
 * wrapper; BSD semantics as glibc's: SA_RESTART, the signal masked. */
static __sighandler_t bsd_signal_impl(int sig, __sighandler_t h)
{
    struct sigaction a, o;
    if (sig <= 0 || sig >= _NSIG || h == SIG_ERR) {
        errno = EINVAL;
        return SIG_ERR;
    }
    memset(&a, 0, sizeof a);
    a.sa_handler = h;
    sigemptyset(&a.sa_mask);
    sigaddset(&a.sa_mask, sig);
    a.sa_flags = SA_RESTART;
    if (sigaction(sig, &a, &o) < 0)
        return SIG_ERR;
    return o.sa_handler;
}

__sighandler_t signal(int sig, __sighandler_t h)
{
    return bsd_signal_impl(sig, h);
}

__sighandler_t bsd_signal(int sig, __sighandler_t h)
{
    return bsd_signal_impl(sig, h);
}

/* ---------- the program's view: signal masks ---------- */

static int masked(int how, const sigset_t *set, sigset_t *old, mask_fn real, uintptr_t ra)
{
    if (in_tick) {
        if (old)
            sigfillset(old);    /* what the kernel has during the tick */
        return 0;
    }
    if (from_libunwind(ra))
        return real(how, set, old);
    if (!__atomic_load_n(&installed, __ATOMIC_ACQUIRE) ||
        __atomic_load_n(&vprof_sh.state, __ATOMIC_ACQUIRE) != VPROF_ON)
        return real(how, set, old);
    int want = prog_blocks;
    sigset_t s;
    const sigset_t *p = set;
    if (set) {
        int has = sigismember(set, SIGPROF) == 1;
        if (how == SIG_BLOCK && has)
            want = 1;
        else if (how == SIG_UNBLOCK && has)
            want = 0;
        else if (how == SIG_SETMASK)
            want = has;
        s = *set;
        if (how != SIG_UNBLOCK)
            sigdelset(&s, SIGPROF);
        p = &s;
    }
    int rc = real(how, p, old);
    if (rc == 0 || rc == -1) {
        if (rc == 0 && old) {
            if (prog_blocks)
                sigaddset(old, SIGPROF);
            else
                sigdelset(old, SIGPROF);
        }
        if (rc == 0 && set) {
            prog_blocks = want;
            if (!want && held) {
                held = 0;
                syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), SIGPROF);
            }
        }
    }
    return rc;
}

static int raw_sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
    if (!real_sigprocmask)
        real_sigprocmask = (mask_fn)dlsym(RTLD_NEXT, "sigprocmask");
    if (real_sigprocmask)
        return real_sigprocmask(how, set, old);
    return (int)syscall(SYS_rt_sigprocmask, how, set, old, _NSIG / 8);
}

static int raw_pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
    return vprof_real_sigmask(how, set, old);
}

int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
    return masked(how, set, old, raw_sigprocmask, (uintptr_t)__builtin_return_address(0));
}

int pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
    return masked(how, set, old, raw_pthread_sigmask, (uintptr_t)__builtin_return_address(0));
}

/* A sampled thread starts with SIGPROF really unblocked; the program's
 * belief (inherited from its creator) is kept. */
void vprof_signals_thread_start(int program_blocks_prof)
{
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGPROF);
    prog_blocks = program_blocks_prof;
    vprof_real_sigmask(SIG_UNBLOCK, &s, NULL);
}

int vprof_signals_program_blocks(void)
{
    return prog_blocks;
}
