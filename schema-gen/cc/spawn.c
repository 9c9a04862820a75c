/* spawn.c - see spawn.h. */
#include <errno.h>
#include <fcntl.h>
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

char *cc_capture(char *const argv[], size_t max)
{
    int fd[2];
    if (pipe(fd) < 0)
        return NULL;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(fd[0]);
        close(fd[1]);
        return NULL;
    }
    if (pid == 0) {
        int null = open("/dev/null", O_RDWR);
        if (null >= 0) {
            dup2(null, 0);
            dup2(null, 2);
        }
        dup2(fd[1], 1);
        close(fd[0]);
        close(fd[1]);
        execvp(argv[0], argv);
        _exit(127);
    }
    close(fd[1]);
    char *buf = malloc(max + 1);
    size_t len = 0;
    for (;;) {
        char chunk[4096];
        ssize_t n = read(fd[0], chunk, sizeof chunk);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        /* keep draining past max so the child never blocks on a full pipe */
        size_t take = buf && len < max ? ((size_t)n < max - len ? (size_t)n : max - len) : 0;
        if (take)
            memcpy(buf + len, chunk, take);
        len += take;
    }
    close(fd[0]);
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) {
            free(buf);
            return NULL;
        }
    if (!buf || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        free(buf);
        return NULL;
    }
    buf[len] = 0;
    return buf;
}
