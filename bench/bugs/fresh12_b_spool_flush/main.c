/* Written for the vprof bug corpus by a helper that had not seen the
 * profiler (2026-11-29); not modelled on a real issue. The fix is the
 * VPROF_CASE_FIX variant; the line marked FIX is the bug.
 *
 * logspool - the disk spool of a log relay. Local producers send RFC 5424
 * lines; each is framed as a record (header + CRC-32C of the body) into the
 * spool's in-memory batch. The flusher writes the batch to the active
 * segment when a limit of the flush policy is reached (--max-batch messages,
 * --flush-kb bytes, or the batch's oldest message waiting --max-age-ms;
 * checked after every append and by the flusher's 1 ms timer): the records
 * and the disk pages they touch (each checksummed), then the segment's commit
 * block, then a checkpoint of the segment's index (id, offset, length, CRC of
 * every record), so recovery reads the index instead of scanning the data.
 *
 * The bug: flush_due() applies the age limit to an empty batch too. The
 * batch's oldest_tick is only set when a message enters an empty batch, so
 * after a flush the stale value makes the empty batch look overdue on every
 * timer tick until the next message arrives. Steady producers (normal: 12,
 * one message each every 2 ms) keep the batch non-empty; bursty ones (buggy:
 * 3 producers, 1000 messages each every 500 ms, the same rate) leave the
 * spool idle most of the time, and every idle tick rewrites the commit block
 * and the whole segment index for nothing.
 */
#include <stddef.h>
#include "../common/corpus.h"

#define PAGE_SIZE     4096u
#define SEG_BYTES     (256u * 1024u)
#define SEG_PAGES     (SEG_BYTES / PAGE_SIZE)
#define MAX_BODY      1024u
#define MAX_PRODUCERS 64
#define SPOOL_MAGIC   0x4c53504cu        /* "LSPL" */
#define INDEX_MAGIC   0x4c535049u        /* "LSPI" */

/* A record as framed in the batch and in the segment: header, then body
 * (len and crc are the body's length and CRC-32C; tick is its arrival, ms). */
struct rec_hdr { uint32_t len, crc; uint64_t id; uint16_t producer, severity; uint32_t tick; };
#define REC_HDR ((uint32_t)sizeof(struct rec_hdr))

/* One entry of a segment's index (also its on-disk format). */
struct idx_entry {
    uint64_t id;
    uint32_t offset, len, crc, tick;
    uint16_t producer, severity;
    uint32_t reserved;
};

struct idx_file_hdr { uint32_t magic, segment, entries, crc; };

struct commit_block {
    uint32_t magic, segment, used, records;
    uint64_t last_id, tick;
    uint32_t pages_crc, crc;             /* CRC of the page checksums; of this block */
};

struct segment {
    uint32_t seq, used;                  /* segment number; bytes of records */
    uint8_t *data;
    uint32_t page_crc[SEG_PAGES];        /* the disk's per-page checksums */
    uint8_t commit[PAGE_SIZE];           /* commit block, rewritten by each flush */
    struct idx_entry *idx;
    uint32_t nidx;
    uint8_t *idx_file;                   /* the index file as last checkpointed */
    size_t idx_file_len;
};

struct batch {
    uint8_t *buf;
    uint32_t bytes, count;
    uint64_t oldest_tick;                /* arrival of the batch's first message */
};

struct flush_policy { uint32_t max_msgs, max_bytes; uint64_t max_age; };

struct spool {
    struct segment seg;
    struct batch batch;
    struct flush_policy pol;
    uint64_t next_id, digest;
    uint64_t records, record_bytes, sealed;
    uint64_t flushes, empty_flushes, pages_written, index_bytes;
};

struct producer {
    uint16_t id;
    uint32_t pid;
    char host[16], app[16];
    rng_t rng;
    uint64_t next_tick, sent, quota;     /* next burst (ms); messages sent; to send */
};

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n, size);
    if (!p)
        perror("calloc"), exit(1);
    return p;
}

