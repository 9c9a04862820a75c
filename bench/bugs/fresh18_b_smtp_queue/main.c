/* Written for the vprof bug corpus by a helper that had not seen the
 * profiler (2026-11-29); not modelled on a real issue. The fix is the
 * VPROF_CASE_FIX variant; the line marked FIX is the bug.
 *
 * mtaq - the queue manager of an outbound mail server. Each message waits in
 * its destination domain's queue (a min-heap on the time of its next try).
 * The scheduler (main thread) works in rounds of one simulated second: per
 * domain it opens sessions of due messages while the destination has a free
 * slot, and hands them to the delivery workers (pthreads): STARTTLS (the
 * CPU-heavy step), MAIL, RCPT, DATA. Greylisted messages (450) back off
 * exponentially; a session the destination refuses (421) tried nothing, its
 * messages wait for the next round, and the domain's concurrency window drops
 * to the sessions it accepted (clean rounds probe one higher, up to the limit).
 *
 * The bug: destination_has_slot() bounds a domain's sessions by the transport's
 * limit instead of its learned window. Providers that take as many sessions as
 * the limit (normal: --provider-conns 20) never notice; providers that take one
 * per client (buggy: --provider-conns 1) get 20 a round, and each refused
 * session has paid for a TLS handshake in a worker before its 421.
 */
#include "../common/corpus.h"
#include <pthread.h>

#define MAX_DOMAINS      512
#define MAX_SESSION_MSGS 32
#define MAX_JOBS         100    /* the transport's process limit */
#define MAX_WORKERS      8
#define FIELD_P          0x1fffffffffffffffull   /* 2^61 - 1 */
/* R = A * B mod 2^61-1; a macro, as a helper would be a call per bit. */
#define MULMOD(r, a, b) do { unsigned __int128 t_ = (unsigned __int128)(a) * (b); \
        (r) = (uint64_t)(t_ & FIELD_P) + (uint64_t)(t_ >> 61);                \
        (r) = (r) >= FIELD_P ? (r) - FIELD_P : (r); } while (0)
/* One step of the xorshift64 stream the remote side's made-up bytes come from. */
#define XORSHIFT(x) ((x) ^= (x) << 13, (x) ^= (x) >> 7, (x) ^= (x) << 17)

enum { ST_DELIVERED, ST_BOUNCED, ST_GREYLISTED, ST_NOT_TRIED };

struct message {
    uint32_t id, rcpt, body_len;
    uint16_t domain, attempts;
    int64_t next_try;           /* simulated seconds */
    uint8_t remote_seen;        /* the destination's greylist knows the triple */
};

struct domain {
    char name[40];
    int remote_conns, greylists;    /* sessions it accepts from one client; greylisting */
    uint32_t *heap;             /* deferred queue: message ids, earliest try first */
    int nheap, capheap;
    int window, busy, accepted, refused, clean_rounds;
};

struct session_job {
    struct domain *dom;
    int slot;                   /* the slot-th session opened to dom this round */
    int nmsgs, refused;
    uint64_t session_key;       /* the TLS record layer's key (the wire is not modelled) */
    uint32_t msgs[MAX_SESSION_MSGS];
    uint8_t status[MAX_SESSION_MSGS];
    uint64_t sent_digest[MAX_SESSION_MSGS];
};

struct config { int dest_limit, initial_window, probe_rounds, session_msgs; int64_t min_backoff, max_backoff; };

struct qmgr {
    struct config cfg;
    struct message *msgs;
    struct domain *domains;
    int ndomains;
    long pending;
    struct session_job jobs[MAX_JOBS];
    uint64_t rounds, sessions, refusals, greylisted, delivered, bounced, digest;
    int64_t now;
};

/* The delivery workers: the scheduler posts a round of jobs and waits for all. */
struct pool {
    struct qmgr *q;
    pthread_mutex_t mu;
    pthread_cond_t work, done;
    struct session_job *jobs;
    int n, next, finished, stop, nthreads;
    pthread_t th[MAX_WORKERS];
};

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n, size);
    if (!p)
        perror("calloc"), exit(1);
    return p;
}

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 33, x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33, x *= 0xc4ceb9fe1a85ec53ull;
    return x ^ (x >> 33);
}

