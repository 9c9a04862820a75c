/* core.h - the sampling core of vprof: metadata, PCToVarTable/VariableArray,
 * value samples and bounded virtual unwinding.
 *
 * It knows nothing about how it is hooked into the process (symbol
 * interposition in libvprof, or a patched glibc): the shell decides where
 * files go, owns the timers and signals, and calls vprof_core_tick() from
 * its SIGPROF handler. Everything named *_tick is async-signal-safe. */
#ifndef VPROF_CORE_H
#define VPROF_CORE_H

#include <stddef.h>
#include <stdint.h>
#include <ucontext.h>
#include "vprof_format.h"

/* Frames beyond unwind_depth a tick may step through when it counts only
 * the program's frames (a qsort callback sits below about log2(n) + 2
 * frames of libc). */
#define VPROF_UNWIND_OTHER 32

struct vprof_core_config {
    const char *meta_path;      /* NULL: no value sampling */
    uint64_t load_bias;         /* of the executable */
    uint64_t text_lo, text_hi;  /* run-time range of its executable code */
    const uint8_t *build_id;    /* of the executable (may be NULL) */
    size_t build_id_len;
    /* Callers sampled per tick by virtual unwinding: unwind_depth frames
     * of the program's own (PC inside [text_lo, text_hi), where metadata
     * can describe variables), stepping through other frames (libc, the
     * mcount trampoline) on the way — at most unwind_depth +
     * VPROF_UNWIND_OTHER steps in all; with unwind_all, the first
     * unwind_depth frames whatever they are. */
    unsigned unwind_depth;
    int unwind_all;
    uint64_t table_div;         /* text bytes per PCToVarTable slot (2) */
    uint64_t max_elems;         /* VariableArray size cap */
    /* Ranges that stay mapped for the process's life (the executable's
     * PT_LOAD segments): reads there are direct loads. */
    const uint64_t *safe_lo, *safe_hi;
    int n_safe;
    int read_pipe;              /* guarded reads always through a pipe */
    /* The tick's budget (docs/RUNTIME.md "Bounded ticks"); 0 = no limit.
     * A tick stops sampling when it has made tick_reads guarded reads that
     * need a system call or spent tick_budget_ns of wall time; a tick that
     * arrives less than half a timer period (period_ns) after the previous
     * tick of its thread ended takes no values at all. */
    uint32_t tick_reads;
    uint64_t tick_budget_ns;
    uint64_t period_ns;
};

/* Loads and checks the metadata and builds the tables. Returns 1 when value
 * sampling is ready (call vprof_core_open_values next), 0 when there is no
 * metadata, -1 when it was rejected: err then holds one line
 * "FILE: offset N: what is wrong" and the core runs without values. */
int vprof_core_init(const struct vprof_core_config *cfg, char *err, size_t errlen);

/* Creates the value sample file on fd (owned by the core from now on). */
int vprof_core_open_values(int fd, uint64_t capacity, uint32_t hz,
                           uint64_t start_ns, char *err, size_t errlen);

/* The metadata that was loaded (for the layout log), or NULL. */
/* EXPR location entries of the loaded metadata the variable table refused
 * (their program is invalid: vpf_expr_check); they are never read. */
uint32_t vprof_core_refused(void);
const struct vpf_meta *vprof_core_meta(void);

/* CLOCK_MONOTONIC in ns (vDSO; async-signal-safe). */
uint64_t vprof_mono_ns(void);

/* Per-thread set-up, outside signal context: caches the thread id and the
 * stack bounds used for direct reads. Call in every sampled thread. */
void vprof_core_thread_init(void);
void vprof_core_thread_exit(void);

/* One profiling tick of the calling thread, from its SIGPROF handler.
 * weight: timer periods the tick stands for (1 + the timer's overrun: the
 * kernel checks CPU-time timers at its own tick, so at VPROF_HZ above
 * CONFIG_HZ one signal covers several periods); recorded in each sample so
 * the report's variable-based cost uses the same time unit as the gmon
 * histogram. */
void vprof_core_tick(const ucontext_t *uc, uint64_t now_ns, unsigned weight);

/* After fork, in the child: forget the parent's sample file (without
 * touching it) so that the shell can open the child's own. */
void vprof_core_fork_child(void);

/* Normal exit: trims the sample file and marks it closed cleanly. No tick
 * may run during or after this call. */
void vprof_core_close(void);

/* ticks: ticks seen; cut: ticks whose sampling the budget ended early;
 * overdue: ticks that took no values because the previous tick of their
 * thread had just ended; stacks_dropped: ticks whose call chain did not fit
 * in stacks.<id> (filled by the session at close). */
struct vprof_core_counts { uint64_t ticks, samples, dropped, faults, cut, overdue, stacks_dropped; };
void vprof_core_counts(struct vprof_core_counts *c);

#endif
