/* Written for the vprof bug corpus by a helper that had not seen the corpus
 * (2026-11-28); not modelled on a real issue. The fix is the VPROF_CASE_FIX
 * variant; the line marked FIX is the bug. */
/*
 * blockpack - pack a stream of log records into LZ-compressed, checksummed
 * blocks and build a block index (offset, first record, crc) for random access.
 *
 * Records larger than (block size / large_div) are isolated in their own
 * block so that a reader can fetch them without decompressing neighbours.
 *
 * usage: wrongbound [-n records] [-b block_kb] [-d large_div]
 *                   [-m min_len] [-M max_len] [-s seed]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BLOCK_TRAILER   8u          /* crc32 + record count */
#define LZ_HASH_BITS    16
#define LZ_HASH_SIZE    (1u << LZ_HASH_BITS)
#define LZ_MIN_MATCH    4
#define LZ_MAX_OFFSET   65535u

struct pack_cfg {
    size_t   nrecords;
    size_t   block_kb;
    unsigned large_div;
    unsigned min_len, max_len;
    uint64_t seed;
};

struct index_entry {
    uint64_t file_off;
    uint64_t first_record;
    uint32_t packed_len;
    uint32_t crc;
};

struct blockwriter {
    const struct pack_cfg *cfg;
    uint8_t  *buf;              /* pending raw block */
    size_t    used, cap;
    uint8_t  *out;              /* compressed scratch */
    size_t    out_cap;
    uint32_t *htab;             /* LZ match finder */
    uint32_t  nrec_in_block;
    uint64_t  next_record;
    uint64_t  file_off;
    struct index_entry *index;
    size_t    nindex, index_cap;
    uint64_t  raw_bytes, packed_bytes, checksum;
};

static uint32_t crc_table[256];

static void crc32_init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
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

static inline uint64_t xorshift64(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13; x ^= x >> 7; x ^= x << 17;
    return *s = x;
}

static const char *const vocab[] = {
    "request", "completed", "user", "session", "timeout", "cache", "miss",
    "hit", "upstream", "latency", "ms", "retry", "backend", "shard", "GET",
    "POST", "/api/v1/items", "/login", "status=200", "status=404", "ok",
    "connection", "reset", "by", "peer", "auth", "token", "expired", "queue",
};
#define NVOCAB (sizeof vocab / sizeof vocab[0])

/* Produce one synthetic log line of roughly `target` bytes. */
static size_t gen_record(uint64_t *rng, uint64_t seq, unsigned target, char *dst)
{
    size_t n = (size_t)sprintf(dst, "2024-05-%02u %02u:%02u:%02u.%03u host-%02u svc=%s ",
                               (unsigned)(seq % 28) + 1, (unsigned)(seq / 3600 % 24),
                               (unsigned)(seq / 60 % 60), (unsigned)(seq % 60),
                               (unsigned)(seq % 1000), (unsigned)(xorshift64(rng) % 40),
                               vocab[xorshift64(rng) % NVOCAB]);
    while (n < target) {
        const char *w = vocab[xorshift64(rng) % NVOCAB];
        size_t wl = strlen(w);
        if (n + wl + 1 > target)
            break;
        memcpy(dst + n, w, wl);
        n += wl;
        dst[n++] = ' ';
    }
    dst[n++] = '\n';
    return n;
}

/* Greedy LZ77: tokens are [lit_len:u16][lits...][match_len:u16][offset:u16]. */
static size_t lz_compress_block(uint32_t *htab, const uint8_t *src, size_t n,
                                uint8_t *dst)
{
    memset(htab, 0, LZ_HASH_SIZE * sizeof *htab);
    size_t ip = 0, op = 0, anchor = 0;
    while (ip + LZ_MIN_MATCH <= n) {
        uint32_t seq;
        memcpy(&seq, src + ip, 4);
        uint32_t h = (seq * 2654435761u) >> (32 - LZ_HASH_BITS);
        uint32_t cand = htab[h];
        htab[h] = (uint32_t)ip + 1;
        if (cand && ip - (cand - 1) <= LZ_MAX_OFFSET &&
            memcmp(src + cand - 1, src + ip, 4) == 0) {
            size_t ref = cand - 1, len = 4;
            while (ip + len < n && src[ref + len] == src[ip + len] && len < 65535)
                len++;
            uint16_t ll = (uint16_t)(ip - anchor), ml = (uint16_t)len;
            uint16_t off = (uint16_t)(ip - ref);
            memcpy(dst + op, &ll, 2); op += 2;
            memcpy(dst + op, src + anchor, ll); op += ll;
            memcpy(dst + op, &ml, 2); op += 2;
            memcpy(dst + op, &off, 2); op += 2;
            ip += len;
            anchor = ip;
        } else {
            ip++;
        }
    }
    uint16_t ll = (uint16_t)(n - anchor), zero = 0;
    memcpy(dst + op, &ll, 2); op += 2;
    memcpy(dst + op, src + anchor, n - anchor); op += n - anchor;
    memcpy(dst + op, &zero, 2); op += 2;
    return op;
}

static void index_append(struct blockwriter *w, uint32_t packed_len, uint32_t crc)
{
    if (w->nindex == w->index_cap) {
        w->index_cap = w->index_cap ? w->index_cap * 2 : 1024;
        w->index = realloc(w->index, w->index_cap * sizeof *w->index);
        if (!w->index) { perror("realloc"); exit(1); }
    }
    struct index_entry *e = &w->index[w->nindex++];
    e->file_off = w->file_off;
    e->first_record = w->next_record - w->nrec_in_block;
    e->packed_len = packed_len;
    e->crc = crc;
}

