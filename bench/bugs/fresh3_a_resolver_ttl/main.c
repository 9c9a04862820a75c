/* Written for the vprof bug corpus by a helper that had not seen the
 * profiler (2026-11-28); not modelled on a real issue. The fix is the
 * VPROF_CASE_FIX variant; the line marked FIX is the bug.
 *
 * stubval - a validating DNS resolver for a corporate zone tree. Clients
 * send A queries ("api-008.team03.eu-west.corp.example") in wire format; the
 * resolver answers from its cache or asks the authoritative servers (an
 * in-process signed zone store, in wire format too) and validates the
 * answer: its RRSIG, and the zone key's chain of trust from the root down (a
 * DNSKEY query and a signature check per zone level). The clock is simulated
 * (query i at i * 1000 / qps ms); TTLs are in seconds, as on the wire.
 *
 * The bug: resolver_lookup() compares a cache entry's age in milliseconds
 * with its TTL in seconds. With day-long TTLs (normal: --ttl 86400, taken
 * as 86.4 s) nothing expires within the 10 s of traffic anyway; with
 * five-minute TTLs (buggy: --ttl 300) every answer is dropped after 300 ms
 * and most queries are resolved and validated again.
 */
#include "../common/corpus.h"

#define MAX_NAME      96
#define MAX_WIRE      512
#define T_A           1
#define T_RRSIG       46
#define T_DNSKEY      48
#define BUCKETS       8192
#define SIG_ROUNDS    10
#define N_REGIONS     6
#define N_TEAMS       12

struct rr {
    char owner[MAX_NAME];
    uint16_t type, rdlen;
    uint32_t ttl;
    uint8_t rdata[8];           /* A: 4 bytes; DNSKEY: 8 bytes */
    uint64_t sig;               /* from the RRSIG that covers it */
    int signer;                 /* RRSIG key tag: the signing zone; -1: unsigned */
    int next;                   /* zone store: next in the hash bucket */
};

struct zone { char name[MAX_NAME]; int parent; uint64_t key; };
struct msg { uint16_t id, flags, qtype; char qname[MAX_NAME]; int nan; struct rr an[2]; };

struct centry {
    char name[MAX_NAME];
    uint32_t addr, ttl;         /* ttl: seconds, from the record */
    uint64_t fetched_ms;        /* simulated clock, milliseconds */
    struct centry *next;
};

struct resolver {
    struct centry *bucket[BUCKETS];
    uint64_t anchor;            /* the root key, configured */
    uint16_t next_id;           /* of upstream queries */
    uint64_t hits, expired, misses, upstream;
};

static struct zone *zones;     /* the zone tree; a zone's index is its key tag */
static struct rr *store;       /* the authoritative data, signed at load */
static int nzones, nstore, store_bucket[BUCKETS];

static void die(const char *what, const char *name)
{
    fprintf(stderr, "%s '%s'\n", what, name);
    exit(1);
}

/* ------------------------------------------------ keyed hash ("signature") */
static uint64_t mix64(uint64_t x)
{
    x = (x ^ (x >> 33)) * 0xff51afd7ed558ccdull;
    x = (x ^ (x >> 33)) * 0xc4ceb9fe1a85ec53ull;
    return x ^ (x >> 33);
}

/* Stands in for RSA/ECDSA: costly, the same for signing (at load) and checking. */
static uint64_t sig_compute(uint64_t key, const uint8_t *p, size_t n)
{
    uint64_t h = key ^ 0x6a09e667f3bcc909ull;
    for (int round = 0; round < SIG_ROUNDS; round++) {
        for (size_t i = 0; i < n; i++)
            h = (h ^ p[i]) * 0x100000001b3ull;
        h = mix64(h + (uint64_t)round);
    }
    return h;
}

static uint32_t name_hash(const char *s)
{
    uint32_t h = 2166136261u;
    while (*s)
        h = (h ^ (uint8_t)*s++) * 16777619u;
    return h;
}

/* -------------------------------------------------------------- wire */
static void put16(uint8_t *w, uint16_t v) { w[0] = (uint8_t)(v >> 8); w[1] = (uint8_t)v; }
static uint16_t get16(const uint8_t *w) { return (uint16_t)(w[0] << 8 | w[1]); }
static void put32(uint8_t *w, uint32_t v) { put16(w, (uint16_t)(v >> 16)); put16(w + 2, (uint16_t)v); }
static uint32_t get32(const uint8_t *w) { return (uint32_t)get16(w) << 16 | get16(w + 2); }

