/* Written for the vprof bug corpus by a helper that had not seen the corpus
 * (2026-11-28); not modelled on a real issue. The fix is the VPROF_CASE_FIX
 * variant; the line marked FIX is the bug. */
/*
 * retrybackoff - discrete-event simulation of a fleet of API clients talking
 * to a rate-limited service.  Each client issues a fixed number of write
 * operations; the service admits requests through a token bucket and answers
 * 429 (with a Retry-After hint) or 503 when it cannot.  Clients retry with
 * capped exponential backoff plus jitter.
 *
 * The simulation is in virtual milliseconds; the CPU cost comes from building
 * and checksumming request bodies on the client and validating them on the
 * server, exactly as a load-test harness would do.
 *
 * usage: retrybackoff [--clients N] [--ops N] [--rate R] [--burst B]
 *                     [--base-ms N] [--max-ms N] [--attempts N]
 *                     [--fail-pct P] [--seed S]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BODY_MAX 1024

enum status { ST_OK = 200, ST_THROTTLED = 429, ST_UNAVAILABLE = 503,
              ST_BAD_REQUEST = 400 };

struct rng { uint64_t s; };

static uint64_t rng_next(struct rng *r)
{
    r->s += 0x9E3779B97F4A7C15ULL;
    uint64_t z = r->s;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static uint32_t rng_below(struct rng *r, uint32_t n)
{
    return (uint32_t)((rng_next(r) >> 33) % n);
}

/* ------------------------------------------------------------------ */

struct retry_policy {
    long base_ms;
    long max_ms;
    int max_attempts;
};

struct sim_config {
    int clients;
    int ops_per_client;
    double rate_per_ms;     /* server token refill rate */
    double burst;           /* token bucket depth */
    int fail_pct;           /* random 503s */
    uint64_t seed;
    struct retry_policy policy;
};

struct server {
    double tokens;
    long last_refill_ms;
    struct rng rng;
    uint64_t accepted, throttled, failed;
    uint64_t digest;
};

struct client {
    int id;
    int ops_done;
    int attempt;
    long op_started_ms;
    long wake_ms;
    uint32_t seq;
    struct rng rng;
};

struct attempt_result {
    enum status status;
    long retry_after_ms;
};

struct stats {
    uint64_t attempts, successes, gave_up;
    long total_latency_ms, max_latency_ms;
};

/* ------------------------------------------------------------------ */
/* CRC-32 used as the request-body integrity check                    */

static uint32_t crc_table[256];

static void crc32_init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        crc_table[i] = c;
    }
}

static uint32_t crc32_buf(const char *p, size_t n)
{
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++)
        c = crc_table[(c ^ (unsigned char)p[i]) & 0xFF] ^ (c >> 8);
    return c ^ 0xFFFFFFFFu;
}

/* ------------------------------------------------------------------ */
/* client side                                                          */

static size_t build_request(char *body, const struct client *c, long now)
{
    size_t n = (size_t)snprintf(body, BODY_MAX,
        "{\"client\":%d,\"op\":%d,\"seq\":%u,\"attempt\":%d,\"ts\":%ld,\"items\":[",
        c->id, c->ops_done, c->seq, c->attempt, now);
    for (int i = 0; i < 24 && n < BODY_MAX - 48; i++)
        n += (size_t)snprintf(body + n, BODY_MAX - n, "%s{\"k\":%d,\"v\":%u}",
                              i ? "," : "", i, (c->seq * 2654435761u) ^ (uint32_t)i);
    n += (size_t)snprintf(body + n, BODY_MAX - n, "]}");
    return n;
}

static int is_retryable(enum status st)
{
    return st == ST_THROTTLED || st == ST_UNAVAILABLE;
}

/*
 * Decide how long to wait before the next attempt, or -1 to give up.
 * Exponential backoff from base_ms, capped at max_ms, full jitter on the
 * upper half.  A Retry-After from the server takes precedence when it asks
 * for a longer pause than our own schedule.
 */
static long next_retry_delay(const struct retry_policy *p,
                             const struct attempt_result *r, int attempt,
                             struct rng *rng)
{
    if (!is_retryable(r->status) || attempt >= p->max_attempts)
        return -1;

