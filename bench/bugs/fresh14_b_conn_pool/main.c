/* Written for the vprof bug corpus by a helper that had not seen the
 * profiler (2026-11-29); not modelled on a real issue. The fix is the
 * VPROF_CASE_FIX variant; the line marked FIX is the bug.
 *
 * dbpool - the connection pool of a database client library; each worker thread
 * of the application owns a stripe of it. Opening a connection is a connect,
 * retried with backoff while refused, and a SCRAM-SHA-256 login (PBKDF2, 4096
 * iterations). The pool retires connections past their maximum lifetime, pings
 * those idle past the validation window, and every housekeeping period closes
 * surplus idle ones and tops the stripe up. Time is a virtual clock per worker.
 *
 * The bug: conn_should_retire() turns the lifetime from seconds into milliseconds
 * but the clock counts microseconds: connections expire after 1.8 s, not 30 min.
 * A batch job sending queries back to back (normal: --think-us 40) never keeps one
 * that long; a service whose requests come 12 ms apart per worker (buggy:
 * --think-us 12000) logs in again every 1.8 s.
 */
#include "../common/corpus.h"
#include <pthread.h>
#include <stdbool.h>

#define SCRAM_ITERS   4096          /* the server's PBKDF2 iteration count */
#define MAX_STRIPE    16            /* idle connections a stripe can hold */
#define ACCOUNTS      200000
#define RTT_US        10            /* a round trip to the server (same rack) */
#define REFUSE_ONE_IN 12            /* connects refused by a full listen backlog */
#define FNV_PRIME     0x100000001b3ULL

enum { STMT_GET, STMT_RANGE, STMT_DEBIT };   /* id = $1; id >= $1 LIMIT $2; UPDATE balance - $2 */

