/* Written for the vprof bug corpus by a helper that had not seen the
 * profiler (2026-11-29); not modelled on a real issue. The fix is the
 * VPROF_CASE_FIX variant; the line marked FIX is the bug.
 *
 * rollupd - a statsd-style aggregation daemon. Each line of a datagram
 * ("name:value|type|@rate|#tags") is parsed, its metric looked up, and the
 * sample folded into the interval's aggregate (counter sum, gauge value,
 * timer count/sum/min/max and histogram). New metrics are mapped to output
 * series by glob rules (as statsd_exporter does). Each flush emits the
 * metrics updated in the interval and drops those idle for --expiry-s.
 *
 * The bug: metric_expired() compares the idle time in milliseconds with the
 * expiry in seconds, so when clients sample (a name arrives every few
 * seconds) most metrics are dropped at every flush and created again.
 */
#include "../common/corpus.h"
#include <time.h>

#define KEY_MAX      256
#define SERIES_MAX   640    /* room for any series a KEY_MAX key maps to */
#define HIST_BUCKETS 400    /* microseconds, 16 sub-buckets per power of two */
#define DGRAM_MAX    1432   /* what clients on an Ethernet LAN put in one datagram */
#define MAX_RULES    128
#define MAX_CAPS     4
#define TABLE_SLOTS  16384  /* a power of two: sized for the series a deployment expects */
#define FNV_BASIS    0xcbf29ce484222325ULL
#define FNV_PRIME    0x100000001b3ULL
#define NELEM(a)     ((int)(sizeof(a) / sizeof((a)[0])))

enum mtype { M_COUNTER, M_GAUGE, M_TIMER, N_MTYPE };

struct sample { const char *name, *tags; int name_len, tags_len; double value, rate; enum mtype type; };
struct timer_agg { double count, sum, min, max; uint32_t n, hist[HIST_BUCKETS]; };  /* count: by 1/rate */

struct metric {
    struct metric *next;                /* hash chain */
    uint64_t hash, series_hash, last_seen_ms;
    enum mtype type;
    int touched;                        /* updated since the last flush */
    double value;                       /* counter: scaled sum; gauge: last value */
    struct timer_agg *timer;
    char *series;                       /* output series: name{labels} */
    size_t key_len;
    char key[];                         /* name|type|tags as the client sent them */
};

struct rollup {
    struct metric **slot;               /* the metric table: chains of TABLE_SLOTS buckets */
    size_t mask, live;
    uint64_t flush_ms, next_flush_ms, expiry_s;
    uint64_t flushes, series_out, timer_samples, digest;   /* what the backend received */
    double counter_total;
};
struct map_rule { char glob[64], series[48]; const char *const *label; };
struct span { const char *p; int n; };

/* Process-wide state the handlers read: the receive clock and the counters
 * statsd reports about itself. */
static uint64_t g_now_ms;               /* arrival time of the datagram being handled */
static uint64_t g_wall_ns;              /* monotonic clock when it was read */
static struct { uint64_t packets, bytes, lines, bad_lines, created, expired, probes, proc_ns; } g_stats;
static struct map_rule g_rules[MAX_RULES];
static int g_nrules;

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n, size);
    if (!p)
        perror("calloc"), exit(1);
    return p;
}

static uint64_t wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t fnv1a(uint64_t h, const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ (uint8_t)p[i]) * FNV_PRIME;
    return h;
}

/* A double's bits, salted and mixed (murmur3's finalizer). */
static uint64_t mix_double(double d, uint64_t salt)
{
    uint64_t x;
    memcpy(&x, &d, sizeof x);
    x += salt, x ^= x >> 33, x *= 0xff51afd7ed558ccdULL, x ^= x >> 33, x *= 0xc4ceb9fe1a85ec53ULL;
    return x ^ x >> 33;
}

/* [-]digits[.digits], without libc's locale handling. */
static int parse_decimal(const char *p, const char *end, double *out)
{
    static const double kScale[] = {1, 1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6};
    int neg = p < end && *p == '-', digits = 0, frac = 0;
    uint64_t ip = 0, fp = 0;
    for (p += neg; p < end && *p >= '0' && *p <= '9'; p++, digits++)
        ip = ip * 10 + (uint64_t)(*p - '0');
    if (p < end && *p == '.')
        for (p++; p < end && *p >= '0' && *p <= '9' && frac < 6; p++, frac++, digits++)
            fp = fp * 10 + (uint64_t)(*p - '0');
    double v = (double)ip + (double)fp * kScale[frac];
    *out = neg ? -v : v;
    return digits && p == end ? 0 : -1;
}

