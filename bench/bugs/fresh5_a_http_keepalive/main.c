/* Written for the vprof bug corpus by a helper that had not seen the
 * profiler (2026-11-29); not modelled on a real issue. The fix is the
 * VPROF_CASE_FIX variant; the line marked FIX is the bug.
 *
 * httpcore - the core of a small event-driven HTTP/1.1 server, driven
 * in-process by simulated API clients (no sockets) that pipeline requests on
 * keep-alive connections. The server parses every complete request in a
 * connection's buffer, then routes and answers them in order, deciding after
 * each response whether the connection stays open; when it closes, the client
 * retries the unanswered requests on a new connection.
 *
 * The bug: conn_keep_alive() applies the HTTP/1.0 rule (persistent only with
 * "Connection: keep-alive") to HTTP/1.1 too ("<=" on the version). Clients
 * that send the header anyway do not notice; clients relying on the HTTP/1.1
 * default get one answer per connection, and their pipelines are parsed over
 * and over. */
#include "../common/corpus.h"
#include <stdarg.h>
#include <stddef.h>

#define IN_CAP        16384   /* per-connection input buffer: one read */
#define MAX_PIPELINE  32      /* requests parsed ahead per readable event */
#define MAX_HEADERS   24
#define MAX_BUDGET    200     /* requests in a client session */
#define CONCURRENCY   64      /* client sessions running at once */

enum { M_GET, M_HEAD, M_POST, M_PUT, M_DELETE, N_METHODS };
static const char *const kMethods[N_METHODS] = {"GET", "HEAD", "POST", "PUT", "DELETE"};
enum { HTTP_VERSION_10 = 1000, HTTP_VERSION_11 = 1001 };    /* major * 1000 + minor */
enum { H_OTHER, H_HOST, H_CONNECTION, H_CONTENT_LENGTH, H_TRANSFER_ENCODING, H_REQUEST_ID, N_KNOWN };
static const struct { const char *name; size_t len; } kKnown[N_KNOWN] = {{"", 0}, {"host", 4},
    {"connection", 10}, {"content-length", 14}, {"transfer-encoding", 17}, {"x-request-id", 12}};

struct header { const char *name, *value; uint16_t nlen, vlen; uint8_t id; };
/* A parsed request; its pointers point into the connection's input buffer. */
struct request {
    int method, version, nhdr;
    const char *path, *body;
    size_t path_len, content_length;
    struct header hdr[MAX_HEADERS];
    uint64_t request_id;
    uint8_t has_host, conn_close, conn_keepalive, bad;
};

struct sbuf { char *p; size_t len, cap; };
struct response { int status; const char *body; size_t len; };
struct conn {
    size_t in_len, in_pos;
    int qn, served, answered, closing;  /* answered: responses in out */
    struct sbuf out;                    /* responses the client has not read */
    struct request q[MAX_PIPELINE];     /* the big parts last: not cleared */
    char in[IN_CAP];
};
struct server {
    int max_keepalive_requests;
    struct sbuf body, log;              /* the response being built; the access log */
    uint64_t conns, parse_calls, dropped, served, by_class[6], log_sum;
};

/* RFC 9110 token characters, a bit per byte value. */
static const uint64_t kTchar[4] = {0x03ff6cfa00000000ull, 0x57ffffffc7fffffeull, 0, 0};
#define IS_TCHAR(ch) ((kTchar[(uint8_t)(ch) >> 6] >> ((uint8_t)(ch) & 63)) & 1)

/* Appends printf output, growing the buffer when it does not fit. */
static void sb_printf(struct sbuf *b, const char *fmt, ...)
{
    va_list ap;
    for (;;) {
        va_start(ap, fmt);
        int n = vsnprintf(b->cap ? b->p + b->len : NULL, b->cap - b->len, fmt, ap);
        va_end(ap);
        if ((size_t)n < b->cap - b->len)
            return (void)(b->len += (size_t)n);
        if (!(b->p = realloc(b->p, b->cap = (b->cap + (size_t)n + 64) * 2)))
            perror("realloc"), exit(1);
    }
}

