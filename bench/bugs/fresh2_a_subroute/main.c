/* Written for the vprof bug corpus by a helper that had not seen the
 * profiler (2026-11-28); not modelled on a real issue. The fix is the
 * VPROF_CASE_FIX variant; the line marked FIX is the bug.
 *
 * subroute - the routing core of an MQTT broker for an industrial plant.
 * Edge gateways hold one connection each and publish on it for the devices
 * and control systems behind them (telemetry, commands, configuration). Every
 * device subscribes to "<path>/cmd/#" and "<path>/config", where <path> is
 * site/plant-P/line-L/dev-NNNNNN; a historian, an auditor and a plant
 * dashboard hold wildcard subscriptions. The event loop reads each
 * gateway's byte stream in chunks, parses MQTT packets, and routes each
 * PUBLISH: sub_table_match() finds the matching subscriptions,
 * deliver() appends the message to the subscriber's persistent session log
 * (a checksummed record, for QoS 1).
 *
 * The subscription table keeps an index by literal filter prefix (the
 * levels before the first wildcard), which SUBSCRIBE uses to replace a
 * duplicate subscription. The bug: sub_table_match() does not use it and
 * tests every subscription of the broker against every published topic.
 * With a small plant (normal: 16 devices) that is 35 filters per message;
 * with a large one (buggy: 250 devices) it is 503, nearly all of which share
 * the long "site/plant-P/line-L/dev-" prefix before they fail to match.
 *
 * usage: subroute [--devices N] [--messages N] [--gateways N]
 */
#include "../common/corpus.h"

#define MAX_TOPIC     96
#define MAX_MATCH     64
#define INDEX_BUCKETS 4096
#define CHUNK         16384
#define MAX_CLIENTS   4096

struct sub {
    char filter[MAX_TOPIC];
    int  client, qos;
    int  prefix_len;            /* literal prefix, up to the first wildcard level */
    uint32_t prefix_hash;
    int  next;                  /* next in the index bucket, -1 = end */
};

struct sub_table { struct sub *subs; int n, cap; int bucket[INDEX_BUCKETS]; };
struct match { int client, qos; };
struct client { uint64_t delivered, bytes; uint32_t log_crc; uint32_t seen_stamp; };
struct conn { const uint8_t *feed; size_t feed_len, feed_pos; uint8_t buf[2 * CHUNK]; size_t used; };

struct broker {
    struct sub_table subs;
    struct client clients[MAX_CLIENTS];
    int nclients;
    uint32_t stamp;             /* per publish, for de-duplicating matches */
    uint64_t publishes, filters_tested;
};

static uint32_t crc_tab[256];

static void crc_init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? 0x82F63B78u ^ (c >> 1) : c >> 1;
        crc_tab[i] = c;
    }
}

static uint32_t crc32c(uint32_t crc, const uint8_t *p, size_t n)
{
    crc = ~crc;
    while (n--)
        crc = crc_tab[(crc ^ *p++) & 0xff] ^ (crc >> 8);
    return ~crc;
}

