/* Written for the vprof bug corpus by a helper that had not seen the
 * profiler (2026-11-29); not modelled on a real issue. The fix is the
 * VPROF_CASE_FIX variant; the line marked FIX is the bug.
 *
 * walstore - the write-ahead log of a small embedded database. A commit
 * appends one frame per page it changed (page number, checksum, the page
 * image) to the log; the database file is not touched. A reader takes a
 * snapshot (the log's last frame when its transaction began, its "read
 * mark") and, for every page it reads, looks for the newest frame of that
 * page at or below its mark: the log index has one small hash table per
 * segment of 256 frames, searched from the newest segment back to the first;
 * a page with no frame is read from the database file. Every --ckpt-every
 * commits a checkpoint copies frames back into the database file, as far as
 * no open read transaction still needs the old images, and when it has copied
 * all of them it restarts the log from frame 1, which keeps the index short.
 *
 * Connections keep a reader slot from open to close; the slot's mark stays
 * at the connection's last snapshot between its transactions.
 *
 * The bug: ckpt_safe_frame() lets every open connection's mark hold the
 * checkpoint back, not only those inside a read transaction. Clients that
 * open a connection per transaction (normal: --txns-per-conn 1) leave no
 * marks behind; pooled connections (buggy: --txns-per-conn 1000) always leave
 * an old one, so the log is never restarted and every cold page read searches
 * a log that only grows.
 */
#include "../common/corpus.h"

#define PAGE_BYTES  128
#define SEG_FRAMES  256         /* frames per index segment */
#define SEG_SLOTS   512         /* hash slots per segment: half full at most */
#define MAX_CONNS   64
#define MARK_NONE   UINT32_MAX  /* a free reader slot */
#define PAGES_PER_READ 6

struct frame { uint32_t pgno, commit; uint64_t cksum; uint8_t data[PAGE_BYTES]; };

/* Slot values are 1 + the frame's offset in its segment; 0 is empty. */
struct segment { uint16_t slot[SEG_SLOTS]; };

struct reader_slot { uint32_t mark; uint8_t open, in_txn; };

struct wal {
    struct frame *frames;       /* frames[1..max_frame] */
    struct segment *segs;
    uint32_t max_frame, cap, nsegs;
    uint32_t backfilled;        /* frames[1..backfilled] are in the db file */
    struct reader_slot readers[MAX_CONNS];
    uint64_t commits, checkpoints, restarts, copied;
};

/* Pages carry a checksum, verified on every read (data checksums). */
struct db { uint8_t (*page)[PAGE_BYTES]; uint64_t *cksum; uint32_t npages; };

struct client { int slot; long txns_on_conn; };

struct stats { uint64_t reads, wal_hits, writes, opens, bad_cksum, digest; };

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n, size);
    if (!p)
        perror("calloc"), exit(1);
    return p;
}

/* ------------------------------------------------------ page images */
static uint64_t page_checksum(const uint8_t *d)
{
    uint64_t a = 1, b = 0;      /* Fletcher-style: catches torn and swapped bytes */
    for (int i = 0; i < PAGE_BYTES; i++) {
        a = (a + d[i]) % 0xfffffffbu;
        b = (b + a) % 0xfffffffbu;
    }
    return b << 32 | a;
}

/* The image a write produces: derived from the page and its new row value. */
static void render_page(uint8_t *d, uint32_t pgno, uint64_t value)
{
    rng_t r;
    rng_seed(&r, value * 0x9e3779b97f4a7c15ull + pgno);
    for (int i = 0; i < PAGE_BYTES; i += 8) {
        uint64_t x = rng_next(&r);
        memcpy(d + i, &x, 8);
    }
}

/* --------------------------------------------------------- log index */
static uint32_t index_hash(uint32_t pgno)
{
    return (pgno * 383u) & (SEG_SLOTS - 1);
}

/* The newest frame of PGNO in segment SEG that is at or below MX, or 0. */
static uint32_t seg_probe(const struct wal *w, uint32_t seg, uint32_t pgno, uint32_t mx)
{
    const struct segment *s = &w->segs[seg];
    uint32_t best = 0, base = seg * SEG_FRAMES;
    for (uint32_t h = index_hash(pgno); s->slot[h]; h = (h + 1) & (SEG_SLOTS - 1)) {
        uint32_t f = base + s->slot[h];
        if (f <= mx && f > best && w->frames[f].pgno == pgno)
            best = f;
    }
    return best;
}

/* Searches the segments from the one holding MX back to the first. */
static uint32_t wal_find_frame(const struct wal *w, uint32_t pgno, uint32_t mx)
{
    if (mx == 0)
        return 0;
    for (uint32_t seg = (mx - 1) / SEG_FRAMES + 1; seg-- > 0;) {
        uint32_t f = seg_probe(w, seg, pgno, mx);
        if (f)
            return f;
    }
    return 0;
}