    int shift = attempt < 20 ? attempt : 20;
    long delay = p->base_ms << shift;
    if (delay > p->max_ms)
        delay = p->max_ms;
    long half = delay / 2;
    delay = half + (half > 0 ? (long)rng_below(rng, (uint32_t)half + 1) : 0);

#ifdef VPROF_CASE_FIX
    if (r->retry_after_ms > 0 && r->retry_after_ms > delay)
#else
    if (r->retry_after_ms > 0 && r->retry_after_ms < delay) /* FIX: let Retry-After override only when it asks for a LONGER pause (>) */
#endif
        delay = r->retry_after_ms;
    return delay;
}

/* ------------------------------------------------------------------ */
/* server side                                                          */

static void server_refill(struct server *s, const struct sim_config *cfg, long now)
{
    if (now > s->last_refill_ms) {
        s->tokens += (double)(now - s->last_refill_ms) * cfg->rate_per_ms;
        if (s->tokens > cfg->burst)
            s->tokens = cfg->burst;
        s->last_refill_ms = now;
    }
}

static int validate_body(const char *body, size_t n, uint32_t crc)
{
    if (n < 2 || body[0] != '{' || body[n - 1] != '}')
        return 0;
    int depth = 0;
    for (size_t i = 0; i < n; i++) {
        if (body[i] == '{' || body[i] == '[') depth++;
        else if (body[i] == '}' || body[i] == ']') depth--;
        if (depth < 0)
            return 0;
    }
    return depth == 0 && crc32_buf(body, n) == crc;
}

static struct attempt_result server_handle(struct server *s,
                                           const struct sim_config *cfg,
                                           const char *body, size_t n,
                                           uint32_t crc, long now)
{
    struct attempt_result r = { ST_OK, 0 };
    /* authentication covers the whole body even for rejected requests */
    s->digest ^= crc32_buf(body, n);

    server_refill(s, cfg, now);
    if (s->tokens < 1.0) {
        s->throttled++;
        r.status = ST_THROTTLED;
        double deficit = 1.0 - s->tokens;
        r.retry_after_ms = (long)(deficit / cfg->rate_per_ms) + 1;
        return r;
    }
    s->tokens -= 1.0;
    if ((int)rng_below(&s->rng, 100) < cfg->fail_pct) {
        s->failed++;
        r.status = ST_UNAVAILABLE;
        return r;
    }
    if (!validate_body(body, n, crc)) {
        r.status = ST_BAD_REQUEST;
        return r;
    }
    s->accepted++;
    s->digest = s->digest * 1099511628211ULL + crc;
    return r;
}

/* ------------------------------------------------------------------ */
/* event loop: a binary min-heap of clients keyed by wake time          */

struct heap { struct client **a; int n; };

static void heap_push(struct heap *h, struct client *c)
{
    int i = h->n++;
    while (i > 0) {
        int p = (i - 1) / 2;
        if (h->a[p]->wake_ms <= c->wake_ms)
            break;
        h->a[i] = h->a[p];
        i = p;
    }
    h->a[i] = c;
}

static struct client *heap_pop(struct heap *h)
{
    struct client *top = h->a[0];
    struct client *last = h->a[--h->n];
    int i = 0;
    for (;;) {
        int l = 2 * i + 1, m = i;
        if (l < h->n && h->a[l]->wake_ms < last->wake_ms) m = l;
        if (l + 1 < h->n && h->a[l + 1]->wake_ms <
            (m == i ? last->wake_ms : h->a[m]->wake_ms)) m = l + 1;
        if (m == i)
            break;
        h->a[i] = h->a[m];
        i = m;
    }
    if (h->n > 0)
        h->a[i] = last;
    return top;
}

static void finish_op(struct client *c, struct stats *st, long now, int ok)
{
    long lat = now - c->op_started_ms;
    if (ok) st->successes++; else st->gave_up++;
    st->total_latency_ms += lat;
    if (lat > st->max_latency_ms)
        st->max_latency_ms = lat;
    c->ops_done++;
    c->attempt = 0;
    c->seq++;
}

static long run_simulation(const struct sim_config *cfg, struct stats *st,
                           struct server *srv)
{
    struct client *clients = calloc((size_t)cfg->clients, sizeof(*clients));
    struct heap h = { malloc((size_t)cfg->clients * sizeof(struct client *)), 0 };
    struct rng seeder = { cfg->seed };
    char body[BODY_MAX];
    long now = 0;

