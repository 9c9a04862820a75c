/* Written for the vprof bug corpus by a helper that had not seen the
 * profiler (2026-11-29); not modelled on a real issue. The fix is the
 * VPROF_CASE_FIX variant; the line marked FIX is the bug.
 *
 * syncd - the client of a file-sync service (a Dropbox-like folder). Apps
 * append to files; the change notifications reach the watcher thread, which
 * syncs a file once it has been quiet for --settle-ms or, if it keeps
 * changing (a download, a log), at the latest --max-delay-ms after its first
 * unsynced write. The uploader thread signs the whole file (the SHA-256 of
 * every 4 KiB block), compresses the blocks the server lacks and uploads
 * them; the server stores each block once and commits the file's block list.
 *
 * The bug: pending_is_due() bounds the wait of a file that never settles by
 * the settle period instead of the max delay (a copy-paste slip). Files
 * written in a quick burst (normal: --write-gap-ms 5) settle before either
 * bound matters; files written slowly (buggy: --write-gap-ms 600, half a
 * minute per file) are synced every second while they grow, and every sync
 * signs the whole file again on the uploader thread.
 */
#include "../common/corpus.h"
#include <pthread.h>

#define BLOCK        4096
#define MAX_FILES    256
#define LZ_HASH_BITS 12
#define LZ_MAX_CHAIN 32
#define QUEUE_CAP    256

/* ------------------------------------------------ bounded FIFO channels */
/* What the threads pass on: a change notification (the file and its size
 * after the write, at t_us) or a sync job (upload the file's first size
 * bytes, due at t_us). */
struct msg { uint64_t t_us; uint32_t file, size; };

struct chan { pthread_mutex_t mu; pthread_cond_t can_pop, can_push;
              struct msg items[QUEUE_CAP]; unsigned head, count; int closed; };
#define CHAN_INIT {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER, {{0, 0, 0}}, 0, 0, 0}

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (!p)
        perror("calloc"), exit(1);
    return p;
}

static void chan_push(struct chan *c, struct msg m)
{
    pthread_mutex_lock(&c->mu);
    while (c->count == QUEUE_CAP)
        pthread_cond_wait(&c->can_push, &c->mu);
    c->items[(c->head + c->count++) % QUEUE_CAP] = m;
    pthread_cond_signal(&c->can_pop);
    pthread_mutex_unlock(&c->mu);
}

/* Returns 0 once the channel is closed and drained. */
static int chan_pop(struct chan *c, struct msg *m)
{
    pthread_mutex_lock(&c->mu);
    while (c->count == 0 && !c->closed)
        pthread_cond_wait(&c->can_pop, &c->mu);
    int got = c->count > 0;
    if (got) {
        *m = c->items[c->head];
        c->head = (c->head + 1) % QUEUE_CAP, c->count--;
        pthread_cond_signal(&c->can_push);
    }
    pthread_mutex_unlock(&c->mu);
    return got;
}

static void chan_close(struct chan *c)
{
    pthread_mutex_lock(&c->mu);
    c->closed = 1;
    pthread_cond_broadcast(&c->can_pop);
    pthread_mutex_unlock(&c->mu);
}

/* ------------------------------------------------------ the synced folder */
/* A file of the folder. Its buffer is allocated to its final size up front:
 * the uploader reads [0, job size) while the app keeps appending past it. */
struct file { uint8_t *data; uint32_t size, cap; uint64_t next_write_us, gap_us; rng_t rng; };

static const char *const kWords[] = {"GET", "PUT", "POST", "/api/v1/items/", "/api/v1/users/", "/static/app.js",
    "200", "204", "304", "404", "503", "user=", "session=", "cache=hit", "cache=miss", "region=eu-west-1",
    "region=us-east-2", "latency_ms=", "bytes=", "retry=0", "upstream=", "tls=1.3", "h2", "ok"};

