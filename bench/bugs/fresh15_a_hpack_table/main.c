/* Written for the vprof bug corpus by a helper that had not seen the
 * profiler (2026-11-29); not modelled on a real issue. The fix is the
 * VPROF_CASE_FIX variant; the line marked FIX is the bug.
 *
 * h2srv - the HPACK layer of an HTTP/2 web server (RFC 7541, no Huffman
 * coding) serving replayed browser sessions. Its response encoder looks each
 * header up in its dynamic table, newest to oldest, so the server keeps at
 * most 4096 bytes of the table the client's SETTINGS_HEADER_TABLE_SIZE
 * allows. The bug: the bound applied is the server's decoder size (65536),
 * so browsers advertising 65536 get a table 16 times larger to search.
 * Stdout is a digest of the response headers as the client decoded them.
 */
#define _GNU_SOURCE
#include <time.h>
#include "../common/corpus.h"

#define DEFAULT_TABLE  4096u    /* the table size both sides start with */
#define ENTRY_OVERHEAD 32u      /* RFC 7541 4.1: an entry costs name + value + 32 */
#define STATIC_COUNT   61
#define MAX_FIELDS     40
#define LIST_BYTES     6144
#define PRODUCTS       2000

struct field { const char *name, *value; uint32_t nlen, vlen; };
/* A header list: the fields point into buf. */
struct hlist { struct field f[MAX_FIELDS]; int n; size_t used; char buf[LIST_BYTES]; };
struct hentry { char *name, *value; uint32_t nlen, vlen; };
/* A dynamic table: a ring of max_size / 32 + 1 entries, the newest at first. */
struct htable { struct hentry *ring; uint32_t slots, first, count, size, max_size; uint64_t probes; };
struct encoder { struct htable t; int size_update_pending; };
/* dec_table_size: the SETTINGS_HEADER_TABLE_SIZE we advertise (the decoder indexes its table: cheap);
 * enc_table_cap: the most of the client's table our encoder uses (its lookups walk the table). */
struct server_conf { uint32_t dec_table_size, enc_table_cap; };

static const char *const kStatic[STATIC_COUNT][2] = {
    {":authority", ""}, {":method", "GET"}, {":method", "POST"}, {":path", "/"}, {":path", "/index.html"},
    {":scheme", "http"}, {":scheme", "https"}, {":status", "200"}, {":status", "204"}, {":status", "206"},
    {":status", "304"}, {":status", "400"}, {":status", "404"}, {":status", "500"}, {"accept-charset", ""},
    {"accept-encoding", "gzip, deflate"}, {"accept-language", ""}, {"accept-ranges", ""}, {"accept", ""},
    {"access-control-allow-origin", ""}, {"age", ""}, {"allow", ""}, {"authorization", ""},
    {"cache-control", ""}, {"content-disposition", ""}, {"content-encoding", ""}, {"content-language", ""},
    {"content-length", ""}, {"content-location", ""}, {"content-range", ""}, {"content-type", ""},
    {"cookie", ""}, {"date", ""}, {"etag", ""}, {"expect", ""}, {"expires", ""}, {"from", ""}, {"host", ""},
    {"if-match", ""}, {"if-modified-since", ""}, {"if-none-match", ""}, {"if-range", ""},
    {"if-unmodified-since", ""}, {"last-modified", ""}, {"link", ""}, {"location", ""}, {"max-forwards", ""},
    {"proxy-authenticate", ""}, {"proxy-authorization", ""}, {"range", ""}, {"referer", ""}, {"refresh", ""},
    {"retry-after", ""}, {"server", ""}, {"set-cookie", ""}, {"strict-transport-security", ""},
    {"transfer-encoding", ""}, {"user-agent", ""}, {"vary", ""}, {"via", ""}, {"www-authenticate", ""}};

static void *xmalloc(size_t n)
{
    void *p = calloc(1, n);
    if (!p)
        perror("calloc"), exit(1);
    return p;
}

