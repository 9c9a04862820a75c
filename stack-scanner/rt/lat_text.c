/* lat_text.c - the scanner's view of /proc/self/maps: one reader
 * (vl_maps_each) for the scanner's two questions, and the check that a
 * record's function and return address point into executable mappings: a
 * record whose canary survived but whose other fields were overwritten
 * (stack reuse after an unusual exit) is then rejected instead of reported.
 * Scanner thread only. The table is read with read(2), no stdio (the
 * scanner may be running while the program forks or exits), and re-read on
 * a miss (at most every 50 ms) so that libraries loaded later are found. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lat_rt.h"

#define VL_MAX_TEXT 512

static struct { uintptr_t lo, hi; } text[VL_MAX_TEXT];
static int n_text;
static uint64_t loaded_ns;

VL_HIDDEN void vl_maps_each(int (*fn)(uintptr_t lo, uintptr_t hi, int exec, void *ctx), void *ctx)
{
    int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    char buf[4096];
    size_t have = 0;
    for (;;) {
        ssize_t n = read(fd, buf + have, sizeof buf - 1 - have);
        if (n <= 0)
            break;
        have += (size_t)n;
        buf[have] = 0;
        char *line = buf, *nl;
        while ((nl = strchr(line, '\n'))) {
            char *e;
            uintptr_t lo = strtoull(line, &e, 16), hi = 0;
            if (*e == '-')
                hi = strtoull(e + 1, &e, 16);
            /* "lo-hi rwxp ...": the third permission letter */
            int exec = e + 4 < nl && e[0] == ' ' && e[3] == 'x';
            if (fn(lo, hi, exec, ctx))
                goto out;
            line = nl + 1;
        }
        have = (size_t)(buf + have - line);
        memmove(buf, line, have);
        if (have == sizeof buf - 1)
            have = 0;               /* absurd line: skip it */
    }
out:
    close(fd);
}

static int add_text(uintptr_t lo, uintptr_t hi, int exec, void *ctx)
{
    (void)ctx;
    if (exec && n_text < VL_MAX_TEXT) {
        text[n_text].lo = lo;
        text[n_text].hi = hi;
        n_text++;
    }
    return 0;
}

static void load(void)
{
    n_text = 0;
    vl_maps_each(add_text, NULL);
    loaded_ns = vl_now();
}

static int lookup(uintptr_t a)
{
    int lo = 0, hi = n_text - 1;          /* /proc/self/maps is sorted */
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (a < text[mid].lo)
            hi = mid - 1;
        else if (a >= text[mid].hi)
            lo = mid + 1;
        else
            return 1;
    }
    return 0;
}

VL_HIDDEN int vl_text_ok(uintptr_t a)
{
    if (lookup(a))
        return 1;
    if (vl_now() - loaded_ns < 50000000u)
        return 0;
    load();
    return lookup(a);
}
