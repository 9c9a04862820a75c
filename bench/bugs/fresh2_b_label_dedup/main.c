/* Written for the vprof bug corpus by a helper that had not seen the
 * profiler (2026-11-28); not modelled on a real issue. The fix is the
 * VPROF_CASE_FIX variant; the line marked FIX is the bug.
 *
 * scrapeingest - the ingest side of a metrics collector. Targets expose
 * their samples in a text format, one sample a line:
 *
 *     http_requests_total{job="api",instance="10.0.3.7:9100",...} 1234
 *
 * Each line is parsed into a label set (duplicate label names are dropped,
 * the first one wins, as after a relabelling step that re-adds "job"), the
 * set is sorted by name, hashed, and looked up in the series registry, where
 * the sample updates the series' value and last-seen time.
 *
 * The collector keeps a coarse clock (g_now_ns, refreshed every 64 lines)
 * and counters (g_stats) that the whole hot path reads and bumps, as real
 * collectors do for staleness and their own metrics: they differ between any
 * two runs.
 *
 * The bug: labels_add_unique() finds duplicates by comparing the new name
 * with every label already in the set, so a line of L labels costs L*L/2
 * name comparisons. Targets with a handful of labels (normal: 8) do not
 * notice; targets that attach every pod label and annotation as a label
 * (buggy: 64 per line) spend their time in label_name_eq(). The same number
 * of label pairs is ingested in both runs.
 */
#include "../common/corpus.h"
#include <time.h>

#define MAX_LABELS   512
#define NAME_MAX_LEN 48
#define VAL_MAX_LEN  48

struct label {
    const char *name, *value;
    uint32_t nlen, vlen;
    uint32_t hash;          /* of the name: used by the series hash */
    uint32_t slot;          /* slot in the name index + 1 (fix variant) */
};

struct labelset {
    struct label v[MAX_LABELS];
    uint32_t n;
    uint32_t index[2 * MAX_LABELS];  /* open addressing on name hash: label + 1 */
};

struct series {
    uint64_t key;
    char *canon;            /* metric{sorted labels}, for collisions */
    double value;
    uint64_t last_seen_ns, updates;
    struct series *next;
};

/* ------------------------------------------------ collector-wide state */
static uint64_t g_now_ns, g_start_ns;
static uint64_t g_staleness_ns = 300ull * 1000000000ull;
static uint64_t g_scrape_deadline_ns;
static struct {
    uint64_t lines, labels, dup_labels, name_compares, series_created, stale_revived,
        late_lines, bytes;
} g_stats;

static uint64_t clock_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void clock_refresh(void)
{
    g_now_ns = clock_ns();
}

