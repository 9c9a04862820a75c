/* config.c - environment knobs and the diagnostic channel. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"

struct vprof_config vprof_cfg;

static const char *env(const char *name)
{
    const char *v = secure_getenv(name);
    return v && *v ? v : NULL;
}

static uint64_t num(const char *name, uint64_t def, uint64_t lo, uint64_t hi)
{
    const char *v = env(name);
    if (!v)
        return def;
    char *end;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 10);
    if (errno || *end || x < lo || x > hi || *v == '-') {
        vprof_warn("%s=%s: not a number in [%llu, %llu]; using %llu", name, v,
                   (unsigned long long)lo, (unsigned long long)hi,
                   (unsigned long long)def);
        return def;
    }
    return x;
}

static int flag(const char *name)
{
    const char *v = env(name);
    return v && strcmp(v, "0") != 0;
}

void vprof_config_read(void)
{
    memset(&vprof_cfg, 0, sizeof vprof_cfg);
    vprof_cfg.quiet = flag("VPROF_QUIET");
    vprof_cfg.stats = flag("VPROF_STATS");
    vprof_cfg.out_dir = env("VPROF_OUT");
    vprof_cfg.meta = env("VPROF_META");
    vprof_cfg.gmon_prefix = env("GMON_OUT_PREFIX");
    vprof_cfg.hz = (unsigned)num("VPROF_HZ", VPROF_DEFAULT_HZ, 1, 100000);
    vprof_cfg.unwind = (unsigned)num("VPROF_UNWIND", VPROF_DEFAULT_UNWIND, 0, 64);
    vprof_cfg.max_samples = num("VPROF_MAX_SAMPLES", VPROF_DEFAULT_MAX_SAMPLES, 1, 1ull << 32);
    vprof_cfg.table_div = num("VPROF_TABLE_DIV", VPROF_DEFAULT_TABLE_DIV, 1, 1ull << 20);
    vprof_cfg.arcs = num("VPROF_ARCS", 0, 0, 1ull << 28);
    vprof_cfg.tick_reads = (unsigned)num("VPROF_TICK_READS", VPROF_DEFAULT_TICK_READS, 1,
                                         1u << 20);
    vprof_cfg.tick_us = (unsigned)num("VPROF_TICK_US", VPROF_DEFAULT_TICK_US, 1, 1000000);
    const char *rd = env("VPROF_READ");
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
