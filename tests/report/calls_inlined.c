/* Call counts that survive inlining (vprof-cc --calls, t_calls.sh): at
 * -O2 process_item() and want_detail() are inlined into main, so gmon has
 * no arc of theirs. The buggy run's verbosity makes want_detail() true and
 * process_item() formats every item. With a third argument `fork`, a child
 * process handles half as many items and writes its own counts. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static int verbosity;
static volatile double sink;
static char line[512];

static int want_detail(int level) { return verbosity >= level; }

__attribute__((noinline)) static void format_item(long i)
{
    int n = 0;
    for (int k = 0; k < 6; k++) n += snprintf(line + n, sizeof line - n, "[%ld:%d] ", i, k);
    sink += n;
}

static double score(long i)
{
    double s = 0;
    for (int k = 1; k < 100; k++) s += (double)(i % 97) / k;
    return s;
}

static double process_item(long i)
{
    double s = score(i);
    if (want_detail(2)) format_item(i);
    return s;
}

static void run(long n)
{
    double t = 0;
    for (long i = 0; i < n; i++) t += process_item(i);
    sink += t;
}

int main(int argc, char **argv)
{
    verbosity = argc > 1 ? atoi(argv[1]) : 1;
    long n = argc > 2 ? atol(argv[2]) : 200000;
    if (argc > 3) {                             /* fork: the child does half */
        pid_t p = fork();
        if (p == 0) { run(n / 2); return 0; }
        run(n);
        waitpid(p, NULL, 0);
        return 0;
    }
    run(n);
    return 0;
}
