/* callcount.c - call counters that survive inlining (callcount.h).
 *
 * The counters live in the instrumented modules; this file only remembers
 * where, and writes them at the end. Registration happens in constructors,
 * before any thread or signal of ours exists; writing happens in finish()
 * (runtime.c), possibly from a SIGTERM handler, through the format
 * module's write(2)-only text writer. */
#include "callcount.h"

#include <string.h>

#include "vprof_format.h"

/* One entry per instrumented translation unit (each object's constructor
 * registers its own counters): a large program has thousands. The table
 * is zero pages until used; a unit beyond it is not counted, and the end
 * of the run says how many (FORMATS.md §8). A library dlopen()ed while
 * other threads run registers concurrently with a fork or an exit: a slot
 * is claimed atomically and read only once its counters are published. */
enum { MAX_MODULES = VPROF_CALLS_MAX_UNITS };

static struct module { uint64_t *counts; uint64_t n; const char *names; } mods[MAX_MODULES];
static unsigned n_claimed;
static uint64_t n_unregistered;

void vprof_calls_register(uint64_t *counts, uint64_t n, const char *names)
{
    if (!counts || !names || !n)
        return;
    unsigned k = __atomic_fetch_add(&n_claimed, 1, __ATOMIC_RELAXED);
    if (k >= MAX_MODULES) {
        __atomic_fetch_add(&n_unregistered, 1, __ATOMIC_RELAXED);
        return;
    }
    mods[k].n = n;
    mods[k].names = names;
    __atomic_store_n(&mods[k].counts, counts, __ATOMIC_RELEASE);
}

/* The claimed slots, and each slot's counters once published (else NULL). */
static unsigned n_mods(void)
{
    unsigned n = __atomic_load_n(&n_claimed, __ATOMIC_ACQUIRE);
    return n < MAX_MODULES ? n : MAX_MODULES;
}

static uint64_t *published(unsigned m)
{
    return __atomic_load_n(&mods[m].counts, __ATOMIC_ACQUIRE);
}

int vprof_calls_any(void)
{
    return n_mods() > 0;
}

uint64_t vprof_calls_unregistered(void)
{
    return __atomic_load_n(&n_unregistered, __ATOMIC_RELAXED);
}

void vprof_calls_reset(void)
{
    for (unsigned m = 0, n = n_mods(); m < n; m++) {
        uint64_t *c = published(m);
        if (c) memset(c, 0, mods[m].n * sizeof *c);
    }
}

int vprof_calls_write(int fd)
{
    struct vpf_textw w;         /* no initializer: 8 KiB memset */
    vpf_tw_init(&w, fd);
    vpf_tw_put(&w, VPF_CALLS_MAGIC, sizeof VPF_CALLS_MAGIC - 1);
    for (unsigned m = 0, n = n_mods(); m < n; m++) {
        const uint64_t *counts = published(m);
        if (!counts) continue;
        const char *line = mods[m].names;
        for (uint64_t k = 0; k < mods[m].n && *line; k++) {
            const char *end = strchr(line, '\n');
            size_t len = end ? (size_t)(end - line) : strlen(line);
            /* racing increments are the program's plain stores: read once */
            uint64_t c = __atomic_load_n(&counts[k], __ATOMIC_RELAXED);
            if (c) {
                vpf_tw_put_u(&w, c);
                vpf_tw_put(&w, "\t", 1);
                vpf_tw_put(&w, line, len);
                vpf_tw_put(&w, "\n", 1);
            }
            line += len + (end != NULL);
        }
    }
    vpf_tw_flush(&w);
    return w.err ? -1 : 0;
}