/* ------------------------------------------------------------- checksums */
static uint32_t crc_table[256];

static void crc32c_init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = (c >> 1) ^ (0x82f63b78u & (0u - (c & 1u)));
        crc_table[i] = c;
    }
}

/* Bytewise CRC-32C (Castagnoli), as the segment and index formats use. */
static uint32_t crc32c(uint32_t crc, const void *buf, size_t len)
{
    const uint8_t *p = buf;
    crc = ~crc;
    while (len--)
        crc = crc_table[(crc ^ *p++) & 0xffu] ^ (crc >> 8);
    return ~crc;
}

static uint64_t fnv1a64(uint64_t h, const void *buf, size_t len)
{
    const uint8_t *p = buf;
    while (len--)
        h = (h ^ *p++) * 0x100000001b3ull;
    return h;
}

/* ------------------------------------------------- segment and its index */
/* Rewrites the disk pages that hold bytes [from, to) of the segment. */
static void write_pages(struct spool *sp, uint32_t from, uint32_t to)
{
    struct segment *seg = &sp->seg;
    if (to <= from)
        return;
    for (uint32_t pg = from / PAGE_SIZE; pg <= (to - 1) / PAGE_SIZE; pg++) {
        seg->page_crc[pg] = crc32c(0, seg->data + (size_t)pg * PAGE_SIZE, PAGE_SIZE);
        sp->pages_written++;
    }
}

/* The commit block says how much of the segment is valid: a reader trusts
 * records up to `used` only if the block's CRC and the page CRCs match. */
static void write_commit_block(struct spool *sp, uint64_t now)
{
    struct segment *seg = &sp->seg;
    struct commit_block cb = {
        .magic = SPOOL_MAGIC, .segment = seg->seq, .used = seg->used,
        .records = seg->nidx, .last_id = seg->nidx ? seg->idx[seg->nidx - 1].id : 0,
        .tick = now,
    };
    uint32_t npages = (seg->used + PAGE_SIZE - 1) / PAGE_SIZE;
    cb.pages_crc = crc32c(0, seg->page_crc, npages * sizeof seg->page_crc[0]);
    cb.crc = crc32c(0, &cb, offsetof(struct commit_block, crc));
    memset(seg->commit, 0, sizeof seg->commit);
    memcpy(seg->commit, &cb, sizeof cb);
    sp->pages_written++;
}

/* Rewrites the segment's index file in full (written aside and renamed over
 * the old one, so a crash leaves either index intact). */
static void checkpoint_index(struct spool *sp)
{
    struct segment *seg = &sp->seg;
    struct idx_file_hdr h = { INDEX_MAGIC, seg->seq, seg->nidx, 0 };
    size_t body = (size_t)seg->nidx * sizeof(struct idx_entry);
    uint8_t *out = seg->idx_file + sizeof h;
    for (uint32_t i = 0; i < seg->nidx; i++, out += sizeof(struct idx_entry))
        memcpy(out, &seg->idx[i], sizeof(struct idx_entry));
    h.crc = crc32c(0, seg->idx_file + sizeof h, body);
    memcpy(seg->idx_file, &h, sizeof h);
    seg->idx_file_len = sizeof h + body;
    sp->index_bytes += seg->idx_file_len;
}

/* Hands the full segment to the forwarder and starts the next one. */
static void seal_segment(struct spool *sp, uint64_t now)
{
    struct segment *seg = &sp->seg;
    write_commit_block(sp, now);
    checkpoint_index(sp);
    sp->digest = fnv1a64(sp->digest, seg->idx_file + sizeof(struct idx_file_hdr),
                         seg->idx_file_len - sizeof(struct idx_file_hdr));
    sp->sealed++;
    memset(seg->data, 0, seg->used);
    seg->seq++;
    seg->used = 0;
    seg->nidx = 0;
}

