/* Written for the vprof bug corpus by a helper that had not seen the
 * profiler (2026-11-29); not modelled on a real issue. The fix is the
 * VPROF_CASE_FIX variant; the line marked FIX is the bug.
 *
 * lzpack - a block compressor for disk images, of the LZ77/deflate family.
 * The matcher is zlib's: a hash of the next 3 bytes heads a chain of earlier
 * positions (a 32 KiB sliding window), longest_match() walks it newest
 * first, and the parser evaluates lazily. The level table says how hard to
 * search (max_chain, good_len, lazy_len, and nice_len: a match that long ends
 * the search); the top levels are exhaustive (NICE_EXHAUSTIVE: stop only
 * when the match cannot get longer). Tokens are written as LZ4-style
 * sequences, block after block; stdout is the CRC-32 of the stream, checked
 * by decoding it. The input is a generated disk image: extents of logs,
 * of compressed files (random bytes) and of free space (zero pages).
 *
 * The bug: plan_block_search(), which resolves the level's limits once per
 * block, clamps the exhaustive nice length to the block's length instead of
 * to the longest possible match (MAX_MATCH). No match reaches it, so every
 * search walks its whole chain. In text and random data few candidates pass
 * the quick check, but in a run of zeros every earlier position matches all
 * 258 bytes: each search extends 4096 candidates where one would do. A full
 * image (normal: --free-pct 0) hardly notices; a freshly provisioned one
 * (buggy: --free-pct 40) does.
 */
#include "../common/corpus.h"

#define MIN_MATCH  3
#define MAX_MATCH  258              /* a length byte holds len - MIN_MATCH */
#define WSIZE      32768u           /* matches reach back at most WSIZE - 1 */
#define WMASK      (WSIZE - 1)
#define HASH_BITS  15
#define HASH_SIZE  (1u << HASH_BITS)
#define NIL        UINT32_MAX       /* no earlier position in the chain */
#define PAGE_SIZE  4096
#define NICE_EXHAUSTIVE 0xffffu     /* never settle before the match is maximal */

/* The level table (zlib's numbers, with the top levels exhaustive). */
struct level_cfg { uint16_t good_len, lazy_len, nice_len, max_chain; };
static const struct level_cfg kLevels[10] = {
    /* good lazy  nice             chain */
    {  0,    0,   0,                  0},   /* 0: unused (store) */
    {  4,    4,   8,                  4},
    {  4,    5,  16,                  8},
    {  4,    6,  32,                 32},
    {  4,    4,  16,                 16},
    {  8,   16,  32,                 32},
    {  8,   16, 128,                128},
    {  8,   32, 128,                256},
    { 32,  128, NICE_EXHAUSTIVE,   1024},
    { 32,  258, NICE_EXHAUSTIVE,   4096},
};

/* The limits longest_match() and the parser obey within one block. */
struct search_plan { unsigned max_chain, good_len, lazy_len, nice_len; };

struct block_stats { size_t in_bytes, out_bytes; };   /* the previous block's */

struct lz_state {
    const uint8_t *in;
    size_t in_len;
    uint32_t head[HASH_SIZE];       /* newest position per hash, or NIL */
    uint32_t prev[WSIZE];           /* the next older position of the same hash */
    uint64_t searches, candidates, extends, matches, literals, light_blocks;
};

/* A sequence: a run of literals, then a match (len 0: the block's tail). */
struct seq { uint32_t lit_run; uint16_t len, dist; };

/* A block being parsed: its literals in order, and its sequences. */
struct block { uint32_t start, len, nlits, nseqs, run; uint8_t *lits; struct seq *seqs; };

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
            c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
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

