/* callcount.h - the call counters of vprof-cc --calls (schema-gen/pass/
 * CallCounts.cpp): each instrumented module registers its counters and
 * their "caller\tcallee\n" names at start-up; the runtime writes them as
 * calls.<id> (FORMATS.md §9) when the process ends. */
#ifndef VPROF_CALLCOUNT_H
#define VPROF_CALLCOUNT_H

#include <stdint.h>

/* Called by each module's constructor (exported). */
void vprof_calls_register(uint64_t *counts, uint64_t n, const char *names);

/* Whether any module registered counters. */
int vprof_calls_any(void);

/* Writes every nonzero counter to fd (async-signal-safe). 0 or -1. */
int vprof_calls_write(int fd);

/* Zeroes the counters (a fork child counts its own calls). */
void vprof_calls_reset(void);

#endif