/* ------------------------------------------------------- label sets */
static uint32_t name_hash(const char *s, uint32_t n)
{
    uint32_t h = 2166136261u;
    for (uint32_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 16777619u;
    return h;
}

static int label_name_eq(const struct label *l, const char *name, uint32_t nlen)
{
    uint32_t n = l->nlen < nlen ? l->nlen : nlen;
    g_stats.name_compares++;
    for (uint32_t i = 0; i < n; i++)
        if (l->name[i] != name[i])
            return 0;
    return l->nlen == nlen;
}

static void labels_reset(struct labelset *ls)
{
    for (uint32_t i = 0; i < ls->n; i++)
        if (ls->v[i].slot)
            ls->index[ls->v[i].slot - 1] = 0;
    ls->n = 0;
}

/* Adds name=value unless the set has the name already (first one wins).
 * Returns 0 for a duplicate. */
static int labels_add_unique(struct labelset *ls, const char *name, uint32_t nlen,
                             const char *value, uint32_t vlen)
{
    uint32_t h = name_hash(name, nlen), slot = 0;
    g_stats.labels++;
#ifdef VPROF_CASE_FIX
    const uint32_t mask = 2 * MAX_LABELS - 1;
    for (slot = h & mask; ls->index[slot]; slot = (slot + 1) & mask) {
        const struct label *l = &ls->v[ls->index[slot] - 1];
        if (l->hash == h && label_name_eq(l, name, nlen)) {
            g_stats.dup_labels++;
            return 0;
        }
    }
    ls->index[slot] = ls->n + 1;
    slot++;
#else
    for (uint32_t i = 0; i < ls->n; i++) { /* FIX: probe the name-hash index (ls->index, by l->hash) instead of comparing with every label */
        if (label_name_eq(&ls->v[i], name, nlen)) {
            g_stats.dup_labels++;
            return 0;
        }
    }
#endif
    if (ls->n == MAX_LABELS) {
        fprintf(stderr, "too many labels\n");
        exit(1);
    }
    struct label *l = &ls->v[ls->n++];
    l->name = name;
    l->nlen = nlen;
    l->value = value;
    l->vlen = vlen;
    l->hash = h;
    l->slot = slot;
    return 1;
}


static int label_cmp(const void *a, const void *b)
{
    const struct label *x = a, *y = b;
    uint32_t n = x->nlen < y->nlen ? x->nlen : y->nlen;
    int c = memcmp(x->name, y->name, n);
    return c ? c : (int)x->nlen - (int)y->nlen;
}

/* Sorts the set by name: the series identity does not depend on the order
 * in which a target writes its labels. The name index holds positions, so
 * it is emptied first. */
static void labels_sort(struct labelset *ls)
{
    for (uint32_t i = 0; i < ls->n; i++)
        if (ls->v[i].slot) {
            ls->index[ls->v[i].slot - 1] = 0;
            ls->v[i].slot = 0;
        }
    qsort(ls->v, ls->n, sizeof ls->v[0], label_cmp);
}

/* ------------------------------------------------------ the registry */
#define REG_BUCKETS 65536u

static struct series *registry[REG_BUCKETS];
static uint64_t registry_size;

static uint64_t series_key(const char *metric, uint32_t mlen, const struct labelset *ls)
{
    uint64_t k = name_hash(metric, mlen);
    for (uint32_t i = 0; i < ls->n; i++) {
        k = (k ^ ls->v[i].hash) * 0x100000001b3ull;
        k = (k ^ name_hash(ls->v[i].value, ls->v[i].vlen)) * 0x100000001b3ull;
    }
    return k;
}

static char *put_bytes(char *o, const char *s, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        *o++ = s[i];
    return o;
}

/* metric{a="x",b="y"}: the series' canonical name. */
static size_t series_canon(char *out, const char *metric, uint32_t mlen, const struct labelset *ls)
{
    char *o = put_bytes(out, metric, mlen);
    *o++ = '{';
    for (uint32_t i = 0; i < ls->n; i++) {
        if (i)
            *o++ = ',';
        o = put_bytes(o, ls->v[i].name, ls->v[i].nlen);
        *o++ = '=';
        *o++ = '"';
        o = put_bytes(o, ls->v[i].value, ls->v[i].vlen);
        *o++ = '"';
    }
    *o++ = '}';
    *o = 0;
    return (size_t)(o - out);
}

static struct series *registry_get(uint64_t key, const char *canon, size_t clen)
{
    struct series **b = &registry[key & (REG_BUCKETS - 1)];
    for (struct series *s = *b; s; s = s->next)
        if (s->key == key && strcmp(s->canon, canon) == 0) {
            if (g_now_ns - s->last_seen_ns > g_staleness_ns)
                g_stats.stale_revived++;
            return s;
        }
    struct series *s = calloc(1, sizeof *s);
    s->canon = malloc(clen + 1);
    if (!s || !s->canon) {
        perror("malloc");
        exit(1);
    }
    memcpy(s->canon, canon, clen + 1);
    s->key = key;
    s->last_seen_ns = g_now_ns;
    s->next = *b;
    *b = s;
    registry_size++;
    g_stats.series_created++;
    return s;
}

static void series_update(struct series *s, double v)
{
    s->value = v;
    s->updates++;
    s->last_seen_ns = g_now_ns;
}

/* --------------------------------------------------------- the parser */
static uint32_t scan_until(const char *p, char stop)
{
    uint32_t n = 0;
    while (p[n] && p[n] != stop && p[n] != '\n')
        n++;
    return n;
}

static double parse_value(const char *p, const char **end)
{
    double v = 0;
    while (*p >= '0' && *p <= '9')
        v = v * 10 + (*p++ - '0');
    if (*p == '.') {
        double f = 0.1;
        for (p++; *p >= '0' && *p <= '9'; p++, f /= 10)
            v += (*p - '0') * f;
    }
    *end = p;
    return v;
}

static char canon_buf[MAX_LABELS * (NAME_MAX_LEN + VAL_MAX_LEN + 4) + 128];

/* One exposition line; returns the pointer past its newline. */
static const char *ingest_line(struct labelset *ls, const char *p)
{
    if ((g_stats.lines++ & 63) == 0)
        clock_refresh();
    if (g_now_ns > g_scrape_deadline_ns)
        g_stats.late_lines++;
    const char *metric = p;
    uint32_t mlen = scan_until(p, '{');
    p += mlen;
    labels_reset(ls);
    if (*p == '{') {
        p++;
        while (*p && *p != '}') {
            uint32_t nlen = scan_until(p, '=');
            const char *name = p;
            p += nlen;
            if (p[0] != '=' || p[1] != '"')
                goto bad;
            p += 2;
            const char *value = p;
            uint32_t vlen = scan_until(p, '"');
            p += vlen;
            if (*p != '"')
                goto bad;
            p++;
            labels_add_unique(ls, name, nlen, value, vlen);
            if (*p == ',')
                p++;
        }
        if (*p != '}')
            goto bad;
        p++;
    }
    while (*p == ' ')
        p++;
    double v = parse_value(p, &p);
    labels_sort(ls);
    size_t clen = series_canon(canon_buf, metric, mlen, ls);
    series_update(registry_get(series_key(metric, mlen, ls), canon_buf, clen), v);
    g_stats.bytes += (uint64_t)(p - metric) + 1;
    return *p == '\n' ? p + 1 : p;
bad:
    fprintf(stderr, "malformed line near '%.40s'\n", metric);
    exit(1);
}

/* ------------------------------------------------------ the targets */
static const char *const kWords[] = {
    "app", "component", "version", "tier", "team", "owner", "release", "track",
    "zone", "rack", "canary", "shard", "cluster", "revision", "chart", "managed_by",
};
#define NWORDS (sizeof kWords / sizeof kWords[0])
static const char *const kMetrics[] = {
    "http_requests_total", "http_request_duration_seconds_sum", "process_cpu_seconds_total",
    "go_goroutines", "rpc_client_errors_total", "cache_hits_total",
};
#define NMETRICS (sizeof kMetrics / sizeof kMetrics[0])

/* One scrape of a target: `series` lines of `labels` labels each (four
 * well-known ones, the pod's labels, and for one series in four a second
 * "job" added by relabelling). */
static size_t render_scrape(char *out, long scrape, long series, long labels, rng_t *r)
{
    char *o = out;
    for (long s = 0; s < series; s++) {
        o += sprintf(o, "%s{job=\"kubernetes-pods\",instance=\"10.%ld.%ld.%ld:9100\","
                        "namespace=\"ns-%ld\",pod=\"web-%04ld\"",
                     kMetrics[s % NMETRICS], s % 7, s / 7 % 250, s % 250, s % 5, s / 6);
        for (long k = 4; k < labels; k++)
            o += sprintf(o, ",k8s_pod_label_%s_%ld=\"v%ld\"", kWords[k % NWORDS], k / (long)NWORDS,
                         (s * 31 + k) % 97);
        if (s % 4 == 0)
            o += sprintf(o, ",job=\"relabelled\"");
        o += sprintf(o, "} %ld.%ld\n", scrape * 100 + (long)rng_below(r, 100), s % 10);
    }
    *o = 0;
    return (size_t)(o - out);
}

int main(int argc, char **argv)
{
    opt_t opts[] = {
        {"labels", "labels per sample line (at least 4)", 8, 4, MAX_LABELS - 1, 0},
        {"pairs", "label pairs ingested in all", 1000000, 1000, 1000000000, 0},
        {"series", "series per target scrape", 400, 1, 100000, 0},
        {"seed", "workload seed", 77, 0, 1000000000, 0},
    };
    opts_parse(argc, argv, opts, NOPTS(opts));
    long labels = opt_get(opts, NOPTS(opts), "labels");
    long series = opt_get(opts, NOPTS(opts), "series");
    long lines = opt_get(opts, NOPTS(opts), "pairs") / labels;
    long scrapes = (lines + series - 1) / series;
    rng_t r;
    rng_seed(&r, (uint64_t)opt_get(opts, NOPTS(opts), "seed"));

    g_start_ns = g_now_ns = clock_ns();
    g_scrape_deadline_ns = g_start_ns + 60ull * 1000000000ull;
    char *payload = malloc((size_t)series * (size_t)(labels + 2) * (NAME_MAX_LEN + 16) + 64);
    struct labelset *ls = calloc(1, sizeof *ls);
    if (!payload || !ls) {
        perror("malloc");
        return 1;
    }
    uint64_t samples = 0;
    for (long sc = 0; sc < scrapes; sc++) {
        size_t len = render_scrape(payload, sc, series, labels, &r);
        for (const char *p = payload; p < payload + len; samples++)
            p = ingest_line(ls, p);
    }

    double total = 0;
    uint64_t updates = 0;
    for (uint32_t b = 0; b < REG_BUCKETS; b++)
        for (struct series *s = registry[b]; s; s = s->next) {
            total += s->value;
            updates += s->updates;
        }
    printf("%ld scrapes, %llu samples, %llu series, %llu updates, value sum %.1f\n", scrapes,
           (unsigned long long)samples, (unsigned long long)registry_size,
           (unsigned long long)updates, total);
    fprintf(stderr, "labels %llu (duplicates %llu), name compares %llu, %llu bytes, "
                    "late %llu, revived %llu, %.3f s\n",
            (unsigned long long)g_stats.labels, (unsigned long long)g_stats.dup_labels,
            (unsigned long long)g_stats.name_compares, (unsigned long long)g_stats.bytes,
            (unsigned long long)g_stats.late_lines, (unsigned long long)g_stats.stale_revived,
            (double)(clock_ns() - g_start_ns) / 1e9);
    return 0;
}
