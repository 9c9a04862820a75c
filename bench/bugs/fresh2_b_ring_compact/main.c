/* Written for the vprof bug corpus by a helper that had not seen the
 * profiler (2026-11-28); not modelled on a real issue. The fix is the
 * VPROF_CASE_FIX variant; the line marked FIX is the bug.
 *
 * logbrokerd - a single-node log broker. Producers APPEND records to named
 * streams, consumers FETCH them in order; a request loop reads a text
 * protocol from a (here: generated) connection buffer and dispatches each
 * request to its handler:
 *
 *     APPEND <stream> <len>\n<len bytes>\n
 *     FETCH <stream> <max records>\n
 *     STAT <stream>\n
 *     PING\n
 *
 * Each stream keeps its records in one buffer (a header with length and
 * CRC, then the payload) plus an index of the records not yet consumed.
 * When an append does not fit behind the last record, the live records are
 * moved to the front of the buffer (compaction); when they still do not
 * fit, the buffer doubles. A FETCH returns records only once at least
 * --fetch-min-bytes are pending (consumers that prefer fewer, bigger
 * batches), as brokers allow.
 *
 * The bug: handle_append() checks for room against the configured initial
 * buffer size (cfg.ring_bytes) instead of the stream's current capacity.
 * The two are the same until a stream grows. Consumers that keep up
 * (normal: --fetch-min-bytes 1) never make it grow; batching consumers
 * (buggy: 80 KiB pending before a fetch, 64 KiB buffers) do, and from then
 * on nearly every append compacts the whole backlog.
 */
#include "../common/corpus.h"

#define REC_HDR     8u      /* u32 length, u32 crc */
#define MAX_STREAMS 8
#define MAX_PAYLOAD 512

struct config {
    size_t ring_bytes;          /* initial buffer of a stream */
    size_t fetch_min_bytes;
};

struct recref {
    uint32_t off, len;
};

struct stream {
    char name[24];
    uint8_t *buf;
    size_t cap, head, tail;     /* live records are buf[head..tail) */
    struct recref *idx;         /* live records: idx[ih..it) */
    size_t ih, it, icap;
    uint64_t appended, delivered, compactions, grows, moved_bytes;
};

struct broker {
    const struct config *cfg;
    struct stream streams[MAX_STREAMS];
    int nstreams;
    uint64_t digest, requests, empty_fetches, stats_served;
};

struct request {
    const char *verb, *stream, *payload;
    uint32_t verb_len, stream_len;
    long arg;
};

/* ---------------------------------------------------------------- CRC */
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

static uint32_t crc32_buf(const void *p, size_t n)
{
    const uint8_t *s = p;
    uint32_t crc = ~0u;
    while (n--)
        crc = crc_table[(crc ^ *s++) & 0xff] ^ (crc >> 8);
    return ~crc;
}

/* ------------------------------------------------------------ streams */
static void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n);
    if (!p) {
        perror("realloc");
        exit(1);
    }
    return p;
}

static struct stream *stream_lookup(struct broker *b, const char *name, uint32_t len)
{
    for (int i = 0; i < b->nstreams; i++)
        if (strlen(b->streams[i].name) == len && memcmp(b->streams[i].name, name, len) == 0)
            return &b->streams[i];
    if (b->nstreams == MAX_STREAMS || len >= sizeof b->streams[0].name)
        return NULL;
    struct stream *st = &b->streams[b->nstreams++];
    memset(st, 0, sizeof *st);
    memcpy(st->name, name, len);
    st->cap = b->cfg->ring_bytes;
    st->buf = xrealloc(NULL, st->cap);
    st->icap = 1024;
    st->idx = xrealloc(NULL, st->icap * sizeof *st->idx);
    return st;
}

/* A record's payload against the CRC in its header. */
static void record_verify(const struct stream *st, const struct recref *r)
{
    const uint8_t *p = st->buf + r->off;
    uint32_t crc;
    memcpy(&crc, p + 4, 4);
    if (crc32_buf(p + REC_HDR, r->len) != crc) {
        fprintf(stderr, "%s: corrupt record at %u\n", st->name, r->off);
        exit(1);
    }
}

/* Moves the live records to the front of the buffer and of the index,
 * verifying each one first: a damaged record is never copied forward. */
static void ring_compact(struct stream *st)
{
    size_t live = st->tail - st->head, n = st->it - st->ih;
    for (size_t i = st->ih; i < st->it; i++)
        record_verify(st, &st->idx[i]);
    memmove(st->buf, st->buf + st->head, live);
    memmove(st->idx, st->idx + st->ih, n * sizeof *st->idx);
    for (size_t i = 0; i < n; i++)
        st->idx[i].off -= (uint32_t)st->head;
    st->moved_bytes += live;
    st->head = 0;
    st->tail = live;
    st->ih = 0;
    st->it = n;
    st->compactions++;
}