static uint64_t fnv1a(const char *s, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (uint8_t)s[i]) * 0x100000001b3ull;
    return h;
}

static uint64_t mix64(uint64_t x)
{
    x = (x ^ (x >> 31)) * 0x7fb5d329728ea185ull;
    return (x ^ (x >> 27)) * 0x81dadef4bc2dd44dull;
}

/* B is in lower case (a header name or an option). OR-ing 0x20 folds A-Z, as
 * nginx does, and folds no other printable byte onto a letter, digit or '-'. */
static int ci_equal(const char *a, const char *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if ((a[i] | 0x20) != b[i])
            return 0;
    return 1;
}

static const char *mark_bad(struct request *r) { r->bad = 1; return NULL; }

/* Digits only, below 2^32: "Content-Length: 12abc" is a framing error. */
static int parse_u64(const char *v, size_t n, uint64_t *out)
{
    uint64_t x = 0;
    for (size_t i = 0; i < n; i++)
        if (v[i] < '0' || v[i] > '9' || (x = x * 10 + (uint64_t)(v[i] - '0')) > UINT32_MAX)
            return 0;
    return *out = x, n > 0;
}

/* "Connection: keep-alive, Upgrade" is a list of options. */
static void parse_connection(struct request *r, const char *v, size_t n)
{
    for (const char *end = v + n, *t; v < end;) {
        while (v < end && (*v == ' ' || *v == ','))
            v++;
        for (t = v; v < end && *v != ',' && *v != ' '; v++)
            ;
        r->conn_close |= v - t == 5 && ci_equal(t, "close", 5);
        r->conn_keepalive |= v - t == 10 && ci_equal(t, "keep-alive", 10);
    }
}

static void apply_header(struct request *r, struct header *h)
{
    uint64_t v = 0;
    for (h->id = N_KNOWN - 1; h->id > H_OTHER; h->id--)
        if (kKnown[h->id].len == h->nlen && ci_equal(h->name, kKnown[h->id].name, h->nlen))
            break;
    switch (h->id) {
    case H_HOST: r->has_host = 1; break;
    case H_CONNECTION: parse_connection(r, h->value, h->vlen); break;
    case H_CONTENT_LENGTH:                          /* a body fits in the buffer */
        r->bad |= !parse_u64(h->value, h->vlen, &v) || v > IN_CAP / 2, r->content_length = (size_t)v;
        break;
    case H_TRANSFER_ENCODING: r->bad = 1; break;     /* no chunked uploads here */
    case H_REQUEST_ID: parse_u64(h->value, h->vlen, &r->request_id); break;   /* echoed if a number */
    }
}

/* "Name: value\r\n"; NULL when the line is incomplete or malformed. */
static const char *parse_header_line(const char *p, const char *end, struct request *r)
{
    const char *name = p, *vend;
    while (p < end && IS_TCHAR(*p))
        p++;
    if (p == end || *p != ':' || p == name || r->nhdr == MAX_HEADERS)
        return p == end ? NULL : mark_bad(r);       /* incomplete, or malformed */
    struct header *h = &r->hdr[r->nhdr++];
    h->name = name, h->nlen = (uint16_t)(p - name);
    for (p++; p < end && (*p == ' ' || *p == '\t'); p++)
        ;
    for (h->value = p; p < end && *p != '\r'; p++)
        if ((uint8_t)*p < 0x20 && *p != '\t')
            return mark_bad(r);
    if (end - p < 2 || p[1] != '\n')
        return end - p < 2 ? NULL : mark_bad(r);
    for (vend = p; vend > h->value && (vend[-1] == ' ' || vend[-1] == '\t'); vend--)
        ;
    h->vlen = (uint16_t)(vend - h->value);
    apply_header(r, h);
    return r->bad ? NULL : p + 2;
}

