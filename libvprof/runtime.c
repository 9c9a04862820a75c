/* runtime.c - libvprof's gprof entry points and the life of one profiled
 * process: start-up in __monstartup (called by gcrt1.o before main), a
 * fork child's fresh profile, and the end — _mcleanup (atexit) or SIGTERM/
 * SIGINT with their default action.
 *
 * This file owns the lifecycle and the shell's state (vprof_sh, shell.h):
 * it calls down into signals.c, threads.c, callgraph.c, session.c and,
 * through hooks.h, the stack scanner, and none of them calls back. The
 * fork handler and the termination handler are registered here. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/gmon.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "callcount.h"
#include "callgraph.h"
#include "config.h"
#include "core.h"
#include "exeinfo.h"
#include "hooks.h"
#include "session.h"
#include "shell.h"
#include "stacks.h"
#include "unwind.h"
#include "vprof.h"

struct vprof_shell vprof_sh = {.mon_on = 1, .hz = VPROF_DEFAULT_HZ};

static struct vprof_session sess;       /* this process's vprof files */

/* ---------- the stack scanner (hooks.h) ---------- */

static int create_output(const char *name)
{
    return vprof_session_create(&sess, name);
}

static const struct vprof_rt_services rt_services = {
    .thread_create = vprof_internal_thread_create,
    .create_file = create_output,
};

/* The scanner learns this process's id; its file goes beside ours. */
static void hooks_start(int after_fork)
{
    if (!sess.have_layout)
        return;
    struct vprof_latency_args a = {sess.id, sess.start_ns, &rt_services};
    if (after_fork)
        vprof_latency_atfork_child(&a);
    else
        vprof_latency_start(&a);
}

/* ---------- the end ---------- */

static const char *reg_name(int r)
{
    static const char *n[17] = {"rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp", "r8",
                                "r9", "r10", "r11", "r12", "r13", "r14", "r15", "pc"};
    return r >= 0 && r < 17 ? n[r] : "frame";
}

/* VPROF_UNWINDER=check: how often the stack records taken from the values
 * walk were the chain the unwinder finds alone. */
static void report_stack_check(void)
{
    struct vprof_stacks_check c;
    vprof_stacks_check_counts(&c);
    vprof_warn("stack check: %llu chains compared, %llu differ",
               (unsigned long long)c.compared, (unsigned long long)c.differ);
    for (int w = 0; c.have_diff && w < 2; w++) {
        char line[VPROF_STACKS_DIFF_FRAMES * 20 + 64];
        unsigned n = w ? c.n_alone : c.n_shared, at = 0;
        const uint64_t *pc = w ? c.pcs_alone : c.pcs_shared;
        at += (unsigned)snprintf(line, sizeof line, "%u frames, flags %#x:", n,
                                 w ? c.flags_alone : c.flags_shared);
        for (unsigned i = 0; i < n && i < VPROF_STACKS_DIFF_FRAMES; i++)
            at += (unsigned)snprintf(line + at, sizeof line - at, " %#llx",
                                     (unsigned long long)pc[i]);
        vprof_warn("stack check: first difference, %s: %s",
                   w ? "the unwinder alone" : "from the values walk", line);
    }
}

/* VPROF_UNWINDER=check: how often the rule table and libunwind agreed;
 * with VPROF_STATS, the table and who took the steps. */
static void report_unwind(void)
{
    struct vprof_unwind_counts u;
    vprof_unwind_counts(&u);
    if (vprof_cfg.stats)
        vprof_warn("unwind: table of %u objects, %llu rows, %u FDEs (%u rejected); "
                   "steps: %llu by the table, %llu by libunwind; "
                   "%llu walks stopped at code loaded after start-up",
                   u.objects, (unsigned long long)u.rows, u.fdes, u.bad_fdes,
                   (unsigned long long)u.table_steps, (unsigned long long)u.unw_steps,
                   (unsigned long long)u.unknown);
    if (u.mode != VPROF_UNWINDER_CHECK)
        return;
    vprof_warn("unwind check: %llu frames compared, %llu differ",
               (unsigned long long)u.checked, (unsigned long long)u.differ);
    if (u.have_diff)
        vprof_warn("unwind check: first difference at depth %u, %s: table pc %#llx "
                   "value %#llx valid %#x, libunwind pc %#llx value %#llx valid %#x",
                   u.first.depth, reg_name(u.first.reg),
                   (unsigned long long)u.first.pc_table, (unsigned long long)u.first.v_table,
                   u.first.valid_table, (unsigned long long)u.first.pc_libunwind,
                   (unsigned long long)u.first.v_libunwind, u.first.valid_libunwind);
    if (u.have_diff) {
        const struct vprof_unwind_diff *f = &u.first;
        for (int w = 0; w < 2; w++) {
            char line[VPROF_UNWIND_DIFF_FRAMES * 20 + 64];
            unsigned n = w ? f->n_libunwind : f->n_table, at = 0;
            const uint64_t *pc = w ? f->pcs_libunwind : f->pcs_table;
            at += (unsigned)snprintf(line, sizeof line, "%u frames:", n);
            for (unsigned i = 0; i < n && i < VPROF_UNWIND_DIFF_FRAMES; i++)
                at += (unsigned)snprintf(line + at, sizeof line - at, " %#llx",
                                         (unsigned long long)pc[i]);
            vprof_warn("unwind check: that tick, %s: %s", w ? "libunwind" : "table", line);
        }
        vprof_warn("unwind check: the table's steps: %s", f->path);
    }
    report_stack_check();
}

