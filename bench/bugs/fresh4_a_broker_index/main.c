/* Written for the vprof bug corpus by a helper that had not seen the
 * profiler (2026-11-29); not modelled on a real issue. The fix is the
 * VPROF_CASE_FIX variant; the line marked FIX is the bug.
 *
 * plog - one partition of a message broker's commit log. Producers append
 * records (offset, timestamp, key, value, CRC of key and value) to the
 * active segment, a byte buffer that is rolled when the next record would
 * not fit in --segment-kb; whole segments are dropped from the head when the
 * partition exceeds its retention. Each segment has a sparse offset index:
 * an entry (relative offset, byte position) for the first record and then
 * one every --index-interval bytes of log, so that a fetch at an offset can
 * binary-search the index and decode only the few records between the entry
 * and the target. Consumers fetch from an offset with a byte limit: tailing
 * consumers (stream processors) at their committed position every tick, and
 * a replay client (a state store being restored) at random retained offsets.
 *
 * The bug: index_entry_due(), asked at every append whether the record gets
 * an index entry, compares the bytes since the last entry with the segment
 * size limit instead of the index interval (the roll check above it uses
 * segment_bytes). That is never reached inside a segment, so each segment is
 * indexed at its first record only and every fetch decodes the segment from
 * its start up to the target. Small segments (normal: --segment-kb 32) keep
 * that walk short; large ones (buggy: --segment-kb 1024) make it long.
 */
#include "../common/corpus.h"

#define REC_HEADER   30         /* len u32, offset u64, ts u64, crc u32, klen u16, vlen u32 */
#define MAX_KEY      32
#define MAX_VALUE    600
#define POOL_BYTES   (1 << 16)  /* random bytes the producers draw values from */
#define N_TAILERS    2

struct log_config {
    uint32_t segment_bytes;         /* roll the active segment beyond this */
    uint32_t index_interval_bytes;  /* log bytes between two offset-index entries */
    uint64_t retention_bytes;       /* drop head segments while the partition is larger */
};

/* One entry of the sparse offset index. */
struct index_entry { uint32_t rel_offset, pos; };

struct segment {
    uint64_t base_offset;           /* offset of its first record */
    uint64_t next_offset;           /* offset its next record gets */
    uint8_t *data;
    uint32_t size;
    struct index_entry *index;
    uint32_t nindex, index_cap;
    uint32_t last_indexed_pos;      /* byte position of the newest index entry */
};

struct log_stats {
    uint64_t appends, rolls, deleted, index_entries, fetches, out_of_range;
    uint64_t scanned, delivered, delivered_bytes, crc_errors;
};

struct partition_log {
    struct log_config cfg;
    struct segment **segs;          /* oldest first; the last one is active */
    int nsegs, cap;
    uint64_t log_start, log_end;    /* first retained offset, next offset */
    uint64_t bytes;                 /* bytes in all retained segments */
    struct log_stats st;
};

/* A decoded record header; key and value point into the segment. */
struct rec_view {
    uint64_t offset, timestamp;
    uint32_t crc, vlen, total;
    uint16_t klen;
    const uint8_t *key, *value;
};

/* ------------------------------------------------------------- helpers */
static void *xmalloc(size_t n)
{
    void *p = calloc(1, n);
    if (!p)
        perror("calloc"), exit(1);
    return p;
}

static uint32_t crc_table[256];

static void crc32_init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
        crc_table[i] = c;
    }
}

static uint32_t crc32_update(uint32_t crc, const uint8_t *p, size_t n)
{
    crc = ~crc;
    while (n--)
        crc = crc_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
    return ~crc;
}

/* ------------------------------------------------------ record format */
/* Writes one record at dst (the host is little-endian, as the log format
 * is) and returns its size. */
static uint32_t record_encode(uint8_t *dst, uint64_t offset, uint64_t ts,
                              const uint8_t *key, uint16_t klen, const uint8_t *val, uint32_t vlen)
{
    uint32_t total = REC_HEADER + klen + vlen, rest = total - 4;
    uint32_t crc = crc32_update(crc32_update(0, key, klen), val, vlen);
    memcpy(dst, &rest, 4);
    memcpy(dst + 4, &offset, 8);
    memcpy(dst + 12, &ts, 8);
    memcpy(dst + 20, &crc, 4);
    memcpy(dst + 24, &klen, 2);
    memcpy(dst + 26, &vlen, 4);
    memcpy(dst + REC_HEADER, key, klen);
    memcpy(dst + REC_HEADER + klen, val, vlen);
    return total;
}

/* Parses the header of the record at p (avail bytes left in the segment);
 * returns its size, or 0 for a truncated or inconsistent record. */