/* "GET /path?query HTTP/1.1\r\n"; the router sees the path only. */
static const char *parse_request_line(const char *p, const char *end, struct request *r)
{
    const char *tok = p, *target, *qmark = NULL;
    while (p < end && IS_TCHAR(*p))
        p++;
    if (p == end)
        return NULL;                                /* incomplete */
    for (r->method = N_METHODS - 1; r->method >= 0; r->method--)
        if (strlen(kMethods[r->method]) == (size_t)(p - tok) && !memcmp(kMethods[r->method], tok, (size_t)(p - tok)))
            break;
    if (*p != ' ' || r->method < 0)
        return mark_bad(r);
    for (target = ++p; p < end && (uint8_t)*p > ' '; p++)
        if (*p == '?' && !qmark)
            qmark = p;
    if (p == end || *p != ' ' || *target != '/')
        return p == end ? NULL : mark_bad(r);
    r->path = target, r->path_len = (size_t)((qmark ? qmark : p) - target);
    if (end - ++p < 10 || memcmp(p, "HTTP/1.", 7) || p[7] < '0' || p[7] > '9' || p[8] != '\r' || p[9] != '\n')
        return end - p < 10 ? NULL : mark_bad(r);
    r->version = HTTP_VERSION_10 + (p[7] - '0');
    return p + 10;
}

/* Bytes of one complete request, 0 if it has not all arrived, -1 if it is
 * malformed. Keeps no state between calls, like picohttpparser. */
static long parse_request(const char *buf, size_t len, struct request *r)
{
    const char *p, *end = buf + len;
    r->nhdr = 0, r->content_length = 0, r->request_id = 0, r->body = NULL, r->version = HTTP_VERSION_10;
    r->has_host = r->conn_close = r->conn_keepalive = r->bad = 0;
    if (!(p = parse_request_line(buf, end, r)))
        return r->bad ? -1 : 0;
    while (end - p < 2 || p[0] != '\r' || p[1] != '\n')
        if (end - p < 2 || !(p = parse_header_line(p, end, r)))
            return r->bad ? -1 : 0;
    p += 2;
    if (r->version >= HTTP_VERSION_11 && !r->has_host)
        return r->bad = 1, -1;                      /* RFC 9112, 3.2 */
    if ((size_t)(end - p) < r->content_length)
        return 0;
    r->body = p;
    return (long)(p - buf) + (long)r->content_length;
}

struct call { const struct request *r; uint64_t id; struct sbuf *b; int status; };  /* handler context */

/* GET /api/v1/users/:id: the profile and the recent logins. */
static void h_user(struct call *k)
{
    static const char *const kNames[] = {"alpine", "basalt", "cedar", "delta", "ember", "fjord"};
    uint64_t h = mix64(k->id);
    sb_printf(k->b, "{\"id\":%llu,\"name\":\"%s%llu\",\"plan\":\"%s\",\"logins\":[", (unsigned long long)k->id,
              kNames[h % 6], (unsigned long long)(h >> 50), h & 16 ? "pro" : "free");
    for (uint64_t i = 0, x; i < 4 + h % 8; i++)
        x = mix64(h + i), sb_printf(k->b, "%s{\"at\":%llu,\"ip\":\"10.%u.%u.%u\"}", i ? "," : "",
                                    (unsigned long long)(1700000000 + x % 9000000), (unsigned)(x >> 24) & 255,
                                    (unsigned)(x >> 32) & 255, (unsigned)(x >> 40) & 255);
    sb_printf(k->b, "]}\n");
}

/* POST /api/v1/events: one JSON event a line. */
static void h_events(struct call *k)
{
    uint64_t lines = 0;
    for (size_t i = 0; i < k->r->content_length; i++)
        lines += k->r->body[i] == '\n';
    k->status = 202;
    sb_printf(k->b, "{\"accepted\":%llu,\"digest\":%llu}\n", (unsigned long long)lines,
              (unsigned long long)(fnv1a(k->r->body, k->r->content_length) >> 16));
}

