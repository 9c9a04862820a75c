/* failmalloc.c - LD_PRELOAD shim for tests/report/t_oom.sh: from the
 * FAILMALLOC_AT-th allocation on (malloc, calloc, realloc, strdup) that the
 * main program's own code makes, every one fails with ENOMEM, as when memory
 * runs out for good. Allocations inside shared libraries (libc's stdio,
 * libelf, libdwarf, GSL) are left alone: their behaviour under memory
 * exhaustion is theirs, what is tested is the tools' policy
 * (libvprof/format/vprof_xalloc.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <link.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
extern void *__libc_malloc(size_t), *__libc_calloc(size_t, size_t), *__libc_realloc(void *, size_t);
static long at = -1, count;
static uintptr_t lo, hi;
static int first_object(struct dl_phdr_info *i, size_t size, void *data)
{
    (void)size; (void)data;
    for (int k = 0; k < i->dlpi_phnum; k++)
        if (i->dlpi_phdr[k].p_type == PT_LOAD && (i->dlpi_phdr[k].p_flags & PF_X)) {
            lo = i->dlpi_addr + i->dlpi_phdr[k].p_vaddr;
            hi = lo + i->dlpi_phdr[k].p_memsz;
        }
    return 1;
}
static int fail(const void *caller)
{
    if (at < 0) {
        const char *s = getenv("FAILMALLOC_AT");
        at = s ? atol(s) : 0;
        dl_iterate_phdr(first_object, NULL);
    }
    if (at <= 0 || (uintptr_t)caller < lo || (uintptr_t)caller >= hi) return 0;
    if (++count < at) return 0;
    errno = ENOMEM;
    return 1;
}
#define CALLER __builtin_return_address(0)
void *malloc(size_t n) { return fail(CALLER) ? NULL : __libc_malloc(n); }
void *calloc(size_t n, size_t s) { return fail(CALLER) ? NULL : __libc_calloc(n, s); }
void *realloc(void *p, size_t n) { return fail(CALLER) ? NULL : __libc_realloc(p, n); }
char *strdup(const char *s)
{
    if (fail(CALLER)) return NULL;
    size_t n = strlen(s) + 1;
    char *d = __libc_malloc(n);
    return d ? memcpy(d, s, n) : NULL;
}
