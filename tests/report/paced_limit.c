/* A limit that does not keep pace with the work it paces (t_limits.sh).
 *
 * A key-value store appends to a log and compacts it when the bytes
 * written since the last compaction reach a limit: compaction walks every
 * live key, so the limit should grow with the keys (amortised: a constant
 * cost per byte written). compaction_limit() sizes it from the segment
 * count, which stays the same whatever the number of keys, so a store with
 * 15 times the keys compacts as often and each compaction walks 15 times
 * further. With mode 1 it sizes the limit from the live bytes instead: the
 * limit keeps pace and compaction runs less often.
 *
 * Usage: paced_limit KEYS MODE (MODE 0: by segments, 1: by live bytes) */
#include <stdio.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))
#define MIN_LIMIT 4096

struct store {
    unsigned long *keys;
    size_t nkeys, nsegments;
    size_t since_compact;       /* bytes appended since the last compaction */
    size_t limit;               /* compaction runs when since_compact reaches it */
    size_t compactions;
    int by_bytes;
};

static volatile unsigned long sink;

NOINLINE size_t compaction_limit(const struct store *s)
{
    size_t want = s->by_bytes ? s->nkeys * 16 : s->nsegments * 64;
    return want > MIN_LIMIT ? want : MIN_LIMIT;
}

/* Rewrites every live key: its cost is the store's size. */
NOINLINE void compact(struct store *s)
{
    unsigned long h = 0;
    for (size_t i = 0; i < s->nkeys; i++) {
        s->keys[i] = s->keys[i] * 2654435761u + 1;
        h ^= s->keys[i] >> 7;
    }
    sink = h;
    s->compactions++;
    s->limit = compaction_limit(s);
    s->since_compact = 0;
}

NOINLINE void append(struct store *s, size_t key, size_t bytes)
{
    s->keys[key % s->nkeys] ^= bytes;
    s->since_compact += bytes;
}

/* Between writes: the store compacts when enough was written. */
NOINLINE void maybe_compact(struct store *s)
{
    if (s->since_compact >= s->limit)
        compact(s);
}

NOINLINE void serve(struct store *s, size_t writes)
{
    for (size_t w = 0; w < writes; w++) {
        append(s, w * 7919, 24 + w % 40);
        maybe_compact(s);
    }
}

int main(int argc, char **argv)
{
    struct store s = {0};
    s.nkeys = argc > 1 ? strtoul(argv[1], NULL, 10) : 2000;
    s.by_bytes = argc > 2 ? atoi(argv[2]) : 0;
    s.nsegments = 8;
    if (!s.nkeys || !(s.keys = calloc(s.nkeys, sizeof *s.keys))) return 1;
    for (size_t i = 0; i < s.nkeys; i++) s.keys[i] = i;
    s.limit = compaction_limit(&s);
    serve(&s, 1500000);
    printf("%zu compactions\n", s.compactions);
    free(s.keys);
    return 0;
}
