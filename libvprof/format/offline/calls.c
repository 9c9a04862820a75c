/* calls.c - the reader of calls.<id> (FORMATS.md §9): the call counts of
 * vprof-cc --calls, one "count\tcaller\tcallee" line per call pair. The
 * only reader (vprof_format.h, vpf_calls_load); the runtime's writer is
 * libvprof/callcount.c. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vprof_format.h"
#include "vprof_xalloc.h"

static int bad(vpf_err *e, const char *path, size_t line, const char *what)
{
    vpf_set_err(e, "%s:%zu: %s", path, line, what);
    return -1;
}

int vpf_calls_load(const char *path, struct vpf_calls *c, vpf_err *e)
{
    memset(c, 0, sizeof *c);
    size_t len;
    char *text = vpf_read_file(path, &len, e);
    if (!text)
        return -1;
    c->text = text;
    static const char magic[] = VPF_CALLS_MAGIC;
    if (len < sizeof magic - 1 || memcmp(text, magic, sizeof magic - 1)) {
        vpf_calls_free(c);
        return bad(e, path, 1, "not a calls file (expected \"vprof-calls 1\")");
    }
    size_t cap = 0, lineno = 1;
    char *p = text + sizeof magic - 1, *end = text + len;
    while (p < end) {
        lineno++;
        char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl) {
            vpf_calls_free(c);
            return bad(e, path, lineno, "last line not terminated (file cut short?)");
        }
        *nl = 0;
        char *t1 = strchr(p, '\t'), *t2 = t1 ? strchr(t1 + 1, '\t') : NULL;
        char *num_end;
        errno = 0;
        unsigned long long n = t1 ? strtoull(p, &num_end, 10) : 0;
        if (!t1 || !t2 || num_end != t1 || errno || p == t1 || *p == '-' || t1 + 1 == t2 ||
            !t2[1] || strchr(t2 + 1, '\t')) {
            vpf_calls_free(c);
            return bad(e, path, lineno, "expected \"count<TAB>caller<TAB>callee\"");
        }
        *t1 = *t2 = 0;
        c->pairs = vpf_grow(c->pairs, &cap, c->n + 1, sizeof *c->pairs);
        c->pairs[c->n++] = (struct vpf_call_pair){(uint64_t)n, t1 + 1, t2 + 1};
        p = nl + 1;
    }
    return 0;
}

void vpf_calls_free(struct vpf_calls *c)
{
    free(c->pairs);
    free(c->text);
    memset(c, 0, sizeof *c);
}
