/* config.h - the runtime's knobs, read once from the environment with
 * secure_getenv (docs/RUNTIME.md lists them with their defaults). */
#ifndef VPROF_CONFIG_H
#define VPROF_CONFIG_H

#include <stdint.h>

#define VPROF_DEFAULT_HZ          1000
#define VPROF_DEFAULT_UNWIND      3
#define VPROF_DEFAULT_MAX_SAMPLES (1ull << 22)
#define VPROF_DEFAULT_TABLE_DIV   2          /* paper: table = text size / 2 */
#define VPROF_MAX_ELEMS           (1ull << 26)
/* The tick's budget (docs/RUNTIME.md "Bounded ticks"): guarded reads that
 * need a system call, and wall time, per tick. */
#define VPROF_DEFAULT_TICK_READS  256
#define VPROF_DEFAULT_TICK_US     500

struct vprof_config {
    const char *out_dir;        /* VPROF_OUT, NULL = glibc-like naming */
    const char *meta;           /* VPROF_META, NULL = <exe>.vmeta if present */
    const char *gmon_prefix;    /* GMON_OUT_PREFIX */
    unsigned hz;                /* VPROF_HZ */
    unsigned unwind;            /* VPROF_UNWIND */
    uint64_t max_samples;       /* VPROF_MAX_SAMPLES */
    uint64_t table_div;         /* VPROF_TABLE_DIV */
    uint64_t arcs;              /* VPROF_ARCS, 0 = sized from the text */
    int quiet;                  /* VPROF_QUIET */
    int stats;                  /* VPROF_STATS */
    int read_pipe;              /* VPROF_READ=pipe */
    unsigned tick_reads;        /* VPROF_TICK_READS */
    unsigned tick_us;           /* VPROF_TICK_US */
};

extern struct vprof_config vprof_cfg;

/* Fills vprof_cfg; complains (unless quiet) about malformed values and
 * keeps the default for them. */
void vprof_config_read(void);

/* One diagnostic line on stderr, "vprof: ..." (suppressed by VPROF_QUIET).
 * Uses write(2) only once formatted. */
void vprof_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
