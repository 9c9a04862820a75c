/* runtime.c - libvprof's gprof entry points and the life of one profiled
 * process: start-up in __monstartup (called by gcrt1.o before main), output
 * files, fork children, and the final write in _mcleanup (atexit). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/gmon.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "callgraph.h"
#include "config.h"
#include "core.h"
#include "exeinfo.h"
#include "hooks.h"
#include "session.h"
#include "shell.h"
#include "vprof.h"

int vprof_state;
unsigned vprof_hz = VPROF_DEFAULT_HZ;
int vprof_started;
extern int vprof_mon_on;

static struct vprof_session sess;       /* this process's vprof files */
static int finished;
static int hook_dirfd = -1;             /* only opened for linked-in hooks */

/* Optional parts (stack scanner) learn the output directory and id. */
static void hooks_start(int after_fork)
{
    if (!sess.out_dir[0] || (!vprof_latency_start && !vprof_latency_atfork_child))
        return;
    if (hook_dirfd < 0)
        hook_dirfd = open(sess.out_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (hook_dirfd < 0)
        return;
    static const struct vprof_rt_services rt = {.thread_create = vprof_internal_thread_create};
    struct vprof_latency_args a = {hook_dirfd, sess.id, sess.start_ns, &rt};
    if (after_fork && vprof_latency_atfork_child)
        vprof_latency_atfork_child(&a);
    else if (!after_fork && vprof_latency_start)
        vprof_latency_start(&a);
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
    vprof_threads_init();
    if (vprof_signals_install() < 0) {
        vprof_warn("cannot install the SIGPROF handler: %s", strerror(errno));
        return;
    }
    __atomic_store_n(&vprof_state, VPROF_ON, __ATOMIC_SEQ_CST);
    vprof_signals_thread_start(program_blocks_prof_now());
    vprof_thread_start();
}

void __monstartup(unsigned long lowpc, unsigned long highpc)
{
    if (vprof_started)
        return;
    vprof_started = 1;
    vprof_config_read();
    vprof_hz = vprof_cfg.hz;
    sess.hz = vprof_hz;
    sess.start_ns = vprof_mono_ns();
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
    hooks_start(0);
    vprof_cg_enable(1);
    start_sampling();
}

void monstartup(unsigned long lowpc, unsigned long highpc)
{
    __monstartup(lowpc, highpc);
}

void vprof_fork_child(void)
{
    vprof_core_fork_child();
    vprof_cg_reset();
    sess.start_ns = vprof_mono_ns();
    vprof_session_open_outputs(&sess);
    hooks_start(1);
    vprof_thread_start();
}

static void gmon_path(char *p, size_t len)
{
    if (vprof_cfg.out_dir && sess.out_dir[0])
        snprintf(p, len, "%s/gmon.%s.out", sess.out_dir, sess.id);
    else if (vprof_cfg.gmon_prefix)
        snprintf(p, len, "%s.%d", vprof_cfg.gmon_prefix, (int)getpid());
    else
        snprintf(p, len, "gmon.out");
}

void vprof_finish(int from_signal)
{
    if (!vprof_started || __atomic_exchange_n(&finished, 1, __ATOMIC_SEQ_CST))
        return;
    __atomic_store_n(&vprof_state, VPROF_OFF, __ATOMIC_SEQ_CST);
    vprof_cg_enable(0);
    vprof_thread_stop();
    vprof_wait_handlers();
    if (vprof_latency_stop)
        vprof_latency_stop();

    char p[PATH_MAX];
    gmon_path(p, sizeof p);
    int fd = open(p, O_CREAT | O_TRUNC | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd < 0 || vprof_cg_write(fd, vprof_hz) < 0) {
        if (!from_signal)
            vprof_warn("%s: %s", p, strerror(errno));
    }
    if (fd >= 0)
        close(fd);
    struct vprof_core_counts c;
    vprof_session_close(&sess, &c);
    if (from_signal)
        return;
    uint64_t lost = vprof_cg_arcs_dropped();
    if (lost)
        vprof_warn("arc table full: %llu call counts dropped (raise VPROF_ARCS)",
                   (unsigned long long)lost);
    if (c.dropped)
        vprof_warn("sample file full: %llu value samples dropped (raise VPROF_MAX_SAMPLES)",
                   (unsigned long long)c.dropped);
    if (c.cut || c.overdue)
        vprof_warn("tick budget: %llu of %llu ticks cut short (VPROF_TICK_READS=%u, "
                   "VPROF_TICK_US=%u), %llu overdue ticks took no values",
                   (unsigned long long)c.cut, (unsigned long long)c.ticks,
                   vprof_cfg.tick_reads, vprof_cfg.tick_us, (unsigned long long)c.overdue);
    if (vprof_cfg.stats) {
        uint64_t n = vprof_stat_n ? vprof_stat_n : 1, pct[3] = {0, 0, 0}, acc = 0;
        const uint64_t want[3] = {n * 50 / 100, n * 90 / 100, n * 99 / 100};
        for (int b = 0, k = 0; b < VPROF_STAT_BUCKETS && k < 3; b++) {
            acc += vprof_stat_hist[b];
            while (k < 3 && acc > want[k])
                pct[k++] = (uint64_t)(b + 1) * 100;
        }
        vprof_warn("stats: ticks=%llu handler_ns avg=%llu p50<=%llu p90<=%llu p99<=%llu "
                   "max=%llu samples=%llu samples_per_tick=%.1f dropped=%llu faults=%llu",
                   (unsigned long long)vprof_stat_n, (unsigned long long)(vprof_stat_ns / n),
                   (unsigned long long)pct[0], (unsigned long long)pct[1],
                   (unsigned long long)pct[2], (unsigned long long)vprof_stat_max,
                   (unsigned long long)c.samples, (double)c.samples / (double)n,
                   (unsigned long long)c.dropped, (unsigned long long)c.faults);
    }
}

void _mcleanup(void)
{
    vprof_finish(0);
}

void moncontrol(int mode)
{
    __atomic_store_n(&vprof_mon_on, mode ? 1 : 0, __ATOMIC_RELEASE);
    if (vprof_started && !finished)
        vprof_cg_enable(mode ? 1 : 0);
}

/* profil(3): glibc's buffer semantics; the buffer is incremented on vprof's
 * ticks (VPROF_HZ per thread CPU time) rather than by a 100 Hz ITIMER_PROF. */
/* glibc declares buf nonnull, yet NULL is how profil(3) is switched off. */
#pragma GCC diagnostic ignored "-Wnonnull-compare"
int profil(unsigned short *buf, size_t bufsiz, size_t offset, unsigned int scale)
{
    vprof_cg_set_profil(buf, bufsiz, offset, scale);
    if (buf && scale && !vprof_started) {
        vprof_started = 1;
        vprof_config_read();
        vprof_hz = vprof_cfg.hz;
        sess.hz = vprof_hz;
        sess.start_ns = vprof_mono_ns();
        char err[64];
        struct vprof_core_config cc = {0};
        vprof_core_init(&cc, err, sizeof err);
        start_sampling();
    }
    return 0;
}

int vprof_active(void)
{
    return __atomic_load_n(&vprof_state, __ATOMIC_ACQUIRE) == VPROF_ON;
}

const char *vprof_output_id(void)
{
    return sess.id[0] ? sess.id : NULL;
}