/* ------------------------------------------------ the SMTP client (workers) */
/* b^e mod 2^61-1 for an exponent of WORDS 64-bit words, most significant first. */
static uint64_t modpow(uint64_t b, const uint64_t *e, int words)
{
    uint64_t r = 1;
    b %= FIELD_P;
    for (int w = 0; w < words; w++)
        for (int bit = 63; bit >= 0; bit--) {
            MULMOD(r, r, r);
            if (e[w] >> bit & 1)
                MULMOD(r, r, b);
        }
    return r;
}

/* Hashes the destination's certificate chain (three DER blobs, made up from
 * the domain name) and checks each link's signature: one exponentiation by
 * a 512-bit public exponent per certificate. */
static uint64_t verify_cert_chain(const struct domain *d)
{
    uint64_t h = 0xcbf29ce484222325ull, link = 0, exponent[8];
    for (int cert = 0; cert < 3; cert++) {
        for (int i = 0; i < 1200; i++)
            h = (h ^ (uint8_t)(d->name[i % 16] + i + cert)) * 0x100000001b3ull;
        uint64_t x = h;
        for (int w = 0; w < 8; w++)
            exponent[w] = XORSHIFT(x);
        link ^= modpow(h | 1, exponent, 8);
    }
    return link;
}

/* STARTTLS: the client's half of the key exchange and the chain check. */
static uint64_t tls_handshake(const struct domain *d, uint64_t seed)
{
    uint64_t secret = mix64(seed) | 1, peer_secret = mix64(seed ^ 0x5eed);
    uint64_t client_pub = modpow(5, &secret, 1), server_pub = modpow(5, &peer_secret, 1);
    uint64_t shared = modpow(server_pub, &secret, 1);
    return shared ^ client_pub ^ verify_cert_chain(d);
}

/* What the destination answers to RCPT TO: unknown users, then greylisting
 * of a sender/recipient pair it has not seen before. */
static int remote_rcpt_to(const struct domain *d, struct message *m)
{
    if (mix64(m->rcpt) % 89 == 0)
        return 550;
    int first_seen = d->greylists && !m->remote_seen;
    m->remote_seen = 1;
    return first_seen ? 450 : 250;
}

/* DATA: streams the message as the submission server stored it (headers,
 * then text lines made up from the message id), dot-stuffed; returns the
 * digest of the bytes on the wire. */
static uint64_t smtp_data(const struct message *m)
{
    uint64_t x = mix64(0x6d61696c00000000ull | m->id) | 1;
    uint64_t h = mix64((uint64_t)m->id << 32 | m->rcpt);   /* Message-ID and To: */
    for (uint32_t sent = 64; sent + 80 < m->body_len;) {
        uint64_t shape = XORSHIFT(x), letters = 0;
        uint32_t len = 20 + (uint32_t)(shape % 56);
        if ((shape >> 32) % 12 == 0)    /* a line starting with a dot: stuffed */
            h = (h ^ '.') * 0x100000001b3ull, sent++;
        for (uint32_t i = 0; i < len; i++, letters >>= 8) {
            if (i % 8 == 0)
                letters = XORSHIFT(x);
            char c = i == 0 && (shape >> 32) % 12 == 0 ? '.' : (char)('a' + (uint8_t)letters % 26);
            h = (h ^ (uint8_t)c) * 0x100000001b3ull;
        }
        h = ((h ^ '\r') * 0x100000001b3ull ^ '\n') * 0x100000001b3ull;
        sent += len + 2;
    }
    return h;
}

