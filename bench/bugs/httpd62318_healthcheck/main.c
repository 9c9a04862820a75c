/* A reverse proxy with backend health checks, modelled on Apache httpd bug
 * 62318 ("health check is executed more often than configured interval").
 *
 * The proxy balances requests over backend workers. A watchdog callback
 * runs every 100 ms (simulated clock) and starts a health check for each
 * worker whose interval has elapsed; a check connects, sends a request,
 * parses the response and evaluates the configured condition (hcexpr).
 *
 * The bug: the "is a check due?" condition converts the interval to whole
 * seconds before comparing, so any interval below one second (e.g.
 * hcinterval=900ms) becomes 0 and every worker is checked on every tick.
 * With hcinterval=5 (normal) checks are rare; with 900ms (buggy) there are
 * 50 times more than with the normal setting and 9 times more than
 * configured. gprof blames the response parser and the expression
 * evaluator; the wrong comparison in the watchdog callback is the root
 * cause. */
#include "../common/corpus.h"

typedef int64_t apr_time_t;                   /* microseconds */
#define APR_USEC_PER_SEC 1000000LL
#define WATCHDOG_TICK    (100 * 1000LL)       /* 100 ms */
#define MAX_WORKERS      64

static __attribute__((unused)) apr_time_t apr_time_sec(apr_time_t t) { return t / APR_USEC_PER_SEC; }
static apr_time_t apr_time_from_sec(apr_time_t s) { return s * APR_USEC_PER_SEC; }

typedef struct {
    char       name[32];
    apr_time_t interval;          /* hcinterval, microseconds */
    apr_time_t updated;           /* last check */
    int        status_ok, fails, passes;
    long       load;              /* requests assigned */
    uint32_t   seed;
} proxy_worker;

static proxy_worker workers[MAX_WORKERS];
static int n_workers;
static uint64_t n_checks, n_requests_ok;

/* "30", "30s", "900ms": as ap_timeout_parameter_parse, into microseconds. */
static int ap_timeout_parameter_parse(const char *s, apr_time_t *out)
{
    char *end;
    long long v = strtoll(s, &end, 10);
    if (end == s || v < 0)
        return -1;
    if (*end == 0 || strcmp(end, "s") == 0)
        *out = v * APR_USEC_PER_SEC;
    else if (strcmp(end, "ms") == 0)
        *out = v * 1000;
    else
        return -1;
    return 0;
}

/* ---------------------------------------------------------- health check */
static int hc_build_request(const proxy_worker *w, char *buf, size_t n)
{
    return snprintf(buf, n, "GET /health HTTP/1.1\r\nHost: %s\r\nUser-Agent: mod_proxy_hcheck\r\n"
                    "Connection: close\r\n\r\n", w->name);
}

/* The backend's answer, generated deterministically per worker and check. */
static int hc_backend_respond(proxy_worker *w, char *buf, size_t n)
{
    w->seed = w->seed * 1103515245u + 12345u;
    int healthy = (w->seed >> 16) % 50 != 0;
    int len = snprintf(buf, n, "HTTP/1.1 %s\r\nServer: backend\r\nContent-Type: text/plain\r\n"
                       "X-Load: %u\r\nX-Queue: %u\r\nContent-Length: 2\r\n\r\n%s",
                       healthy ? "200 OK" : "503 Service Unavailable",
                       (w->seed >> 8) % 100, (w->seed >> 4) % 32, healthy ? "OK" : "NO");
    return len;
}

typedef struct { int status; char headers[8][2][32]; int n_headers; const char *body; } hc_response;

static int hc_read_headers(const char *p, hc_response *r)
{
    if (strncmp(p, "HTTP/1.1 ", 9) != 0)
        return -1;
    r->status = atoi(p + 9);
    r->n_headers = 0;
    p = strstr(p, "\r\n");
    while (p && strncmp(p, "\r\n\r\n", 4) != 0 && r->n_headers < 8) {
        p += 2;
        const char *colon = strchr(p, ':'), *eol = strstr(p, "\r\n");
        if (!colon || !eol || colon > eol)
            return -1;
        size_t kl = (size_t)(colon - p), vl = (size_t)(eol - colon - 2);
        snprintf(r->headers[r->n_headers][0], 32, "%.*s", (int)(kl < 31 ? kl : 31), p);
        snprintf(r->headers[r->n_headers][1], 32, "%.*s", (int)(vl < 31 ? vl : 31), colon + 2);
        r->n_headers++;
        p = eol;
    }
    r->body = p ? p + 4 : "";
    return 0;
}

/* hcexpr: "%{REQUEST_STATUS} < 400 && hc('body') =~ /OK/", evaluated by a
 * small interpreter over the parsed response. */
static int hc_expr_match(const char *text, const char *pat)
{
    size_t tl = strlen(text), pl = strlen(pat);
    for (size_t i = 0; i + pl <= tl; i++) {
        size_t k = 0;
        while (k < pl && (pat[k] == '.' || pat[k] == text[i + k]))
            k++;
        if (k == pl)
            return 1;
    }
    return 0;
}

static int hc_expr_eval(const hc_response *r)
{
    int ok = r->status < 400 && hc_expr_match(r->body, "OK");
    for (int i = 0; i < r->n_headers; i++)
        if (hc_expr_match(r->headers[i][0], "X-Q.eue"))
            ok = ok && atoi(r->headers[i][1]) < 31;
    return ok;
}