static void list_add(struct hlist *l, const char *name, uint32_t nlen, const char *value, uint32_t vlen)
{
    if (l->n == MAX_FIELDS || l->used + nlen + vlen > LIST_BYTES)
        fprintf(stderr, "header list too large\n"), exit(1);
    struct field *f = &l->f[l->n++];
    f->name = memcpy(l->buf + l->used, name, nlen), l->used += nlen;
    f->value = memcpy(l->buf + l->used, value, vlen), l->used += vlen;
    f->nlen = nlen, f->vlen = vlen;
}

static int name_is(const struct field *f, const char *name)
{
    return strlen(name) == f->nlen && memcmp(name, f->name, f->nlen) == 0;
}

/* ------------------------------------------------------ dynamic table */
static void table_evict_oldest(struct htable *t)
{
    struct hentry *e = &t->ring[(t->first + t->count - 1) % t->slots];
    t->size -= e->nlen + e->vlen + ENTRY_OVERHEAD, t->count--;
    free(e->name);
}

/* A new maximum: evicts down to it and lays the ring out again. */
static void table_set_max(struct htable *t, uint32_t max)
{
    while (t->size > max)
        table_evict_oldest(t);
    uint32_t slots = max / ENTRY_OVERHEAD + 1;
    struct hentry *ring = xmalloc(slots * sizeof *ring);
    for (uint32_t i = 0; i < t->count; i++)
        ring[i] = t->ring[(t->first + i) % t->slots];
    free(t->ring);
    t->ring = ring, t->slots = slots, t->first = 0, t->max_size = max;
}

static void table_insert(struct htable *t, const char *name, uint32_t nlen, const char *value, uint32_t vlen)
{
    uint32_t need = nlen + vlen + ENTRY_OVERHEAD;
    while (t->count && t->size + need > t->max_size)
        table_evict_oldest(t);
    if (need > t->max_size)     /* RFC 7541 4.4: the table is left empty */
        return;
    t->first = t->first ? t->first - 1 : t->slots - 1;
    struct hentry *e = &t->ring[t->first];
    e->name = memcpy(xmalloc(nlen + vlen + 1), name, nlen), e->value = memcpy(e->name + nlen, value, vlen);
    e->nlen = nlen, e->vlen = vlen, t->count++, t->size += need;
}

static void table_free(struct htable *t)
{
    while (t->count)
        table_evict_oldest(t);
    free(t->ring);
}

/* Of an entry whose name has F's length: whether name and value are F's. */
static int entry_matches(const struct hentry *e, const struct field *f)
{
    return e->vlen == f->vlen && memcmp(e->name, f->name, f->nlen) == 0
           && memcmp(e->value, f->value, f->vlen) == 0;
}

/* F's 1-based index in the dynamic table, newest first, or 0. */
static uint32_t dyn_find(struct htable *t, const struct field *f)
{
    uint32_t slot = t->first;
    for (uint32_t i = 0; i < t->count; i++, slot = slot + 1 == t->slots ? 0 : slot + 1) {
        t->probes++;
        if (t->ring[slot].nlen == f->nlen && entry_matches(&t->ring[slot], f))  /* length: the cheap reject */
            return i + 1;
    }
    return 0;
}

static uint32_t static_find(const struct field *f, uint32_t *name_idx)
{
    for (uint32_t i = 0; i < STATIC_COUNT; i++)
        if (name_is(f, kStatic[i][0])) {
            *name_idx = *name_idx ? *name_idx : i + 1;
            if (strlen(kStatic[i][1]) == f->vlen && memcmp(kStatic[i][1], f->value, f->vlen) == 0)
                return i + 1;
        }
    return 0;
}

/* ------------------------------------------------- wire representation */
static size_t put_int(uint8_t *out, uint8_t flags, int prefix, uint32_t v)
{
    uint32_t max = (1u << prefix) - 1;
    size_t n = 1;
    if (v < max)
        return out[0] = (uint8_t)(flags | v), 1;
    for (out[0] = (uint8_t)(flags | max), v -= max; v >= 128; v >>= 7)
        out[n++] = (uint8_t)(v % 128 + 128);
    return out[n] = (uint8_t)v, n + 1;
}