static uint32_t record_decode(const uint8_t *p, uint32_t avail, struct rec_view *rv)
{
    uint32_t rest;
    if (avail < REC_HEADER)
        return 0;
    memcpy(&rest, p, 4);
    memcpy(&rv->offset, p + 4, 8);
    memcpy(&rv->timestamp, p + 12, 8);
    memcpy(&rv->crc, p + 20, 4);
    memcpy(&rv->klen, p + 24, 2);
    memcpy(&rv->vlen, p + 26, 4);
    rv->total = rest + 4;
    if (rv->total > avail || rv->total != REC_HEADER + rv->klen + rv->vlen)
        return 0;
    rv->key = p + REC_HEADER;
    rv->value = rv->key + rv->klen;
    return rv->total;
}

static int record_verify(const struct rec_view *rv)
{
    uint32_t crc = crc32_update(crc32_update(0, rv->key, rv->klen), rv->value, rv->vlen);
    return crc == rv->crc;
}

/* ------------------------------------------------------------ segments */
static struct segment *segment_new(uint64_t base_offset, const struct log_config *cfg)
{
    struct segment *s = xmalloc(sizeof *s);
    s->base_offset = s->next_offset = base_offset;
    s->data = xmalloc(cfg->segment_bytes);
    /* room for an entry per interval, plus the first record's */
    s->index_cap = cfg->segment_bytes / cfg->index_interval_bytes + 2;
    s->index = xmalloc(s->index_cap * sizeof *s->index);
    return s;
}

static void segment_free(struct segment *s)
{
    free(s->index), free(s->data), free(s);
}

/* Whether the record about to be written at seg->size gets an index entry:
 * the first record of a segment always does, later ones once another
 * index interval of log has been written since the newest entry. */
static int index_entry_due(const struct segment *seg, const struct log_config *cfg)
{
    if (seg->nindex == 0)
        return 1;
    uint32_t since_last = seg->size - seg->last_indexed_pos;
#ifdef VPROF_CASE_FIX
    return since_last >= cfg->index_interval_bytes;
#else
    return since_last >= cfg->segment_bytes; /* FIX: compare with cfg->index_interval_bytes */
#endif
}

static void segment_append(struct segment *seg, const struct log_config *cfg, struct log_stats *st,
                           uint64_t ts, const uint8_t *key, uint16_t klen,
                           const uint8_t *val, uint32_t vlen)
{
    if (index_entry_due(seg, cfg) && seg->nindex < seg->index_cap) {
        seg->index[seg->nindex++] = (struct index_entry){
            (uint32_t)(seg->next_offset - seg->base_offset), seg->size};
        seg->last_indexed_pos = seg->size;
        st->index_entries++;
    }
    seg->size += record_encode(seg->data + seg->size, seg->next_offset++, ts, key, klen, val, vlen);
}

/* Byte position of the newest index entry at or before target. */
static uint32_t index_lookup(const struct segment *seg, uint64_t target)
{
    uint32_t rel = (uint32_t)(target - seg->base_offset), lo = 0, hi = seg->nindex;
    while (hi - lo > 1) {               /* entry lo is <= rel (entry 0 is the first record) */
        uint32_t mid = lo + (hi - lo) / 2;
        if (seg->index[mid].rel_offset <= rel)
            lo = mid;
        else
            hi = mid;
    }
    return seg->nindex ? seg->index[lo].pos : 0;
}

/* Byte position of the record with offset target: the index gives a
 * starting point, the records after it are decoded until the target. */
static uint32_t segment_seek(const struct segment *seg, uint64_t target, struct log_stats *st)
{
    uint32_t pos = index_lookup(seg, target);
    struct rec_view rv;
    while (pos < seg->size) {
        uint32_t n = record_decode(seg->data + pos, seg->size - pos, &rv);
        if (n == 0 || rv.offset >= target)
            break;
        pos += n;
        st->scanned++;
    }
    return pos;
}

/* -------------------------------------------------------- partition log */
static void log_roll(struct partition_log *log)
{
    if (log->nsegs == log->cap) {
        log->cap = log->cap ? 2 * log->cap : 16;
        log->segs = realloc(log->segs, (size_t)log->cap * sizeof *log->segs);
        if (!log->segs)
            perror("realloc"), exit(1);
    }
    log->segs[log->nsegs++] = segment_new(log->log_end, &log->cfg);
    log->st.rolls++;
}

/* The retention pass: drops the oldest segments while the partition holds
 * more than retention_bytes (never the active one). */