static uint32_t hash_bytes(const char *s, int n)
{
    uint32_t h = 2166136261u;
    for (int i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 16777619u;
    return h;
}

/* ------------------------------------------------------- topic matching */
/* MQTT filter matching: '+' is one level, a trailing '#' the rest. */
static int topic_match(const char *f, const char *t)
{
    while (*f && *t) {
        if (*f == '#')
            return 1;
        if (*f == '+') {
            while (*t && *t != '/')
                t++;
            f++;
            continue;
        }
        if (*f++ != *t++)
            return 0;
    }
    return (*f == '\0' && *t == '\0') || (f[0] == '#' && f[1] == '\0') || (f[0] == '/' && f[1] == '#' && f[2] == '\0');
}

static int literal_prefix_len(const char *f)
{
    int len = 0;
    for (int i = 0; f[i]; i++) {
        if ((f[i] == '+' || f[i] == '#') && (i == 0 || f[i - 1] == '/'))
            return len;
        if (f[i] == '/')
            len = i + 1;        /* include the separator */
    }
    return (int)strlen(f);
}

/* SUBSCRIBE: a second subscription of a client to the same filter replaces
 * the first (found through the prefix index). */
static void sub_table_add(struct sub_table *t, int client, const char *filter, int qos)
{
    int plen = literal_prefix_len(filter);
    uint32_t h = hash_bytes(filter, plen);
    for (int i = t->bucket[h % INDEX_BUCKETS]; i >= 0; i = t->subs[i].next)
        if (t->subs[i].client == client && strcmp(t->subs[i].filter, filter) == 0) {
            t->subs[i].qos = qos;
            return;
        }
    if (t->n == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 64;
        t->subs = realloc(t->subs, (size_t)t->cap * sizeof *t->subs);
        if (!t->subs) { perror("realloc"); exit(1); }
    }
    struct sub *s = &t->subs[t->n];
    snprintf(s->filter, sizeof s->filter, "%s", filter);
    s->client = client;
    s->qos = qos;
    s->prefix_len = plen;
    s->prefix_hash = h;
    s->next = t->bucket[h % INDEX_BUCKETS];
    t->bucket[h % INDEX_BUCKETS] = t->n++;
}

static int add_match(struct broker *b, const struct sub *s, struct match *out, int n)
{
    struct client *c = &b->clients[s->client];
    if (c->seen_stamp == b->stamp) {          /* overlapping subscriptions: max QoS */
        for (int k = 0; k < n; k++)
            if (out[k].client == s->client && out[k].qos < s->qos)
                out[k].qos = s->qos;
        return n;
    }
    c->seen_stamp = b->stamp;
    out[n].client = s->client;
    out[n].qos = s->qos;
    return n + 1;
}

/* The subscriptions matching a published topic, one per client. */
static int sub_table_match(struct broker *b, const char *topic, struct match *out)
{
    struct sub_table *t = &b->subs;
    int n = 0;
    b->stamp++;
#ifdef VPROF_CASE_FIX
    /* probe the index with every level prefix of the topic ("" included) */
    for (int plen = 0;; plen++) {
        if (plen == 0 || topic[plen - 1] == '/' || topic[plen] == '\0') {
            uint32_t h = hash_bytes(topic, plen);
            for (int i = t->bucket[h % INDEX_BUCKETS]; i >= 0; i = t->subs[i].next) {
                const struct sub *s = &t->subs[i];
                if (s->prefix_len != plen || s->prefix_hash != h)
                    continue;
                b->filters_tested++;
                if (topic_match(s->filter, topic) && n < MAX_MATCH)
                    n = add_match(b, s, out, n);
            }
        }
        if (topic[plen] == '\0')
            break;
    }
#else
    for (int i = 0; i < t->n; i++) { /* FIX: probe the prefix index (t->bucket) with the topic's level prefixes instead of testing every subscription */
        const struct sub *s = &t->subs[i];
        b->filters_tested++;
        if (topic_match(s->filter, topic) && n < MAX_MATCH)
            n = add_match(b, s, out, n);
    }
#endif
    return n;
}

/* -------------------------------------------------------------- routing */
/* Appends the message to the subscriber's session log (QoS 1 persists). */
static void deliver(struct broker *b, const struct match *m, const char *topic,
                    const uint8_t *payload, size_t len)
{
    struct client *c = &b->clients[m->client];
    uint8_t hdr[4 + MAX_TOPIC];
    size_t tl = strlen(topic);
    hdr[0] = (uint8_t)(0x30 | (m->qos << 1));
    hdr[1] = (uint8_t)(len & 0xff);
    hdr[2] = (uint8_t)(tl >> 8);
    hdr[3] = (uint8_t)tl;
    memcpy(hdr + 4, topic, tl);
    uint32_t crc = crc32c(0, hdr, 4 + tl);
    if (m->qos > 0)
        crc = crc32c(crc, payload, len);
    c->log_crc ^= crc;                        /* order-independent digest */
    c->delivered++;
    c->bytes += len;
}

static void route_publish(struct broker *b, const char *topic, const uint8_t *payload,
                          size_t len)
{
    struct match m[MAX_MATCH];
    int n = sub_table_match(b, topic, m);
    for (int i = 0; i < n; i++)
        deliver(b, &m[i], topic, payload, len);
    b->publishes++;
}

static int topic_valid(const char *t, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (t[i] == '+' || t[i] == '#' || t[i] == '\0')
            return 0;
    return n > 0 && n < MAX_TOPIC;
}

static void handle_publish(struct broker *b, const uint8_t *p, size_t len)
{
    char topic[MAX_TOPIC];
    size_t tl = len < 2 ? 0 : (size_t)p[0] << 8 | p[1];
    if (len < 2 || tl + 2 > len || !topic_valid((const char *)p + 2, tl))
        return;
    memcpy(topic, p + 2, tl);
    topic[tl] = '\0';
    route_publish(b, topic, p + 2 + tl, len - 2 - tl);
}

static void mqtt_handle_packet(struct broker *b, uint8_t type, const uint8_t *p, size_t len)
{
    switch (type >> 4) {
    case 3: handle_publish(b, p, len); break;
    case 12: break;                           /* PINGREQ */
    default: fprintf(stderr, "unexpected packet type %u\n", type >> 4); exit(1);
    }
}

/* Parses complete packets from the connection buffer; keeps a partial tail. */
static void mqtt_parse_stream(struct broker *b, struct conn *c)
{
    size_t pos = 0;
    for (;;) {
        size_t rem = 0, hl = 1;
        int shift = 0, complete = 0;
        while (pos + hl < c->used && hl <= 4) {
            uint8_t d = c->buf[pos + hl++];
            rem |= (size_t)(d & 0x7f) << shift;
            shift += 7;
            if (!(d & 0x80)) { complete = 1; break; }
        }
        if (!complete || pos + hl + rem > c->used)
            break;
        mqtt_handle_packet(b, c->buf[pos], c->buf + pos + hl, rem);
        pos += hl + rem;
    }
    memmove(c->buf, c->buf + pos, c->used - pos);
    c->used -= pos;
}

static void conn_on_readable(struct broker *b, struct conn *c)
{
    size_t n = c->feed_len - c->feed_pos < CHUNK ? c->feed_len - c->feed_pos : CHUNK;
    memcpy(c->buf + c->used, c->feed + c->feed_pos, n);
    c->feed_pos += n;
    c->used += n;
    mqtt_parse_stream(b, c);
}

static int event_loop_tick(struct broker *b, struct conn *conns, int nconn)
{
    int active = 0;
    for (int i = 0; i < nconn; i++)
        if (conns[i].feed_pos < conns[i].feed_len) {
            conn_on_readable(b, &conns[i]);
            active++;
        }
    return active;
}

static void broker_run(struct broker *b, struct conn *conns, int nconn)
{
    while (event_loop_tick(b, conns, nconn) > 0)
        continue;
}

/* ------------------------------------------------------------- workload */
static void device_path(char *dst, size_t cap, int d)
{
    snprintf(dst, cap, "site/plant-%d/line-%d/dev-%06d", 1 + d % 3, 1 + d / 3 % 4, d);
}

/* Payload bytes come from a pool of random bytes (sensor frames, firmware). */
static uint8_t pool[4096];

static size_t encode_publish(uint8_t *dst, const char *topic, rng_t *r, size_t plen)
{
    size_t tl = strlen(topic), rem = 2 + tl + plen, n = 0;
    dst[n++] = 0x32;
    do {
        uint8_t d = rem & 0x7f;
        rem >>= 7;
        dst[n++] = (uint8_t)(d | (rem ? 0x80 : 0));
    } while (rem);
    dst[n++] = (uint8_t)(tl >> 8);
    dst[n++] = (uint8_t)tl;
    memcpy(dst + n, topic, tl);
    n += tl;
    memcpy(dst + n, pool + rng_below(r, sizeof pool - plen), plen);
    return n + plen;
}

/* Each gateway's inbound stream: telemetry, commands and config pushes. */
static uint8_t *make_feed(int g, int ngw, int devices, long messages, size_t *len)
{
    rng_t r;
    rng_seed(&r, 1000 + (uint64_t)g);
    size_t cap = (size_t)(messages / ngw + 1) * 1200 + 64;
    uint8_t *f = malloc(cap);
    if (!f) { perror("malloc"); exit(1); }
    size_t n = 0;
    char path[64], topic[MAX_TOPIC];
    static const char *const verbs[] = { "reboot", "ota", "calibrate", "sample" };
    for (long m = g; m < messages; m += ngw) {
        int d = (int)rng_below(&r, (uint64_t)devices);
        device_path(path, sizeof path, d);
        unsigned kind = (unsigned)rng_below(&r, 10);
        if (kind < 6)
            snprintf(topic, sizeof topic, "%s/telemetry", path);
        else if (kind < 9)
            snprintf(topic, sizeof topic, "%s/cmd/%s", path, verbs[rng_below(&r, 4)]);
        else
            snprintf(topic, sizeof topic, "%s/config", path);
        n += encode_publish(f + n, topic, &r, 200 + rng_below(&r, 900));
    }
    *len = n;
    return f;
}

int main(int argc, char **argv)
{
    opt_t opts[] = {
        { "devices",  "devices in the plant", 16, 1, MAX_CLIENTS - 8, 0 },
        { "messages", "PUBLISH packets from the gateways", 50000, 1, 10000000, 0 },
        { "gateways", "gateway connections", 4, 1, 64, 0 },
    };
    opts_parse(argc, argv, opts, NOPTS(opts));
    int devices = (int)opt_get(opts, NOPTS(opts), "devices");
    long messages = opt_get(opts, NOPTS(opts), "messages");
    int ngw = (int)opt_get(opts, NOPTS(opts), "gateways");

    crc_init();
    rng_t pr;
    rng_seed(&pr, 99);
    for (size_t i = 0; i < sizeof pool; i++)
        pool[i] = (uint8_t)(rng_next(&pr) >> 56);
    static struct broker b;
    memset(b.subs.bucket, -1, sizeof b.subs.bucket);
    char path[64], filter[MAX_TOPIC];
    int historian = 0, auditor = 1, dashboard = 2;
    b.nclients = 3 + devices;
    sub_table_add(&b.subs, historian, "site/+/+/+/telemetry", 1);
    sub_table_add(&b.subs, auditor, "site/+/+/+/cmd/#", 1);
    sub_table_add(&b.subs, dashboard, "site/plant-1/#", 0);
    for (int d = 0; d < devices; d++) {
        device_path(path, sizeof path, d);
        snprintf(filter, sizeof filter, "%s/cmd/#", path);
        sub_table_add(&b.subs, 3 + d, filter, 1);
        snprintf(filter, sizeof filter, "%s/config", path);
        sub_table_add(&b.subs, 3 + d, filter, 1);
    }

    struct conn *conns = calloc((size_t)ngw, sizeof *conns);
    if (!conns) { perror("calloc"); return 1; }
    for (int g = 0; g < ngw; g++)
        conns[g].feed = make_feed(g, ngw, devices, messages, &conns[g].feed_len);
    broker_run(&b, conns, ngw);

    uint64_t delivered = 0, bytes = 0;
    uint32_t digest = 0;                      /* independent of delivery order */
    for (int c = 0; c < b.nclients; c++) {
        delivered += b.clients[c].delivered;
        bytes += b.clients[c].bytes;
        digest ^= b.clients[c].log_crc * (uint32_t)(2 * c + 1);
    }
    printf("subscriptions=%d publishes=%llu delivered=%llu bytes=%llu digest=%08x\n",
           b.subs.n, (unsigned long long)b.publishes, (unsigned long long)delivered,
           (unsigned long long)bytes, digest);
    fprintf(stderr, "filters_tested=%llu\n", (unsigned long long)b.filters_tested);
    return 0;
}