/* Copies one framed record into the segment and indexes it. */
static void append_record(struct spool *sp, const uint8_t *rec, uint32_t reclen)
{
    struct segment *seg = &sp->seg;
    struct rec_hdr h;
    memcpy(&h, rec, sizeof h);
    memcpy(seg->data + seg->used, rec, reclen);
    seg->idx[seg->nidx++] = (struct idx_entry){
        .id = h.id, .offset = seg->used, .len = h.len, .crc = h.crc,
        .tick = h.tick, .producer = h.producer, .severity = h.severity,
    };
    seg->used += reclen;
    sp->records++;
    sp->record_bytes += h.len;
}

/* ------------------------------------------------------- batch and flush */
static void spool_append(struct spool *sp, const struct producer *pr, uint16_t severity,
                         const char *body, uint32_t len, uint64_t now)
{
    struct batch *b = &sp->batch;
    struct rec_hdr h = {
        .len = len, .crc = crc32c(0, body, len), .id = sp->next_id++,
        .producer = pr->id, .severity = severity, .tick = (uint32_t)now,
    };
    if (b->count == 0)
        b->oldest_tick = now;
    memcpy(b->buf + b->bytes, &h, sizeof h);
    memcpy(b->buf + b->bytes + REC_HDR, body, len);
    b->bytes += REC_HDR + len;
    b->count++;
}

/* The flush policy: is the batch due to be written now? */
static int flush_due(const struct batch *b, const struct flush_policy *pol, uint64_t now)
{
    if (b->count >= pol->max_msgs || b->bytes >= pol->max_bytes)
        return 1;
#ifdef VPROF_CASE_FIX
    return b->count > 0 && now - b->oldest_tick >= pol->max_age;
#else
    return now - b->oldest_tick >= pol->max_age; /* FIX: only a non-empty batch can be overdue */
#endif
}

/* Writes the batch to the active segment (sealing it when a record does not
 * fit), then makes the write durable: pages, commit block, index. */
static void spool_flush(struct spool *sp, uint64_t now)
{
    struct batch *b = &sp->batch;
    uint32_t dirty_from = sp->seg.used;
    for (uint32_t off = 0; off < b->bytes;) {
        struct rec_hdr h;
        memcpy(&h, b->buf + off, sizeof h);
        uint32_t reclen = REC_HDR + h.len;
        if (sp->seg.used + reclen > SEG_BYTES) {
            write_pages(sp, dirty_from, sp->seg.used);
            seal_segment(sp, now);
            dirty_from = 0;
        }
        append_record(sp, b->buf + off, reclen);
        off += reclen;
    }
    write_pages(sp, dirty_from, sp->seg.used);
    write_commit_block(sp, now);
    checkpoint_index(sp);
    sp->flushes++;
    sp->empty_flushes += b->count == 0;
    b->count = 0;
    b->bytes = 0;
}

/* Recovery's view of the last segment: the index must match the records. */
static int verify_segment(const struct spool *sp)
{
    const struct segment *seg = &sp->seg;
    struct idx_file_hdr h;
    memcpy(&h, seg->idx_file, sizeof h);
    if (h.magic != INDEX_MAGIC || h.entries != seg->nidx ||
        h.crc != crc32c(0, seg->idx_file + sizeof h, seg->idx_file_len - sizeof h))
        return 0;
    for (uint32_t i = 0; i < seg->nidx; i++) {
        const struct idx_entry *e = &seg->idx[i];
        if (crc32c(0, seg->data + e->offset + REC_HDR, e->len) != e->crc)
            return 0;
    }
    return 1;
}

/* ------------------------------------------------------------- producers */
static const char *const kWords[] = {
    "connection", "from", "accepted", "closed", "user", "session", "opened", "for", "timeout",
    "after", "retry", "queue", "deferred", "delivered", "to", "relay", "status", "sent", "bytes",
    "client", "error", "warning", "disk", "usage", "request", "GET", "POST", "/api/v1/items",
    "200", "404", "503", "latency",
};
#define NWORDS ((uint32_t)(sizeof kWords / sizeof kWords[0]))