/* name:value|type[|@rate][|#k:v,...]; type is c, g, ms, or h (a timer here). */
static int parse_line(const char *line, size_t len, struct sample *s)
{
    const char *end = line + len, *colon = memchr(line, ':', len), *bar;
    if (!colon || colon == line || !(bar = memchr(colon, '|', (size_t)(end - colon))) ||
        parse_decimal(colon + 1, bar, &s->value))
        return -1;
    const char *type = bar + 1, *next = memchr(type, '|', (size_t)(end - type));
    long tn = (next ? next : end) - type;
    if (!((tn == 1 && strchr("cgh", *type)) || (tn == 2 && type[0] == 'm' && type[1] == 's')))
        return -1;
    s->type = *type == 'c' ? M_COUNTER : *type == 'g' ? M_GAUGE : M_TIMER;
    s->name = line, s->name_len = (int)(colon - line);
    s->rate = 1.0, s->tags = "", s->tags_len = 0;
    while (next) {
        const char *f = next + 1, *fend = (next = memchr(f, '|', (size_t)(end - f))) ? next : end;
        if (f < fend && *f == '@' && (parse_decimal(f + 1, fend, &s->rate) || !(s->rate > 0 && s->rate <= 1)))
            return -1;
        if (f < fend && *f == '#')
            s->tags = f + 1, s->tags_len = (int)(fend - f - 1);
    }
    return 0;
}

/* A '*' matches one non-empty dotted component and captures it. */
static int glob_match(const char *glob, const char *name, int len, struct span *caps)
{
    int i = 0, nc = 0;
    for (const char *g = glob; *g; g++) {
        if (*g != '*') {
            if (i == len || name[i++] != *g)
                return -1;
            continue;
        }
        int start = i;
        while (i < len && name[i] != '.')
            i++;
        if (i == start || nc == MAX_CAPS)
            return -1;
        caps[nc++] = (struct span){name + start, i - start};
    }
    return i == len ? nc : -1;
}

/* Appends {k="v" or ,k="v" (label values quoted as Prometheus wants them). */
static char *put_label(char *o, int first, struct span k, struct span v)
{
    return o + sprintf(o, "%c%.*s=\"%.*s\"", first ? '{' : ',', k.n, k.p, v.n, v.p);
}

/* The output series of a new metric: the first rule whose glob matches the
 * name gives the series name and labels its captures; the tags follow as
 * labels ("k:v" becomes k="v"). */
static char *map_series_name(const struct sample *s, uint64_t *series_hash)
{
    char buf[SERIES_MAX], *o = buf;
    struct span caps[MAX_CAPS];
    int nc = -1, r, labels = 0;
    for (r = 0; r < g_nrules && nc < 0; r++)
        nc = glob_match(g_rules[r].glob, s->name, s->name_len, caps);
    const struct map_rule *rule = &g_rules[r - 1];
    o += nc < 0 ? sprintf(o, "%.*s", s->name_len, s->name)     /* unmapped: the name as sent */
                : sprintf(o, "%s", rule->series);
    for (int c = 0; c < nc; c++, labels++)
        o = put_label(o, !labels, (struct span){rule->label[c], (int)strlen(rule->label[c])}, caps[c]);
    for (const char *p = s->tags, *end = p + s->tags_len, *e; p < end; p = e + 1, labels++) {
        const char *comma = memchr(p, ',', (size_t)(end - p)), *colon;
        e = comma ? comma : end;
        int kn = (colon = memchr(p, ':', (size_t)(e - p))) ? (int)(colon - p) : (int)(e - p);
        o = put_label(o, !labels, (struct span){p, kn},
                      (struct span){p + kn + !!colon, (int)(e - p) - kn - !!colon});
    }
    o += sprintf(o, "%s", labels ? "}" : "");
    *series_hash = fnv1a(FNV_BASIS ^ (uint64_t)s->type, buf, (size_t)(o - buf));
    return memcpy(xcalloc(1, (size_t)(o - buf) + 1), buf, (size_t)(o - buf));
}

static struct metric *metric_lookup(const struct rollup *d, const char *key, size_t n, uint64_t h)
{
    for (struct metric *m = d->slot[h & d->mask]; m; m = m->next, g_stats.probes++)
        if (m->hash == h && m->key_len == n && memcmp(m->key, key, n) == 0)
            return m;
    return NULL;
}