static const struct route { int method; const char *pattern; void (*fn)(struct call *); } kRoutes[] = {
    {M_GET, "/api/v1/users/:id", h_user}, {M_POST, "/api/v1/events", h_events}};

/* Segment by segment; a ":id" segment must be a number and is captured. */
static int route_match(const char *pat, const char *path, size_t len, uint64_t *id)
{
    const char *p = path, *end = path + len;
    while (*pat) {
        if (*pat != '/' || p == end || *p != '/')
            return 0;
        const char *seg = ++p;
        while (p < end && *p != '/')
            p++;
        size_t slen = (size_t)(p - seg), plen = strcspn(++pat, "/");
        if (*pat == ':' ? !parse_u64(seg, slen, id) : plen != slen || memcmp(pat, seg, slen) != 0)
            return 0;
        pat += plen;
    }
    return p == end;
}

static void dispatch(struct server *srv, const struct request *r, struct response *resp)
{
    struct call k = {r, 0, &srv->body, 200};
    for (size_t i = 0; i < sizeof kRoutes / sizeof kRoutes[0]; i++)
        if (kRoutes[i].method == (r->method == M_HEAD ? M_GET : r->method)
            && route_match(kRoutes[i].pattern, r->path, r->path_len, &k.id)) {
            srv->body.len = 0, kRoutes[i].fn(&k);
            *resp = (struct response){k.status, srv->body.p, srv->body.len};
            return;
        }
    *resp = (struct response){404, "", 0};
}

/* ------------------------------------------------------- connections */
/* Whether the connection stays open after this response (RFC 9112, 9.3):
 * HTTP/1.1 is persistent unless a side says "close"; HTTP/1.0 only when the
 * client asked for "keep-alive". Long-lived connections are recycled. */
static int conn_keep_alive(const struct server *srv, const struct conn *c, const struct request *r)
{
    if (r->bad || r->conn_close || c->served + 1 >= srv->max_keepalive_requests)
        return 0;
#ifdef VPROF_CASE_FIX
    if (r->version < HTTP_VERSION_11)
#else
    if (r->version <= HTTP_VERSION_11)  /* FIX: "<": only HTTP/1.0 needs "Connection: keep-alive" */
#endif
        return r->conn_keepalive;
    return 1;
}

/* An access log line (the common format, less client and time). The run's
 * result is the sum of the lines' hashes, whichever connection they came on. */
static void access_log(struct server *srv, const struct request *r, const struct response *resp,
                       unsigned long long etag)
{
    size_t at = srv->log.len;
    sb_printf(&srv->log, "- - \"%s %.*s HTTP/1.%d\" %d %zu id=%llu etag=%016llx\n",
              r->bad ? "-" : kMethods[r->method], r->bad ? 0 : (int)r->path_len, r->bad ? "" : r->path,
              r->version - HTTP_VERSION_10, resp->status, resp->len, (unsigned long long)r->request_id, etag);
    srv->log_sum += fnv1a(srv->log.p + at, srv->log.len - at);
    srv->log.len = srv->log.len < 65536 ? srv->log.len : 0;    /* written out */
}

static void serve_request(struct server *srv, struct conn *c, const struct request *r)
{
    struct response resp = {400, "", 0};
    if (!r->bad)
        dispatch(srv, r, &resp);
    int keep = conn_keep_alive(srv, c, r);
    uint64_t etag = fnv1a(resp.body, resp.len);
    sb_printf(&c->out, "HTTP/1.1 %d %s\r\nServer: httpcore/0.9\r\nContent-Type: application/json\r\n"
              "Content-Length: %zu\r\nETag: \"%016llx\"\r\nX-Request-Id: %llu\r\nConnection: %s\r\n\r\n",
              resp.status, resp.status == 200 ? "OK" : resp.status == 202 ? "Accepted" : resp.status == 400 ?
              "Bad Request" : "Not Found", resp.len, (unsigned long long)etag, (unsigned long long)r->request_id,
              keep ? "keep-alive" : "close");
    if (r->method != M_HEAD)
        sb_printf(&c->out, "%.*s", (int)resp.len, resp.body);
    c->served++, c->answered++, c->closing = !keep, srv->served++, srv->by_class[resp.status / 100]++;
    access_log(srv, r, &resp, etag);
    CASE_PROGRESS("response");
}