static char *put_str(char *p, const char *s)
{
    while (*s)
        *p++ = *s++;
    return p;
}

static char *put_uint(char *p, uint64_t v, int width)
{
    char tmp[24];
    int n = 0;
    do
        tmp[n++] = (char)('0' + v % 10);
    while ((v /= 10) != 0);
    while (n < width)
        tmp[n++] = '0';
    while (n)
        *p++ = tmp[--n];
    return p;
}

/* An RFC 5424 line: <PRI>1 TIMESTAMP HOST APP PROCID MSGID - MSG */
static uint32_t format_message(struct producer *pr, uint64_t now, uint16_t sev,
                               uint32_t target, char *out)
{
    char *p = out;
    *p++ = '<';
    p = put_uint(p, 16u * 8u + sev, 1);              /* facility local0 */
    p = put_str(p, ">1 2026-11-29T10:");
    p = put_uint(p, now / 60000 % 60, 2);
    *p++ = ':';
    p = put_uint(p, now / 1000 % 60, 2);
    *p++ = '.';
    p = put_uint(p, now % 1000, 3);
    p = put_str(p, "Z ");
    p = put_str(p, pr->host);
    *p++ = ' ';
    p = put_str(p, pr->app);
    *p++ = ' ';
    p = put_uint(p, pr->pid, 1);
    p = put_str(p, " ID");
    p = put_uint(p, pr->sent, 1);
    p = put_str(p, " -");
    while ((uint32_t)(p - out) < target) {
        *p++ = ' ';
        p = put_str(p, kWords[rng_below(&pr->rng, NWORDS)]);
    }
    return (uint32_t)(p - out);
}

/* Draws a severity: mostly info and notice, a few warnings and errors. */
static uint16_t draw_severity(rng_t *r)
{
    uint64_t x = rng_below(r, 100);
    return x < 2 ? 3 : x < 10 ? 4 : x < 40 ? 5 : x < 95 ? 6 : 7;
}

/* A producer sends `burst` messages every `period` ms; each append may make
 * the batch due (count, bytes, age), and then the flusher writes it.
 * Returns how many messages it sent. */
static uint64_t producer_run_tick(struct producer *pr, struct spool *sp, uint64_t now,
                                  long burst, long period, long msg_size)
{
    char line[MAX_BODY + 64];
    uint64_t sent_before = pr->sent;
    if (now != pr->next_tick)
        return 0;
    for (long k = 0; k < burst && pr->sent < pr->quota; k++) {
        uint16_t sev = draw_severity(&pr->rng);
        uint32_t target = (uint32_t)(msg_size / 2 + (long)rng_below(&pr->rng, (uint64_t)msg_size));
        uint32_t len = format_message(pr, now, sev, target, line);
        spool_append(sp, pr, sev, line, len, now);
        pr->sent++;
        if (flush_due(&sp->batch, &sp->pol, now))
            spool_flush(sp, now);
    }
    pr->next_tick += (uint64_t)period;
    return pr->sent - sent_before;
}

static void spool_init(struct spool *sp, const struct flush_policy *pol)
{
    memset(sp, 0, sizeof *sp);
    sp->pol = *pol;
    sp->next_id = 1;
    sp->digest = 0xcbf29ce484222325ull;
    /* a batch is written once it reaches max_bytes: one more record fits */
    sp->batch.buf = xcalloc(pol->max_bytes + REC_HDR + MAX_BODY + 64, 1);
    sp->seg.data = xcalloc(SEG_BYTES, 1);
    size_t max_records = SEG_BYTES / REC_HDR;   /* even with empty bodies */
    sp->seg.idx = xcalloc(max_records, sizeof(struct idx_entry));
    sp->seg.idx_file = xcalloc(1, sizeof(struct idx_file_hdr) + max_records * sizeof *sp->seg.idx);
}