/* ------------------------------------------------------------ matcher */
static uint32_t hash3(const uint8_t *p)
{
    uint32_t v = (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
    return (v * 2654435761u) >> (32 - HASH_BITS);
}

/* Links POS into its hash chain; returns the newest earlier position with
 * the same hash (the first candidate), or NIL. */
static uint32_t insert_position(struct lz_state *s, uint32_t pos)
{
    if ((size_t)pos + MIN_MATCH > s->in_len)
        return NIL;
    uint32_t h = hash3(s->in + pos);
    uint32_t older = s->head[h];
    s->prev[pos & WMASK] = older;
    s->head[h] = pos;
    return older;
}

/* How many bytes A and B have in common, up to MAX_LEN; 8 at a time
 * (little-endian: the lowest differing bit is in the first differing byte). */
static unsigned match_len(const uint8_t *a, const uint8_t *b, unsigned max_len)
{
    unsigned n = 0;
    while (n + 8 <= max_len) {
        uint64_t x, y;
        memcpy(&x, a + n, 8);
        memcpy(&y, b + n, 8);
        if (x != y)
            return n + (unsigned)(__builtin_ctzll(x ^ y) >> 3);
        n += 8;
    }
    while (n < max_len && a[n] == b[n])
        n++;
    return n;
}

/* zlib's longest_match in outline: walk the chain from CAND, newest first,
 * and keep the longest match that beats BEST (the match one byte back when
 * evaluating lazily; BEST < MAX_LEN). Returns the new best length. */
static unsigned longest_match(struct lz_state *s, uint32_t pos, uint32_t cand, unsigned best,
                              unsigned max_len, const struct search_plan *plan, uint32_t *dist)
{
    const uint8_t *scan = s->in + pos;
    unsigned chain = plan->max_chain;
    if (best >= plan->good_len)
        chain >>= 2;                /* already good: a shorter look will do */
    s->searches++;
    for (; cand != NIL && pos - cand < WSIZE && chain > 0; cand = s->prev[cand & WMASK], chain--) {
        const uint8_t *m = s->in + cand;
        s->candidates++;
        /* Cheap rejections first: the bytes that end a match longer than
         * BEST, then the first two. */
        if (m[best] != scan[best] || m[best - 1] != scan[best - 1] || m[0] != scan[0] ||
            m[1] != scan[1])
            continue;
        s->extends++;
        unsigned len = match_len(m, scan, max_len);
        if (len > best) {
            best = len;
            *dist = pos - cand;
            if (len >= plan->nice_len)
                break;
        }
    }
    return best;
}

/* ------------------------------------------------------------ parser */
static void emit_literal(struct lz_state *s, struct block *b, uint8_t c)
{
    b->lits[b->nlits++] = c;
    b->run++;
    s->literals++;
}

static void emit_match(struct lz_state *s, struct block *b, unsigned len, uint32_t dist)
{
    b->seqs[b->nseqs++] = (struct seq){b->run, (uint16_t)len, (uint16_t)dist};
    b->run = 0;
    s->matches++;
}

/* zlib's deflate_slow: at each position, search; if the match found one
 * byte back is at least as long, take that one, else emit the byte back as
 * a literal and remember this position's match. Matches stay in the block. */
static void compress_block(struct lz_state *s, struct block *b, const struct search_plan *plan)
{
    uint32_t pos = b->start, end = b->start + b->len;
    unsigned prev_len = MIN_MATCH - 1;
    uint32_t prev_dist = 0;
    int pending = 0;                /* the byte before pos still needs a token */

    while (pos < end) {
        uint32_t cand = insert_position(s, pos);
        unsigned max_len = end - pos < MAX_MATCH ? end - pos : MAX_MATCH;
        unsigned cur_len = MIN_MATCH - 1;
        uint32_t cur_dist = 0;
        if (cand != NIL && prev_len < plan->lazy_len && prev_len < max_len)
            cur_len = longest_match(s, pos, cand, prev_len, max_len, plan, &cur_dist);

        if (prev_len >= MIN_MATCH && cur_len <= prev_len) {
            uint32_t match_end = pos - 1 + prev_len;
            emit_match(s, b, prev_len, prev_dist);
            for (pos++; pos < match_end; pos++)
                insert_position(s, pos);
            pending = 0;
            prev_len = MIN_MATCH - 1;
        } else {
            if (pending)
                emit_literal(s, b, s->in[pos - 1]);
            pending = 1;
            prev_len = cur_len;
            prev_dist = cur_dist;
            pos++;
        }
    }
    if (pending)
        emit_literal(s, b, s->in[pos - 1]);
}

/* The search limits for one block: the level's, resolved against the block
 * and adapted to how the previous block compressed. Called once a block. */
static void plan_block_search(const struct level_cfg *lv, size_t block_len,
                              const struct block_stats *last, struct search_plan *plan)
{
    /* No match is longer than the format encodes or the block holds. */
    unsigned longest = block_len < MAX_MATCH ? (unsigned)block_len : MAX_MATCH;

    plan->max_chain = lv->max_chain;
    plan->good_len = lv->good_len;
    plan->lazy_len = lv->lazy_len < longest ? lv->lazy_len : longest;
    /* The search ends at a match this long; for the exhaustive levels that
     * is the longest match there can be. */
#ifdef VPROF_CASE_FIX
    plan->nice_len = lv->nice_len < longest ? lv->nice_len : longest;
#else
    plan->nice_len = lv->nice_len < block_len ? lv->nice_len : (unsigned)block_len; /* FIX: clamp to longest, not block_len */
#endif
    /* The last block saved under 1/16: it was already compressed data, and a
     * long search finds nothing in it. Look lightly until that changes. */
    if (last->in_bytes && last->out_bytes > last->in_bytes - last->in_bytes / 16) {
        plan->max_chain = lv->max_chain / 16 > 4 ? lv->max_chain / 16 : 4;
        plan->lazy_len = plan->lazy_len < 16 ? plan->lazy_len : 16;
    }
}

/* ------------------------------------------------------------ stream */
static uint8_t *put_length(uint8_t *o, uint32_t v)
{
    for (; v >= 255; v -= 255)
        *o++ = 255;
    *o++ = (uint8_t)v;
    return o;
}

/* Block: the raw length (u32 LE), then the sequences. A sequence: a control
 * byte (literal run and len - MIN_MATCH, 15 meaning "more bytes follow"),
 * the literals, the distance (u16 LE) and the rest of the length. */
static size_t write_block(const struct block *b, uint8_t *out)
{
    uint8_t *o = out;
    const uint8_t *lit = b->lits;
    for (int k = 0; k < 4; k++)
        *o++ = (uint8_t)(b->len >> (8 * k));
    for (uint32_t i = 0; i <= b->nseqs; i++) {
        struct seq q = i < b->nseqs ? b->seqs[i] : (struct seq){b->run, 0, 0};
        if (i == b->nseqs && q.lit_run == 0)
            break;                  /* the block ended with a match */
        uint32_t lcode = q.len ? q.len - MIN_MATCH : 0;
        *o++ = (uint8_t)((q.lit_run < 15 ? q.lit_run : 15) << 4 | (lcode < 15 ? lcode : 15));
        if (q.lit_run >= 15)
            o = put_length(o, q.lit_run - 15);
        memcpy(o, lit, q.lit_run);
        o += q.lit_run, lit += q.lit_run;
        if (!q.len)
            break;
        *o++ = (uint8_t)q.dist, *o++ = (uint8_t)(q.dist >> 8);
        if (lcode >= 15)
            o = put_length(o, lcode - 15);
    }
    return (size_t)(o - out);
}

static uint32_t get_length(const uint8_t **pp, uint32_t nibble)
{
    uint32_t v = nibble;
    if (nibble == 15)
        do
            v += **pp;
        while (*(*pp)++ == 255);
    return v;
}

/* Decodes the stream; returns the bytes written to OUT. */
static size_t decode_stream(const uint8_t *p, const uint8_t *pend, uint8_t *out)
{
    uint8_t *o = out;
    while (p < pend) {
        uint32_t blen = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
        uint8_t *bend = o + blen;
        p += 4;
        while (o < bend) {
            uint8_t ctrl = *p++;
            uint32_t run = get_length(&p, ctrl >> 4);
            memcpy(o, p, run);
            o += run, p += run;
            if (o >= bend)
                break;
            uint32_t dist = (uint32_t)p[0] | (uint32_t)p[1] << 8;
            p += 2;
            uint32_t len = get_length(&p, ctrl & 15) + MIN_MATCH;
            for (uint32_t k = 0; k < len; k++, o++)
                *o = *(o - dist);   /* may overlap: byte by byte */
        }
    }
    return (size_t)(o - out);
}

/* Compresses IN block by block into OUT; returns the stream's length. */
static size_t compress_image(struct lz_state *s, int level, size_t block_size, uint8_t *out,
                             uint32_t *crc, uint64_t *nblocks)
{
    struct block b = {0};
    struct block_stats last = {0, 0};
    size_t olen = 0;
    b.lits = xmalloc(block_size);
    b.seqs = xmalloc(block_size * sizeof *b.seqs);
    for (uint32_t i = 0; i < HASH_SIZE; i++)
        s->head[i] = NIL;
    for (size_t start = 0; start < s->in_len; start += block_size) {
        struct search_plan plan;
        b.start = (uint32_t)start;
        b.len = (uint32_t)(s->in_len - start < block_size ? s->in_len - start : block_size);
        b.nlits = b.nseqs = b.run = 0;
        plan_block_search(&kLevels[level], b.len, &last, &plan);
        if (plan.max_chain < (unsigned)kLevels[level].max_chain)
            s->light_blocks++;
        compress_block(s, &b, &plan);
        size_t n = write_block(&b, out + olen);
        *crc = crc32_update(*crc, out + olen, n);
        last = (struct block_stats){b.len, n};
        olen += n;
        (*nblocks)++;
        CASE_PROGRESS("block");
    }
    free(b.lits);
    free(b.seqs);
    return olen;
}

/* ------------------------------------------------------------ the image */
enum { EXT_FREE, EXT_BLOB, EXT_TEXT };

/* A syslog-style log, one page of it. */
static void fill_log_page(rng_t *r, uint8_t *page, uint32_t *clock)
{
    static const char *const procs[] = {"sshd", "cron", "kernel", "nginx", "postgres", "systemd"};
    static const char *const verbs[] = {"accepted connection", "session opened", "request served",
                                        "checkpoint complete", "unit started", "link up"};
    size_t n = 0;
    while (n < PAGE_SIZE) {
        char line[160];
        uint32_t t = (*clock += 1 + (uint32_t)rng_below(r, 900));
        int k = (int)rng_below(r, 6);
        int len = snprintf(line, sizeof line,
                           "Nov 29 %02u:%02u:%02u.%03u host-%02u %s[%u]: %s from 10.%u.%u.%u port %u id=%08x\n",
                           t / 3600000 % 24, t / 60000 % 60, t / 1000 % 60, t % 1000,
                           (unsigned)rng_below(r, 40), procs[k], 100 + (unsigned)rng_below(r, 30000),
                           verbs[(k + (int)rng_below(r, 2)) % 6], (unsigned)rng_below(r, 256),
                           (unsigned)rng_below(r, 256), (unsigned)rng_below(r, 256),
                           1024 + (unsigned)rng_below(r, 60000), (unsigned)rng_next(r));
        size_t take = (size_t)len < PAGE_SIZE - n ? (size_t)len : PAGE_SIZE - n;
        memcpy(page + n, line, take);
        n += take;
    }
}

/* Extents of 1..24 pages: free space (zeros) FREE_PCT% of the time, else
 * compressed files (random bytes) or logs, one in four. */
static void build_image(uint8_t *img, size_t pages, int free_pct, rng_t *r)
{
    uint32_t clock = 0;
    for (size_t p = 0; p < pages;) {
        int kind = (int)rng_below(r, 100) < free_pct ? EXT_FREE
                   : rng_below(r, 4) == 0 ? EXT_TEXT : EXT_BLOB;
        size_t ext = 1 + rng_below(r, 24);
        for (; ext > 0 && p < pages; ext--, p++) {
            uint8_t *page = img + p * PAGE_SIZE;
            if (kind == EXT_FREE)
                memset(page, 0, PAGE_SIZE);
            else if (kind == EXT_TEXT)
                fill_log_page(r, page, &clock);
            else
                for (size_t i = 0; i < PAGE_SIZE; i += 8) {
                    uint64_t v = rng_next(r);
                    memcpy(page + i, &v, 8);
                }
        }
    }
}

int main(int argc, char **argv)
{
    opt_t opts[] = {
        {"image-kb", "size of the disk image (KiB)", 4096, 64, 1 << 20, 0},
        {"free-pct", "share of the extents that are free space (zero pages)", 2, 0, 100, 0},
        {"level", "compression level", 9, 1, 9, 0},
        {"block-kb", "block size (KiB)", 64, 4, 1024, 0},
    };
    opts_parse(argc, argv, opts, NOPTS(opts));
    size_t pages = (size_t)opt_get(opts, NOPTS(opts), "image-kb") / (PAGE_SIZE / 1024);
    size_t block_size = (size_t)opt_get(opts, NOPTS(opts), "block-kb") * 1024;
    int level = (int)opt_get(opts, NOPTS(opts), "level");
    size_t len = pages * PAGE_SIZE;
    rng_t r;
    rng_seed(&r, 0x6c7a7061636bULL);

    uint8_t *img = xmalloc(len);
    build_image(img, pages, (int)opt_get(opts, NOPTS(opts), "free-pct"), &r);

    /* Worst case per block: all literals, 4 + 1 + len/255 + 1 bytes of overhead. */
    size_t bound = len + (len / block_size + 1) * (block_size / 255 + 16);
    uint8_t *out = xmalloc(bound);
    struct lz_state *s = xmalloc(sizeof *s);
    s->in = img;
    s->in_len = len;
    crc32_init();
    uint32_t crc = 0;
    uint64_t nblocks = 0;
    size_t olen = compress_image(s, level, block_size, out, &crc, &nblocks);

    uint8_t *back = xmalloc(len + MAX_MATCH);
    size_t blen = decode_stream(out, out + olen, back);
    int same = blen == len && memcmp(back, img, len) == 0;
    printf("lzpack level %d: %zu -> %zu bytes, crc32 %08x, roundtrip %s\n", level, len, olen,
           (unsigned)crc, same ? "ok" : "MISMATCH");
    fprintf(stderr, "blocks=%llu light_blocks=%llu searches=%llu candidates=%llu extends=%llu "
            "matches=%llu literals=%llu\n", (unsigned long long)nblocks,
            (unsigned long long)s->light_blocks, (unsigned long long)s->searches,
            (unsigned long long)s->candidates, (unsigned long long)s->extends,
            (unsigned long long)s->matches, (unsigned long long)s->literals);
    free(back);
    free(out);
    free(img);
    free(s);
    return same ? 0 : 1;
}