/* The app appends n bytes of access-log text: words, ids and line breaks. */
static void app_append(struct file *f, uint32_t n)
{
    uint8_t *o = f->data + f->size, *end = o + n;
    while (o < end) {
        uint64_t x = rng_next(&f->rng);
        char tok[24];
        int len;  /* of the next token: an id or a word, then a space or a line break */
        if (x % 4 == 0)
            len = snprintf(tok, sizeof tok, "%u ", (unsigned)(x >> 40) % 100000u);
        else
            len = snprintf(tok, sizeof tok, "%s%c", kWords[(x >> 8) % NOPTS(kWords)], x % 11 ? ' ' : '\n');
        for (int k = 0; k < len && o < end; k++)
            *o++ = (uint8_t)tok[k];
    }
    f->size += n;
}

/* ------------------------------------------------------------- watcher */
struct sync_cfg { uint64_t settle_us, max_delay_us, tick_us; };
struct pending { uint64_t first_us, last_us; uint32_t size; int dirty; };  /* a file's unsynced writes */

struct watcher {
    const struct sync_cfg *cfg;
    struct chan *events, *jobs;
    struct pending *pend;
    int nfiles, ndirty;
    uint64_t next_tick_us, notes, ticks;
};

/* Whether a dirty file should be synced now: it has settled, or it has
 * waited as long as a file that keeps changing may wait. */
static int pending_is_due(const struct pending *p, uint64_t now_us, const struct sync_cfg *cfg)
{
    if (now_us - p->last_us >= cfg->settle_us)
        return 1;
#ifdef VPROF_CASE_FIX
    return now_us - p->first_us >= cfg->max_delay_us;
#else
    return now_us - p->first_us >= cfg->settle_us;  /* FIX: bound the wait by cfg->max_delay_us */
#endif
}

static void watcher_note(struct watcher *w, const struct msg *n)
{
    struct pending *p = &w->pend[n->file];
    if (!p->dirty)
        p->dirty = 1, p->first_us = n->t_us, w->ndirty++;
    p->last_us = n->t_us;
    p->size = n->size;
    w->notes++;
}

/* One tick of the watcher's clock: hands every due file to the uploader. */
static void watcher_tick(struct watcher *w, uint64_t now_us)
{
    for (int i = 0; i < w->nfiles; i++) {
        struct pending *p = &w->pend[i];
        if (!p->dirty || !pending_is_due(p, now_us, w->cfg))
            continue;
        chan_push(w->jobs, (struct msg){now_us, (uint32_t)i, p->size});
        p->dirty = 0, w->ndirty--;
    }
    w->ticks++;
}

static void *watcher_main(void *arg)
{
    struct watcher *w = arg;
    struct msg n;
    while (chan_pop(w->events, &n)) {
        for (; w->next_tick_us <= n.t_us; w->next_tick_us += w->cfg->tick_us)
            watcher_tick(w, w->next_tick_us);
        watcher_note(w, &n);
    }
    /* The apps are done: keep the clock running until every file is synced. */
    for (; w->ndirty > 0; w->next_tick_us += w->cfg->tick_us)
        watcher_tick(w, w->next_tick_us);
    chan_close(w->jobs);
    return NULL;
}

/* ------------------------------------------------------ hashing, framing */
/* SHA-256 (FIPS 180-4): the service names a block by its content hash. */
static const uint32_t kSha256K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

#define ROR32(x, k) ((x) >> (k) | (x) << (32 - (k)))

