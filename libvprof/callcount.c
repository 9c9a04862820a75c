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

int vprof_calls_write(int fd)
{
    struct vpf_textw w;         /* no initializer: 8 KiB memset */
    vpf_tw_init(&w, fd);
    vpf_tw_put(&w, VPF_CALLS_MAGIC, sizeof VPF_CALLS_MAGIC - 1);
    for (unsigned m = 0; m < n_mods; m++) {
        const char *line = mods[m].names;
        for (uint64_t k = 0; k < mods[m].n && *line; k++) {
            const char *end = strchr(line, '\n');
            size_t len = end ? (size_t)(end - line) : strlen(line);
            /* racing increments are the program's plain stores: read once */
            uint64_t c = __atomic_load_n(&mods[m].counts[k], __ATOMIC_RELAXED);
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