/* ------------------------------------------------ SHA-256, HMAC, PBKDF2 */
static const uint32_t K256[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

typedef struct { uint32_t h[8]; uint8_t blk[64]; size_t fill; uint64_t total; } sha256_ctx;
typedef struct { sha256_ctx inner, outer; } hmac_key;   /* both pad blocks already absorbed */

#define ROR(x, n) ((x) >> (n) | (x) << (32 - (n)))
static void sha256_compress(uint32_t h[8], const uint8_t *p)
{
    uint32_t w[64];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | p[4 * i + 2] << 8 | p[4 * i + 3];
    for (int i = 16; i < 64; i++)
        w[i] = w[i - 16] + (ROR(w[i - 15], 7) ^ ROR(w[i - 15], 18) ^ w[i - 15] >> 3) + w[i - 7] +
               (ROR(w[i - 2], 17) ^ ROR(w[i - 2], 19) ^ w[i - 2] >> 10);
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], k = h[7];
    for (int i = 0; i < 64; i++) {
        uint32_t t1 = k + (ROR(e, 6) ^ ROR(e, 11) ^ ROR(e, 25)) + ((e & f) ^ (~e & g)) + K256[i] + w[i];
        uint32_t t2 = (ROR(a, 2) ^ ROR(a, 13) ^ ROR(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        k = g, g = f, f = e, e = d + t1, d = c, c = b, b = a, a = t1 + t2;
    }
    h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e, h[5] += f, h[6] += g, h[7] += k;
}

static const sha256_ctx kSha256Init = {{0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                        0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19}, {0}, 0, 0};

static void sha256_update(sha256_ctx *c, const void *data, size_t n)
{
    const uint8_t *p = data;
    for (c->total += n; n > 0;) {
        size_t take = 64 - c->fill < n ? 64 - c->fill : n;
        memcpy(c->blk + c->fill, p, take), c->fill += take, p += take, n -= take;
        if (c->fill == 64)
            sha256_compress(c->h, c->blk), c->fill = 0;
    }
}

static void sha256_final(sha256_ctx *c, uint8_t out[32])
{
    uint64_t bits = c->total * 8;
    c->blk[c->fill++] = 0x80;
    if (c->fill > 56)
        memset(c->blk + c->fill, 0, 64 - c->fill), sha256_compress(c->h, c->blk), c->fill = 0;
    memset(c->blk + c->fill, 0, 56 - c->fill);
    for (int i = 0; i < 8; i++)
        c->blk[56 + i] = (uint8_t)(bits >> (56 - 8 * i));
    sha256_compress(c->h, c->blk);
    for (int i = 0; i < 32; i++)
        out[i] = (uint8_t)(c->h[i / 4] >> (24 - 8 * (i % 4)));
}

static void hmac_key_init(hmac_key *k, const void *key, size_t n)
{
    uint8_t blk[64] = {0}, ipad[64], opad[64];
    memcpy(blk, key, n < 64 ? n : 64);      /* keys here are passwords and digests */
    for (int i = 0; i < 64; i++)
        ipad[i] = blk[i] ^ 0x36, opad[i] = blk[i] ^ 0x5c;
    k->inner = kSha256Init, sha256_update(&k->inner, ipad, 64);
    k->outer = kSha256Init, sha256_update(&k->outer, opad, 64);
}

static void hmac_sha256(const hmac_key *k, const void *msg, size_t n, uint8_t out[32])
{
    sha256_ctx c = k->inner;
    uint8_t inner[32];
    sha256_update(&c, msg, n), sha256_final(&c, inner);
    c = k->outer;
    sha256_update(&c, inner, 32), sha256_final(&c, out);
}

/* Hi() of RFC 5802: PBKDF2-HMAC-SHA-256, one output block. */
static void scram_salted_password(const char *password, const uint8_t salt[16], uint8_t out[32])
{
    hmac_key k;
    uint8_t u[32], first[16 + 4] = {0};
    hmac_key_init(&k, password, strlen(password));
    memcpy(first, salt, 16), first[19] = 1;
    hmac_sha256(&k, first, sizeof first, u);
    memcpy(out, u, 32);
    for (unsigned i = 1; i < SCRAM_ITERS; i++) {
        hmac_sha256(&k, u, 32, u);
        for (int j = 0; j < 32; j++)
            out[j] ^= u[j];
    }
}

/* ClientKey = HMAC(SaltedPassword, "Client Key"), StoredKey = H(ClientKey),
 * ClientProof = ClientKey XOR HMAC(StoredKey, AuthMessage). */
static void scram_proof(const uint8_t salted[32], const char *auth, uint8_t stored_key[32], uint8_t proof[32])
{
    hmac_key k;
    sha256_ctx c;
    uint8_t client_key[32], sig[32];
    hmac_key_init(&k, salted, 32), hmac_sha256(&k, "Client Key", 10, client_key);
    c = kSha256Init, sha256_update(&c, client_key, 32), sha256_final(&c, stored_key);
    hmac_key_init(&k, stored_key, 32), hmac_sha256(&k, auth, strlen(auth), sig);
    for (int i = 0; i < 32; i++)
        proof[i] = client_key[i] ^ sig[i];
}

/* ------------------------------------- the wire format: text rows, tabs */
struct buf { char *p; size_t len, cap; };

static void buf_put(struct buf *b, const char *d, size_t n)
{
    while (b->len + n > b->cap)
        if (!(b->p = realloc(b->p, b->cap = b->cap ? b->cap * 2 : 4096)))
            perror("realloc"), exit(1);
    memcpy(b->p + b->len, d, n), b->len += n;
}

/* Appends V in decimal (with CENTS as money, "1234.56"), then SEP. */
static void put_int(struct buf *b, uint64_t v, bool cents, char sep)
{
    char t[24], *e = t + sizeof t, *p = e;
    int digits = 0;
    *--p = sep;
    do {
        if (cents && digits == 2)
            *--p = '.';
        *--p = (char)('0' + v % 10), v /= 10, digits++;
    } while (v || (cents && digits < 3));
    buf_put(b, p, (size_t)(e - p));
}

/* Reads the decimal at *PP (money as cents) and steps over the separator after it. */
static int64_t take_int(const char **pp)
{
    const char *p = *pp;
    int64_t v = 0;
    for (; (*p >= '0' && *p <= '9') || *p == '.'; p++)
        v = *p == '.' ? v : v * 10 + (*p - '0');
    *pp = p + 1;
    return v;
}

/* ------------------------------------------------ the simulated server */
/* The role's SCRAM secret, as the server's catalog keeps it: salt and StoredKey
 * for the password "s3cret-app-password" and 4096 iterations. */
static struct server {
    pthread_mutex_t lock;                   /* logins */
    uint8_t salt[16], stored_key[32];
    uint64_t idle_session_timeout_us, logins;
} g_server = {
    PTHREAD_MUTEX_INITIALIZER,
    {0x9e, 0x37, 0x79, 0xb9, 0x7f, 0x4a, 0x7c, 0x15, 0x24, 0x3f, 0x6a, 0x88, 0x85, 0xa3, 0x08, 0xd3},
    {0x1b, 0x5e, 0x5e, 0xe3, 0x63, 0x04, 0x75, 0x3a, 0x4a, 0xca, 0x4f, 0x39, 0x3d, 0x64, 0x3a, 0x66,
     0x1f, 0x92, 0x8f, 0x90, 0x61, 0x93, 0x3e, 0xe8, 0x18, 0x5d, 0x85, 0x16, 0x4b, 0x89, 0x5f, 0xb2},
    300 * 1000000ULL, 0};

/* Checks H(proof XOR HMAC(StoredKey, AuthMessage)) == StoredKey and opens a session (-1: denied). */
static int server_login(struct server *s, const char *auth_msg, const uint8_t proof[32])
{
    uint8_t key[32];
    hmac_key k;
    sha256_ctx c = kSha256Init;
    hmac_key_init(&k, s->stored_key, 32), hmac_sha256(&k, auth_msg, strlen(auth_msg), key);
    for (int i = 0; i < 32; i++)
        key[i] ^= proof[i];
    sha256_update(&c, key, 32), sha256_final(&c, key);
    if (memcmp(key, s->stored_key, 32) != 0)
        return -1;
    pthread_mutex_lock(&s->lock);
    int id = (int)++s->logins;
    pthread_mutex_unlock(&s->lock);
    return id;
}

/* The row of account ID, DEBIT taken off its balance: id, owner, balance. */
static void emit_account_row(struct buf *rx, int64_t id, int64_t debit)
{
    rng_t r = {(uint64_t)id * 0x9e3779b97f4a7c15ULL + 1};   /* the row's contents follow from its id */
    uint64_t h = rng_next(&r);
    char owner[13];
    for (int i = 0; i < 12; i++, h = h >> 5 | h << 59)
        owner[i] = (char)('a' + h % 26);
    owner[12] = '\t';
    put_int(rx, id, false, '\t'), buf_put(rx, owner, sizeof owner);
    put_int(rx, 100000 + (int64_t)(rng_next(&r) % 10000000) - debit, true, '\n');
}

/* Executes "statement, key[, argument]"; the rows go to RX. */
static unsigned server_execute(const struct buf *tx, struct buf *rx)
{
    const char *p = tx->p;
    int64_t stmt = take_int(&p), key = take_int(&p), arg = p < tx->p + tx->len ? take_int(&p) : 0;
    unsigned rows = stmt == STMT_RANGE ? (unsigned)arg : 1;
    for (unsigned i = 0; i < rows; i++)
        emit_account_row(rx, (key + i) % ACCOUNTS, stmt == STMT_DEBIT ? arg : 0);
    return rows;
}

/* ------------------------------------------------------------ the pool */
struct pool_cfg {
    unsigned min_idle, max_idle;            /* per stripe */
    uint64_t max_lifetime_s, idle_timeout_s, validate_idle_ms, housekeeping_ms;
};
struct conn { int session; unsigned jitter_permille; uint64_t opened_us, last_used_us; struct buf tx, rx; };
struct pool {
    struct pool_cfg cfg;
    struct server *srv;
    const char *user, *password;
};
struct worker {
    pthread_t tid;
    struct pool *pool;
    struct conn *idle[MAX_STRIPE];          /* this worker's stripe, the warmest on top */
    unsigned n_idle;
    long requests, think_us;
    rng_t work_rng, pool_rng;               /* the workload's draws apart from the pool's */
    uint64_t now_us, next_housekeeping_us, opens, retired, pings, refused, rows, digest;
};

/* Jittered exponential backoff after a refused connect: 2 ms doubling, at most 0.5 s. */
static uint64_t connect_backoff_us(rng_t *r, unsigned attempt)
{
    uint64_t cap = attempt < 8 ? 2000ULL << attempt : 500000;
    return cap / 2 + rng_below(r, cap / 2 + 1);
}

/* Connects (backing off while refused) and logs in with SCRAM-SHA-256. */
static struct conn *conn_open(struct worker *w)
{
    struct pool *p = w->pool;
    uint8_t proof[32], salted[32], stored_key[32];
    char auth[256];
    for (unsigned attempt = 0; rng_below(&w->pool_rng, REFUSE_ONE_IN) == 0; attempt++)
        w->now_us += RTT_US + connect_backoff_us(&w->pool_rng, attempt), w->refused++;
    /* AuthMessage: client-first-bare, server-first (the nonces, salt and iterations),
     * client-final-without-proof */
    char salt_hex[33];
    for (int i = 0; i < 16; i++)
        snprintf(salt_hex + 2 * i, 3, "%02x", p->srv->salt[i]);
    unsigned long long nonce = rng_next(&w->pool_rng), srv_nonce = rng_next(&w->pool_rng);
    snprintf(auth, sizeof auth, "n=%s,r=%016llx,r=%016llx%016llx,s=%s,i=%d,c=biws,r=%016llx%016llx",
             p->user, nonce, nonce, srv_nonce, salt_hex, SCRAM_ITERS, nonce, srv_nonce);
    scram_salted_password(p->password, p->srv->salt, salted);
    scram_proof(salted, auth, stored_key, proof);
    w->now_us += 5 * RTT_US;                /* TCP, TLS, startup, the SASL exchange */
    int session = server_login(p->srv, auth, proof);
    struct conn *c = calloc(1, sizeof *c);
    if (session < 0 || !c)
        fprintf(stderr, "cannot open a connection\n"), exit(1);
    c->session = session, c->opened_us = c->last_used_us = w->now_us;
    c->jitter_permille = (unsigned)rng_below(&w->pool_rng, 25);   /* retire up to 2.5% early */
    w->opens++;
    return c;
}

/* Terminate; the session's buffers go with it. */
static void conn_close(struct conn *c)
{
    free(c->tx.p), free(c->rx.p), free(c);
}

/* Whether a connection is too old to keep (checked on release and by housekeeping). */
static bool conn_should_retire(const struct pool_cfg *cfg, const struct conn *c, uint64_t now_us)
{
#ifdef VPROF_CASE_FIX
    uint64_t lifetime_us = cfg->max_lifetime_s * 1000000;
#else
    uint64_t lifetime_us = cfg->max_lifetime_s * 1000; /* FIX: the clock counts microseconds: * 1000000 */
#endif
    lifetime_us -= lifetime_us / 1000 * c->jitter_permille;
    return now_us - c->opened_us >= lifetime_us;
}

/* Idle for longer than the validation window: ping it before handing it out. */
static bool conn_needs_validation(const struct pool_cfg *cfg, const struct conn *c, uint64_t now_us)
{
    return now_us - c->last_used_us > cfg->validate_idle_ms * 1000;
}

/* Every housekeeping period: retire old idle connections, close those above min_idle
 * idle past the idle timeout (oldest first), and top the stripe up to min_idle. */
static void stripe_housekeep(struct worker *w)
{
    const struct pool_cfg *cfg = &w->pool->cfg;
    unsigned kept = 0, n = w->n_idle;
    for (unsigned i = 0; i < n; i++) {
        struct conn *c = w->idle[i];
        bool surplus = kept + (n - i - 1) >= cfg->min_idle;
        if (conn_should_retire(cfg, c, w->now_us) ||
            (surplus && w->now_us - c->last_used_us >= cfg->idle_timeout_s * 1000000))
            w->retired++, conn_close(c);
        else
            w->idle[kept++] = c;
    }
    for (w->n_idle = kept; w->n_idle < cfg->min_idle;)
        w->idle[w->n_idle++] = conn_open(w);
    w->next_housekeeping_us = w->now_us + cfg->housekeeping_ms * 1000;
}

static struct conn *pool_acquire(struct worker *w)
{
    while (w->n_idle > 0) {
        struct conn *c = w->idle[--w->n_idle];
        if (!conn_needs_validation(&w->pool->cfg, c, w->now_us))
            return c;
        w->pings++, w->now_us += RTT_US;    /* the server drops sessions idle past its timeout */
        if (w->now_us - c->last_used_us <= w->pool->srv->idle_session_timeout_us)
            return c;
        conn_close(c);                      /* the server dropped it */
    }
    return conn_open(w);
}

static void pool_release(struct worker *w, struct conn *c)
{
    c->last_used_us = w->now_us;
    if (conn_should_retire(&w->pool->cfg, c, w->now_us))
        w->retired++, conn_close(c);
    else if (w->n_idle >= w->pool->cfg.max_idle)
        conn_close(c);                      /* the stripe keeps no more */
    else
        w->idle[w->n_idle++] = c;
}

/* ----------------------------------------------------- the application */
/* Decodes the rows (id, owner, balance) into a hash of their values. */
static uint64_t decode_rows(const struct buf *rx)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (const char *p = rx->p, *end = p + rx->len; p < end;) {
        h = (h ^ (uint64_t)take_int(&p)) * FNV_PRIME;
        while (*p++ != '\t')
            h = (h ^ (uint8_t)p[-1]) * FNV_PRIME;
        h = (h ^ (uint64_t)take_int(&p)) * FNV_PRIME;
    }
    return h;
}

static void run_query(struct worker *w, struct conn *c, int stmt, int64_t key, int64_t arg)
{
    c->tx.len = 0, c->rx.len = 0;
    put_int(&c->tx, stmt, false, '\t'), put_int(&c->tx, key, false, stmt == STMT_GET ? '\n' : '\t');
    if (stmt != STMT_GET)
        put_int(&c->tx, arg, stmt == STMT_DEBIT, '\n');
    unsigned rows = server_execute(&c->tx, &c->rx);
    w->now_us += RTT_US + rows / 4;         /* the server streams about 4 rows a microsecond */
    w->rows += rows;
    w->digest = (w->digest ^ decode_rows(&c->rx)) * FNV_PRIME;
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    rng_t *r = &w->work_rng;
    stripe_housekeep(w);                    /* warms the stripe up */
    for (long i = 0; i < w->requests; i++) {
        w->now_us += rng_below(r, 2 * (uint64_t)w->think_us + 1);
        if (w->now_us >= w->next_housekeeping_us)
            stripe_housekeep(w);
        /* A request: look an account up, often list the accounts after it, sometimes debit it. */
        struct conn *c = pool_acquire(w);
        int64_t account = (int64_t)rng_below(r, ACCOUNTS);
        run_query(w, c, STMT_GET, account, 0);
        if (rng_below(r, 100) < 50)
            run_query(w, c, STMT_RANGE, account, 20 + (int64_t)rng_below(r, 100));
        if (rng_below(r, 100) < 30)
            run_query(w, c, STMT_DEBIT, account, 1 + (int64_t)rng_below(r, 50000));
        pool_release(w, c);
        CASE_PROGRESS("request");
    }
    while (w->n_idle > 0)
        conn_close(w->idle[--w->n_idle]);
    return NULL;
}

int main(int argc, char **argv)
{
    opt_t o[] = {
        {"workers", "application worker threads", 2, 1, 64, 0},
        {"requests", "requests over all workers", 16000, 1, 100000000, 0},
        {"think-us", "mean think time between a worker's requests (us)", 40, 0, 100000000, 0},
        {"pool-size", "idle connections the pool may keep (all stripes)", 8, 1, 64 * MAX_STRIPE, 0},
        {"min-idle", "idle connections kept warm (all stripes)", 2, 0, 64 * MAX_STRIPE, 0},
        {"max-lifetime-s", "retire connections older than this", 1800, 1, 86400, 0},
    };
    opts_parse(argc, argv, o, NOPTS(o));
    int nworkers = (int)o[0].value;
    struct pool pool = {{(unsigned)(o[4].value / nworkers), (unsigned)(o[3].value / nworkers),
                         (uint64_t)o[5].value, 600, 500, 30000}, &g_server, "app", "s3cret-app-password"};
    if (pool.cfg.max_idle > MAX_STRIPE || pool.cfg.min_idle > pool.cfg.max_idle)
        fprintf(stderr, "need min-idle <= pool-size <= %d a worker\n", MAX_STRIPE), exit(2);
    struct worker *ws = calloc((size_t)nworkers, sizeof *ws);
    for (int i = 0; ws && i < nworkers; i++) {
        ws[i].pool = &pool, ws[i].think_us = o[2].value;
        ws[i].requests = o[1].value / nworkers + (i < o[1].value % nworkers);
        rng_seed(&ws[i].work_rng, 1000 + (uint64_t)i), rng_seed(&ws[i].pool_rng, 5000 + (uint64_t)i);
        if (pthread_create(&ws[i].tid, NULL, worker_main, &ws[i]))
            perror("pthread_create"), exit(1);
    }
    uint64_t rows = 0, digest = 0, opens = 0, retired = 0, pings = 0, refused = 0;
    for (struct worker *w = ws; w && w < ws + nworkers; w++) {
        pthread_join(w->tid, NULL);
        rows += w->rows, digest += w->digest;   /* a sum: the same in any order */
        opens += w->opens, retired += w->retired, pings += w->pings, refused += w->refused;
    }
    printf("requests=%ld rows=%llu digest=%016llx\n", o[1].value, (unsigned long long)rows,
           (unsigned long long)digest);
    fprintf(stderr, "opens=%llu\nretired=%llu\npings=%llu\nrefused=%llu\nlogins=%llu\n",
            (unsigned long long)opens, (unsigned long long)retired, (unsigned long long)pings,
            (unsigned long long)refused, (unsigned long long)g_server.logins);
    free(ws);
    return 0;
}