static void smtp_session(struct qmgr *q, struct session_job *j)
{
    j->session_key = tls_handshake(j->dom, (uint64_t)j->msgs[0] << 16 | (uint64_t)j->slot);
    if (j->slot >= j->dom->remote_conns) {   /* MAIL FROM: "421 4.7.0 too many connections" */
        j->refused = 1;
        return;
    }
    for (int k = 0; k < j->nmsgs; k++) {
        struct message *m = &q->msgs[j->msgs[k]];
        int code = remote_rcpt_to(j->dom, m);
        j->status[k] = code == 550 ? ST_BOUNCED : code == 450 ? ST_GREYLISTED : ST_DELIVERED;
        j->sent_digest[k] = code == 250 ? smtp_data(m) : 0;
    }
}

static void *delivery_worker(void *arg)
{
    struct pool *p = arg;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->stop && p->next >= p->n)
            pthread_cond_wait(&p->work, &p->mu);
        if (p->stop)
            break;
        struct session_job *j = &p->jobs[p->next++];
        pthread_mutex_unlock(&p->mu);
        smtp_session(p->q, j);
        pthread_mutex_lock(&p->mu);
        if (++p->finished == p->n)
            pthread_cond_signal(&p->done);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

static void pool_run(struct pool *p, struct session_job *jobs, int n)
{
    pthread_mutex_lock(&p->mu);
    p->jobs = jobs, p->n = n, p->next = 0, p->finished = 0;
    pthread_cond_broadcast(&p->work);
    while (p->finished < p->n)
        pthread_cond_wait(&p->done, &p->mu);
    pthread_mutex_unlock(&p->mu);
}

/* ------------------------------------------------- the queue (scheduler) */
static int msg_before(const struct qmgr *q, uint32_t a, uint32_t b)
{
    const struct message *x = &q->msgs[a], *y = &q->msgs[b];
    return x->next_try < y->next_try || (x->next_try == y->next_try && x->id < y->id);
}

static void queue_push(struct qmgr *q, struct domain *d, uint32_t id)
{
    if (d->nheap == d->capheap) {
        d->capheap = d->capheap ? 2 * d->capheap : 16;
        d->heap = realloc(d->heap, (size_t)d->capheap * sizeof *d->heap);
        if (!d->heap)
            perror("realloc"), exit(1);
    }
    int i = d->nheap++;
    for (; i > 0 && msg_before(q, id, d->heap[(i - 1) / 2]); i = (i - 1) / 2)
        d->heap[i] = d->heap[(i - 1) / 2];
    d->heap[i] = id;
}

static uint32_t queue_pop(struct qmgr *q, struct domain *d)
{
    uint32_t top = d->heap[0], last = d->heap[--d->nheap];
    int i = 0, c;
    while ((c = 2 * i + 1) < d->nheap) {
        if (c + 1 < d->nheap && msg_before(q, d->heap[c + 1], d->heap[c]))
            c++;
        if (!msg_before(q, d->heap[c], last))
            break;
        d->heap[i] = d->heap[c], i = c;
    }
    if (d->nheap)
        d->heap[i] = last;
    return top;
}

static int queue_due(const struct qmgr *q, const struct domain *d)
{
    return d->nheap > 0 && q->msgs[d->heap[0]].next_try <= q->now;
}

/* Whether the scheduler may open one more session to D this round. */
static int destination_has_slot(const struct domain *d, const struct config *cfg)
{
#ifdef VPROF_CASE_FIX
    (void)cfg;
    return d->busy < d->window;
#else
    return d->busy < cfg->dest_limit;   /* FIX: bound by the destination's learned window, d->window */
#endif
}

/* Plans one round: sessions of due messages, domains taken in a rotating
 * order so that the process limit does not starve the same ones. */
static int plan_round(struct qmgr *q)
{
    int n = 0;
    for (int k = 0; k < q->ndomains && n < MAX_JOBS; k++) {
        struct domain *d = &q->domains[(q->rounds + (uint64_t)k) % (uint64_t)q->ndomains];
        while (n < MAX_JOBS && queue_due(q, d) && destination_has_slot(d, &q->cfg)) {
            struct session_job *j = &q->jobs[n++];
            j->dom = d, j->slot = d->busy++, j->nmsgs = 0, j->refused = 0;
            while (j->nmsgs < q->cfg.session_msgs && queue_due(q, d))
                j->msgs[j->nmsgs++] = queue_pop(q, d);
        }
    }
    return n;
}