static size_t wire_put_name(uint8_t *w, const char *name)
{
    size_t o = 0;
    while (*name) {
        size_t l = strcspn(name, ".");
        w[o++] = (uint8_t)l;
        memcpy(w + o, name, l);
        o += l;
        name += l + (name[l] == '.');
    }
    w[o++] = 0;
    return o;
}

static size_t wire_get_name(const uint8_t *w, size_t off, char *out)
{
    size_t n = 0;
    while (w[off]) {
        size_t l = w[off++];
        if (n)
            out[n++] = '.';
        memcpy(out + n, w + off, l);
        n += l;
        off += l;
    }
    out[n] = 0;
    return off + 1;
}

static size_t msg_begin(uint8_t *w, uint16_t id, uint16_t flags, const char *qname, uint16_t qtype)
{
    memset(w, 0, 12);
    put16(w, id), put16(w + 2, flags), put16(w + 4, 1);
    size_t o = 12 + wire_put_name(w + 12, qname);
    put16(w + o, qtype), put16(w + o + 2, 1);
    return o + 4;
}

/* Appends RR and, when it is signed, its RRSIG; bumps ANCOUNT. */
static size_t msg_add_rr(uint8_t *w, size_t o, const struct rr *r)
{
    for (int k = 0; k < (r->signer >= 0 ? 2 : 1); k++) {
        o += wire_put_name(w + o, r->owner);
        put16(w + o, k ? T_RRSIG : r->type), put16(w + o + 2, 1), put32(w + o + 4, r->ttl);
        size_t rd = o + 10;
        if (k == 0) {
            memcpy(w + rd, r->rdata, r->rdlen);
            rd += r->rdlen;
        } else {
            put16(w + rd, r->type), put16(w + rd + 2, (uint16_t)r->signer);   /* key tag */
            rd += 4 + wire_put_name(w + rd + 4, zones[r->signer].name);
            put32(w + rd, (uint32_t)(r->sig >> 32)), put32(w + rd + 4, (uint32_t)r->sig), rd += 8;
        }
        put16(w + o + 8, (uint16_t)(rd - o - 10));
        o = rd;
        put16(w + 6, (uint16_t)(get16(w + 6) + 1));
    }
    return o;
}

/* Header, question and answers; an RRSIG is folded into the RR before it. */
static void msg_parse(const uint8_t *w, struct msg *m)
{
    m->id = get16(w), m->flags = get16(w + 2);
    int an = get16(w + 6);
    size_t o = wire_get_name(w, 12, m->qname);
    m->qtype = get16(w + o);
    o += 4;
    m->nan = 0;
    for (int i = 0; i < an; i++) {
        char owner[MAX_NAME];
        o = wire_get_name(w, o, owner);
        uint16_t type = get16(w + o), rdlen = get16(w + o + 8);
        const uint8_t *rd = w + o + 10;
        struct rr *r = &m->an[m->nan > 0 ? m->nan - 1 : 0];
        if (type == T_RRSIG && m->nan > 0) {
            r->signer = get16(rd + 2);
            r->sig = (uint64_t)get32(rd + rdlen - 8) << 32 | get32(rd + rdlen - 4);
        } else if (m->nan < 2) {
            r = &m->an[m->nan++];
            *r = (struct rr){.type = type, .rdlen = rdlen, .ttl = get32(w + o + 4), .signer = -1};
            strcpy(r->owner, owner);
            memcpy(r->rdata, rd, rdlen);
        }
        o += 10 + (size_t)rdlen;
    }
}

/* The bytes a signature covers: owner, type, TTL and RDATA. */
static size_t rr_canonical(const struct rr *r, uint8_t *out)
{
    size_t o = wire_put_name(out, r->owner);
    put16(out + o, r->type), put32(out + o + 2, r->ttl);
    memcpy(out + o + 6, r->rdata, r->rdlen);
    return o + 6 + r->rdlen;
}

/* ------------------------------------------ the authoritative side */
static const struct rr *store_find(const char *owner, uint16_t type)
{
    for (int i = store_bucket[name_hash(owner) & (BUCKETS - 1)]; i >= 0; i = store[i].next)
        if (strcmp(store[i].owner, owner) == 0 && (store[i].type == T_DNSKEY) == (type == T_DNSKEY))
            return &store[i];
    return NULL;
}

static size_t auth_serve(const uint8_t *q, uint8_t *resp)
{
    struct msg m;
    msg_parse(q, &m);
    size_t o = msg_begin(resp, m.id, 0x8400, m.qname, m.qtype);
    const struct rr *r = store_find(m.qname, m.qtype);
    return r ? msg_add_rr(resp, o, r) : o;
}

