/* config.h - the runtime's knobs, read once from the environment with
 * secure_getenv (docs/RUNTIME.md lists them with their defaults), and the
 * two primitives every knob of libvprof — the stack scanner's too
 * (stack-scanner/rt/lat_config.c) — is read with. */
#ifndef VPROF_CONFIG_H
#define VPROF_CONFIG_H

#include <stdint.h>
#include <stdlib.h>

/* A knob's value: secure_getenv, so that a setuid/setgid program ignores
 * the invoking user's settings; empty means unset. Async-signal-safe (a
 * lookup in environ): the scanner's first read may happen in the entry of
 * an instrumented function. */
static inline const char *vprof_env(const char *name)
{
    const char *v = secure_getenv(name);
    return v && *v ? v : (const char *)0;
}

/* Decimal u64 (no sign, no blanks); 0 and *out untouched when s is not
 * one. No strtoull: async-signal-safe, no locale. */
static inline int vprof_parse_u64(const char *s, uint64_t *out)
{
    uint64_t v = 0;
    if (!s || !*s)
        return 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || v > (UINT64_MAX - 9) / 10)
            return 0;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    *out = v;
    return 1;
}

#define VPROF_DEFAULT_HZ          1500
#define VPROF_DEFAULT_UNWIND      3
#define VPROF_DEFAULT_MAX_SAMPLES (1ull << 22)
#define VPROF_DEFAULT_TABLE_DIV   2          /* paper: table = text size / 2 */
#define VPROF_DEFAULT_STACKS      32         /* frames per tick in stacks.<id> */
#define VPROF_DEFAULT_STACKS_MAX  (1ull << 20)
#define VPROF_MAX_ELEMS           (1ull << 26)
/* The tick's budget (docs/RUNTIME.md "Bounded ticks"): guarded reads that
 * need a system call, and wall time, per tick. */
#define VPROF_DEFAULT_TICK_READS  256
#define VPROF_DEFAULT_TICK_US     500

/* Where ticks come from (VPROF_TIMER): a per-thread software CPU-clock perf
 * event (exact rate, up to 10 kHz and more), or a per-thread POSIX CPU-time
 * timer (at most the kernel's tick rate, ~250 Hz). auto: perf when the
 * kernel allows it (perf_event_paranoid, seccomp, containers), else posix. */
enum vprof_timer_kind { VPROF_TIMER_AUTO = 0, VPROF_TIMER_PERF, VPROF_TIMER_POSIX };

struct vprof_config {
    const char *out_dir;        /* VPROF_OUT, NULL = glibc-like naming */
    const char *meta;           /* VPROF_META, NULL = <exe>.vmeta if present */
    const char *gmon_prefix;    /* GMON_OUT_PREFIX */
    unsigned hz;                /* VPROF_HZ */
    unsigned unwind;            /* VPROF_UNWIND */
    int unwind_all;             /* VPROF_UNWIND_COUNT=all (default program) */
    uint64_t max_samples;       /* VPROF_MAX_SAMPLES */
    unsigned stacks;            /* VPROF_STACKS: frames per tick, 0 = none */
    uint64_t stacks_max;        /* VPROF_STACKS_MAX: ticks stacks.<id> holds */
    uint64_t table_div;         /* VPROF_TABLE_DIV */
    uint64_t arcs;              /* VPROF_ARCS, 0 = sized from the text */
    int quiet;                  /* VPROF_QUIET */
    int stats;                  /* VPROF_STATS */
    int read_pipe;              /* VPROF_READ=pipe */
    int timer;                  /* VPROF_TIMER: enum vprof_timer_kind asked for */
    unsigned tick_reads;        /* VPROF_TICK_READS */
    unsigned tick_us;           /* VPROF_TICK_US */
    int unwinder;               /* VPROF_UNWINDER: VPROF_UNWINDER_* of unwind.h */
    /* A setuid/setgid (AT_SECURE) process: the knobs above are ignored
     * (secure_getenv), files are created 0600 and only in directories the
     * real user may write (docs/RUNTIME.md "Privileged programs"). */
    int secure;
};

extern struct vprof_config vprof_cfg;

/* Mode of every file vprof creates: 0600 in a privileged process, else
 * 0644 (gmon: 0666, as glibc; the umask applies to all). */
#define VPROF_FILE_MODE(gmon) (vprof_cfg.secure ? 0600 : (gmon) ? 0666 : 0644)

/* Fills vprof_cfg; complains (unless quiet) about malformed values and
 * keeps the default for them. */
void vprof_config_read(void);

/* One diagnostic line on stderr, "vprof: ..." (suppressed by VPROF_QUIET).
 * Uses write(2) only once formatted. */
void vprof_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
