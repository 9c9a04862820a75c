/* harness.c - stands in for libvprof in the scanner tests: before main it
 * opens $VL_OUT and calls vprof_latency_start("<pid>", now, services) as
 * the runtime does (libvprof/hooks.h; the services create files in $VL_OUT
 * and threads with signals blocked), and calls vprof_latency_stop() at
 * exit. Also restarts in a forked child, and prints the scanner's longest
 * pause at exit. Compiled without the latency plugin. */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "lat_stats.h"

/* The runtime's side of the interface (relative: the benchmark builds this
 * file without -Ilibvprof). */
#include "../../libvprof/hooks.h"

static int dirfd_out = -1;

/* The runtime's thread service, as libvprof gives it: no signals in the
 * new thread (here libc's functions are the only ones). */
static int thread_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg)
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(t, a, fn, arg);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}
static int create_file(const char *name)
{
    return openat(dirfd_out, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
}
static const struct vprof_rt_services rt = {thread_create, create_file};

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void child(void)
{
    char id[32];
    snprintf(id, sizeof id, "%d", (int)getpid());
    struct vprof_latency_args a = {id, now_ns(), &rt};
    vprof_latency_atfork_child(&a);
}

/* At exit: stop (final scan, drain, close), then report the scanner's
 * longest pause between passes, "maxgap NS" on stderr (and the thread
 * registration counts, "registered N full M"): the polling
 * granularity actually achieved, which the tests use as their tolerance
 * (on a loaded 2-core machine the scanner thread is not always running). */
static void stop(void)
{
    vprof_latency_stop();
    struct vprof_latency_stats st;
    vprof_latency_stats(&st);
    fprintf(stderr, "maxgap %llu\nregistered %llu full %llu\n", (unsigned long long)st.max_gap_ns,
            (unsigned long long)st.registered, (unsigned long long)st.registry_full);
}

__attribute__((constructor(200))) static void start(void)
{
    const char *dir = getenv("VL_OUT");
    if (!dir)
        return;
    dirfd_out = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dirfd_out < 0) {
        perror(dir);
        exit(2);
    }
    char id[32];
    snprintf(id, sizeof id, "%d", (int)getpid());
    struct vprof_latency_args a = {id, now_ns(), &rt};
    vprof_latency_start(&a);
    pthread_atfork(NULL, NULL, child);
    atexit(stop);
}