static struct metric *metric_create(struct rollup *d, const struct sample *s, const char *key,
                                    size_t n, uint64_t h)
{
    struct metric *m = xcalloc(1, sizeof *m + n);
    m->key_len = n, m->hash = h, m->type = s->type, memcpy(m->key, key, n);
    m->series = map_series_name(s, &m->series_hash);
    if (s->type == M_TIMER)
        m->timer = xcalloc(1, sizeof *m->timer);
    m->next = d->slot[h & d->mask], d->slot[h & d->mask] = m, d->live++;
    g_stats.created++;
    return m;
}

static int hist_bucket(double ms)
{
    uint64_t us = ms <= 0 ? 0 : (uint64_t)(ms * 1000.0);
    if (us < 16)
        return (int)us;
    int e = 63 - __builtin_clzll(us), b = (e - 3) * 16 + (int)((us >> (e - 4)) & 15);
    return b < HIST_BUCKETS ? b : HIST_BUCKETS - 1;
}

static void metric_update(struct metric *m, const struct sample *s)
{
    m->last_seen_ms = g_now_ms;
    m->touched = 1;
    if (m->type == M_COUNTER) {
        m->value += s->value / s->rate;
    } else if (m->type == M_GAUGE) {
        m->value = s->value;            /* gauges are never sampled */
    } else {
        struct timer_agg *t = m->timer;
        t->min = t->n && t->min < s->value ? t->min : s->value;
        t->max = t->n && t->max > s->value ? t->max : s->value;
        t->n++, t->count += 1.0 / s->rate, t->sum += s->value;
        t->hist[hist_bucket(s->value)]++;
    }
}

static void handle_line(struct rollup *d, const char *line, size_t len)
{
    struct sample s;
    char key[KEY_MAX];
    g_stats.lines++;
    if (parse_line(line, len, &s) || s.name_len + s.tags_len + 3 > KEY_MAX) {
        g_stats.bad_lines++;            /* reported in the daemon's own metrics */
        return;
    }
    size_t n = (size_t)s.name_len;      /* the key: name|type|tags */
    memcpy(key, s.name, n);
    key[n++] = '|', key[n++] = "cgt"[s.type], key[n++] = '|';
    memcpy(key + n, s.tags, (size_t)s.tags_len), n += (size_t)s.tags_len;
    uint64_t h = fnv1a(FNV_BASIS, key, n);
    struct metric *m = metric_lookup(d, key, n, h);
    metric_update(m ? m : metric_create(d, &s, key, n, h), &s);
}

/* ------------------------------------------------------------------ flush */
/* Count, sum, min, max and the p50/p90/p99 buckets of one timer. */
static uint64_t timer_digest(const struct timer_agg *t)
{
    static const double kPct[] = {0.50, 0.90, 0.99};
    uint64_t h = mix_double(t->count, 0) ^ mix_double(t->sum, 1);
    h ^= mix_double(t->min, 2) ^ mix_double(t->max, 3);
    uint32_t seen = 0;
    int b = 0;
    for (int q = 0; q < NELEM(kPct); q++) {
        uint32_t rank = (uint32_t)(kPct[q] * (t->n - 1)) + 1;
        while (seen + t->hist[b] < rank)
            seen += t->hist[b++];
        uint64_t low_us = b < 16 ? (uint64_t)b : (uint64_t)(16 + b % 16) << (b / 16 - 1);
        h ^= mix_double((double)low_us / 1000.0, 4 + (uint64_t)q);  /* the bucket's lower bound, ms */
    }
    return h;
}

/* What the backend receives for one metric, folded into a hash; the
 * aggregate starts over for the next interval. */
static uint64_t emit_metric(struct rollup *d, struct metric *m)
{
    uint64_t h = m->series_hash ^ (m->timer ? timer_digest(m->timer) : mix_double(m->value, 0));
    if (m->timer)
        d->timer_samples += m->timer->n, memset(m->timer, 0, sizeof *m->timer);
    if (m->type == M_COUNTER)
        d->counter_total += m->value, m->value = 0;
    m->touched = 0, d->series_out++;
    return mix_double(0.0, h);
}

/* A metric nobody has sent for expiry_s seconds is dropped at the flush: its
 * series ends downstream, and a name no longer sent gives its memory back. */
static int metric_expired(const struct metric *m, uint64_t expiry_s)
{
    uint64_t idle_ms = g_now_ms - m->last_seen_ms;
#ifdef VPROF_CASE_FIX
    return idle_ms > expiry_s * 1000;
#else
    return idle_ms > expiry_s;  /* FIX: expiry_s is in seconds, idle_ms in ms: compare with expiry_s * 1000 */
#endif
}

