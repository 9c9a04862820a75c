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
#include "shell.h"
#include "vprof.h"

int vprof_state;
unsigned vprof_hz = VPROF_DEFAULT_HZ;
int vprof_started;
extern int vprof_mon_on;

static struct vprof_exeinfo exe;
static int core_status;                 /* 1 values, 0 none, -1 rejected */
static char meta_path[PATH_MAX];
static char meta_err[800];
static char out_dir[PATH_MAX];          /* absolute; "" = no vprof files */
static char id[64];
static char layout_path[PATH_MAX], values_path[PATH_MAX];
static int have_layout, have_values;
static uint64_t start_ns;
static int finished;
static int hook_dirfd = -1;             /* only opened for linked-in hooks */

/* Optional parts (stack scanner) learn the output directory and id. */
static void hooks_start(int after_fork)
{
    if (!out_dir[0] || (!vprof_latency_start && !vprof_latency_atfork_child))
        return;
    if (hook_dirfd < 0)
        hook_dirfd = open(out_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (hook_dirfd < 0)
        return;
    if (after_fork && vprof_latency_atfork_child)
        vprof_latency_atfork_child(hook_dirfd, id);
    else if (!after_fork && vprof_latency_start)
        vprof_latency_start(hook_dirfd, id, start_ns);
}

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int mkdir_p(const char *dir)
{
    char p[PATH_MAX];
    if (snprintf(p, sizeof p, "%s", dir) >= (int)sizeof p)
        return -1;
    for (char *s = p + 1; *s; s++)
        if (*s == '/') {
            *s = 0;
            if (mkdir(p, 0755) < 0 && errno != EEXIST)
                return -1;
            *s = '/';
        }
    return mkdir(p, 0755) < 0 && errno != EEXIST ? -1 : 0;
}

static void absolute(const char *path, char *out, size_t len)
{
    char cwd[PATH_MAX];
    if (path[0] == '/' || !getcwd(cwd, sizeof cwd))
        snprintf(out, len, "%s", path);
    else
        snprintf(out, len, "%s/%s", cwd, path);
}

/* Picks the process's id and creates layout.<id> (and values.<id>):
 * with VPROF_OUT the first of <pid>, <pid>.1, ... whose layout file can be
 * created exclusively; otherwise <pid> beside gmon.out, only when there are
 * values to write. */
static void open_outputs(void)
{
    int pid = (int)getpid();
    have_layout = have_values = 0;
    out_dir[0] = id[0] = 0;
    if (vprof_cfg.out_dir) {
        absolute(vprof_cfg.out_dir, out_dir, sizeof out_dir);
        if (mkdir_p(out_dir) < 0) {
            vprof_warn("%s: cannot create directory: %s", out_dir, strerror(errno));
            out_dir[0] = 0;
            return;
        }
    } else if (core_status == 1) {
        if (vprof_cfg.gmon_prefix) {
            char p[PATH_MAX];
            absolute(vprof_cfg.gmon_prefix, p, sizeof p);
            char *slash = strrchr(p, '/');
            *slash = 0;
            snprintf(out_dir, sizeof out_dir, "%s", p[0] ? p : "/");
        } else if (!getcwd(out_dir, sizeof out_dir)) {
            out_dir[0] = 0;
        }
    }
    if (!out_dir[0])
        return;
    int fd = -1;
    for (int k = 0; k < 10000; k++) {
        if (k)
            snprintf(id, sizeof id, "%d.%d", pid, k);
        else
            snprintf(id, sizeof id, "%d", pid);
        snprintf(layout_path, sizeof layout_path, "%s/layout.%s", out_dir, id);
        int excl = vprof_cfg.out_dir ? O_EXCL : O_TRUNC;
        fd = open(layout_path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | excl, 0644);
        if (fd >= 0 || errno != EEXIST)
            break;
    }
    if (fd < 0) {
        vprof_warn("%s: %s", layout_path, strerror(errno));
        out_dir[0] = 0;
        return;
    }
    have_layout = 1;

    if (core_status == 1) {
        snprintf(values_path, sizeof values_path, "%s/values.%s", out_dir, id);
        int flags = O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC;
        int vfd = open(values_path, flags | O_EXCL, 0644);
        if (vfd < 0 && errno == EEXIST && unlink(values_path) == 0)
            vfd = open(values_path, flags | O_EXCL, 0644);
        char err[800];
        if (vfd < 0)
            vprof_warn("%s: %s", values_path, strerror(errno));
        else if (vprof_core_open_values(vfd, vprof_cfg.max_samples, vprof_hz, start_ns,
                                        err, sizeof err) < 0)
            vprof_warn("%s: %s", values_path, err);
        else
            have_values = 1;
    }

    char status[900];
    if (core_status == 1)
        snprintf(status, sizeof status, "ok");
    else if (core_status == 0)
        snprintf(status, sizeof status, "none");
    else
        snprintf(status, sizeof status, "error %s", meta_err);
    struct vpf_layout l;
    memset(&l, 0, sizeof l);
    l.pid = pid;
    l.ppid = (int)getppid();
    l.exe = exe.path;
    l.build_id = exe.build_id_hex;
    l.load_bias = exe.bias;
    l.text_lo = exe.text_lo;
    l.text_hi = exe.text_hi;
    l.hz = vprof_hz;
    l.unwind = vprof_cfg.unwind;
    l.meta_path = meta_path;
    l.meta_status = status;
    l.start_ns = start_ns;
    vpf_layout_write_head(fd, &l);
    vprof_exeinfo_write_maps(fd);
    const struct vpf_meta *m = vprof_core_meta();
    for (uint32_t i = 0; m && i < m->hdr.n_vars; i++) {
        const struct vpf_var_desc *v = &m->vars[i];
        vpf_layout_write_var(fd, i, vpf_meta_str(m, v->file), vpf_meta_str(m, v->function),
                             v->line, vpf_meta_str(m, v->name), vpf_meta_str(m, v->type),
                             v->tags, v->kind, v->size);
    }
    close(fd);
}

static void load_metadata(void)
{
    meta_path[0] = 0;
    if (vprof_cfg.meta) {
        snprintf(meta_path, sizeof meta_path, "%s", vprof_cfg.meta);
    } else if (exe.path[0]) {
        snprintf(meta_path, sizeof meta_path, "%s.vmeta", exe.path);
        if (access(meta_path, F_OK) != 0)
            meta_path[0] = 0;
    }
    struct vprof_core_config cc = {
        .meta_path = meta_path[0] ? meta_path : NULL,
        .load_bias = exe.bias,
        .text_lo = exe.text_lo,
        .text_hi = exe.text_hi,
        .build_id = exe.build_id,
        .build_id_len = exe.build_id_len,
        .unwind_depth = vprof_cfg.unwind,
        .table_div = vprof_cfg.table_div,
        .max_elems = VPROF_MAX_ELEMS,
        .safe_lo = exe.seg_lo,
        .safe_hi = exe.seg_hi,
        .n_safe = exe.n_segs,
        .read_pipe = vprof_cfg.read_pipe,
    };
    meta_err[0] = 0;
    core_status = vprof_core_init(&cc, meta_err, sizeof meta_err);
    if (core_status < 0)
        vprof_warn("%s (profiling continues without values)", meta_err);
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
    start_ns = mono_ns();
    if (vprof_exeinfo_get(&exe) < 0) {
        exe.text_lo = lowpc;
        exe.text_hi = highpc;
    }
    if (vprof_cg_setup(lowpc, highpc, exe.bias, vprof_cfg.arcs) < 0) {
        vprof_warn("out of memory for the profile buffers; not profiling");
        return;
    }
    load_metadata();
    open_outputs();
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
    start_ns = mono_ns();
    open_outputs();
    hooks_start(1);
    vprof_thread_start();
}

static void gmon_path(char *p, size_t len)
{
    if (vprof_cfg.out_dir && out_dir[0])
        snprintf(p, len, "%s/gmon.%s.out", out_dir, id);
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

    struct vprof_core_counts c;
    vprof_core_counts(&c);
    char p[PATH_MAX];
    gmon_path(p, sizeof p);
    int fd = open(p, O_CREAT | O_TRUNC | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd < 0 || vprof_cg_write(fd, vprof_hz) < 0) {
        if (!from_signal)
            vprof_warn("%s: %s", p, strerror(errno));
    }
    if (fd >= 0)
        close(fd);

    if (have_values) {
        vprof_core_close();
        /* Trim the sparse file to what was used (records past capacity were
         * never written). Reopened by name: the program may have closed or
         * reused our descriptor. */
        int vfd = open(values_path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
        if (vfd >= 0) {
            if (ftruncate(vfd, (off_t)(VPF_HEADER_SIZE + c.samples * sizeof(struct vpf_value_rec))) < 0) {
                /* the header still says how many records there are */
            }
            close(vfd);
        }
    }
    if (have_layout) {
        int lfd = open(layout_path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
        if (lfd >= 0) {
            vpf_layout_write_end(lfd, c.ticks, c.samples, c.dropped, c.faults, mono_ns());
            close(lfd);
        }
    }
    if (from_signal)
        return;
    uint64_t lost = vprof_cg_arcs_dropped();
    if (lost)
        vprof_warn("arc table full: %llu call counts dropped (raise VPROF_ARCS)",
                   (unsigned long long)lost);
    if (c.dropped)
        vprof_warn("sample file full: %llu value samples dropped (raise VPROF_MAX_SAMPLES)",
                   (unsigned long long)c.dropped);
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
        start_ns = mono_ns();
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
    return id[0] ? id : NULL;
}
