/* perf_script.h - the one reader of `perf script` text lines, for the
 * modes that take perf's view as input (--waits: scheduler events;
 * --contexts: sampled call chains). */
#ifndef VPR_PERF_SCRIPT_H
#define VPR_PERF_SCRIPT_H
#include <stddef.h>
#include <stdint.h>

/* An event's first line: "COMM TID [CPU] SECS.FRAC: [PERIOD] EVENT: FIELDS"
 * or, with -F comm,pid,tid,..., "COMM PID/TID [CPU] ...". */
struct vpr_perf_head {
    char comm[256];
    int pid;                    /* -1 when the line has no PID column */
    uint32_t tid;
    unsigned cpu;
    uint64_t t;                 /* ns */
    char name[64];              /* "sched:sched_switch", "250000 cpu-clock:u" */
    char *fields;               /* points into the parsed line */
};

/* Parses l (modified in place: fields point into it); sets *has_pid when
 * the PID column is there. 0 when l is not an event line. */
int vpr_perf_head_parse(char *l, struct vpr_perf_head *h, int *has_pid);

/* A call-chain line "\t ADDR SYM+OFF (DSO)": the symbol without its offset
 * ("[unknown]" when perf has none) and the DSO's path. 0 when l is not one. */
int vpr_perf_frame_parse(const char *l, char *sym, size_t symlen, char *dso, size_t dsolen);

#endif
