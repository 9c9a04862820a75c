/* prog_dlsym - many fresh children, each inside the dynamic linker when its
 * first tick arrives (tests/libvprof/t_dlsym.sh).
 *
 * The hang it looks for (the soak's case 1/5570): a tick whose unwinding
 * reached an interposed call (libunwind validates addresses with read() on
 * a pipe, and libvprof interposes read) whose real function was not bound
 * yet, so the tick called dlsym, while the code it interrupted held the
 * loader's lock half-taken or half-released. The tick then waited for a
 * lock its own thread held, with every signal blocked: only SIGKILL ends
 * that process.
 *
 * Each child gets one chance: its first tick that unwinds with libunwind
 * binds read. So the parent must take no tick at all (it would bind read
 * for every child it forks): a constructor blocks SIGPROF with the raw
 * system call (libvprof keeps the program's sigprocmask from blocking it)
 * right after libvprof armed the timer, long before the first period ends
 * at the rate the test uses. Each child drops the tick that came due while
 * it was forked (its first tick must land in its loop, not on the unblock),
 * unblocks SIGPROF and calls dlsym in a loop, the loader's lock taken and
 * released over and over, until it has used MS milliseconds of CPU.
 *
 *   prog_dlsym CHILDREN MS LIMIT
 *
 * Forks CHILDREN children one after the other. A child not ended after
 * LIMIT seconds is stuck: the parent names it, kills it and stops with
 * status 1. Otherwise prints "N children, none stuck" and exits 0. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void prof_mask(int how)
{
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGPROF);
    syscall(SYS_rt_sigprocmask, how, &s, NULL, _NSIG / 8);
}

/* Before main: libvprof armed this thread's timer in __monstartup, from
 * the executable's _init, which runs just before the constructors. */
__attribute__((constructor(101))) static void parent_takes_no_tick(void)
{
    prof_mask(SIG_BLOCK);
}

/* Takes any SIGPROF pending while blocked without running the handler. */
static void drop_pending_prof(void)
{
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGPROF);
    struct timespec zero = {0, 0};
    while (syscall(SYS_rt_sigtimedwait, &s, NULL, &zero, _NSIG / 8) == SIGPROF) {
    }
}

static double now(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Takes and releases the loader's lock until ms of this thread's CPU. */
__attribute__((noinline)) static void in_loader(double ms)
{
    /* a lookup in libc's scope alone: short, so a good part of the time
     * goes to taking and releasing the lock */
    void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
    double end = now(CLOCK_THREAD_CPUTIME_ID) + ms / 1e3;
    volatile void *sink;
    while (now(CLOCK_THREAD_CPUTIME_ID) < end)
        for (int i = 0; i < 64; i++)
            sink = dlsym(libc, "strlen");
    (void)sink;
}

/* Waits for child p up to limit seconds, polling with the raw system call
 * (the parent calls nothing a tick could need). 0: it ended; -1: stuck,
 * and killed. */
static int reap(pid_t p, double limit)
{
    double end = now(CLOCK_MONOTONIC) + limit;
    int st;
    while (now(CLOCK_MONOTONIC) < end) {
        if (waitpid(p, &st, WNOHANG) == p)
            return 0;
        struct timespec ts = {0, 1000000};
        syscall(SYS_nanosleep, &ts, NULL);
    }
    kill(p, SIGKILL);
    waitpid(p, &st, 0);
    return -1;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: prog_dlsym CHILDREN MS LIMIT\n");
        return 2;
    }
    int n = atoi(argv[1]);
    double ms = atof(argv[2]), limit = atof(argv[3]);
    for (int i = 0; i < n; i++) {
        pid_t p = fork();
        if (p < 0) {
            perror("prog_dlsym: fork");
            return 2;
        }
        if (p == 0) {
            drop_pending_prof();
            prof_mask(SIG_UNBLOCK);
            in_loader(ms);
            _exit(0);
        }
        if (reap(p, limit) < 0) {
            printf("child %d (pid %d) stuck for %.0f s\n", i + 1, (int)p, limit);
            return 1;
        }
    }
    printf("%d children, none stuck\n", n);
    return 0;
}