/* Signs and files a record of zone SIGNER (zone load). */
static void store_add(const char *owner, uint16_t type, uint32_t ttl, const void *rdata,
                      uint16_t rdlen, int signer)
{
    struct rr *r = &store[nstore];
    *r = (struct rr){.type = type, .rdlen = rdlen, .ttl = ttl, .signer = signer};
    snprintf(r->owner, sizeof r->owner, "%s", owner);
    memcpy(r->rdata, rdata, rdlen);
    uint8_t canon[2 * MAX_NAME];
    r->sig = sig_compute(zones[signer].key, canon, rr_canonical(r, canon));
    uint32_t b = name_hash(owner) & (BUCKETS - 1);
    r->next = store_bucket[b];
    store_bucket[b] = nstore++;
}

/* ---------------------------------------------------------- resolver */
static void upstream_query(struct resolver *res, const char *name, uint16_t qtype, struct msg *out)
{
    uint8_t q[MAX_WIRE], resp[MAX_WIRE];
    msg_begin(q, res->next_id++, 0x0100, name, qtype);
    auth_serve(q, resp);
    msg_parse(resp, out);
    res->upstream++;
}

static int rrsig_verify(uint64_t key, const struct rr *r)
{
    uint8_t canon[2 * MAX_NAME];
    size_t n = rr_canonical(r, canon);
    return sig_compute(key, canon, n) == r->sig;
}

/* The key of zone Z, validated from the trust anchor down. */
static uint64_t zone_key_validated(struct resolver *res, int z)
{
    int chain[16], n = 0;
    for (int c = z; c >= 0; c = zones[c].parent)
        chain[n++] = c;
    uint64_t key = res->anchor;
    while (n-- > 0) {
        struct msg m;
        upstream_query(res, zones[chain[n]].name, T_DNSKEY, &m);
        if (m.nan != 1 || !rrsig_verify(key, &m.an[0]))
            die("bogus DNSKEY for", zones[chain[n]].name);
        memcpy(&key, m.an[0].rdata, 8);
    }
    return key;
}

/* Asks for NAME's address and validates the answer. */
static void resolve_validated(struct resolver *res, const char *name, struct centry *e)
{
    struct msg m;
    upstream_query(res, name, T_A, &m);
    const struct rr *r = &m.an[0];
    if (m.nan < 1 || r->signer < 0 || !rrsig_verify(zone_key_validated(res, r->signer), r))
        die("no valid signed answer for", name);
    e->addr = get32(r->rdata);
    e->ttl = r->ttl;
}

static struct centry *cache_find(struct resolver *res, const char *name, uint32_t h)
{
    for (struct centry *e = res->bucket[h & (BUCKETS - 1)]; e; e = e->next)
        if (strcmp(e->name, name) == 0)
            return e;
    return NULL;
}