/* Backoff after a failed try: doubling from the minimum, capped. */
static int64_t retry_delay(const struct config *cfg, int attempts)
{
    int64_t delay = cfg->min_backoff << (attempts < 8 ? attempts - 1 : 7);
    return delay < cfg->max_backoff ? delay : cfg->max_backoff;
}

/* Messages of a refused session were not tried: no attempt, no backoff,
 * they wait for a slot in the next round. A failed try backs off. */
static void apply_session_result(struct qmgr *q, const struct session_job *j)
{
    struct domain *d = j->dom;
    q->sessions++;
    d->refused += j->refused, q->refusals += (uint64_t)j->refused, d->accepted += !j->refused;
    for (int k = 0; k < j->nmsgs; k++) {
        struct message *m = &q->msgs[j->msgs[k]];
        int st = j->refused ? ST_NOT_TRIED : j->status[k];
        if (st == ST_DELIVERED || st == ST_BOUNCED) {     /* it leaves the queue */
            q->digest += mix64((uint64_t)m->id << 32 ^ (uint64_t)m->rcpt << 2 ^ (uint64_t)st ^ j->sent_digest[k]);
            q->delivered += st == ST_DELIVERED, q->bounced += st == ST_BOUNCED, q->pending--;
            continue;
        }
        if (st == ST_GREYLISTED)
            q->greylisted++, m->attempts++;
        m->next_try = q->now + (st == ST_NOT_TRIED ? 1 : retry_delay(&q->cfg, m->attempts));
        queue_push(q, d, m->id);
    }
}

/* Concurrency feedback: a refusal lowers the window to what the destination
 * took; a run of clean, full rounds probes one session more. */
static void update_window(struct domain *d, const struct config *cfg)
{
    if (d->refused) {
        d->window = d->accepted > 0 ? d->accepted : 1;
        d->clean_rounds = 0;
    } else if (d->busy >= d->window && ++d->clean_rounds >= cfg->probe_rounds) {
        d->window += d->window < cfg->dest_limit;
        d->clean_rounds = 0;
    }
    d->busy = d->accepted = d->refused = 0;
}

static int64_t earliest_retry(const struct qmgr *q)
{
    int64_t t = INT64_MAX;
    for (int i = 0; i < q->ndomains; i++)
        if (q->domains[i].nheap && q->msgs[q->domains[i].heap[0]].next_try < t)
            t = q->msgs[q->domains[i].heap[0]].next_try;
    return t;
}

static void run_scheduler(struct qmgr *q, struct pool *pool)
{
    while (q->pending > 0) {
        int n = plan_round(q);
        if (n == 0) {       /* nothing due: sleep until the next retry */
            q->now = earliest_retry(q);
            continue;
        }
        pool_run(pool, q->jobs, n);
        for (int i = 0; i < n; i++)
            apply_session_result(q, &q->jobs[i]);
        for (int i = 0; i < q->ndomains; i++)
            if (q->domains[i].busy)
                update_window(&q->domains[i], &q->cfg);
        q->rounds++, q->now++;
        CASE_PROGRESS("round");
    }
}

/* ------------------------------------------------------ the mailing list */
/* Three large providers take most of the list; the rest are small domains,
 * a quarter of which greylist. */
static void make_domains(struct qmgr *q, int nsmall, int provider_conns)
{
    static const char *const kProviders[] = {"mx.bigmail.example", "in.postbox.example", "mx.webpost.example"};
    q->ndomains = 3 + nsmall;
    q->domains = xcalloc((size_t)q->ndomains, sizeof *q->domains);
    for (int i = 0; i < q->ndomains; i++) {
        struct domain *d = &q->domains[i];
        if (i < 3)
            snprintf(d->name, sizeof d->name, "%s", kProviders[i]), d->remote_conns = provider_conns;
        else
            snprintf(d->name, sizeof d->name, "mail.d%03d.example", i - 3), d->remote_conns = 10;
        d->greylists = i >= 3 && i % 4 == 0;
        d->window = q->cfg.initial_window;
    }
}