/* Emits the interval's aggregates (order-independent: the backend receives a
 * set of series), starts the next interval and drops idle metrics. */
static void flush_interval(struct rollup *d)
{
    uint64_t interval = 0;
    for (size_t i = 0; i <= d->mask; i++)
        for (struct metric **pp = &d->slot[i], *m; (m = *pp);) {
            if (m->touched)
                interval += emit_metric(d, m);
            if (!metric_expired(m, d->expiry_s))
                pp = &m->next;
            else                        /* unlink and free it with its series and histogram */
                *pp = m->next, free(m->timer), free(m->series), free(m), d->live--, g_stats.expired++;
        }
    d->digest = (d->digest ^ interval) * FNV_PRIME, d->flushes++;
}

/* One datagram from the socket, stamped with its arrival time. */
static void rollup_recv(struct rollup *d, const char *buf, size_t len, uint64_t ts_ms)
{
    for (; ts_ms >= d->next_flush_ms; d->next_flush_ms += d->flush_ms)
        g_now_ms = d->next_flush_ms, flush_interval(d);
    g_now_ms = ts_ms, g_wall_ns = wall_ns();
    g_stats.packets++, g_stats.bytes += len;
    for (const char *p = buf, *end = buf + len; p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        if (n)
            handle_line(d, p, n);
        p += n + 1;
    }
    g_stats.proc_ns += wall_ns() - g_wall_ns;
}

/* ---------------------------------------------- mapping config and clients */
static const char *const kServices[] = {"payments", "checkout", "search", "auth", "catalog", "cart",
                                        "ledger", "mailer", "images", "geo", "billing", "reviews", "ads"};
static const char *const kSubsys[] = {"http", "db", "cache", "queue", "rpc", "worker"};
static const char *const kOps[] = {"get_item", "list_items", "put_item", "delete_item", "login", "refresh",
                                   "charge", "refund", "render", "resize", "lookup", "enqueue"};
static const char *const kStats[] = {"requests", "errors", "pool_size", "queue_depth", "latency", "duration"};
static const char *const kOpStat[] = {"op", "stat"}, *const kSvcOp[] = {"service", "op"},
                  *const kAll[] = {"service", "subsystem", "op", "stat"};

/* The mapping config: the rules service owners asked for, then one per
 * subsystem and statistic, then a catch-all. */
static void load_mapping_rules(void)
{
    struct map_rule *r = g_rules;
    for (int s = 0; s < NELEM(kServices); s++)
        for (int k = 0; k < NELEM(kSubsys); k += 2 + s % 3, r++) {
            snprintf(r->glob, sizeof r->glob, "svc.%s.%s.*.*", kServices[s], kSubsys[k]);
            snprintf(r->series, sizeof r->series, "%s_%s", kServices[s], kSubsys[k]);
            r->label = kOpStat;
        }
    for (int k = 0; k < NELEM(kSubsys); k++)
        for (int t = 0; t < NELEM(kStats); t++, r++) {
            snprintf(r->glob, sizeof r->glob, "svc.*.%s.*.%s", kSubsys[k], kStats[t]);
            snprintf(r->series, sizeof r->series, "%s_%s", kSubsys[k], kStats[t]);
            r->label = kSvcOp;
        }
    *r++ = (struct map_rule){"svc.*.*.*.*", "svc", kAll};
    g_nrules = (int)(r - g_rules);
}

/* What a client library sends for one metric: "name:" VALUE "|type|@rate|#tags\n". */
struct client_metric { char head[80], tail[112]; size_t head_len, tail_len; enum mtype type; };

static void make_client_metrics(struct client_metric *cm, int n, int sample_pct, rng_t *r)
{
    static const char *const kSuffix[N_MTYPE] = {"c", "g", "ms"};
    for (int i = 0; i < n; i++) {
        uint64_t k = rng_below(r, 10);
        enum mtype t = cm[i].type = k < 4 ? M_COUNTER : k < 5 ? M_GAUGE : M_TIMER;
        const char *svc = kServices[rng_below(r, NELEM(kServices))];
        cm[i].head_len = (size_t)snprintf(cm[i].head, sizeof cm[i].head, "svc.%s.%s.%s.%s:", svc,
                                          kSubsys[rng_below(r, NELEM(kSubsys))],
                                          kOps[rng_below(r, NELEM(kOps))], kStats[2 * t + rng_below(r, 2)]);
        char rate[16] = "", az = (char)('a' + rng_below(r, 3));
        if (sample_pct < 100 && t != M_GAUGE)
            snprintf(rate, sizeof rate, "|@0.%02d", sample_pct);
        cm[i].tail_len = (size_t)snprintf(cm[i].tail, sizeof cm[i].tail, "|%s%s|#env:prod,az:eu-west-1%c,"
                                          "host:%s-%03d\n", kSuffix[t], rate, az, svc, i % 97);
        if (i % 1000 == 999)            /* an old agent's heartbeat, not statsd at all */
            cm[i].head_len = (size_t)sprintf(cm[i].head, "heartbeat %d ", i);
    }
}

