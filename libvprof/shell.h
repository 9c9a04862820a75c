/* shell.h - glue between the parts of libvprof's interposition shell
 * (gprof entry points, timers and threads, signals, output files). The
 * sampling core (core.h) knows nothing of these. */
#ifndef VPROF_SHELL_H
#define VPROF_SHELL_H

#include <pthread.h>
#include <signal.h>
#include <stdint.h>

enum { VPROF_OFF = 0, VPROF_ON = 1 };

/* Profiling state: VPROF_ON between start-up and _mcleanup. */
extern int vprof_state;
/* SIGPROF handlers running right now (so exit waits for them). */
extern int vprof_inflight;

#define VPROF_STAT_BUCKETS 2000
extern uint64_t vprof_stat_ns, vprof_stat_n, vprof_stat_max;
extern uint64_t vprof_stat_hist[VPROF_STAT_BUCKETS];

/* signals.c */
int vprof_signals_install(void);            /* our SIGPROF, SIGTERM/SIGINT */
int vprof_real_sigaction(int sig, const struct sigaction *a, struct sigaction *o);
int vprof_real_sigmask(int how, const sigset_t *set, sigset_t *old);
void vprof_signals_thread_start(int program_blocks_prof);
int vprof_signals_program_blocks(void);
void vprof_wait_handlers(void);             /* after vprof_state = OFF */

/* threads.c */
int vprof_threads_init(void);               /* key, atfork; once */
int vprof_thread_start(void);               /* timer for the calling thread */
void vprof_thread_stop(void);
/* A thread of vprof's own (hooks.h, vprof_rt_services.thread_create). */
int vprof_internal_thread_create(pthread_t *t, const pthread_attr_t *attr,
                                 void *(*fn)(void *), void *arg);

/* runtime.c */
void vprof_fork_child(void);                /* new id, files, timer */
void vprof_finish(int from_signal);         /* _mcleanup's work */
extern unsigned vprof_hz;
extern int vprof_started;

#endif
