/* shell.h - libvprof's interposition shell: the parts that hook the
 * sampling core (core.h) into a process.
 *
 * Layering (tests/libvprof/t_layering.sh checks it): runtime.c owns the
 * life of the process's profile — start-up, fork, exit, and exit on
 * SIGTERM/SIGINT — and calls down into signals.c, threads.c, callgraph.c,
 * session.c and, through hooks.h, the stack scanner. None of them calls
 * back into runtime.c; they only read the shell's state, vprof_sh, which
 * runtime.c owns and changes. */
#ifndef VPROF_SHELL_H
#define VPROF_SHELL_H

#include <pthread.h>
#include <signal.h>
#include <stdint.h>

#include "core.h"

enum { VPROF_OFF = 0, VPROF_ON = 1 };

#define VPROF_STAT_BUCKETS 2000

/* The shell's state, one per process (defined in runtime.c). */
struct vprof_shell {
    int state;              /* VPROF_ON between start-up and exit (atomic) */
    int started;            /* __monstartup or profil() ran */
    int finished;           /* the exit path ran (atomic) */
    int mon_on;             /* moncontrol(): ticks count (atomic) */
    unsigned hz;            /* VPROF_HZ: each thread's timer rate */
    int inflight;           /* SIGPROF ticks running now; exit waits (atomic) */
    char timer_magic;       /* &timer_magic is the sigval of vprof's timers */
    int timer_kind;         /* VPROF_TIMER_PERF or _POSIX: chosen at start-up */
    /* VPROF_STATS: handler CPU time; hist in 100 ns buckets, last = more */
    uint64_t stat_ns, stat_n, stat_max;
    uint64_t stat_hist[VPROF_STAT_BUCKETS];
};
extern struct vprof_shell vprof_sh;

/* signals.c */
/* Installs the SIGPROF handler, and term_handler for SIGTERM and SIGINT
 * where their disposition is the default (vprof then reports the
 * program's own view of them, and steps aside once it installs one). */
int vprof_signals_install(void (*term_handler)(int));
/* From the termination handler: sig's disposition back to the default. */
void vprof_signals_term_default(int sig);
int vprof_real_sigaction(int sig, const struct sigaction *a, struct sigaction *o);
int vprof_real_sigmask(int how, const sigset_t *set, sigset_t *old);
void vprof_signals_thread_start(int program_blocks_prof);
int vprof_signals_program_blocks(void);
void vprof_wait_handlers(void);             /* after state = OFF */
/* VPROF_STATS: one line on stderr with the handler's times and c's counts. */
void vprof_signals_report_stats(const struct vprof_core_counts *c);

/* threads.c */
int vprof_threads_init(void);               /* thread-exit key; once */
/* At start-up, before the layout log is written: which timer the threads
 * will get (VPROF_TIMER, and whether the kernel lets this process open a
 * perf event); sets vprof_sh.timer_kind. */
void vprof_timer_choose(void);
const char *vprof_timer_name(void);
int vprof_thread_start(void);               /* timer for the calling thread */
/* The calling thread's perf-event tick descriptor, -1 without one. */
int vprof_thread_perf_fd(void);
void vprof_thread_stop(void);
void vprof_thread_forget(void);             /* fork child: the timer stayed behind */
/* A thread of vprof's own (hooks.h, vprof_rt_services.thread_create). */
int vprof_internal_thread_create(pthread_t *t, const pthread_attr_t *attr,
                                 void *(*fn)(void *), void *arg);

#endif