static uint32_t get_int(const uint8_t **pp, int prefix)
{
    uint32_t max = (1u << prefix) - 1, v = *(*pp)++ & max;
    for (int shift = 0, more = v == max; more && shift < 28; shift += 7) {
        v += (uint32_t)(**pp & 127) << shift;
        more = *(*pp)++ & 128;
    }
    return v;
}

/* A string literal, not Huffman-coded (H bit 0). */
static size_t put_string(uint8_t *out, const char *s, uint32_t len)
{
    size_t n = put_int(out, 0, 7, len);
    memcpy(out + n, s, len);
    return n + len;
}

static const char *get_string(const uint8_t **pp, uint32_t *len)
{
    *len = get_int(pp, 7);
    *pp += *len;
    return (const char *)*pp - *len;
}

/* Values new in almost every message are not worth an entry (nor a search);
 * nor are credentials, which a shared table would let others probe. */
static int worth_indexing(const struct field *f)
{
    return !(name_is(f, ":path") || name_is(f, "content-length") || name_is(f, "etag") || name_is(f, "age")
             || name_is(f, "location") || name_is(f, "set-cookie") || name_is(f, "authorization"));
}

static size_t hpack_encode(struct encoder *enc, const struct hlist *l, uint8_t *out)
{
    size_t n = 0;
    if (enc->size_update_pending)   /* RFC 7541 4.2: first in the next block */
        n += put_int(out, 0x20, 5, enc->t.max_size), enc->size_update_pending = 0;
    for (int i = 0; i < l->n; i++) {
        const struct field *f = &l->f[i];
        int indexable = worth_indexing(f);
        uint32_t name_idx = 0, idx = static_find(f, &name_idx), d;
        if (!idx && indexable && (d = dyn_find(&enc->t, f)))
            idx = STATIC_COUNT + d;
        if (idx) {
            n += put_int(out + n, 0x80, 7, idx);
            continue;
        }
        n += put_int(out + n, indexable ? 0x40 : 0x00, indexable ? 6 : 4, name_idx);  /* literal (+ index?) */
        if (!name_idx)
            n += put_string(out + n, f->name, f->nlen);
        n += put_string(out + n, f->value, f->vlen);
        if (indexable)
            table_insert(&enc->t, f->name, f->nlen, f->value, f->vlen);
    }
    return n;
}

/* The field at a 1-based HPACK index (static, then dynamic); 0 if none. */
static int field_at(const struct htable *t, uint32_t idx, struct field *f)
{
    if (idx >= 1 && idx <= STATIC_COUNT) {
        f->name = kStatic[idx - 1][0], f->value = kStatic[idx - 1][1];
        return f->nlen = (uint32_t)strlen(f->name), f->vlen = (uint32_t)strlen(f->value), 1;
    }
    if (idx <= STATIC_COUNT || idx - STATIC_COUNT > t->count)
        return 0;
    const struct hentry *e = &t->ring[(t->first + idx - STATIC_COUNT - 1) % t->slots];
    f->name = e->name, f->value = e->value;
    return f->nlen = e->nlen, f->vlen = e->vlen, 1;
}

/* Decodes a header block into L. SETTINGS_MAX is what this side advertised,
 * the bound of a table size update. -1 if the block is malformed. */
static int hpack_decode(struct htable *t, uint32_t settings_max, const uint8_t *p, size_t len, struct hlist *l)
{
    const uint8_t *end = p + len;
    struct field f;
    l->n = 0, l->used = 0;
    while (p < end) {
        uint8_t b = *p;
        if ((b & 0xe0) == 0x20) {               /* dynamic table size update */
            uint32_t max = get_int(&p, 5);
            if (max > settings_max)
                return -1;
            table_set_max(t, max);
            continue;
        }
        int incremental = (b & 0xc0) == 0x40;   /* else indexed, or a literal without indexing */
        uint32_t idx = get_int(&p, b & 0x80 ? 7 : incremental ? 6 : 4);
        if (idx ? !field_at(t, idx, &f) : (b & 0x80) || !(f.name = get_string(&p, &f.nlen)))
            return -1;
        if (!(b & 0x80))
            f.value = get_string(&p, &f.vlen);
        if (p > end)
            return -1;
        list_add(l, f.name, f.nlen, f.value, f.vlen);
        if (incremental)    /* from the list's copy: the insert may evict the name's entry */
            table_insert(t, l->f[l->n - 1].name, f.nlen, l->f[l->n - 1].value, f.vlen);
    }
    return 0;
}

