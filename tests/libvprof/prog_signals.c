/* A program with its own SIGPROF use, run under vprof: it installs a
 * handler, drives it with setitimer(ITIMER_PROF), blocks SIGPROF for a
 * while and checks that the mask it reads back says so, that a SIGPROF sent
 * while blocked is delivered once it unblocks, and that SIG_IGN works.
 * Exit status 0 only if everything behaved as without a profiler. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t hits, saw_itimer;
static volatile long sink;

static void on_prof(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    if (sig == SIGPROF)
        hits++;
    if (si->si_code == SI_KERNEL)
        saw_itimer = 1;
}

static double cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void burn(double ms)
{
    double end = cpu_ms() + ms;
    while (cpu_ms() < end)
        for (int i = 0; i < 1000; i++)
            sink += i;
}

#define FAIL(...) do { printf("FAIL: " __VA_ARGS__); printf("\n"); return 1; } while (0)

int main(void)
{
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_prof;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    if (sigaction(SIGPROF, &sa, NULL))
        FAIL("sigaction");
    if (sigaction(SIGPROF, NULL, &old) || old.sa_sigaction != on_prof)
        FAIL("sigaction does not report the program's own handler");

    struct itimerval it = {{0, 10000}, {0, 10000}};   /* 100 Hz of CPU */
    setitimer(ITIMER_PROF, &it, NULL);
    burn(150);
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_PROF, &off, NULL);
    if (hits < 3 || !saw_itimer)
        FAIL("program's ITIMER_PROF handler ran %d times", (int)hits);

    sigset_t s, cur;
    sigemptyset(&s);
    sigaddset(&s, SIGPROF);
    sigprocmask(SIG_BLOCK, &s, NULL);
    sigprocmask(SIG_BLOCK, NULL, &cur);
    if (!sigismember(&cur, SIGPROF))
        FAIL("blocked SIGPROF not shown as blocked");
    int before = hits;
    kill(getpid(), SIGPROF);
    burn(50);
    if (hits != before)
        FAIL("SIGPROF delivered while the program blocked it");
    sigprocmask(SIG_UNBLOCK, &s, NULL);
    if (hits != before + 1)
        FAIL("held SIGPROF not delivered on unblock (%d -> %d)", before, (int)hits);

    signal(SIGPROF, SIG_IGN);
    kill(getpid(), SIGPROF);
    burn(50);
    if (signal(SIGPROF, SIG_DFL) != SIG_IGN)
        FAIL("signal() does not report SIG_IGN back");
    printf("ok hits=%d\n", (int)hits);
    return 0;
}