static void ring_grow(struct stream *st, size_t need)
{
    while (st->tail + need > st->cap)
        st->cap *= 2;
    st->buf = xrealloc(st->buf, st->cap);
    st->grows++;
}

static void ring_make_room(struct stream *st, size_t need)
{
    if (st->head > 0)
        ring_compact(st);
    if (st->tail + need > st->cap)
        ring_grow(st, need);
}

static void ring_put(struct stream *st, const char *payload, uint32_t len)
{
    uint32_t crc = crc32_buf(payload, len);
    uint8_t *p = st->buf + st->tail;
    memcpy(p, &len, 4);
    memcpy(p + 4, &crc, 4);
    memcpy(p + REC_HDR, payload, len);
    if (st->it == st->icap) {
        st->icap *= 2;
        st->idx = xrealloc(st->idx, st->icap * sizeof *st->idx);
    }
    st->idx[st->it].off = (uint32_t)st->tail;
    st->idx[st->it].len = len;
    st->it++;
    st->tail += REC_HDR + len;
    st->appended++;
}

/* ------------------------------------------------------------ handlers */
static void handle_append(struct broker *b, const struct request *rq)
{
    struct stream *st = stream_lookup(b, rq->stream, rq->stream_len);
    if (!st || rq->arg <= 0 || rq->arg > MAX_PAYLOAD)
        return;
    size_t need = REC_HDR + (size_t)rq->arg;
#ifdef VPROF_CASE_FIX
    if (st->tail + need > st->cap)
#else
    if (st->tail + need > b->cfg->ring_bytes) /* FIX: compare with the stream's current capacity st->cap; cfg->ring_bytes is only its initial size */
#endif
        ring_make_room(st, need);
    ring_put(st, rq->payload, (uint32_t)rq->arg);
}

static void handle_fetch(struct broker *b, const struct request *rq)
{
    struct stream *st = stream_lookup(b, rq->stream, rq->stream_len);
    if (!st)
        return;
    if (st->tail - st->head < b->cfg->fetch_min_bytes || st->ih == st->it) {
        b->empty_fetches++;
        return;
    }
    for (long k = 0; k < rq->arg && st->ih < st->it; k++) {
        const struct recref *r = &st->idx[st->ih++];
        uint32_t crc;
        record_verify(st, r);
        memcpy(&crc, st->buf + r->off + 4, 4);
        b->digest = (b->digest ^ crc) * 0x100000001b3ull;
        st->head = r->off + REC_HDR + r->len;
        st->delivered++;
    }
}

static void handle_stat(struct broker *b, const struct request *rq)
{
    struct stream *st = stream_lookup(b, rq->stream, rq->stream_len);
    if (st) {
        b->digest = (b->digest ^ (st->appended - st->delivered)) * 0x100000001b3ull;
        b->stats_served++;
    }
}

static void handle_ping(struct broker *b, const struct request *rq)
{
    (void)rq;
    b->digest = b->digest * 31 + 1;
}

static const struct command {
    const char *verb;
    void (*fn)(struct broker *, const struct request *);
} kCommands[] = {
    {"APPEND", handle_append},
    {"FETCH", handle_fetch},
    {"STAT", handle_stat},
    {"PING", handle_ping},
};

/* ---------------------------------------------------- the request loop */
static const char *parse_word(const char *p, const char **w, uint32_t *len)
{
    *w = p;
    while (*p != ' ' && *p != '\n')
        p++;
    *len = (uint32_t)(p - *w);
    return *p == ' ' ? p + 1 : p;
}

static const char *parse_long(const char *p, long *v)
{
    *v = 0;
    while (*p >= '0' && *p <= '9')
        *v = *v * 10 + (*p++ - '0');
    return p;
}

/* Reads requests from the connection buffer and dispatches them. */
static void serve_buffer(struct broker *b, const char *p, const char *end)
{
    while (p < end) {
        struct request rq = {0};
        p = parse_word(p, &rq.verb, &rq.verb_len);
        if (*p != '\n')
            p = parse_word(p, &rq.stream, &rq.stream_len);
        if (*p >= '0' && *p <= '9')
            p = parse_long(p, &rq.arg);
        if (*p++ != '\n') {
            fprintf(stderr, "protocol error\n");
            exit(1);
        }
        const struct command *c = NULL;
        for (size_t i = 0; i < sizeof kCommands / sizeof kCommands[0]; i++)
            if (strlen(kCommands[i].verb) == rq.verb_len &&
                memcmp(kCommands[i].verb, rq.verb, rq.verb_len) == 0)
                c = &kCommands[i];
        if (!c) {
            fprintf(stderr, "unknown command '%.*s'\n", (int)rq.verb_len, rq.verb);
            exit(1);
        }
        if (c->fn == handle_append) {       /* the payload follows the line */
            rq.payload = p;
            p += rq.arg + 1;
        }
        c->fn(b, &rq);
        b->requests++;
        CASE_PROGRESS("request");
    }
}

