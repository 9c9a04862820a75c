/* callcount.h - the call counters of vprof-cc (schema-gen/pass/
 * CallCounts.cpp): each instrumented translation unit registers its counters and
 * their "caller\tcallee\n" names at start-up; the runtime writes them as
 * calls.<id> (FORMATS.md §8) when the process ends. */
#ifndef VPROF_CALLCOUNT_H
#define VPROF_CALLCOUNT_H

#include <stdint.h>

/* Translation units whose counters are kept; more are not counted. */
#define VPROF_CALLS_MAX_UNITS 16384

/* Called by each module's constructor (exported). */
void vprof_calls_register(uint64_t *counts, uint64_t n, const char *names);

/* Whether any module registered counters. */
int vprof_calls_any(void);

/* How many modules found the table full (not counted). */
uint64_t vprof_calls_unregistered(void);

/* Writes every nonzero counter to fd (async-signal-safe). 0 or -1. */
int vprof_calls_write(int fd);

/* Zeroes the counters (a fork child counts its own calls). */
void vprof_calls_reset(void);

#endif
