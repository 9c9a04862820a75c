/* vprof's own threads must never be profiled. Run with VPROF_LATENCY=on
 * (so libvprof starts its scanner thread): the parent burns CPU, then
 * forks a child that only sleeps. Each process prints, for the scanner
 * thread (comm "vprof-scan"), its tid and blocked-signal mask, and every
 * POSIX timer of the process with the thread it signals:
 *   <who> scanner <tid> <SigBlk hex>
 *   <who> timer <tid>
 *   <who> self <tid>
 *   <who> perf <n>       (perf-event descriptors: one per profiled thread)
 * The test checks that no timer signals a scanner thread and that the
 * scanner keeps SIGPROF blocked, in the parent and in the child. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile long sink;

static double cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

__attribute__((noinline)) static void burn(double ms)
{
    double end = cpu_ms() + ms;
    while (cpu_ms() < end)
        for (int i = 0; i < 1000; i++)
            sink += i;
}

static void report(const char *who)
{
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char p[300], comm[64] = "", line[256];
        snprintf(p, sizeof p, "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(p, "r");
        if (!f)
            continue;
        if (fgets(comm, sizeof comm, f))
            comm[strcspn(comm, "\n")] = 0;
        fclose(f);
        if (strcmp(comm, "vprof-scan"))
            continue;
        snprintf(p, sizeof p, "/proc/self/task/%s/status", e->d_name);
        f = fopen(p, "r");
        while (f && fgets(line, sizeof line, f))
            if (!strncmp(line, "SigBlk:", 7))
                printf("%s scanner %s %s", who, e->d_name, line + 8);
        if (f)
            fclose(f);
    }
    if (d)
        closedir(d);
    FILE *f = fopen("/proc/self/timers", "r");
    char line[256];
    while (f && fgets(line, sizeof line, f)) {
        const char *t = strstr(line, "tid.");
        if (!strncmp(line, "notify:", 7) && t)
            printf("%s timer %ld\n", who, strtol(t + 4, NULL, 10));
    }
    if (f)
        fclose(f);
    int perf = 0;
    DIR *fds = opendir("/proc/self/fd");
    while (fds && (e = readdir(fds))) {
        char p[300], target[128];
        snprintf(p, sizeof p, "/proc/self/fd/%s", e->d_name);
        ssize_t n = readlink(p, target, sizeof target - 1);
        if (n > 0) {
            target[n] = 0;
            perf += strstr(target, "perf_event") != NULL;
        }
    }
    if (fds)
        closedir(fds);
    printf("%s perf %d\n", who, perf);
    printf("%s self %ld\n", who, (long)syscall(SYS_gettid));
    fflush(stdout);
}

int main(void)
{
    burn(200);
    report("parent");
    pid_t p = fork();
    if (p == 0) {
        struct timespec nap = {0, 400000000};
        nanosleep(&nap, NULL);      /* idle: the child's own thread takes no tick */
        report("child");
        return 0;
    }
    int st;
    if (p < 0 || waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st))
        return 1;
    burn(100);
    report("parent");
    return 0;
}