/* ------------------------------------------------------------- server */
enum { K_DOC, K_SCRIPT, K_STYLE, K_IMAGE, K_API, N_KINDS };
/* Per kind of resource: its content type, and how a browser asks for it. */
static const struct { const char *type, *accept, *dest, *priority, *path; } kKinds[N_KINDS] = {
    {"text/html; charset=utf-8", "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,"
     "image/webp,*/*;q=0.8", "document", "u=0, i", "/product/%u"},
    {"text/javascript", "*/*", "script", "u=1", "/static/js/chunk-%u.js"},
    {"text/css", "text/css,*/*;q=0.1", "style", "u=0", "/static/css/main.%08x.css"},
    {"image/webp", "image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8", "image", "u=5, i",
     "/img/p/%u-640w.webp"},
    {"application/json", "application/json", "empty", "u=1, i", "/api/recs?item=%u&n=8"}};
/* The client's requests, our responses, and the load generator's decoder of them. */
struct conn { struct htable dec; struct encoder enc; struct htable client_dec; };
struct stats { uint64_t responses, req_bytes, resp_bytes, probes, digest; };

static uint64_t fnv1a(uint64_t h, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ (uint8_t)s[i]) * 0x100000001b3ull;
    return h;
}

static void http_date(uint64_t sec, char *out, size_t cap)
{
    struct tm tm;
    strftime(out, cap, "%a, %d %b %Y %H:%M:%S GMT", gmtime_r(&(time_t){(time_t)sec}, &tm));
}

static const struct field *find_field(const struct hlist *l, const char *name)
{
    for (int i = 0; i < l->n; i++)
        if (name_is(&l->f[i], name))
            return &l->f[i];
    return NULL;
}

/* Routes by the path's prefix: the kind of resource; other paths are pages. */
static int route(const struct field *path)
{
    for (int k = K_SCRIPT; k < N_KINDS; k++) {
        size_t n = (size_t)(strchr(kKinds[k].path, '%') - kKinds[k].path);
        if (path->vlen > n && memcmp(path->value, kKinds[k].path, n) == 0)
            return k;
    }
    return K_DOC;
}

static void build_response(const struct hlist *req, uint64_t now_ms, uint64_t request_id, struct hlist *resp)
{
    const struct field *path = find_field(req, ":path"), *ae = find_field(req, "accept-encoding");
    int kind = route(path), is_asset = kind != K_DOC && kind != K_API;
    int br = kind != K_IMAGE && ae && memmem(ae->value, ae->vlen, "br", 2);
    uint64_t h = fnv1a(0xcbf29ce484222325ull, path->value, path->vlen), sec = now_ms / 1000;
    uint32_t mtime = 1780000000u + (uint32_t)(h >> 32) % 9000000;
    /* A file's size is the store's; pages and API answers are rendered, theirs varies. */
    uint32_t size = 300 + (uint32_t)((is_asset ? h : h ^ request_id * 0x9e3779b97f4a7c15ull) % 120000);
    char date[40], modified[40], length[16], etag[32], id[24];
    http_date(sec, date, sizeof date), http_date(mtime, modified, sizeof modified);
    snprintf(length, sizeof length, "%u", size), snprintf(etag, sizeof etag, "\"%x-%x\"", size, mtime);
    snprintf(id, sizeof id, "%016llx", (unsigned long long)(request_id * 0x9e3779b97f4a7c15ull));
    const char *const fields[][2] = {
        {":status", "200"}, {"date", date}, {"server", "h2srv/2.3"}, {"content-type", kKinds[kind].type},
        {"content-length", length},
        {"cache-control", is_asset ? "public, max-age=31536000, immutable"
                                   : kind == K_API ? "no-store" : "private, max-age=0"},
        {"etag", is_asset ? etag : NULL}, {"last-modified", is_asset ? modified : NULL},
        {"x-cache", is_asset ? "HIT" : NULL}, {"content-encoding", br ? "br" : NULL},
        {"vary", br ? "accept-encoding" : NULL}, {"x-request-id", id},
        {"strict-transport-security", "max-age=63072000; includeSubDomains; preload"},
        {"x-content-type-options", "nosniff"}, {"alt-svc", "h3=\":443\"; ma=86400"}};
    resp->n = 0, resp->used = 0;
    for (size_t i = 0; i < sizeof fields / sizeof *fields; i++)
        if (fields[i][1])
            list_add(resp, fields[i][0], (uint32_t)strlen(fields[i][0]), fields[i][1],
                     (uint32_t)strlen(fields[i][1]));
}