/* The answer for NAME at time NOW_MS, from the cache while it is fresh. */
static uint32_t resolver_lookup(struct resolver *res, const char *name, uint64_t now_ms)
{
    uint32_t h = name_hash(name);
    struct centry *e = cache_find(res, name, h);
    if (e) {
#ifdef VPROF_CASE_FIX
        if (now_ms - e->fetched_ms < (uint64_t)e->ttl * 1000) {
#else
        if (now_ms - e->fetched_ms < e->ttl) { /* FIX: the TTL is in seconds, the clock in milliseconds: compare with e->ttl * 1000 */
#endif
            res->hits++;
            return e->addr;
        }
        res->expired++;
    } else {
        e = calloc(1, sizeof *e);
        strcpy(e->name, name);
        e->next = res->bucket[h & (BUCKETS - 1)];
        res->bucket[h & (BUCKETS - 1)] = e;
    }
    res->misses++;
    resolve_validated(res, name, e);
    e->fetched_ms = now_ms;
    return e->addr;
}

/* The front end: one client query in, one response out. */
static size_t serve_client(struct resolver *res, const uint8_t *q, uint8_t *resp, uint64_t now_ms)
{
    struct msg m;
    msg_parse(q, &m);
    struct rr a = {.type = T_A, .rdlen = 4, .ttl = 30, .signer = -1};
    strcpy(a.owner, m.qname);
    put32(a.rdata, resolver_lookup(res, m.qname, now_ms));
    size_t o = msg_begin(resp, m.id, 0x8180, m.qname, m.qtype);
    return msg_add_rr(resp, o, &a);
}

/* ------------------------------------------------------ zone setup */
static int zone_add(const char *name, int parent, uint32_t ttl, uint64_t seed)
{
    struct zone *z = &zones[nzones];
    snprintf(z->name, sizeof z->name, "%s", name);
    z->parent = parent;
    z->key = mix64(seed + (uint64_t)nzones * 0x9e3779b97f4a7c15ull);
    store_add(name, T_DNSKEY, ttl, &z->key, 8, parent >= 0 ? parent : nzones);  /* the root signs itself */
    return nzones++;
}

static const char *const kRegions[N_REGIONS] = {"eu-west", "eu-north", "us-east", "us-west", "ap-south", "ap-east"};
static const char *const kSvcs[8] = {"api", "db", "cache", "web", "auth", "queue", "search", "batch"};

int main(int argc, char **argv)
{
    opt_t opts[] = {
        {"queries", "client queries", 250000, 1, 100000000, 0},
        {"qps", "queries per simulated second", 25000, 1, 10000000, 0},
        {"ttl", "TTL of every record, seconds", 86400, 1, 1 << 30, 0},
        {"hosts", "hosts per team zone", 40, 6, 999, 0},
        {"seed", "workload seed", 5353, 0, 1000000000, 0},
    };
    opts_parse(argc, argv, opts, NOPTS(opts));
    long queries = opt_get(opts, NOPTS(opts), "queries");
    uint64_t qps = (uint64_t)opt_get(opts, NOPTS(opts), "qps");
    uint32_t ttl = (uint32_t)opt_get(opts, NOPTS(opts), "ttl");
    int hosts = (int)opt_get(opts, NOPTS(opts), "hosts");
    uint64_t seed = (uint64_t)opt_get(opts, NOPTS(opts), "seed");

    /* The zone tree: root, example, corp.example, regions, team zones. */
    int nteams = N_REGIONS * N_TEAMS, nnames = nteams * hosts;
    zones = calloc((size_t)(3 + N_REGIONS + nteams), sizeof *zones);
    store = calloc((size_t)(3 + N_REGIONS + nteams + nnames), sizeof *store);
    memset(store_bucket, -1, sizeof store_bucket);
    int root = zone_add("", -1, ttl, seed);
    int corp = zone_add("corp.example", zone_add("example", root, ttl, seed), ttl, seed);
    char name[64], (*names)[MAX_NAME] = malloc((size_t)nnames * MAX_NAME);
    for (int r = 0; r < N_REGIONS; r++) {
        snprintf(name, sizeof name, "%s.corp.example", kRegions[r]);
        int rz = zone_add(name, corp, ttl, seed);
        for (int t = 0, tz = r * N_TEAMS; t < N_TEAMS; t++, tz++) {
            snprintf(name, sizeof name, "team%02d.%s.corp.example", t, kRegions[r]);
            int z = zone_add(name, rz, ttl, seed);
            for (int j = 0; j < hosts; j++) {   /* the team's hosts, 10.<tz>.<j> */
                uint8_t rd[4];
                snprintf(names[tz * hosts + j], MAX_NAME, "%s-%03d.%s", kSvcs[j % 8], j, name);
                put32(rd, 0x0a000000u | (uint32_t)(tz << 12) | (uint32_t)j);
                store_add(names[tz * hosts + j], T_A, ttl, rd, 4, z);
            }
        }
    }

    /* The clients: skewed popularity, scattered over the name space. */
    struct resolver res = {.anchor = zones[root].key};
    rng_t rng = {0};
    rng_seed(&rng, seed);
    uint8_t q[MAX_WIRE], resp[MAX_WIRE];
    uint64_t digest = 1469598103934665603ull, answered = 0;
    for (long i = 0; i < queries; i++) {
        uint64_t a = rng_below(&rng, (uint64_t)nnames), b = rng_below(&rng, (uint64_t)nnames);
        uint64_t idx = (a * b / (uint64_t)nnames * 2654435761u) % (uint64_t)nnames;
        msg_begin(q, (uint16_t)i, 0x0100, names[idx], T_A);
        size_t n = serve_client(&res, q, resp, (uint64_t)i * 1000 / qps);
        struct msg m;
        msg_parse(resp, &m);
        answered += m.nan == 1 && m.id == (uint16_t)i;
        digest = (digest ^ (get32(m.an[0].rdata) + n)) * 0x100000001b3ull;
    }
    printf("%ld queries, %llu answered, digest %016llx\n", queries,
           (unsigned long long)answered, (unsigned long long)digest);
    fprintf(stderr, "hits=%llu expired=%llu misses=%llu upstream=%llu\n", (unsigned long long)res.hits,
            (unsigned long long)res.expired, (unsigned long long)res.misses, (unsigned long long)res.upstream);
    return 0;
}
