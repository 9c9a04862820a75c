/* callcount.c - call counters that survive inlining (callcount.h).
 *
 * The counters live in the instrumented modules; this file only remembers
 * where, and writes them at the end. Registration happens in constructors,
 * before any thread or signal of ours exists; writing happens in finish()
 * (runtime.c), possibly from a SIGTERM handler, so it formats by hand and
 * writes with write(2). */
#include "callcount.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

/* Modules are few (the executable and the instrumented libraries); one
 * beyond the table is not counted (FORMATS.md says so). */
enum { MAX_MODULES = 256 };

static struct module { uint64_t *counts; uint64_t n; const char *names; } mods[MAX_MODULES];
static unsigned n_mods;

void vprof_calls_register(uint64_t *counts, uint64_t n, const char *names)
{
    if (!counts || !names || !n || n_mods >= MAX_MODULES)
        return;
    mods[n_mods++] = (struct module){counts, n, names};
}

int vprof_calls_any(void)
{
    return n_mods > 0;
}

void vprof_calls_reset(void)
{
    for (unsigned m = 0; m < n_mods; m++)
        memset(mods[m].counts, 0, mods[m].n * sizeof *mods[m].counts);
}

struct out { int fd, err; size_t used; char buf[4096]; };

static void flush_out(struct out *o)
{
    size_t off = 0;
    while (off < o->used && !o->err) {
        ssize_t w = write(o->fd, o->buf + off, o->used - off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) o->err = 1; else off += (size_t)w;
    }
    o->used = 0;
}

static void put(struct out *o, const char *s, size_t n)
{
    while (n) {
        if (o->used == sizeof o->buf) flush_out(o);
        size_t k = sizeof o->buf - o->used < n ? sizeof o->buf - o->used : n;
        memcpy(o->buf + o->used, s, k);
        o->used += k;
        s += k;
        n -= k;
    }
}

static void put_u64(struct out *o, uint64_t v)
{
    char d[20];
    size_t n = 0;
    do d[n++] = (char)('0' + v % 10); while ((v /= 10));
    char r[20];
    for (size_t i = 0; i < n; i++) r[i] = d[n - 1 - i];
    put(o, r, n);
}

int vprof_calls_write(int fd)
{
    struct out o = {.fd = fd};
    put(&o, "vprof-calls 1\n", 14);
    for (unsigned m = 0; m < n_mods; m++) {
        const char *line = mods[m].names;
        for (uint64_t k = 0; k < mods[m].n && *line; k++) {
            const char *end = strchr(line, '\n');
            size_t len = end ? (size_t)(end - line) : strlen(line);
            /* a racing increment may be torn on no x86-64 store, but read once */
            uint64_t c = __atomic_load_n(&mods[m].counts[k], __ATOMIC_RELAXED);
            if (c) {
                put_u64(&o, c);
                put(&o, "\t", 1);
                put(&o, line, len);
                put(&o, "\n", 1);
            }
            line += len + (end != NULL);
        }
    }
    flush_out(&o);
    return o.err ? -1 : 0;
}
