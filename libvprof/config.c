/* config.c - environment knobs and the diagnostic channel. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "config.h"
#include "unwind.h"

struct vprof_config vprof_cfg;

static uint64_t num(const char *name, uint64_t def, uint64_t lo, uint64_t hi)
{
    const char *v = vprof_env(name);
    uint64_t x = 0;
    if (!v)
        return def;
    if (!vprof_parse_u64(v, &x) || x < lo || x > hi) {
        vprof_warn("%s=%s: not a number in [%llu, %llu]; using %llu", name, v,
                   (unsigned long long)lo, (unsigned long long)hi,
                   (unsigned long long)def);
        return def;
    }
    return x;
}

static int flag(const char *name)
{
    const char *v = vprof_env(name);
    return v && strcmp(v, "0") != 0;
}

void vprof_config_read(void)
{
    memset(&vprof_cfg, 0, sizeof vprof_cfg);
    vprof_cfg.quiet = flag("VPROF_QUIET");
    vprof_cfg.stats = flag("VPROF_STATS");
    vprof_cfg.secure = getauxval(AT_SECURE) != 0;
    vprof_cfg.out_dir = vprof_env("VPROF_OUT");
    vprof_cfg.meta = vprof_env("VPROF_META");
    vprof_cfg.gmon_prefix = vprof_env("GMON_OUT_PREFIX");
    vprof_cfg.hz = (unsigned)num("VPROF_HZ", VPROF_DEFAULT_HZ, 1, 100000);
    vprof_cfg.unwind = (unsigned)num("VPROF_UNWIND", VPROF_DEFAULT_UNWIND, 0, 64);
    vprof_cfg.max_samples = num("VPROF_MAX_SAMPLES", VPROF_DEFAULT_MAX_SAMPLES, 1, 1ull << 32);
    vprof_cfg.stacks = (unsigned)num("VPROF_STACKS", VPROF_DEFAULT_STACKS, 0, 128);
    vprof_cfg.stacks_max = num("VPROF_STACKS_MAX", VPROF_DEFAULT_STACKS_MAX, 1, 1ull << 32);
    vprof_cfg.table_div = num("VPROF_TABLE_DIV", VPROF_DEFAULT_TABLE_DIV, 1, 1ull << 20);
    vprof_cfg.arcs = num("VPROF_ARCS", 0, 0, 1ull << 28);
    vprof_cfg.tick_reads = (unsigned)num("VPROF_TICK_READS", VPROF_DEFAULT_TICK_READS, 1,
                                         1u << 20);
    vprof_cfg.tick_us = (unsigned)num("VPROF_TICK_US", VPROF_DEFAULT_TICK_US, 1, 1000000);
    const char *uc = vprof_env("VPROF_UNWIND_COUNT");
    if (uc && !strcmp(uc, "all"))
        vprof_cfg.unwind_all = 1;
    else if (uc && strcmp(uc, "program"))
        vprof_warn("VPROF_UNWIND_COUNT=%s: expected program or all; using program", uc);
    const char *tm = vprof_env("VPROF_TIMER");
    if (tm && !strcmp(tm, "perf"))
        vprof_cfg.timer = VPROF_TIMER_PERF;
    else if (tm && !strcmp(tm, "posix"))
        vprof_cfg.timer = VPROF_TIMER_POSIX;
    else if (tm && strcmp(tm, "auto"))
        vprof_warn("VPROF_TIMER=%s: expected auto, perf or posix; using auto", tm);
    const char *uw = vprof_env("VPROF_UNWINDER");
    if (uw && !strcmp(uw, "libunwind"))
        vprof_cfg.unwinder = VPROF_UNWINDER_LIBUNWIND;
    else if (uw && !strcmp(uw, "check"))
        vprof_cfg.unwinder = VPROF_UNWINDER_CHECK;
    else if (uw && strcmp(uw, "cfi"))
        vprof_warn("VPROF_UNWINDER=%s: expected cfi, libunwind or check; using cfi", uw);
    const char *rd = vprof_env("VPROF_READ");
    if (rd && !strcmp(rd, "pipe"))
        vprof_cfg.read_pipe = 1;
    else if (rd && strcmp(rd, "auto"))
        vprof_warn("VPROF_READ=%s: expected auto or pipe; using auto", rd);
}

void vprof_warn(const char *fmt, ...)
{
    if (vprof_cfg.quiet)
        return;
    char buf[1024];
    int n = snprintf(buf, sizeof buf, "vprof: ");
    va_list ap;
    va_start(ap, fmt);
    n += vsnprintf(buf + n, sizeof buf - (size_t)n - 1, fmt, ap);
    va_end(ap);
    if (n > (int)sizeof buf - 2)
        n = (int)sizeof buf - 2;
    buf[n++] = '\n';
    int saved = errno;
    ssize_t w = write(2, buf, (size_t)n);
    (void)w;
    errno = saved;
}