static void index_add(struct wal *w, uint32_t f, uint32_t pgno)
{
    uint32_t seg = (f - 1) / SEG_FRAMES, off = (f - 1) % SEG_FRAMES + 1;
    if (seg >= w->nsegs) {
        w->segs = realloc(w->segs, (seg + 1) * sizeof *w->segs);
        if (!w->segs)
            perror("realloc"), exit(1);
        w->nsegs = seg + 1;
    }
    struct segment *s = &w->segs[seg];
    if (off == 1)               /* first frame of a (possibly reused) segment */
        memset(s, 0, sizeof *s);
    uint32_t h = index_hash(pgno);
    while (s->slot[h])
        h = (h + 1) & (SEG_SLOTS - 1);
    s->slot[h] = (uint16_t)off;
}

/* ----------------------------------------------------------- the log */
static uint32_t wal_append(struct wal *w, uint32_t pgno, const uint8_t *data)
{
    uint32_t f = ++w->max_frame;
    if (f >= w->cap) {
        w->cap = w->cap ? w->cap * 2 : 1024;
        w->frames = realloc(w->frames, w->cap * sizeof *w->frames);
        if (!w->frames)
            perror("realloc"), exit(1);
    }
    struct frame *fr = &w->frames[f];
    fr->pgno = pgno, fr->commit = 0;
    memcpy(fr->data, data, PAGE_BYTES);
    fr->cksum = page_checksum(data);
    index_add(w, f, pgno);
    return f;
}

static int readers_in_txn(const struct wal *w)
{
    for (int i = 0; i < MAX_CONNS; i++)
        if (w->readers[i].open && w->readers[i].in_txn)
            return 1;
    return 0;
}

/* The last frame a checkpoint may copy: no reader may see the database file
 * change under its snapshot, so the oldest mark that is still in use bounds
 * the copy. */
static uint32_t ckpt_safe_frame(const struct wal *w)
{
    uint32_t safe = w->max_frame;
    for (int i = 0; i < MAX_CONNS; i++) {
        const struct reader_slot *r = &w->readers[i];
        if (!r->open || r->mark == MARK_NONE)
            continue;
#ifdef VPROF_CASE_FIX
        if (!r->in_txn)
            continue;
#else
        /* FIX: skip connections that are not inside a read transaction */
#endif
        if (r->mark < safe)
            safe = r->mark;
    }
    return safe;
}

static void ckpt_copy_frame(const struct wal *w, struct db *db, uint32_t f)
{
    const struct frame *fr = &w->frames[f];
    memcpy(db->page[fr->pgno], fr->data, PAGE_BYTES);
    db->cksum[fr->pgno] = fr->cksum;
}

/* Copies frames back as far as is safe; restarts the log once all are in. */
static void wal_checkpoint(struct wal *w, struct db *db)
{
    uint32_t safe = ckpt_safe_frame(w);
    w->checkpoints++;
    for (uint32_t f = w->backfilled + 1; f <= safe; f++)
        ckpt_copy_frame(w, db, f), w->copied++;
    if (safe > w->backfilled)
        w->backfilled = safe;
    if (w->backfilled == w->max_frame && !readers_in_txn(w)) {
        w->max_frame = w->backfilled = 0;    /* index segments are cleared on reuse */
        w->restarts++;
    }
}

/* ---------------------------------------------------------- connections */
static int conn_open(struct wal *w, struct stats *st)
{
    for (int i = 0; i < MAX_CONNS; i++)
        if (!w->readers[i].open) {
            w->readers[i] = (struct reader_slot){.mark = MARK_NONE, .open = 1};
            st->opens++;
            return i;
        }
    fprintf(stderr, "out of reader slots\n");
    exit(1);
}

static void conn_close(struct wal *w, int slot)
{
    w->readers[slot] = (struct reader_slot){.mark = MARK_NONE};
}

static void txn_begin(struct wal *w, int slot)
{
    w->readers[slot].mark = w->max_frame;
    w->readers[slot].in_txn = 1;
}

static void txn_end(struct wal *w, int slot)
{
    w->readers[slot].in_txn = 0;    /* the mark stays: the last snapshot */
}

/* Reads PGNO as of the snapshot MX: the newest frame, or the db file. */
static const uint8_t *read_page(const struct wal *w, const struct db *db, uint32_t pgno, uint32_t mx,
                                struct stats *st)
{
    uint32_t f = wal_find_frame(w, pgno, mx);
    const uint8_t *img = f ? w->frames[f].data : db->page[pgno];
    uint64_t want = f ? w->frames[f].cksum : db->cksum[pgno];
    st->reads++, st->wal_hits += f != 0;
    if (page_checksum(img) != want)
        st->bad_cksum++;
    return img;
}

static uint64_t fold_digest(uint64_t h, const uint8_t *d)
{
    for (int i = 0; i < PAGE_BYTES; i += 8) {
        uint64_t x;
        memcpy(&x, d + i, 8);
        h = (h ^ x) * 0x100000001b3ull;
    }
    return h;
}

static void run_read_txn(struct wal *w, const struct db *db, int slot, rng_t *r, struct stats *st)
{
    txn_begin(w, slot);
    uint32_t mx = w->readers[slot].mark;
    for (int k = 0; k < PAGES_PER_READ; k++) {
        uint32_t pgno = 1 + (uint32_t)rng_below(r, db->npages - 1);    /* page 0: header */
        st->digest = fold_digest(st->digest, read_page(w, db, pgno, mx, st));
    }
    txn_end(w, slot);
}

