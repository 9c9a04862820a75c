/* locate.c - see locate.h. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "locate.h"

static int join(char *dst, size_t len, const char *dir, const char *name)
{
    int n = snprintf(dst, len, "%s/%s", dir, name);
    return n < 0 || (size_t)n >= len ? -1 : 0;
}

int cc_locate(struct cc_paths *p)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n < 0) {
        fprintf(stderr, "vprof-cc: cannot find its own executable (/proc/self/exe): %s\n",
                strerror(errno));
        return -1;
    }
    exe[n] = 0;
    char *slash = strrchr(exe, '/');
    if (!slash)
        return -1;
    *slash = 0;
    snprintf(p->bindir, sizeof p->bindir, "%s", exe);
    char up[sizeof p->libdir];
    if (snprintf(up, sizeof up, "%.4000s/../lib", exe) < 0)
        return -1;
    if (!realpath(up, p->libdir))   /* missing lib dir: keep the plain path */
        snprintf(p->libdir, sizeof p->libdir, "%s", up);
    if (join(p->plugin, sizeof p->plugin, p->libdir, "vprof-schema.so") < 0 ||
        join(p->latency_plugin, sizeof p->latency_plugin, p->libdir, "vprof-latency.so") < 0 ||
        join(p->runtime, sizeof p->runtime, p->libdir, "libvprof.so") < 0 ||
        join(p->meta, sizeof p->meta, p->bindir, "vprof-meta") < 0) {
        fprintf(stderr, "vprof-cc: installation path too long: %s\n", p->bindir);
        return -1;
    }
    return 0;
}
