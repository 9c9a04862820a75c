/* progress.c - "CU n%" on stderr, only on a terminal and only once the run
 * has taken more than a second (short runs stay silent). */
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include "meta.h"

static struct { int tty, shown; double t0, last; const char *what; } P;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

void progress_start(const char *what)
{
    P.tty = isatty(2);
    P.shown = 0;
    P.t0 = P.last = now();
    P.what = what;
}

void progress_update(uint64_t done, uint64_t total)
{
    if (!P.tty || !total)
        return;
    double t = now();
    if (t - P.t0 < 1.0 || t - P.last < 0.2)
        return;
    P.last = t;
    P.shown = 1;
    unsigned pct = done >= total ? 100 : (unsigned)(done * 100 / total);
    fprintf(stderr, "\rvprof-meta: %s %3u%%", P.what, pct);
    fflush(stderr);
}

void progress_end(void)
{
    if (P.shown)
        fprintf(stderr, "\rvprof-meta: %s done in %.1f s\n", P.what,
                now() - P.t0);
    P.shown = 0;
}
