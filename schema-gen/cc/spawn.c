/* spawn.c - see spawn.h. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "spawn.h"

void cc_trace(char *const argv[])
{
    const char *v = getenv("VPROF_CC_VERBOSE");
    if (!v || !*v || !strcmp(v, "0"))
        return;
    fputs("vprof-cc:", stderr);
    for (int i = 0; argv[i]; i++)
        fprintf(stderr, " %s", argv[i]);
    fputc('\n', stderr);
}

int cc_run(char *const argv[])
{
    cc_trace(argv);
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "vprof-cc: cannot start %s: %s\n", argv[0], strerror(errno));
        return 127;
    }
    if (pid == 0) {
        execvp(argv[0], argv);
        fprintf(stderr, "vprof-cc: cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0) {
        if (errno != EINTR) {
            fprintf(stderr, "vprof-cc: waiting for %s: %s\n", argv[0], strerror(errno));
            return 127;
        }
    }
    if (WIFEXITED(st))
        return WEXITSTATUS(st);
    if (WIFSIGNALED(st))
        return 128 + WTERMSIG(st);
    return 127;
}