/* The readable event: every complete request in the buffer is parsed, then
 * they are answered in order (a pipelined batch costs one pass). After a
 * response that closes the connection, the requests behind it are dropped. */
static void server_on_readable(struct server *srv, struct conn *c)
{
    while (c->qn < MAX_PIPELINE && c->in_pos < c->in_len) {
        long n = parse_request(c->in + c->in_pos, c->in_len - c->in_pos, &c->q[c->qn]);
        srv->parse_calls++;
        if (n == 0)
            break;                                  /* the rest has not arrived */
        c->qn++, c->in_pos = n < 0 ? c->in_len : c->in_pos + (size_t)n;   /* malformed: 400, close */
    }
    int i = 0;
    while (i < c->qn && !c->closing)
        serve_request(srv, c, &c->q[i++]);
    srv->dropped += (uint64_t)(c->qn - i), c->qn = 0;
    if (!c->closing)                                /* a partial request moves to the front */
        memmove(c->in, c->in + c->in_pos, c->in_len - c->in_pos);
    c->in_len = c->closing ? 0 : c->in_len - c->in_pos, c->in_pos = 0;
}

/* ------------------------------------------------------------ clients */
struct client {
    rng_t rng;
    struct conn *conn;
    uint64_t first_id;                  /* request ids: first_id + sequence */
    int budget, window, sent, acked, live;
    uint8_t http10, ka_header;
    const char *agent;
    struct sbuf script;                 /* the session's requests, back to back */
    size_t off[MAX_BUDGET + 1];         /* where request i starts in script */
};

/* Mostly GETs of users, a few 404s (an old API version), batches of UI events. */
static void render_request(struct client *cl, uint64_t id, struct sbuf *b)
{
    uint64_t k = rng_below(&cl->rng, 100), n = rng_below(&cl->rng, 4000);
    char body[128] = "";
    if (k >= 90)
        snprintf(body, sizeof body, "{\"type\":\"click\",\"el\":\"btn-%llu\"}\n{\"type\":\"view\",\"page\":%llu}\n",
                 (unsigned long long)n, (unsigned long long)(n * 7 % 1000));
    if (k < 90)
        sb_printf(b, "GET /api/v%d/users/%llu%s HTTP/1.%d\r\n", k < 88 ? 1 : 2, (unsigned long long)n,
                  k < 55 ? "?fields=name,plan" : "", cl->http10 ? 0 : 1);
    else
        sb_printf(b, "POST /api/v1/events HTTP/1.%d\r\nContent-Type: application/x-ndjson\r\n"
                  "Content-Length: %zu\r\n", cl->http10 ? 0 : 1, strlen(body));
    sb_printf(b, "Host: api.example.com\r\nUser-Agent: %s\r\nAccept: application/json\r\n"
              "Accept-Encoding: gzip, deflate, br\r\nAccept-Language: en-US,en;q=0.9\r\n"
              "Cookie: sid=%016llx; region=eu-west-1; consent=analytics\r\nX-Request-Id: %llu\r\n%s\r\n%s",
              cl->agent, (unsigned long long)mix64(cl->first_id), (unsigned long long)id,
              cl->ka_header ? "Connection: keep-alive\r\n" : "", body);
}