/* ------------------------------------------------------ the clients */
static const char *const kStreams[] = {"orders", "payments", "clicks", "audit"};
static const char *const kSkus[] = {"A-1001", "B-2044", "C-3170", "D-0042", "E-9917", "F-5150"};

/* One tick of client traffic: producers append to random streams, then
 * every stream's consumer polls once; a PING per tick, a STAT now and then. */
static size_t render_tick(char *out, long tick, int appends, long fetch_max, rng_t *r)
{
    char *o = out, payload[MAX_PAYLOAD + 1];
    for (int a = 0; a < appends; a++) {
        const char *s = kStreams[rng_below(r, 4)];
        int n = snprintf(payload, sizeof payload,
                         "{\"tick\":%ld,\"user\":%llu,\"sku\":\"%s\",\"qty\":%llu,\"note\":\"",
                         tick, (unsigned long long)rng_below(r, 1000000),
                         kSkus[rng_below(r, 6)], (unsigned long long)(1 + rng_below(r, 9)));
        int pad = 16 + (int)rng_below(r, 160);
        for (int k = 0; k < pad; k++)
            payload[n++] = (char)('a' + (tick + k * 7) % 26);
        payload[n++] = '"';
        payload[n++] = '}';
        o += sprintf(o, "APPEND %s %d\n", s, n);
        memcpy(o, payload, (size_t)n);
        o += n;
        *o++ = '\n';
    }
    for (int s = 0; s < 4; s++)
        o += sprintf(o, "FETCH %s %ld\n", kStreams[s], fetch_max);
    o += sprintf(o, "PING\n");
    if (tick % 100 == 0)
        o += sprintf(o, "STAT %s\n", kStreams[tick / 100 % 4]);
    return (size_t)(o - out);
}

int main(int argc, char **argv)
{
    opt_t opts[] = {
        {"ticks", "client ticks", 36000, 1, 100000000, 0},
        {"appends", "appends per tick (all streams)", 5, 1, 1000, 0},
        {"fetch-max", "records per FETCH", 64, 1, 100000, 0},
        {"fetch-min-bytes", "bytes pending before a FETCH returns records", 1, 1, 1 << 30, 0},
        {"ring-kb", "initial record buffer of a stream, KiB", 64, 4, 1 << 20, 0},
        {"seed", "workload seed", 4242, 0, 1000000000, 0},
    };
    opts_parse(argc, argv, opts, NOPTS(opts));
    struct config cfg = {
        .ring_bytes = (size_t)opt_get(opts, NOPTS(opts), "ring-kb") * 1024,
        .fetch_min_bytes = (size_t)opt_get(opts, NOPTS(opts), "fetch-min-bytes"),
    };
    long ticks = opt_get(opts, NOPTS(opts), "ticks");
    int appends = (int)opt_get(opts, NOPTS(opts), "appends");
    long fetch_max = opt_get(opts, NOPTS(opts), "fetch-max");
    rng_t r;
    rng_seed(&r, (uint64_t)opt_get(opts, NOPTS(opts), "seed"));
    crc32_init();

    struct broker b = {.cfg = &cfg};
    char *conn = xrealloc(NULL, (size_t)appends * (MAX_PAYLOAD + 64) + 512);
    for (long t = 0; t < ticks; t++) {
        size_t len = render_tick(conn, t, appends, fetch_max, &r);
        serve_buffer(&b, conn, conn + len);
    }

    uint64_t appended = 0, delivered = 0, compactions = 0, grows = 0, moved = 0;
    for (int i = 0; i < b.nstreams; i++) {
        appended += b.streams[i].appended;
        delivered += b.streams[i].delivered;
        compactions += b.streams[i].compactions;
        grows += b.streams[i].grows;
        moved += b.streams[i].moved_bytes;
    }
    printf("%llu requests, %llu records appended, %llu delivered, digest %016llx\n",
           (unsigned long long)b.requests, (unsigned long long)appended,
           (unsigned long long)delivered, (unsigned long long)b.digest);
    fprintf(stderr, "compactions=%llu grows=%llu moved_bytes=%llu empty_fetches=%llu\n",
            (unsigned long long)compactions, (unsigned long long)grows,
            (unsigned long long)moved, (unsigned long long)b.empty_fetches);
    for (int i = 0; i < b.nstreams; i++) {
        free(b.streams[i].buf);
        free(b.streams[i].idx);
    }
    free(conn);
    return 0;
}