static void report_counts(const struct vprof_core_counts *c)
{
    uint64_t lost = vprof_cg_arcs_dropped();
    if (lost)
        vprof_warn("arc table full: %llu call counts dropped (raise VPROF_ARCS)",
                   (unsigned long long)lost);
    if (vprof_calls_unregistered())
        vprof_warn("call counters: %llu translation units beyond the table's %d not counted",
                   (unsigned long long)vprof_calls_unregistered(), VPROF_CALLS_MAX_UNITS);
    if (c->dropped)
        vprof_warn("sample file full: %llu value samples dropped (raise VPROF_MAX_SAMPLES)",
                   (unsigned long long)c->dropped);
    if (c->stacks_dropped)
        vprof_warn("stack file full: the call chains of %llu ticks dropped (raise "
                   "VPROF_STACKS_MAX)", (unsigned long long)c->stacks_dropped);
    /* A tick the scheduler preempted looks long and is cut too: on a busy
     * machine one in a thousand. Below 1% the samples are not biased and the
     * layout log's budget line keeps the count for the report. */
    if ((c->cut || c->overdue) &&
        (vprof_cfg.stats || 100 * (c->cut + c->overdue) >= c->ticks))
        vprof_warn("tick budget: %llu of %llu ticks cut short (VPROF_TICK_READS=%u, "
                   "VPROF_TICK_US=%u), %llu overdue ticks took no values",
                   (unsigned long long)c->cut, (unsigned long long)c->ticks,
                   vprof_cfg.tick_reads, vprof_cfg.tick_us, (unsigned long long)c->overdue);
    if (vprof_cfg.stats)
        vprof_signals_report_stats(c);
    report_unwind();
}

/* calls.<id> next to the other outputs (only with VPROF_OUT: like the
 * values, a file per process needs the output directory). */
static void write_calls(int from_signal)
{
    if (!vprof_calls_any() || !sess.out_dir[0] || !sess.id[0])
        return;
    char name[64];
    snprintf(name, sizeof name, "calls.%s", sess.id);
    int fd = vprof_session_create(&sess, name);
    if (fd < 0 || vprof_calls_write(fd) < 0) {
        if (!from_signal)
            vprof_warn("%s/%s: %s", sess.out_dir, name, strerror(errno));
    }
    if (fd >= 0)
        close(fd);
}

/* Stops ticks, the scanner and the call graph, and writes everything.
 * From a signal handler: async-signal-safe, and silent. */
static void finish(int from_signal)
{
    if (!vprof_sh.started || __atomic_exchange_n(&vprof_sh.finished, 1, __ATOMIC_SEQ_CST))
        return;
    __atomic_store_n(&vprof_sh.state, VPROF_OFF, __ATOMIC_SEQ_CST);
    vprof_cg_enable(0);
    vprof_thread_stop();
    vprof_wait_handlers();
    vprof_latency_stop();

    char p[PATH_MAX];
    int fd = vprof_session_open_gmon(&sess, p, sizeof p);
    if (fd < 0 || vprof_cg_write(fd, vprof_sh.hz) < 0) {
        if (!from_signal)
            vprof_warn("%s: %s", p, strerror(errno));
    }
    if (fd >= 0)
        close(fd);
    write_calls(from_signal);
    struct vprof_core_counts c;
    vprof_session_close(&sess, &c);
    if (!from_signal)
        report_counts(&c);
}

void _mcleanup(void)
{
    finish(0);
}

/* SIGTERM/SIGINT while their disposition is the default: write
 * everything, then die of the signal exactly as without vprof. */
static void on_term(int sig)
{
    int saved = errno;
    finish(1);
    vprof_signals_term_default(sig);
    raise(sig);                 /* pending until we return: default action */
    errno = saved;
}