    for (int i = 0; i < cfg->clients; i++) {
        clients[i].id = i;
        clients[i].rng.s = rng_next(&seeder);
        clients[i].wake_ms = rng_below(&seeder, 50);
        clients[i].op_started_ms = clients[i].wake_ms;
        heap_push(&h, &clients[i]);
    }
    while (h.n > 0) {
        struct client *c = heap_pop(&h);
        now = c->wake_ms;
        size_t n = build_request(body, c, now);
        uint32_t crc = crc32_buf(body, n);
        st->attempts++;
        c->attempt++;
        struct attempt_result r = server_handle(srv, cfg, body, n, crc, now);
        if (r.status == ST_OK) {
            finish_op(c, st, now, 1);
            c->wake_ms = now + 1 + rng_below(&c->rng, 20);   /* think time */
            c->op_started_ms = c->wake_ms;
        } else {
            long delay = next_retry_delay(&cfg->policy, &r, c->attempt, &c->rng);
            if (delay < 0) {
                finish_op(c, st, now, 0);
                c->wake_ms = now + 1 + rng_below(&c->rng, 20);
                c->op_started_ms = c->wake_ms;
            } else {
                c->wake_ms = now + delay;
            }
        }
        if (c->ops_done < cfg->ops_per_client)
            heap_push(&h, c);
    }
    free(h.a);
    free(clients);
    return now;
}

static void parse_args(int argc, char **argv, struct sim_config *cfg)
{
    cfg->clients = 200;
    cfg->ops_per_client = 300;
    cfg->rate_per_ms = 12.0;
    cfg->burst = 50;
    cfg->fail_pct = 2;
    cfg->seed = 7;
    cfg->policy.base_ms = 10;
    cfg->policy.max_ms = 2000;
    cfg->policy.max_attempts = 12;
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *a = argv[i], *v = argv[i + 1];
        if (!strcmp(a, "--clients"))       cfg->clients = atoi(v);
        else if (!strcmp(a, "--ops"))      cfg->ops_per_client = atoi(v);
        else if (!strcmp(a, "--rate"))     cfg->rate_per_ms = atof(v);
        else if (!strcmp(a, "--burst"))    cfg->burst = atof(v);
        else if (!strcmp(a, "--fail-pct")) cfg->fail_pct = atoi(v);
        else if (!strcmp(a, "--seed"))     cfg->seed = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--base-ms"))  cfg->policy.base_ms = atol(v);
        else if (!strcmp(a, "--max-ms"))   cfg->policy.max_ms = atol(v);
        else if (!strcmp(a, "--attempts")) cfg->policy.max_attempts = atoi(v);
        else {
            fprintf(stderr, "unknown option %s\n", a);
            exit(2);
        }
    }
    if ((argc - 1) % 2) {
        fprintf(stderr, "option %s needs a value\n", argv[argc - 1]);
        exit(2);
    }
    if (cfg->clients <= 0 || cfg->rate_per_ms <= 0 || cfg->policy.base_ms <= 0) {
        fprintf(stderr, "invalid configuration\n");
        exit(2);
    }
}

int main(int argc, char **argv)
{
    struct sim_config cfg;
    parse_args(argc, argv, &cfg);
    crc32_init();

    struct server srv = { .tokens = cfg.burst, .rng = { cfg.seed ^ 0xABCDEF } };
    struct stats st = { 0 };
    long end_ms = run_simulation(&cfg, &st, &srv);

    uint64_t ops = st.successes + st.gave_up;
    /* corpus: the retry schedule (attempts, outcomes, timing) is what the bug
     * changes, so it goes to stderr; stdout is what the fix must keep */
    printf("clients=%d ops=%llu\n", cfg.clients, (unsigned long long)ops);
    fprintf(stderr, "attempts=%llu (%.2f/op) ok=%llu gave_up=%llu\n",
           (unsigned long long)st.attempts,
           ops ? (double)st.attempts / (double)ops : 0.0,
           (unsigned long long)st.successes, (unsigned long long)st.gave_up);
    fprintf(stderr, "server: accepted=%llu throttled=%llu failed=%llu  virtual_time=%ldms\n",
           (unsigned long long)srv.accepted, (unsigned long long)srv.throttled,
           (unsigned long long)srv.failed, end_ms);
    fprintf(stderr, "latency: mean=%.1fms max=%ldms\n",
           ops ? (double)st.total_latency_ms / (double)ops : 0.0, st.max_latency_ms);
    fprintf(stderr, "checksum=%016llx\n", (unsigned long long)(srv.digest ^ st.attempts));
    return 0;
}