static void log_enforce_retention(struct partition_log *log)
{
    int drop = 0;
    while (drop < log->nsegs - 1 && log->bytes > log->cfg.retention_bytes) {
        log->bytes -= log->segs[drop]->size;
        segment_free(log->segs[drop++]);
    }
    if (drop) {
        memmove(log->segs, log->segs + drop, (size_t)(log->nsegs - drop) * sizeof *log->segs);
        log->nsegs -= drop;
        log->log_start = log->segs[0]->base_offset;
        log->st.deleted += (uint64_t)drop;
    }
}

static uint64_t log_append(struct partition_log *log, uint64_t ts, const uint8_t *key, uint16_t klen,
                           const uint8_t *val, uint32_t vlen)
{
    uint32_t need = REC_HEADER + klen + vlen;
    struct segment *active = log->nsegs ? log->segs[log->nsegs - 1] : NULL;
    if (!active || active->size + need > log->cfg.segment_bytes) {
        log_roll(log);
        active = log->segs[log->nsegs - 1];
    }
    segment_append(active, &log->cfg, &log->st, ts, key, klen, val, vlen);
    log->bytes += need;
    log->st.appends++;
    return log->log_end++;
}

/* The retained segment holding offset (log_start <= offset < log_end). */
static const struct segment *log_find_segment(const struct partition_log *log, uint64_t offset)
{
    int lo = 0, hi = log->nsegs;
    while (hi - lo > 1) {
        int mid = lo + (hi - lo) / 2;
        if (log->segs[mid]->base_offset <= offset)
            lo = mid;
        else
            hi = mid;
    }
    return log->segs[lo];
}

/* The result of one fetch: what the consumer folds into its state. */
struct fetch_result { uint64_t next_offset, records, bytes, digest; int out_of_range; };

/* Reads records from offset on, up to max_bytes (at least one record), from
 * one segment, as a broker answers a fetch request. */
static struct fetch_result log_fetch(struct partition_log *log, uint64_t offset, uint32_t max_bytes)
{
    struct fetch_result fr = {.next_offset = offset, .digest = 0xcbf29ce484222325ull};
    log->st.fetches++;
    if (offset < log->log_start || offset > log->log_end) {
        fr.out_of_range = 1;
        log->st.out_of_range++;
        return fr;
    }
    if (offset == log->log_end)
        return fr;                      /* caught up: nothing new */
    const struct segment *seg = log_find_segment(log, offset);
    uint32_t pos = segment_seek(seg, offset, &log->st);
    struct rec_view rv;
    while (pos < seg->size && (fr.records == 0 || fr.bytes < max_bytes)) {
        uint32_t n = record_decode(seg->data + pos, seg->size - pos, &rv);
        if (n == 0)
            break;
        if (!record_verify(&rv))
            log->st.crc_errors++;
        fr.digest = (fr.digest ^ rv.offset ^ (uint64_t)rv.crc << 20) * 0x100000001b3ull;
        fr.records++, fr.bytes += n, pos += n;
        fr.next_offset = rv.offset + 1;
    }
    log->st.delivered += fr.records, log->st.delivered_bytes += fr.bytes;
    return fr;
}

/* ------------------------------------------------------------ consumers */
struct consumer { uint64_t position, records, bytes, digest, resets; uint32_t max_bytes; };

/* One poll: fetch from the committed position, commit what came back; an
 * out-of-range position (retention overtook it) resets to the log start. */
static void consumer_poll(struct consumer *c, struct partition_log *log)
{
    struct fetch_result fr = log_fetch(log, c->position, c->max_bytes);
    if (fr.out_of_range) {
        c->position = log->log_start;
        c->resets++;
        return;
    }
    c->position = fr.next_offset;
    c->records += fr.records, c->bytes += fr.bytes;
    c->digest = (c->digest ^ fr.digest) * 0x100000001b3ull;
}

/* The replay client: restores keys from random retained offsets. */
static void replay_lookup(struct consumer *c, struct partition_log *log, rng_t *r)
{
    uint64_t span = log->log_end - log->log_start;
    struct fetch_result fr = log_fetch(log, log->log_start + rng_below(r, span), c->max_bytes);
    c->records += fr.records, c->bytes += fr.bytes;
    c->digest = (c->digest ^ fr.digest) * 0x100000001b3ull;
}

/* ------------------------------------------------------------ producers */
/* One record of a producer: a key among nkeys users, a value of 60..560
 * bytes taken from the random pool. */
