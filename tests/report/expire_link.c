/* A removal and the re-creations it causes (t_count_links.sh, second part):
 * a session cache creates an entry (an expensive key derivation) when a
 * request's lookup misses, and a sweep every SWEEP_EVERY requests drops
 * the entries that entry_expired() calls idle. The buggy run's idle limit
 * (the argument) is so short that nearly every entry is dropped at each
 * sweep and derived again by its next request: the cost is the handler's
 * (its creations grow many-fold), the decision the sweep's predicate,
 * whose only trace is that the sweep frees two blocks per dropped entry:
 * every entry is dropped by the end, so the sweep calls free() exactly
 * twice as often as the handler creates, in both runs. The sweep shares
 * its caller (main's request loop) with the handler, which calls one
 * SWEEP_EVERY times as often: no loop's siblings.
 *
 * Usage: expire_link IDLE_LIMIT REQUESTS */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))
#define NKEYS 512
#define SLOTS 1024
#define SWEEP_EVERY 2048

struct session {
    struct session *next;
    unsigned key;
    long last_used;
    uint64_t *derived;          /* the expensive part: a derived key schedule */
};

struct cache {
    struct session *slot[SLOTS];
    long now, idle_limit;
    unsigned long created, dropped;
};

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33, x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33, x *= 0xc4ceb9fe1a85ec53ULL;
    return x ^ (x >> 33);
}

/* A key schedule: 64 words, each from 50 rounds of mixing. */
NOINLINE uint64_t *derive_schedule(unsigned key)
{
    uint64_t *s = malloc(64 * sizeof *s), x = key;
    if (!s) exit(1);
    for (int i = 0; i < 64; i++) {
        for (int r = 0; r < 50; r++) x = mix(x + (uint64_t)r);
        s[i] = x;
    }
    return s;
}

NOINLINE struct session *session_lookup(struct cache *c, unsigned key)
{
    for (struct session *s = c->slot[key % SLOTS]; s; s = s->next)
        if (s->key == key) return s;
    return NULL;
}

NOINLINE struct session *session_create(struct cache *c, unsigned key)
{
    struct session *s = calloc(1, sizeof *s);
    if (!s) exit(1);
    s->key = key;
    s->derived = derive_schedule(key);
    s->next = c->slot[key % SLOTS], c->slot[key % SLOTS] = s;
    c->created++;
    return s;
}

NOINLINE uint64_t handle_request(struct cache *c, unsigned key)
{
    struct session *s = session_lookup(c, key);
    if (!s) s = session_create(c, key);
    s->last_used = c->now;
    return s->derived[key % 64];
}

/* Idle for longer than the limit: the pure predicate that decides the
 * sweep's drops. */
NOINLINE int entry_expired(const struct session *s, long now, long limit)
{
    return now - s->last_used > limit;
}

NOINLINE void sweep(struct cache *c)
{
    for (int i = 0; i < SLOTS; i++)
        for (struct session **pp = &c->slot[i], *s; (s = *pp);) {
            if (!entry_expired(s, c->now, c->idle_limit)) {
                pp = &s->next;
                continue;
            }
            *pp = s->next;
            free(s->derived);
            free(s);
            c->dropped++;
        }
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s IDLE_LIMIT REQUESTS\n", argv[0]);
        return 2;
    }
    static struct cache c;
    c.idle_limit = atol(argv[1]);
    long requests = atol(argv[2]);
    uint64_t digest = 0, r = 1;
    for (c.now = 1; c.now <= requests; c.now++) {
        r = mix(r + (uint64_t)c.now);
        digest ^= handle_request(&c, (unsigned)(r % NKEYS));
        if (c.now % SWEEP_EVERY == 0) sweep(&c);
    }
    c.idle_limit = -1;              /* shut down: drop everything */
    sweep(&c);
    printf("%016llx created %lu dropped %lu\n", (unsigned long long)digest, c.created,
           c.dropped);
    return 0;
}