static void sha256_compress(uint32_t st[8], const uint8_t *p)
{
    uint32_t w[64];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = ROR32(w[i - 15], 7) ^ ROR32(w[i - 15], 18) ^ w[i - 15] >> 3;
        uint32_t s1 = ROR32(w[i - 2], 17) ^ ROR32(w[i - 2], 19) ^ w[i - 2] >> 10;
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = st[0], b = st[1], c = st[2], d = st[3], e = st[4], f = st[5], g = st[6], h = st[7];
    for (int i = 0; i < 64; i++) {
        uint32_t t1 = h + (ROR32(e, 6) ^ ROR32(e, 11) ^ ROR32(e, 25)) + ((e & f) ^ (~e & g)) + kSha256K[i] + w[i];
        uint32_t t2 = (ROR32(a, 2) ^ ROR32(a, 13) ^ ROR32(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        h = g, g = f, f = e, e = d + t1, d = c, c = b, b = a, a = t1 + t2;
    }
    st[0] += a, st[1] += b, st[2] += c, st[3] += d, st[4] += e, st[5] += f, st[6] += g, st[7] += h;
}

/* A block's name: the first 64 bits of its SHA-256. */
static uint64_t block_hash(const uint8_t *p, size_t n)
{
    uint32_t st[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    uint8_t tail[128] = {0};
    size_t full = n & ~(size_t)63, rest = n - full;
    for (size_t off = 0; off < full; off += 64)
        sha256_compress(st, p + off);
    memcpy(tail, p + full, rest);
    tail[rest] = 0x80;
    size_t tlen = rest < 56 ? 64 : 128;
    for (int k = 0; k < 8; k++)
        tail[tlen - 1 - k] = (uint8_t)((uint64_t)n * 8 >> 8 * k);
    for (size_t off = 0; off < tlen; off += 64)
        sha256_compress(st, tail + off);
    return (uint64_t)st[0] << 32 | st[1];
}

static size_t put_varint(uint8_t *o, size_t v)
{
    size_t k = 0;
    for (; v >= 128; v >>= 7)
        o[k++] = (uint8_t)(v | 128);
    return o[k] = (uint8_t)v, k + 1;
}

/* LZ77 over one block, greedy with hash chains (a zlib-level search):
 * sequences of (literal count, literals, match length - 4, 16-bit offset);
 * the last sequence has literals only. */
static size_t lz_longest_match(const uint8_t *src, size_t n, size_t i, uint32_t cand,
                               const uint16_t *prev, size_t *match_at)
{
    size_t best = 0;
    for (int depth = LZ_MAX_CHAIN; cand && depth--; cand = prev[cand - 1]) {
        size_t m = cand - 1, len = 0;
        while (i + len < n && src[m + len] == src[i + len])
            len++;
        if (len > best)
            best = len, *match_at = m;
    }
    return best;
}

static size_t lz_compress(const uint8_t *src, size_t n, uint8_t *dst)
{
    uint16_t head[1 << LZ_HASH_BITS] = {0}, prev[BLOCK];  /* positions + 1; sized for one block */
    size_t o = 0, i = 0, lit = 0;
    while (i + 4 <= n) {
        uint32_t seq;
        memcpy(&seq, src + i, 4);
        uint32_t h = (seq * 2654435761u) >> (32 - LZ_HASH_BITS);
        size_t m = 0, len = lz_longest_match(src, n, i, head[h], prev, &m);
        prev[i] = head[h], head[h] = (uint16_t)(i + 1);
        if (len < 4) {
            i++;
            continue;
        }
        o += put_varint(dst + o, i - lit);
        memcpy(dst + o, src + lit, i - lit), o += i - lit;
        o += put_varint(dst + o, len - 4);
        dst[o++] = (uint8_t)(i - m), dst[o++] = (uint8_t)((i - m) >> 8);
        for (size_t k = i + 1; k < i + len && k + 4 <= n; k++) {  /* the match's positions join the chains */
            memcpy(&seq, src + k, 4);
            h = (seq * 2654435761u) >> (32 - LZ_HASH_BITS);
            prev[k] = head[h], head[h] = (uint16_t)(k + 1);
        }
        i += len, lit = i;
    }
    o += put_varint(dst + o, n - lit);
    memcpy(dst + o, src + lit, n - lit);
    return o + n - lit;
}

/* ------------------------------------------------------------- server */
struct stored { uint64_t hash; uint32_t frame_len, used; };
struct remote_file { uint32_t size, nblocks; uint64_t *blocks; };
struct server { struct stored *slots; size_t nslots, nused; struct remote_file files[MAX_FILES]; };

static struct stored *server_slot(const struct server *s, uint64_t hash)
{
    size_t i = (size_t)(hash * 0x9e3779b97f4a7c15ull >> 20) & (s->nslots - 1);
    while (s->slots[i].used && s->slots[i].hash != hash)
        i = (i + 1) & (s->nslots - 1);
    return &s->slots[i];
}

/* Receives one compressed block (the store keeps its name and frame size). */
static void server_put(struct server *s, uint64_t hash, size_t frame_len)
{
    struct stored *slot = server_slot(s, hash);
    if (!slot->used)
        *slot = (struct stored){hash, (uint32_t)frame_len, 1}, s->nused++;
}

/* Makes a file's new block list current (all its blocks are stored by now). */
static void server_commit(struct server *s, uint32_t file, uint32_t size, const uint64_t *sig, uint32_t nblocks)
{
    struct remote_file *rf = &s->files[file];
    free(rf->blocks);
    rf->blocks = xcalloc(nblocks, sizeof *rf->blocks);
    memcpy(rf->blocks, sig, nblocks * sizeof *sig);
    rf->size = size, rf->nblocks = nblocks;
}

/* ------------------------------------------------------------ uploader */
struct uploader {
    struct chan *jobs;
    const struct file *files;
    struct server *srv;
    uint64_t *sig;      /* the signature of the file being synced */
    uint8_t *frame;     /* a compressed block */
    uint64_t syncs, signed_blocks, uploaded_blocks, wire_bytes;
};

/* The file's signature: one content hash per block. */
static uint32_t sign_file(const uint8_t *data, uint32_t size, uint64_t *sig)
{
    uint32_t b = 0;
    for (uint32_t off = 0; off < size; off += BLOCK)
        sig[b++] = block_hash(data + off, size - off < BLOCK ? size - off : BLOCK);
    return b;
}

static void upload_file(struct uploader *u, const struct msg *j)
{
    const uint8_t *data = u->files[j->file].data;
    uint32_t nblocks = sign_file(data, j->size, u->sig);
    for (uint32_t b = 0; b < nblocks; b++) {
        if (server_slot(u->srv, u->sig[b])->used)
            continue;               /* the server has this content already */
        uint32_t off = b * BLOCK, len = j->size - off < BLOCK ? j->size - off : BLOCK;
        size_t flen = lz_compress(data + off, len, u->frame);
        server_put(u->srv, u->sig[b], flen);
        u->uploaded_blocks++, u->wire_bytes += flen;
    }
    server_commit(u->srv, j->file, j->size, u->sig, nblocks);
    u->syncs++, u->signed_blocks += nblocks;
}

static void *uploader_main(void *arg)
{
    struct uploader *u = arg;
    struct msg j;
    while (chan_pop(u->jobs, &j)) {
        upload_file(u, &j);
        CASE_PROGRESS("sync");
    }
    return NULL;
}

/* ---------------------------------------------------------------- apps */
/* The app whose next write comes first (-1 when every file is complete). */
static int next_writer(const struct file *files, int n)
{
    int best = -1;
    for (int i = 0; i < n; i++)
        if (files[i].size < files[i].cap && (best < 0 || files[i].next_write_us < files[best].next_write_us))
            best = i;
    return best;
}

/* The apps write their files in time order and the folder reports each write. */
static void run_apps(struct file *files, int n, struct chan *events)
{
    for (int i; (i = next_writer(files, n)) >= 0;) {
        struct file *f = &files[i];
        uint32_t chunk = 6000 + (uint32_t)rng_below(&f->rng, 4001);   /* a network read's worth */
        if (chunk > f->cap - f->size)
            chunk = f->cap - f->size;
        app_append(f, chunk);
        chan_push(events, (struct msg){f->next_write_us, (uint32_t)i, f->size});
        f->next_write_us += f->gap_us * (75 + rng_below(&f->rng, 51)) / 100;
    }
    chan_close(events);
}

/* The server's view of the folder: sizes and block lists (and their frames). */
static uint64_t server_digest(const struct server *s, int nfiles, uint64_t *bytes, uint64_t *blocks, uint64_t *framed)
{
    uint64_t d = 0xcbf29ce484222325ull;
    for (int i = 0; i < nfiles; i++) {
        const struct remote_file *rf = &s->files[i];
        d = (d ^ rf->size) * 0x100000001b3ull;
        *bytes += rf->size, *blocks += rf->nblocks;
        for (uint32_t b = 0; b < rf->nblocks; b++) {
            d = (d ^ rf->blocks[b]) * 0x100000001b3ull;
            *framed += server_slot(s, rf->blocks[b])->frame_len;
        }
    }
    return d;
}

int main(int argc, char **argv)
{
    opt_t opts[] = {
        {"files", "files the apps write", 16, 1, MAX_FILES, 0},
        {"file-kb", "size of each file (KiB)", 512, 4, 65536, 0},
        {"write-gap-ms", "mean time between an app's writes (ms)", 5, 1, 100000, 0},
        {"settle-ms", "quiet time after which a file is synced (ms)", 1000, 1, 3600000, 0},
        {"max-delay-ms", "longest wait of a file that keeps changing (ms)", 60000, 1, 3600000, 0},
        {"tick-ms", "watcher clock period (ms)", 100, 1, 60000, 0},
        {"seed", "workload seed", 4242, 0, 1000000000, 0},
    };
    opts_parse(argc, argv, opts, NOPTS(opts));
#define OPT(name) ((uint64_t)opt_get(opts, NOPTS(opts), name))
    int nfiles = (int)OPT("files");
    uint32_t cap = (uint32_t)OPT("file-kb") * 1024u;
    struct sync_cfg cfg = {OPT("settle-ms") * 1000, OPT("max-delay-ms") * 1000, OPT("tick-ms") * 1000};
    rng_t r;
    rng_seed(&r, OPT("seed"));

    struct file *files = xcalloc((size_t)nfiles, sizeof *files);
    for (int i = 0; i < nfiles; i++) {
        files[i].cap = cap;
        files[i].data = xcalloc(cap, 1);
        files[i].next_write_us = rng_below(&r, 5000000);       /* the apps start within 5 s */
        files[i].gap_us = OPT("write-gap-ms") * 1000 * (60 + rng_below(&r, 41)) / 100;  /* some apps write faster */
        rng_seed(&files[i].rng, rng_next(&r));
    }
    static struct chan events = CHAN_INIT, jobs = CHAN_INIT;
    struct watcher w = {.cfg = &cfg, .events = &events, .jobs = &jobs, .nfiles = nfiles,
                        .pend = xcalloc((size_t)nfiles, sizeof(struct pending))};
    struct server *srv = xcalloc(1, sizeof *srv);
    for (srv->nslots = 1024; srv->nslots < (size_t)nfiles * (cap / BLOCK + 1) * 4;)
        srv->nslots *= 2;   /* room for every block of the folder, and its edits */
    srv->slots = xcalloc(srv->nslots, sizeof *srv->slots);
    struct uploader u = {.jobs = &jobs, .files = files, .srv = srv,
                         .sig = xcalloc(cap / BLOCK + 1, sizeof(uint64_t)), .frame = xcalloc(2 * BLOCK, 1)};
    pthread_t wt, ut;
    if (pthread_create(&wt, NULL, watcher_main, &w) || pthread_create(&ut, NULL, uploader_main, &u))
        fprintf(stderr, "pthread_create failed\n"), exit(1);
    run_apps(files, nfiles, &events);
    pthread_join(wt, NULL), pthread_join(ut, NULL);
    uint64_t bytes = 0, blocks = 0, framed = 0, digest = server_digest(srv, nfiles, &bytes, &blocks, &framed);
    printf("%d files, %llu bytes in %llu blocks (%llu compressed), digest %016llx\n", nfiles,
           (unsigned long long)bytes, (unsigned long long)blocks, (unsigned long long)framed, (unsigned long long)digest);
    fprintf(stderr, "notifications=%llu ticks=%llu syncs=%llu signed_blocks=%llu uploaded_blocks=%llu "
            "wire_bytes=%llu stored_blocks=%zu\n", (unsigned long long)w.notes,
            (unsigned long long)w.ticks, (unsigned long long)u.syncs, (unsigned long long)u.signed_blocks,
            (unsigned long long)u.uploaded_blocks, (unsigned long long)u.wire_bytes, srv->nused);
    for (int i = 0; i < nfiles; i++)
        free(files[i].data), free(srv->files[i].blocks);
    free(files), free(w.pend), free(u.sig), free(u.frame), free(srv->slots), free(srv);
    return 0;
}
