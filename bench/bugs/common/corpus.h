/* Helpers shared by the bug-corpus programs: a fixed-seed PRNG (so every run
 * of a case is deterministic given its argv) and a tiny "--name=value" option
 * parser that rejects unknown options and malformed numbers with a clear
 * message, so a typo in case.conf fails loudly instead of silently running
 * the default workload. */
#ifndef CORPUS_H
#define CORPUS_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>

/* xorshift64*: tiny, fast, and identical on every platform. */
typedef struct { uint64_t s; } rng_t;

static inline void rng_seed(rng_t *r, uint64_t seed)
{
    r->s = seed ? seed : 0x9e3779b97f4a7c15ULL;
}

static inline uint64_t rng_next(rng_t *r)
{
    r->s ^= r->s >> 12;
    r->s ^= r->s << 25;
    r->s ^= r->s >> 27;
    return r->s * 2685821657736338717ULL;
}

static inline uint64_t rng_below(rng_t *r, uint64_t n)
{
    return n ? rng_next(r) % n : 0;
}

/* Options: every program passes the list of names it accepts; values are
 * "--name=value" or "--name value". */
typedef struct {
    const char *name;   /* without the leading "--" */
    const char *help;
    long        def;    /* default for numeric options */
    long        min, max;
    long        value;  /* filled by opts_parse */
} opt_t;

static inline void opts_usage(const char *prog, const opt_t *o, int n)
{
    fprintf(stderr, "usage: %s [options]\n", prog);
    for (int i = 0; i < n; i++)
        fprintf(stderr, "  --%-14s %s (default %ld, range %ld..%ld)\n",
                o[i].name, o[i].help, o[i].def, o[i].min, o[i].max);
}

static inline void opts_parse(int argc, char **argv, opt_t *o, int n)
{
    for (int i = 0; i < n; i++)
        o[i].value = o[i].def;
    for (int a = 1; a < argc; a++) {
        const char *arg = argv[a];
        if (strcmp(arg, "--help") == 0) {
            opts_usage(argv[0], o, n);
            exit(0);
        }
        if (strncmp(arg, "--", 2) != 0) {
            fprintf(stderr, "%s: unexpected argument '%s'\n", argv[0], arg);
            opts_usage(argv[0], o, n);
            exit(2);
        }
        const char *name = arg + 2, *eq = strchr(name, '=');
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        int k = -1;
        for (int i = 0; i < n; i++)
            if (strlen(o[i].name) == len && strncmp(o[i].name, name, len) == 0)
                k = i;
        if (k < 0) {
            fprintf(stderr, "%s: unknown option '%s'\n", argv[0], arg);
            opts_usage(argv[0], o, n);
            exit(2);
        }
        const char *val = eq ? eq + 1 : (a + 1 < argc ? argv[++a] : NULL);
        if (!val || !*val) {
            fprintf(stderr, "%s: option --%s needs a value\n", argv[0], o[k].name);
            exit(2);
        }
        char *end;
        errno = 0;
        long v = strtol(val, &end, 10);
        if (errno || *end || v < o[k].min || v > o[k].max) {
            fprintf(stderr, "%s: option --%s: '%s' is not an integer in %ld..%ld\n",
                    argv[0], o[k].name, val, o[k].min, o[k].max);
            exit(2);
        }
        o[k].value = v;
    }
}

/* Finds an option's value by name (the programs index by name for clarity). */
static inline long opt_get(const opt_t *o, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(o[i].name, name) == 0)
            return o[i].value;
    fprintf(stderr, "internal error: no option '%s'\n", name);
    exit(3);
}

#define NOPTS(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* COZ progress points: a case marks one unit of progress (a request, a
 * transaction) with CASE_PROGRESS("name") and lists the names in case.conf
 * (coz_progress). Only the COZ build of the bench runner defines
 * VPROF_CASE_COZ; every other build compiles the mark to nothing. */
#ifdef VPROF_CASE_COZ
#include <coz.h>
#define CASE_PROGRESS(name) COZ_PROGRESS_NAMED(name)
#else
#define CASE_PROGRESS(name) ((void)0)
#endif

#endif
