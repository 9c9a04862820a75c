/* More translation units' call counters than the runtime keeps
 * (t_calls.sh): each registration stands for one unit's constructor. The
 * first VPROF_CALLS_MAX_UNITS (16384) are written at exit; the rest are
 * counted and named in a warning. */
#include <stdint.h>
#include <stdio.h>

void vprof_calls_register(uint64_t *counts, uint64_t n, const char *names);

enum { UNITS = 16384 + 6 };
static uint64_t counts[UNITS];
static char names[UNITS][24];

int main(void)
{
    for (int i = 0; i < UNITS; i++) {
        snprintf(names[i], sizeof names[i], "u%d\tf\n", i);
        counts[i] = (uint64_t)i + 1;
        vprof_calls_register(&counts[i], 1, names[i]);
    }
    return 0;
}