static void client_start(struct client *cl, uint64_t session, const opt_t *opts)
{
    rng_seed(&cl->rng, (uint64_t)opts[4].value ^ mix64(session + 1));
    cl->conn = NULL, cl->first_id = session * 1000, cl->live = 1, cl->sent = cl->acked = 0, cl->script.len = 0;
    cl->http10 = rng_below(&cl->rng, 100) < 3;                  /* old proxies */
    cl->ka_header = rng_below(&cl->rng, 100) < (uint64_t)opts[2].value;
    cl->window = cl->http10 ? 1 : (int)opts[1].value;           /* no pipelining on 1.0 */
    cl->budget = 60 + (int)rng_below(&cl->rng, 120);
    cl->agent = rng_below(&cl->rng, 2) ? "acme-sdk-go/2.14.1 (linux; amd64)" : "okhttp/4.11.0 acme-android/7.3.2";
    for (int i = 0; i < cl->budget; i++)
        cl->off[i] = cl->script.len, render_request(cl, cl->first_id + (uint64_t)i, &cl->script);
    cl->off[cl->budget] = cl->script.len;
}

/* One turn of a session: (re)connect, fill the pipeline, let the server
 * handle the read, take the answers (they come back in request order). */
static void client_turn(struct server *srv, struct client *cl)
{
    if (!cl->conn) {                                /* (re)connect; retry the unanswered */
        if (!(cl->conn = malloc(sizeof *cl->conn)))
            perror("malloc"), exit(1);
        memset(cl->conn, 0, offsetof(struct conn, q));
        cl->sent = cl->acked, srv->conns++;
    }
    struct conn *c = cl->conn;
    for (size_t n; cl->sent < cl->budget && cl->sent - cl->acked < cl->window; cl->sent++) {
        if (c->in_len + (n = cl->off[cl->sent + 1] - cl->off[cl->sent]) > IN_CAP)
            break;
        memcpy(c->in + c->in_len, cl->script.p + cl->off[cl->sent], n);
        c->in_len += n;
    }
    server_on_readable(srv, c);
    cl->acked += c->answered, c->answered = 0, c->out.len = 0;     /* the client reads them */
    if (c->closing || cl->acked == cl->budget)
        free(c->out.p), free(c), cl->conn = NULL;
}

int main(int argc, char **argv)
{
    opt_t opts[] = {
        {"sessions", "client sessions over the run", 700, 1, 10000000, 0},
        {"pipeline", "requests a client keeps in flight", 16, 1, MAX_PIPELINE, 0},
        {"ka-header-pct", "% of sessions sending Connection: keep-alive", 100, 0, 100, 0},
        {"max-keepalive", "requests before the server recycles a connection", 100, 1, 1000000, 0},
        {"seed", "workload seed", 4242, 0, 1000000000, 0},
    };
    opts_parse(argc, argv, opts, NOPTS(opts));
    long sessions = opts[0].value, next = 0, live = 0;
    struct server srv = {.max_keepalive_requests = (int)opts[3].value};
    struct client *cls = calloc(CONCURRENCY, sizeof *cls);
    if (!cls)
        perror("calloc"), exit(1);
    for (struct client *cl = cls; cl < cls + CONCURRENCY && next < sessions; cl++, live++)
        client_start(cl, (uint64_t)next++, opts);
    while (live > 0)                    /* the event loop: round robin over sessions */
        for (struct client *cl = cls; cl < cls + CONCURRENCY; cl++)
            if (cl->live && (client_turn(&srv, cl), cl->acked == cl->budget)) {
                if (next < sessions)
                    client_start(cl, (uint64_t)next++, opts);
                else
                    cl->live = 0, live--;
            }
    printf("%llu responses: %llu 2xx, %llu 4xx, log %016llx\n", (unsigned long long)srv.served,
           (unsigned long long)srv.by_class[2], (unsigned long long)srv.by_class[4], (unsigned long long)srv.log_sum);
    fprintf(stderr, "connections=%llu parse_calls=%llu served=%llu dropped=%llu\n", (unsigned long long)srv.conns,
            (unsigned long long)srv.parse_calls, (unsigned long long)srv.served, (unsigned long long)srv.dropped);
    for (int i = 0; i < CONCURRENCY; i++)
        free(cls[i].script.p);
    free(cls), free(srv.body.p), free(srv.log.p);
    return 0;
}
