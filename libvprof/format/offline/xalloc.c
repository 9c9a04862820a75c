/* xalloc.c - checked allocation for the offline tools (vprof_xalloc.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vprof_xalloc.h"

_Noreturn void vpf_oom(void)
{
    /* no stdio buffers: they may need memory themselves */
    const char *tool = program_invocation_short_name;
    static const char msg[] = ": out of memory\n";
    if (write(2, tool, strlen(tool)) < 0 || write(2, msg, sizeof msg - 1) < 0) {
        /* nothing left to report it with */
    }
    exit(1);
}

void *vpf_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) vpf_oom();
    return p;
}

void *vpf_xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p) vpf_oom();
    return p;
}

void *vpf_xrealloc(void *p, size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size) vpf_oom();
    size_t bytes = n * size;
    void *q = realloc(p, bytes ? bytes : 1);
    if (!q) vpf_oom();
    return q;
}

char *vpf_xstrdup(const char *s)
{
    char *d = strdup(s ? s : "");
    if (!d) vpf_oom();
    return d;
}

char *vpf_xasprintf(const char *fmt, ...)
{
    va_list ap;
    char *s;
    va_start(ap, fmt);
    int n = vasprintf(&s, fmt, ap);
    va_end(ap);
    if (n < 0) vpf_oom();
    return s;
}

void *vpf_grow(void *p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap && p) return p;
    size_t c = *cap ? *cap : 16;
    while (c < need) {
        if (c > SIZE_MAX / 2) vpf_oom();
        c *= 2;
    }
    p = vpf_xrealloc(p, c, elem);
    *cap = c;
    return p;
}