/* The client's SETTINGS_HEADER_TABLE_SIZE bounds our encoder's table; a
 * size other than the 4096 it starts with is announced in the next block. */
static void conn_on_settings(struct conn *c, const struct server_conf *sc, uint32_t header_table_size)
{
    uint32_t size = header_table_size;
#ifdef VPROF_CASE_FIX
    if (size > sc->enc_table_cap)
        size = sc->enc_table_cap;
#else
    if (size > sc->dec_table_size)  /* FIX: bound it by sc->enc_table_cap, the encoder's own limit */
        size = sc->dec_table_size;
#endif
    if (size != c->enc.t.max_size)
        table_set_max(&c->enc.t, size), c->enc.size_update_pending = 1;
}

static void serve_connection(const struct server_conf *sc, const uint8_t *blocks, const size_t *off, int n,
                             uint32_t peer_table, uint64_t *now_ms, uint64_t *next_id, struct stats *st)
{
    static struct hlist req, resp, seen;
    uint8_t wire[8192];
    struct conn c = {0};
    table_set_max(&c.dec, DEFAULT_TABLE), table_set_max(&c.enc.t, DEFAULT_TABLE);
    table_set_max(&c.client_dec, DEFAULT_TABLE);
    conn_on_settings(&c, sc, peer_table);   /* the SETTINGS frame of the client's preface */
    for (int i = 0; i < n; i++) {
        if (hpack_decode(&c.dec, sc->dec_table_size, blocks + off[i], off[i + 1] - off[i], &req) < 0
            || !find_field(&req, ":path"))
            fprintf(stderr, "request %d: malformed\n", i), exit(1);
        *now_ms += 3 + *next_id * 7919 % 40;
        build_response(&req, *now_ms, (*next_id)++, &resp);
        size_t len = hpack_encode(&c.enc, &resp, wire);
        if (hpack_decode(&c.client_dec, peer_table, wire, len, &seen) < 0 || !seen.n)
            fprintf(stderr, "response %d: malformed\n", i), exit(1);
        for (int k = 0; k < seen.n; k++)    /* what the client decoded makes the digest */
            st->digest = fnv1a(fnv1a(st->digest * 31 + (uint64_t)k, seen.f[k].name, seen.f[k].nlen),
                               seen.f[k].value, seen.f[k].vlen);
        st->responses++, st->req_bytes += off[i + 1] - off[i], st->resp_bytes += len;
    }
    st->probes += c.enc.t.probes;
    table_free(&c.dec), table_free(&c.enc.t), table_free(&c.client_dec);
}