static void enqueue_list(struct qmgr *q, long nmsgs, rng_t *r)
{
    q->msgs = xcalloc((size_t)nmsgs, sizeof *q->msgs);
    for (long i = 0; i < nmsgs; i++) {
        struct message *m = &q->msgs[i];
        uint64_t x = rng_below(r, 100);
        m->id = (uint32_t)i;
        m->domain = (uint16_t)(x < 80 ? x % 3 : 3 + rng_below(r, (uint64_t)q->ndomains - 3));
        m->rcpt = (uint32_t)rng_next(r);
        m->body_len = 3000 + (uint32_t)rng_below(r, 8000);
        queue_push(q, &q->domains[m->domain], m->id);
    }
    q->pending = nmsgs;
}

static void pool_start(struct pool *p, struct qmgr *q, int nthreads)
{
    *p = (struct pool){.q = q, .mu = PTHREAD_MUTEX_INITIALIZER, .work = PTHREAD_COND_INITIALIZER,
                       .done = PTHREAD_COND_INITIALIZER, .nthreads = nthreads};
    for (int i = 0; i < nthreads; i++)
        if (pthread_create(&p->th[i], NULL, delivery_worker, p) != 0)
            perror("pthread_create"), exit(1);
}

int main(int argc, char **argv)
{
    opt_t opts[] = {
        {"messages", "recipients of the mailing", 24000, 1, 1000000, 0},
        {"small-domains", "small destination domains", 150, 1, MAX_DOMAINS - 3, 0},
        {"provider-conns", "sessions a big provider accepts from one client", 20, 1, 1000, 0},
        {"dest-limit", "the transport's per-destination session limit", 20, 1, MAX_JOBS, 0},
        {"session-msgs", "messages per session", 10, 1, MAX_SESSION_MSGS, 0},
        {"workers", "delivery threads", 2, 1, MAX_WORKERS, 0},
        {"seed", "workload seed", 2511, 0, 1000000000, 0},
    };
    opts_parse(argc, argv, opts, NOPTS(opts));
    struct qmgr *q = xcalloc(1, sizeof *q);
    int dest_limit = (int)opts[3].value;
    q->cfg = (struct config){.dest_limit = dest_limit, .initial_window = dest_limit < 5 ? dest_limit : 5,
                             .probe_rounds = 30, .session_msgs = (int)opts[4].value,
                             .min_backoff = 300, .max_backoff = 4000};
    rng_t r;
    rng_seed(&r, (uint64_t)opt_get(opts, NOPTS(opts), "seed"));
    make_domains(q, (int)opts[1].value, (int)opts[2].value);
    enqueue_list(q, opt_get(opts, NOPTS(opts), "messages"), &r);
    struct pool pool;
    pool_start(&pool, q, (int)opt_get(opts, NOPTS(opts), "workers"));
    run_scheduler(q, &pool);
    pthread_mutex_lock(&pool.mu);
    pool.stop = 1;
    pthread_cond_broadcast(&pool.work);
    pthread_mutex_unlock(&pool.mu);
    for (int i = 0; i < pool.nthreads; i++)
        pthread_join(pool.th[i], NULL);
    printf("%llu delivered, %llu bounced, digest %016llx\n", (unsigned long long)q->delivered,
           (unsigned long long)q->bounced, (unsigned long long)q->digest);
    fprintf(stderr, "rounds=%llu sessions=%llu refused_421=%llu greylisted=%llu sim_seconds=%lld\n",
            (unsigned long long)q->rounds, (unsigned long long)q->sessions,
            (unsigned long long)q->refusals, (unsigned long long)q->greylisted, (long long)q->now);
    for (int i = 0; i < q->ndomains; i++)
        free(q->domains[i].heap);
    free(q->domains), free(q->msgs), free(q);
    return 0;
}