static void produce_one(struct partition_log *log, rng_t *r, const uint8_t *pool,
                        uint64_t ts, long nkeys)
{
    char key[MAX_KEY];
    int klen = snprintf(key, sizeof key, "user-%06lu", (unsigned long)rng_below(r, (uint64_t)nkeys));
    uint32_t vlen = (uint32_t)(60 + rng_below(r, 501));
    uint32_t at = (uint32_t)rng_below(r, POOL_BYTES - MAX_VALUE);
    log_append(log, ts, (const uint8_t *)key, (uint16_t)klen, pool + at, vlen);
}

int main(int argc, char **argv)
{
    opt_t opts[] = {
        {"records", "records produced over the run", 100000, 1, 100000000, 0},
        {"batch", "records produced per tick", 40, 1, 100000, 0},
        {"segment-kb", "segment size limit in KiB", 32, 4, 65536, 0},
        {"index-interval", "log bytes between offset-index entries", 4096, 64, 1 << 24, 0},
        {"retention-mb", "partition retention in MiB", 8, 1, 1 << 20, 0},
        {"replays", "replay lookups per tick", 1, 0, 1000, 0},
        {"keys", "distinct record keys", 50000, 1, 1000000, 0},
        {"seed", "workload seed", 4242, 0, 1000000000, 0},
    };
    opts_parse(argc, argv, opts, NOPTS(opts));
    long records = opt_get(opts, NOPTS(opts), "records"), batch = opt_get(opts, NOPTS(opts), "batch");
    long replays = opt_get(opts, NOPTS(opts), "replays"), nkeys = opt_get(opts, NOPTS(opts), "keys");
    struct partition_log log = {.cfg = {
        .segment_bytes = (uint32_t)opt_get(opts, NOPTS(opts), "segment-kb") * 1024,
        .index_interval_bytes = (uint32_t)opt_get(opts, NOPTS(opts), "index-interval"),
        .retention_bytes = (uint64_t)opt_get(opts, NOPTS(opts), "retention-mb") << 20}};
    if (log.cfg.segment_bytes < REC_HEADER + MAX_KEY + MAX_VALUE) {
        fprintf(stderr, "%s: --segment-kb too small for one record\n", argv[0]);
        return 2;
    }
    rng_t r;
    rng_seed(&r, (uint64_t)opt_get(opts, NOPTS(opts), "seed"));
    crc32_init();
    uint8_t *pool = xmalloc(POOL_BYTES);
    for (int i = 0; i < POOL_BYTES; i++)
        pool[i] = (uint8_t)(rng_next(&r) >> 56);

    /* Tailing consumers fetch with different limits, as differently tuned
     * stream processors do; the replay client asks for small reads. */
    struct consumer tail[N_TAILERS], replay = {.max_bytes = 1024};
    for (int i = 0; i < N_TAILERS; i++)
        tail[i] = (struct consumer){.max_bytes = 16384u << (2 * i)};
    uint64_t ts = 1700000000000ull;
    for (long produced = 0; produced < records;) {
        for (long b = 0; b < batch && produced < records; b++, produced++)
            produce_one(&log, &r, pool, ts++, nkeys);
        log_enforce_retention(&log);
        for (int i = 0; i < N_TAILERS; i++)
            consumer_poll(&tail[i], &log);
        for (long k = 0; k < replays; k++)
            replay_lookup(&replay, &log, &r);
        CASE_PROGRESS("tick");
    }

    uint64_t digest = replay.digest, tail_records = 0, tail_resets = 0;
    for (int i = 0; i < N_TAILERS; i++) {
        digest = (digest ^ tail[i].digest) * 0x100000001b3ull;
        tail_records += tail[i].records, tail_resets += tail[i].resets;
    }
    printf("log %llu..%llu, tailers consumed %llu records (%llu resets), "
           "replay %llu records %llu bytes, digest %016llx\n",
           (unsigned long long)log.log_start, (unsigned long long)log.log_end,
           (unsigned long long)tail_records, (unsigned long long)tail_resets,
           (unsigned long long)replay.records, (unsigned long long)replay.bytes,
           (unsigned long long)digest);
    fprintf(stderr, "appends=%llu rolls=%llu deleted=%llu index_entries=%llu fetches=%llu "
            "scanned=%llu delivered=%llu crc_errors=%llu\n",
            (unsigned long long)log.st.appends, (unsigned long long)log.st.rolls,
            (unsigned long long)log.st.deleted, (unsigned long long)log.st.index_entries,
            (unsigned long long)log.st.fetches, (unsigned long long)log.st.scanned,
            (unsigned long long)log.st.delivered, (unsigned long long)log.st.crc_errors);
    for (int i = 0; i < log.nsegs; i++)
        segment_free(log.segs[i]);
    free(log.segs), free(pool);
    return 0;
}