/* Health checks go over TLS: the key exchange is the costly part of a
 * check (modular exponentiation, as in an RSA/DH handshake). */
static uint64_t mulmod(uint64_t a, uint64_t b, uint64_t m)
{
    return (uint64_t)((unsigned __int128)a * b % m);
}

static uint64_t hc_tls_handshake(const proxy_worker *w)
{
    const uint64_t p = 0xffffffffffffffc5ULL;      /* largest 64-bit prime */
    uint64_t base = 0x9e3779b97f4a7c15ULL ^ w->seed, result = 1;
    for (int round = 0; round < 10; round++) {
        uint64_t e = 0xd1b54a32d192ed03ULL + (uint64_t)round;
        while (e) {
            if (e & 1)
                result = mulmod(result, base, p);
            base = mulmod(base, base, p);
            e >>= 1;
        }
    }
    return result;
}

static uint64_t hc_session_keys;

static void hc_check(proxy_worker *w, apr_time_t now)
{
    char req[256], resp[512];
    hc_response r;
    hc_session_keys ^= hc_tls_handshake(w);
    hc_build_request(w, req, sizeof req);
    hc_backend_respond(w, resp, sizeof resp);
    int ok = hc_read_headers(resp, &r) == 0 && hc_expr_eval(&r);
    if (ok) { w->passes++; w->fails = 0; } else { w->fails++; }
    w->status_ok = w->fails < 2;
    w->updated = now;
    n_checks++;
}

/* Runs every watchdog tick: starts the checks that are due. */
static void hc_watchdog_callback(apr_time_t now)
{
    for (int i = 0; i < n_workers; i++) {
        proxy_worker *w = &workers[i];
#ifdef VPROF_CASE_FIX
        if (now > w->updated + w->interval)
#else
        if (now > w->updated + apr_time_from_sec(apr_time_sec(w->interval))) /* FIX: compare with w->interval itself */
#endif
            hc_check(w, now);
    }
}

/* ---------------------------------------------------------------- proxy */
static proxy_worker *find_best_bybusyness(void)
{
    proxy_worker *best = NULL;
    for (int i = 0; i < n_workers; i++)
        if (workers[i].status_ok && (!best || workers[i].load < best->load))
            best = &workers[i];
    return best;
}

static uint32_t proxy_handle_request(rng_t *r)
{
    char uri[64];
    snprintf(uri, sizeof uri, "/app/item/%llu", (unsigned long long)rng_below(r, 100000));
    proxy_worker *w = find_best_bybusyness();
    if (!w)
        return 0;
    w->load++;
    uint32_t h = 2166136261u;
    for (int pass = 0; pass < 64; pass++)          /* headers, body filters */
        for (const char *p = uri; *p; p++)
            h = (h ^ (uint32_t)(*p + pass)) * 16777619u;
    if (rng_below(r, 4) == 0 && w->load > 0)
        w->load--;
    n_requests_ok++;
    return h;
}

int main(int argc, char **argv)
{
    opt_t opts[] = {
        { "workers",     "backend workers",                      8, 1, MAX_WORKERS, 0 },
        { "seconds",     "simulated seconds of traffic",       600, 1, 1000000, 0 },
        { "rps",         "requests per simulated second",      400, 0, 10000000, 0 },
        { "interval-ms", "hcinterval in ms (written NNNms if < 1000, else seconds)", 5000, 1, 3600000, 0 },
    };
    opts_parse(argc, argv, opts, NOPTS(opts));
    n_workers = (int)opt_get(opts, NOPTS(opts), "workers");
    long ms = opt_get(opts, NOPTS(opts), "interval-ms");
    char conf[32];
    /* The value as an administrator writes it in httpd.conf. */
    if (ms % 1000 == 0) snprintf(conf, sizeof conf, "%ld", ms / 1000);
    else snprintf(conf, sizeof conf, "%ldms", ms);
    for (int i = 0; i < n_workers; i++) {
        snprintf(workers[i].name, sizeof workers[i].name, "backend%d:8080", i);
        if (ap_timeout_parameter_parse(conf, &workers[i].interval) != 0) {
            fprintf(stderr, "hcinterval '%s': bad value\n", conf);
            return 2;
        }
        workers[i].status_ok = 1;
        workers[i].seed = 62318u + (uint32_t)i;
    }

    rng_t r;
    rng_seed(&r, 62318);
    apr_time_t end = apr_time_from_sec(opt_get(opts, NOPTS(opts), "seconds"));
    long per_tick = opt_get(opts, NOPTS(opts), "rps") / 10;
    uint64_t h = 0;
    for (apr_time_t now = 0; now < end; now += WATCHDOG_TICK) {
        for (long k = 0; k < per_tick; k++)
            h ^= proxy_handle_request(&r);
        hc_watchdog_callback(now);
    }
    long passes = 0;
    for (int i = 0; i < n_workers; i++)
        passes += workers[i].passes;
    printf("hcinterval=%s: %llu requests (%08llx)\n", conf,
           (unsigned long long)n_requests_ok, (unsigned long long)h);
    fprintf(stderr, "%llu health checks, %ld passed\n", (unsigned long long)n_checks, passes);
    return 0;
}