/* Compress the pending block, checksum it and record it in the index. */
static void seal_block(struct blockwriter *w)
{
    if (w->used == 0)
        return;
    size_t plen = lz_compress_block(w->htab, w->buf, w->used, w->out);
    uint32_t crc = crc32_update(0, w->out, plen);
    memcpy(w->out + plen, &crc, 4);
    memcpy(w->out + plen + 4, &w->nrec_in_block, 4);
    plen += BLOCK_TRAILER;
    index_append(w, (uint32_t)plen, crc);
    w->file_off += plen;
    w->raw_bytes += w->used;
    w->packed_bytes += plen;
    w->checksum = w->checksum * 31 + crc;
    w->used = 0;
    w->nrec_in_block = 0;
}

/*
 * Must the pending block be sealed before a record of `len` bytes is added?
 * Yes if the record would overflow the block, or if it is a "large" record
 * (more than 1/large_div of a block), which gets a block of its own.
 */
static int block_needs_seal(const struct blockwriter *w, size_t len)
{
    if (w->used == 0)
        return 0;
#ifdef VPROF_CASE_FIX
    size_t large_limit = w->cfg->block_kb * 1024 / w->cfg->large_div;
#else
    size_t large_limit = (w->cfg->block_kb / w->cfg->large_div) * 1024; /* FIX: multiply before dividing (block_kb * 1024 / large_div): block_kb / large_div truncates to 0 when large_div > block_kb */
#endif
    if (len >= large_limit)
        return 1;
    return w->used + len + BLOCK_TRAILER > w->cap;
}

static void append_record(struct blockwriter *w, const char *rec, size_t len)
{
    if (block_needs_seal(w, len))
        seal_block(w);
    memcpy(w->buf + w->used, rec, len);
    w->used += len;
    w->nrec_in_block++;
    w->next_record++;
}

static void writer_init(struct blockwriter *w, const struct pack_cfg *cfg)
{
    memset(w, 0, sizeof *w);
    w->cfg = cfg;
    w->cap = cfg->block_kb * 1024;
    w->buf = malloc(w->cap + cfg->max_len + 64);
    w->out_cap = 2 * w->cap + cfg->max_len + 64;
    w->out = malloc(w->out_cap);
    w->htab = malloc(LZ_HASH_SIZE * sizeof *w->htab);
    if (!w->buf || !w->out || !w->htab) { perror("malloc"); exit(1); }
}

static void writer_free(struct blockwriter *w)
{
    free(w->buf); free(w->out); free(w->htab); free(w->index);
}

static void usage(const char *argv0)
{
    fprintf(stderr, "usage: %s [-n records] [-b block_kb] [-d large_div] "
                    "[-m min_len] [-M max_len] [-s seed]\n", argv0);
    exit(2);
}

static void parse_args(int argc, char **argv, struct pack_cfg *cfg)
{
    int opt;
    cfg->nrecords = 300000; cfg->block_kb = 64; cfg->large_div = 16;
    cfg->min_len = 80; cfg->max_len = 400; cfg->seed = 42;
    while ((opt = getopt(argc, argv, "n:b:d:m:M:s:")) != -1) {
        switch (opt) {
        case 'n': cfg->nrecords = strtoull(optarg, NULL, 10); break;
        case 'b': cfg->block_kb = strtoull(optarg, NULL, 10); break;
        case 'd': cfg->large_div = (unsigned)strtoul(optarg, NULL, 10); break;
        case 'm': cfg->min_len = (unsigned)strtoul(optarg, NULL, 10); break;
        case 'M': cfg->max_len = (unsigned)strtoul(optarg, NULL, 10); break;
        case 's': cfg->seed = strtoull(optarg, NULL, 10); break;
        default: usage(argv[0]);
        }
    }
    if (cfg->block_kb == 0 || cfg->large_div == 0 || cfg->min_len < 64 ||
        cfg->max_len < cfg->min_len || cfg->max_len > 60000)
        usage(argv[0]);
}

int main(int argc, char **argv)
{
    struct pack_cfg cfg;
    struct blockwriter w;
    parse_args(argc, argv, &cfg);
    crc32_init();
    writer_init(&w, &cfg);

    uint64_t rng = cfg.seed * 0x9E3779B97F4A7C15ull + 1;
    char *rec = malloc(cfg.max_len + 64);
    if (!rec) { perror("malloc"); return 1; }
    unsigned span = cfg.max_len - cfg.min_len + 1;
    for (uint64_t i = 0; i < cfg.nrecords; i++) {
        unsigned target = cfg.min_len + (unsigned)(xorshift64(&rng) % span);
        size_t len = gen_record(&rng, i, target, rec);
        append_record(&w, rec, len);
    }
    seal_block(&w);

    /* corpus: the block layout (and so the packed stream) is what the bug
     * changes, so it goes to stderr; stdout is what the fix must keep */
    printf("records=%zu raw=%llu\n", cfg.nrecords, (unsigned long long)w.raw_bytes);
    fprintf(stderr, "blocks=%zu packed=%llu ratio=%.3f checksum=%016llx\n",
           w.nindex, (unsigned long long)w.packed_bytes,
           w.raw_bytes ? (double)w.packed_bytes / (double)w.raw_bytes : 0.0,
           (unsigned long long)w.checksum);
    free(rec);
    writer_free(&w);
    return 0;
}