/* Updates 1-4 rows on mostly hot pages; one frame per page, then commits. */
static void run_write_txn(struct wal *w, int slot, rng_t *r, uint32_t npages, struct stats *st)
{
    uint8_t img[PAGE_BYTES];
    uint32_t last = 0;
    txn_begin(w, slot);
    int n = 1 + (int)rng_below(r, 4);
    for (int k = 0; k < n; k++) {
        uint32_t hot = 1 + (uint32_t)rng_below(r, npages - 1);
        uint32_t pgno = 1 + (uint32_t)rng_below(r, hot);     /* low pages are hot */
        render_page(img, pgno, rng_next(r));
        last = wal_append(w, pgno, img);
        st->writes++;
    }
    w->frames[last].commit = npages;    /* the commit frame carries the db size */
    w->commits++;
    w->readers[slot].mark = last;       /* the writer has seen its own commit */
    txn_end(w, slot);
}

int main(int argc, char **argv)
{
    opt_t opts[] = {
        {"txns", "transactions over the run", 50000, 1, 100000000, 0},
        {"clients", "client sessions", 8, 1, MAX_CONNS / 2, 0},
        {"pages", "pages in the database file", 30000, 2, 1 << 24, 0},
        {"write-pct", "percent of transactions that write", 25, 0, 100, 0},
        {"ckpt-every", "commits between checkpoints", 100, 1, 1 << 30, 0},
        {"txns-per-conn", "transactions a client runs per connection", 1, 1, 1 << 30, 0},
        {"seed", "workload seed", 4242, 0, 1000000000, 0},
    };
    opts_parse(argc, argv, opts, NOPTS(opts));
    long txns = opt_get(opts, NOPTS(opts), "txns");
    int nclients = (int)opt_get(opts, NOPTS(opts), "clients");
    uint32_t npages = (uint32_t)opt_get(opts, NOPTS(opts), "pages");
    long write_pct = opt_get(opts, NOPTS(opts), "write-pct");
    long ckpt_every = opt_get(opts, NOPTS(opts), "ckpt-every");
    long per_conn = opt_get(opts, NOPTS(opts), "txns-per-conn");
    rng_t r;
    rng_seed(&r, (uint64_t)opt_get(opts, NOPTS(opts), "seed"));

    struct db db = {.page = xcalloc(npages, PAGE_BYTES), .cksum = xcalloc(npages, 8),
                    .npages = npages};
    for (uint32_t p = 0; p < npages; p++) {
        render_page(db.page[p], p, 0);
        db.cksum[p] = page_checksum(db.page[p]);
    }
    struct wal w = {0};
    struct stats st = {0};
    for (int i = 0; i < MAX_CONNS; i++)
        w.readers[i].mark = MARK_NONE;
    struct client *cl = xcalloc((size_t)nclients, sizeof *cl);
    for (int c = 0; c < nclients; c++)
        cl[c].slot = conn_open(&w, &st);

    long since_ckpt = 0;
    for (long t = 0; t < txns; t++) {
        struct client *c = &cl[rng_below(&r, (uint64_t)nclients)];
        if ((long)rng_below(&r, 100) < write_pct) {
            run_write_txn(&w, c->slot, &r, npages, &st);
            if (++since_ckpt >= ckpt_every) {   /* the auto-checkpoint */
                wal_checkpoint(&w, &db);
                since_ckpt = 0;
            }
        } else {
            run_read_txn(&w, &db, c->slot, &r, &st);
        }
        CASE_PROGRESS("txn");
        if (++c->txns_on_conn >= per_conn) {    /* the client hangs up, then reconnects */
            conn_close(&w, c->slot);
            c->slot = conn_open(&w, &st);
            c->txns_on_conn = 0;
        }
    }
    for (int c = 0; c < nclients; c++)          /* the last close checkpoints */
        conn_close(&w, cl[c].slot);
    wal_checkpoint(&w, &db);

    uint64_t db_digest = 0xcbf29ce484222325ull;
    for (uint32_t p = 0; p < npages; p++)
        db_digest = fold_digest(db_digest, db.page[p]);
    printf("%llu txns: %llu commits, %llu page writes, %llu page reads, read digest %016llx, "
           "db digest %016llx\n", (unsigned long long)txns, (unsigned long long)w.commits,
           (unsigned long long)st.writes, (unsigned long long)st.reads,
           (unsigned long long)st.digest, (unsigned long long)db_digest);
    fprintf(stderr, "checkpoints=%llu restarts=%llu frames_copied=%llu wal_hits=%llu "
            "log_segments=%u opens=%llu bad_cksum=%llu\n",
            (unsigned long long)w.checkpoints, (unsigned long long)w.restarts,
            (unsigned long long)w.copied, (unsigned long long)st.wal_hits, w.nsegs,
            (unsigned long long)st.opens, (unsigned long long)st.bad_cksum);
    free(cl), free(w.frames), free(w.segs), free(db.page), free(db.cksum);
    return 0;
}