/* --------------------------------------------------- the load generator */
static void build_request(struct hlist *l, int kind, const char *path, const char *referer)
{
    const char *const pairs[][2] = {
        {":method", "GET"}, {":authority", "shop.example.com"}, {":scheme", "https"}, {":path", path},
        {"sec-ch-ua", "\"Chromium\";v=\"131\", \"Not_A Brand\";v=\"24\""}, {"sec-ch-ua-mobile", "?0"},
        {"user-agent", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
                       "Chrome/131.0.0.0 Safari/537.36"},
        {"accept", kKinds[kind].accept}, {"sec-fetch-site", referer ? "same-origin" : "none"},
        {"sec-fetch-mode", kind == K_DOC ? "navigate" : kind == K_API ? "cors" : "no-cors"},
        {"sec-fetch-dest", kKinds[kind].dest}, {"referer", referer}, {"priority", kKinds[kind].priority},
        {"accept-encoding", "gzip, deflate, br, zstd"}, {"accept-language", "en-US,en;q=0.9"},
        {"cookie", "sid=6b0f3c9e2d7a4185; cart=2; _ga=GA1.1.913305517.1780000000"}};
    l->n = 0, l->used = 0;
    for (size_t i = 0; i < sizeof pairs / sizeof *pairs; i++)
        if (pairs[i][1])    /* a page typed into the address bar has no referer */
            list_add(l, pairs[i][0], (uint32_t)strlen(pairs[i][0]), pairs[i][1],
                     (uint32_t)strlen(pairs[i][1]));
}

/* A browser session (pages, each with a stylesheet, scripts, an API call and
 * photos) as its encoder (default table) sent it: block k is out[off[k] .. off[k + 1]). */
static void record_session(int nrequests, rng_t *r, uint8_t *out, size_t *off)
{
    static struct hlist l;
    struct encoder enc = {{0}, 0};
    char path[64], page[96];
    table_set_max(&enc.t, DEFAULT_TABLE);
    off[0] = 0;
    for (int k = 0, j = 0, assets = 0; k < nrequests; k++, j = j == assets ? 0 : j + 1) {
        int kind = j == 0 ? K_DOC : j == 1 ? K_STYLE : j < 4 ? K_SCRIPT : j == 4 ? K_API : K_IMAGE;
        uint64_t item = 1 + rng_below(r, PRODUCTS) * rng_below(r, 100) / 80;   /* low ids are popular */
        unsigned arg = (unsigned)(kind == K_STYLE ? rng_below(r, 3) : kind == K_SCRIPT ? rng_below(r, 24)
                                  : kind == K_IMAGE ? 1 + rng_below(r, PRODUCTS + 200) : item);
        snprintf(path, sizeof path, kKinds[kind].path, arg);
        build_request(&l, kind, path, k ? page : NULL);
        off[k + 1] = off[k] + hpack_encode(&enc, &l, out + off[k]);
        if (kind == K_DOC)
            snprintf(page, sizeof page, "https://shop.example.com%s", path), assets = 4 + (int)rng_below(r, 9);
    }
    table_free(&enc.t);
}

int main(int argc, char **argv)
{
    opt_t opts[] = {
        {"conns", "client connections, served one after another", 5, 1, 100000, 0},
        {"requests", "requests per connection (the recorded session's length)", 3200, 1, 100000, 0},
        {"peer-table", "the clients' SETTINGS_HEADER_TABLE_SIZE", 4096, 0, 1 << 24, 0},
        {"seed", "workload seed", 2026, 0, 1000000000, 0},
    };
    opts_parse(argc, argv, opts, NOPTS(opts));
    int conns = (int)opts[0].value, nreq = (int)opts[1].value;
    const struct server_conf sc = {.dec_table_size = 65536, .enc_table_cap = DEFAULT_TABLE};
    uint8_t *blocks = xmalloc((size_t)nreq * 1024);
    size_t *off = xmalloc(((size_t)nreq + 1) * sizeof *off);
    uint64_t now_ms = 1795000000000ull, next_id = 1;
    struct stats st = {0};
    rng_t r;
    rng_seed(&r, (uint64_t)opts[3].value);
    record_session(nreq, &r, blocks, off);
    for (int c = 0; c < conns; c++)
        serve_connection(&sc, blocks, off, nreq, (uint32_t)opts[2].value, &now_ms, &next_id, &st);
    printf("%llu responses, digest %016llx\n", (unsigned long long)st.responses, (unsigned long long)st.digest);
    fprintf(stderr, "request_bytes=%llu response_bytes=%llu encoder_probes=%llu\n",
            (unsigned long long)st.req_bytes, (unsigned long long)st.resp_bytes, (unsigned long long)st.probes);
    free(blocks), free(off);
    return 0;
}