int main(int argc, char **argv)
{
    opt_t opts[] = {
        {"messages", "messages sent in all", 80000, 1, 10000000, 0},
        {"producers", "producers (local daemons)", 12, 1, MAX_PRODUCERS, 0},
        {"burst", "messages a producer sends back to back", 1, 1, 100000, 0},
        {"period", "ms between a producer's bursts", 2, 1, 100000, 0},
        {"msg-size", "mean message length in bytes", 256, 64, 512, 0},
        {"max-batch", "flush after this many messages", 256, 1, 65536, 0},
        {"flush-kb", "flush after this many KiB", 64, 1, 256, 0},
        {"max-age-ms", "flush when the oldest message waited this long", 20, 1, 10000, 0},
    };
    opts_parse(argc, argv, opts, NOPTS(opts));
    long total = opt_get(opts, NOPTS(opts), "messages");
    int nprod = (int)opt_get(opts, NOPTS(opts), "producers");
    long burst = opt_get(opts, NOPTS(opts), "burst");
    long period = opt_get(opts, NOPTS(opts), "period");
    long msg_size = opt_get(opts, NOPTS(opts), "msg-size");
    struct flush_policy pol = {
        .max_msgs = (uint32_t)opt_get(opts, NOPTS(opts), "max-batch"),
        .max_bytes = (uint32_t)opt_get(opts, NOPTS(opts), "flush-kb") * 1024u,
        .max_age = (uint64_t)opt_get(opts, NOPTS(opts), "max-age-ms"),
    };

    crc32c_init();
    static struct spool sp;
    spool_init(&sp, &pol);
    struct producer prods[MAX_PRODUCERS];
    for (int i = 0; i < nprod; i++) {
        struct producer *pr = &prods[i];
        memset(pr, 0, sizeof *pr);
        pr->id = (uint16_t)i;
        pr->pid = 1000u + 37u * (uint32_t)i;
        *put_uint(put_str(pr->host, "web-"), (uint64_t)i, 2) = '\0';
        const char *app = i % 3 == 0 ? "nginx" : i % 3 == 1 ? "postfix" : "sshd";
        memcpy(pr->app, app, strlen(app) + 1);
        rng_seed(&pr->rng, 0x5eed0000u + (uint64_t)i);
        pr->next_tick = (uint64_t)(i * period / nprod);   /* staggered starts */
        pr->quota = (uint64_t)(total / nprod + (i < total % nprod));
    }

    /* The relay's main loop, one iteration per ms: the producers' input,
     * then the flusher's timer. */
    uint64_t now = 0;
    for (uint64_t pending = (uint64_t)total; pending > 0; now++) {
        for (int i = 0; i < nprod; i++)
            pending -= producer_run_tick(&prods[i], &sp, now, burst, period, msg_size);
        if (flush_due(&sp.batch, &sp.pol, now))
            spool_flush(&sp, now);
        CASE_PROGRESS("tick");
    }
    if (sp.batch.count > 0)
        spool_flush(&sp, now);
    int index_ok = verify_segment(&sp);
    seal_segment(&sp, now);

    printf("messages=%llu body_bytes=%llu segments=%llu index=%s digest=%016llx\n",
           (unsigned long long)sp.records, (unsigned long long)sp.record_bytes,
           (unsigned long long)sp.sealed, index_ok ? "ok" : "BAD",
           (unsigned long long)sp.digest);
    fprintf(stderr, "ticks=%llu flushes=%llu empty_flushes=%llu pages_written=%llu "
            "index_bytes=%llu\n", (unsigned long long)now,
            (unsigned long long)sp.flushes, (unsigned long long)sp.empty_flushes,
            (unsigned long long)sp.pages_written, (unsigned long long)sp.index_bytes);
    return 0;
}
