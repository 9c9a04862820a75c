/* vprof_xalloc.h - the allocation policy of vprof's offline tools
 * (vprof-report, vprof-meta, test and bench helpers): an allocation that
 * fails ends the tool with "<tool>: out of memory" and exit status 1, like
 * redis' zmalloc and uftrace's xmalloc. A tool has nothing sensible left to
 * do then, and checking every allocation by hand is where checks go missing.
 *
 * Not for the runtime: libvprof never exits the program it profiles (it
 * gives up on what it was doing instead), so these live in
 * libvprof/format/offline/, which libvprof.so does not contain. */
#ifndef VPROF_XALLOC_H
#define VPROF_XALLOC_H
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

void *vpf_xmalloc(size_t n);
void *vpf_xcalloc(size_t n, size_t size);
/* realloc of n elements of size bytes; the product is checked for overflow */
void *vpf_xrealloc(void *p, size_t n, size_t size);
char *vpf_xstrdup(const char *s);            /* NULL gives "" */
char *vpf_xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Room for at least need elements of elem bytes in p, whose capacity is
 * *cap: the capacity at least doubles (first 16), so filling an array one
 * element at a time costs amortised O(1) per element. Returns the (maybe
 * moved) array; new elements are not initialised. Typical use:
 *     if (n == cap) v = vpf_grow(v, &cap, n + 1, sizeof *v);  */
void *vpf_grow(void *p, size_t *cap, size_t need, size_t elem);

/* Prints "<tool>: out of memory" and exits 1. */
_Noreturn void vpf_oom(void);

#ifdef __cplusplus
}
#endif
#endif