/* ---------- start-up and fork ---------- */

/* In the child after fork (only the forking thread exists): a new id,
 * fresh histogram, arcs and files, and this thread's own timer. */
static void fork_child(void)
{
    vprof_thread_forget();
    if (__atomic_load_n(&vprof_sh.state, __ATOMIC_ACQUIRE) != VPROF_ON)
        return;
    vprof_core_fork_child();
    vprof_cg_reset();
    vprof_calls_reset();
    sess.start_ns = vprof_mono_ns();
    vprof_session_open_outputs(&sess);
    hooks_start(1);
    vprof_thread_start();
}

static int program_blocks_prof_now(void)
{
    sigset_t cur;
    if (vprof_real_sigmask(SIG_BLOCK, NULL, &cur) != 0)
        return 0;
    return sigismember(&cur, SIGPROF) == 1;
}

/* The part of start-up shared by __monstartup and a bare profil() call. */
static void start_sampling(void)
{
    vprof_latency_bind();       /* before the first tick: hooks.h */
    vprof_threads_init();
    if (vprof_signals_install(on_term) < 0) {
        vprof_warn("cannot install the SIGPROF handler: %s", strerror(errno));
        return;
    }
    pthread_atfork(NULL, NULL, fork_child);
    __atomic_store_n(&vprof_sh.state, VPROF_ON, __ATOMIC_SEQ_CST);
    vprof_signals_thread_start(program_blocks_prof_now());
    vprof_thread_start();
}

/* Knobs, rate and start time: the first step of either way in. */
static void begin(void)
{
    vprof_sh.started = 1;
    vprof_config_read();
    vprof_sh.hz = vprof_cfg.hz;
    sess.hz = vprof_sh.hz;
    vprof_unwind_set_mode(vprof_cfg.unwinder, vprof_cfg.stats);
    vprof_stacks_set_check(vprof_cfg.unwinder == VPROF_UNWINDER_CHECK);
    vprof_timer_choose();
    sess.timer = vprof_timer_name();
    sess.start_ns = vprof_mono_ns();
}

void __monstartup(unsigned long lowpc, unsigned long highpc)
{
    if (vprof_sh.started)
        return;
    begin();
    if (vprof_exeinfo_get(&sess.exe) < 0) {
        sess.exe.text_lo = lowpc;
        sess.exe.text_hi = highpc;
    }
    if (vprof_cg_setup(lowpc, highpc, sess.exe.bias, vprof_cfg.arcs) < 0) {
        vprof_warn("out of memory for the profile buffers; not profiling");
        return;
    }
    vprof_session_load_metadata(&sess);
    vprof_session_open_outputs(&sess);
    /* Ticks unwind with values (VPROF_UNWIND) and for their stack samples,
     * whose walk takes the unwinder out of libraries and the mcount
     * trampoline: a rule-table step costs a hundred instructions there,
     * libunwind's thousands. A process that does neither builds no table. */
    if ((sess.core_status == 1 && vprof_cfg.unwind) || sess.have_stacks)
        vprof_unwind_build_table(sess.exe.text_lo, sess.exe.text_hi);
    hooks_start(0);
    vprof_cg_enable(1);
    start_sampling();
}

void monstartup(unsigned long lowpc, unsigned long highpc)
{
    __monstartup(lowpc, highpc);
}

void moncontrol(int mode)
{
    __atomic_store_n(&vprof_sh.mon_on, mode ? 1 : 0, __ATOMIC_RELEASE);
    if (vprof_sh.started && !__atomic_load_n(&vprof_sh.finished, __ATOMIC_ACQUIRE))
        vprof_cg_enable(mode ? 1 : 0);
}

/* profil(3): glibc's buffer semantics; the buffer is incremented on vprof's
 * ticks (VPROF_HZ per thread CPU time) rather than by a 100 Hz ITIMER_PROF. */
/* glibc declares buf nonnull, yet NULL is how profil(3) is switched off. */
#pragma GCC diagnostic ignored "-Wnonnull-compare"
int profil(unsigned short *buf, size_t bufsiz, size_t offset, unsigned int scale)
{
    vprof_cg_set_profil(buf, bufsiz, offset, scale);
    if (buf && scale && !vprof_sh.started) {
        begin();
        char err[64];
        struct vprof_core_config cc = {0};
        vprof_core_init(&cc, err, sizeof err);
        start_sampling();
    }
    return 0;
}

int vprof_active(void)
{
    return __atomic_load_n(&vprof_sh.state, __ATOMIC_ACQUIRE) == VPROF_ON;
}

const char *vprof_output_id(void)
{
    return sess.id[0] ? sess.id : NULL;
}