/* Values the clients report: counts (mostly 1), gauge levels, and timings in
 * milliseconds with three decimals. */
static char g_values[N_MTYPE][256][16];

static void make_values(rng_t *r)
{
    for (int v = 0; v < 256; v++) {
        snprintf(g_values[M_COUNTER][v], 16, "%u", v % 8 ? 1u : 1u + (unsigned)rng_below(r, 50));
        snprintf(g_values[M_GAUGE][v], 16, "%u", (unsigned)rng_below(r, 5000));
        uint64_t us = (50 + rng_below(r, 2000)) << rng_below(r, 8);
        snprintf(g_values[M_TIMER][v], 16, "%u.%03u", (unsigned)(us / 1000), (unsigned)(us % 1000));
    }
}

int main(int argc, char **argv)
{
    opt_t opts[] = {
        {"lines", "metric lines sent by the clients", 600000, 1, 100000000, 0},
        {"names", "distinct metrics (name, type and tags)", 8000, 1, 1000000, 0},
        {"events-per-sec", "application events per second, all clients", 50000, 1, 10000000, 0},
        {"sample-pct", "client sample rate of counters and timers, percent", 100, 1, 100, 0},
        {"flush-ms", "flush interval", 10000, 100, 3600000, 0},
        {"expiry-s", "drop metrics idle this long", 300, 1, 86400, 0},
        {"seed", "workload seed", 4242, 0, 1000000000, 0},
    };
    opts_parse(argc, argv, opts, NOPTS(opts));
    long lines = opts[0].value, eps = opts[2].value;
    int names = (int)opts[1].value, sample_pct = (int)opts[3].value;
    struct rollup d = {.slot = xcalloc(TABLE_SLOTS, sizeof *d.slot), .mask = TABLE_SLOTS - 1,
                       .flush_ms = (uint64_t)opts[4].value, .next_flush_ms = (uint64_t)opts[4].value,
                       .expiry_s = (uint64_t)opts[5].value};
    load_mapping_rules();
    rng_t r;
    rng_seed(&r, (uint64_t)opts[6].value);
    struct client_metric *cm = xcalloc((size_t)names, sizeof *cm);
    make_client_metrics(cm, names, sample_pct, &r);
    make_values(&r);

    /* Sampling clients send one line per 100/sample_pct events. */
    double gap_us = 1e6 * 100.0 / ((double)eps * sample_pct), clock_us = 0;
    char dgram[DGRAM_MAX + 256];
    for (long sent = 0; sent < lines;) {
        char *o = dgram;
        for (; sent < lines && o - dgram < DGRAM_MAX - 256; sent++) {
            uint64_t x = rng_next(&r);
            clock_us += gap_us * (0.5 + (double)(x >> 54) / 1024.0);
            const struct client_metric *c = &cm[(x & 0xffffffff) % (uint64_t)names];
            const char *v = g_values[c->type][x >> 42 & 255];
            o = (char *)memcpy(o, c->head, c->head_len) + c->head_len;
            o = (char *)memcpy(o, v, strlen(v)) + strlen(v);
            o = (char *)memcpy(o, c->tail, c->tail_len) + c->tail_len;
        }
        rollup_recv(&d, dgram, (size_t)(o - dgram), (uint64_t)(clock_us / 1000.0));
    }
    g_now_ms = d.next_flush_ms;
    flush_interval(&d);                 /* the shutdown flush */

    printf("%lu flushes, %lu series emitted, counters %.1f, %lu timer samples, digest %016lx\n",
           d.flushes, d.series_out, d.counter_total, d.timer_samples, d.digest);
    fprintf(stderr, "packets=%lu bytes=%lu lines=%lu bad_lines=%lu created=%lu expired=%lu probes=%lu "
            "live=%zu proc_ms=%.1f\n", g_stats.packets, g_stats.bytes, g_stats.lines, g_stats.bad_lines,
            g_stats.created, g_stats.expired, g_stats.probes, d.live, g_stats.proc_ns / 1e6);
    return 0;
}
