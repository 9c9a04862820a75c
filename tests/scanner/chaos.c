/* chaos.c - longjmp and siglongjmp out of instrumented frames (to targets in
 * instrumented and in uninstrumented functions), and a SIGALRM handler that
 * runs instrumented code every 200 us, while the scanner polls. Afterwards
 * quiet() sleeps 30 ms: a record left behind by the chaos would show up as
 * a call event that overlaps the quiet phase. Prints "quiet_start NS",
 * "quiet_truth NS", "func quiet ADDR", "func main ADDR",
 * "func on_sig ADDR", "stats passes walks retries invalid safe_reads". */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/time.h>
#include <time.h>

#include "lat_stats.h"

int run_plain(void (*fn)(void));
void jump_plain(void);
int run_plain_sig(void (*fn)(void));
void sigjump_plain(void);
extern volatile int plain_jumpable;

static jmp_buf jb;
static sigjmp_buf sjb;
static volatile int jumpable, n_sig, n_jumped;
volatile long sink;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline)) void leaf(void) { sink++; }

__attribute__((noinline)) void deep(int n, int how)
{
    if (n == 0) {
        if (how == 0)
            longjmp(jb, 1);
        jump_plain();
    }
    deep(n - 1, how);
    sink++;
}

__attribute__((noinline)) void deep_plain_cb(void) { deep(10, 1); }

__attribute__((noinline)) void jump_inst(void)
{
    if (setjmp(jb) == 0)
        deep(10, 0);
    leaf();
}

__attribute__((noinline)) void spin_deep(int n)
{
    if (n > 0) {
        spin_deep(n - 1);
        sink++;
        return;
    }
    uint64_t t0 = now_ns();
    while (now_ns() - t0 < 150000)
        leaf();
}

__attribute__((noinline)) void spin_cb(void) { spin_deep(12); }

__attribute__((noinline)) void handler_work(void)
{
    uint64_t t0 = now_ns();     /* long enough (30 us) for the scanner to see */
    while (now_ns() - t0 < 30000)
        leaf();
}

__attribute__((noinline)) void on_sig(int sig)
{
    (void)sig;
    n_sig++;
    handler_work();
    if (n_sig % 3 == 0) {
        if (jumpable) {
            n_jumped++;
            siglongjmp(sjb, 1);
        }
        if (plain_jumpable) {
            n_jumped++;
            sigjump_plain();
        }
    }
}

__attribute__((noinline)) void sig_inst(void)
{
    if (sigsetjmp(sjb, 1) == 0) {
        jumpable = 1;
        spin_deep(12);
    }
    jumpable = 0;
}

__attribute__((noinline)) void chaos(void)
{
    for (int i = 0; i < 300; i++) {
        jump_inst();
        run_plain(deep_plain_cb);
        sig_inst();
        run_plain_sig(spin_cb);
        leaf();
    }
}

__attribute__((noinline)) void quiet(void)
{
    struct timespec ts = { 0, 30000000 };
    nanosleep(&ts, NULL);
}

int main(void)
{
    struct sigaction sa = { .sa_handler = on_sig };
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval it = { { 0, 200 }, { 0, 200 } };
    setitimer(ITIMER_REAL, &it, NULL);
    chaos();
    struct itimerval off = { { 0, 0 }, { 0, 0 } };
    setitimer(ITIMER_REAL, &off, NULL);

    uint64_t q0 = now_ns();
    quiet();
    uint64_t q1 = now_ns();
    struct timespec settle = { 0, 2000000 };   /* let the scanner see quiet end */
    nanosleep(&settle, NULL);
    struct vprof_latency_stats s;
    vprof_latency_stats(&s);
    printf("quiet_start %llu\nquiet_truth %llu\n", (unsigned long long)q0,
           (unsigned long long)(q1 - q0));
    printf("func quiet %lx\nfunc main %lx\nfunc on_sig %lx\n",
           (unsigned long)(uintptr_t)quiet, (unsigned long)(uintptr_t)main,
           (unsigned long)(uintptr_t)on_sig);
    printf("signals %d jumped %d\n", n_sig, n_jumped);
    printf("stats %llu %llu %llu %llu %llu\n", (unsigned long long)s.passes,
           (unsigned long long)s.walks, (unsigned long long)s.retries,
           (unsigned long long)s.invalid, (unsigned long long)s.safe_reads);
    return 0;
}
