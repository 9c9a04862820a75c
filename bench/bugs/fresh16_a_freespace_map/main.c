/* Written for the vprof bug corpus by a helper that had not seen the
 * profiler (2026-11-29); not modelled on a real issue. The fix is the
 * VPROF_CASE_FIX variant; the line marked FIX is the bug.
 *
 * pagestore - the heap storage of an embedded row store. Rows live in 4 KB
 * slotted pages (slots grow from the front, tuples from the back); a row map
 * gives each row id its page and slot. An update writes a new version and
 * leaves the old one dead, whose space comes back when the page is compacted;
 * a page too full for an update is compacted, and split if that is not enough
 * (its later half of rows move to a page with room). The free-space map
 * (FSM) tells which page has a gap of N bytes: a byte per page (gap / 16), in
 * blocks of 256 pages, each a max-tree over its leaves. Inserts go to the page
 * the last insert used, else to the FSM's first fit, else to a new page. Every
 * change of a gap goes into the FSM at once, except vacuum's: once dead
 * versions reach 50 + 2% of the rows, a pass compacts 8 pages every 16
 * statements, then publishes them: reads their gaps into the FSM leaves and
 * fixes each tree above them once.
 *
 * The bug: heap_vacuum_step() publishes from page 0 to where the pass has
 * got, not from where the last step's publication stopped. Every step redoes
 * all earlier ones, so a pass over P pages publishes about P^2/16 pages
 * instead of P: 3 times too many on a 26-page table, 35 on a 555-page one.
 */
#include "../common/corpus.h"

#define PAGE_SIZE   4096
#define PAGE_HDR    8               /* struct page_hdr */
#define SLOT_SIZE   4               /* struct slot */
#define TUPLE_HDR   8               /* row id, version */
#define MIN_TUPLE   64
#define MAX_TUPLE   264
#define DEAD        0x8000u         /* slot flag: a dead version */
#define SLOT_BITS   10              /* row map: page << SLOT_BITS | slot */
#define SLOT_MASK   ((1u << SLOT_BITS) - 1)
#define CAT_BYTES   16              /* FSM category: a page's gap / 16 (0..255) */
#define FSM_LEAVES  256             /* heap pages per FSM block (a 511-byte tree) */
#define FSM_NODES   (2 * FSM_LEAVES - 1)
#define MAX_PAGES   (1u << 20)      /* the FSM's size: more than --rows can fill */
#define NO_PAGE     UINT32_MAX
#define VACUUM_STEP 8               /* pages a vacuum step visits */
#define SLICE       16              /* statements between two vacuum steps */

struct page_hdr { uint16_t nslots, upper, live, flags; };
struct slot { uint16_t off, len; };   /* len | DEAD for a dead version */

/* Node 0 is the root, the leaves (one per heap page) start at FSM_LEAVES - 1,
 * and every inner node holds the larger of its children. */
struct fsm_block { uint8_t node[FSM_NODES]; };

struct fsm {
    struct fsm_block blk[MAX_PAGES / FSM_LEAVES];
    uint32_t nblocks;               /* in use: the file's pages / FSM_LEAVES */
    uint64_t searches, leaves_published;
};

struct table {
    uint8_t *pages;
    uint32_t npages, cap, nrows;
    uint32_t *tid;                  /* row id -> page << SLOT_BITS | slot */
    uint32_t target;                /* the page the last insert went to */
    uint64_t dead_tuples;
    struct fsm fsm;
    uint64_t compactions, splits;
};

/* A pass over pages [0, end): compacted up to next_blk, published up to published. */
struct vacuum { int active; uint32_t next_blk, published, end; uint64_t passes, pages; };

static void *xrealloc(void *p, size_t n)
{
    if (!(p = realloc(p, n)))
        perror("realloc"), exit(1);
    return p;
}

static struct page_hdr *page_at(const struct table *t, uint32_t pg)
{
    return (struct page_hdr *)(t->pages + (size_t)pg * PAGE_SIZE);
}

static struct slot *page_slots(const struct page_hdr *h)
{
    return (struct slot *)((uint8_t *)h + PAGE_HDR);
}

/* Contiguous room for tuples and their slots. */
static uint32_t page_gap(const struct page_hdr *h)
{
    return (uint32_t)h->upper - PAGE_HDR - SLOT_SIZE * (uint32_t)h->nslots;
}

/* Appends a tuple; the caller has checked the gap. Returns its slot. */
static uint32_t page_add_tuple(struct page_hdr *h, const uint8_t *tuple, uint32_t len)
{
    struct slot *s = &page_slots(h)[h->nslots];
    h->upper = (uint16_t)(h->upper - len);
    memcpy((uint8_t *)h + h->upper, tuple, len);
    s->off = h->upper, s->len = (uint16_t)len;
    h->live++;
    return h->nslots++;
}

static uint32_t tuple_field(const uint8_t *tup, int k)
{
    uint32_t v;
    memcpy(&v, tup + 4 * k, sizeof v);
    return v;
}

/* A row's payload is a function of its id and version, so a reader can check it. */
static void tuple_build(uint8_t *buf, uint32_t rowid, uint32_t version, uint32_t len)
{
    uint64_t x = (rowid + 1ull) * 0x9e3779b97f4a7c15ull ^ (version + 1ull) * 0xc2b2ae3d27d4eb4full;
    memcpy(buf, &rowid, 4), memcpy(buf + 4, &version, 4);
    for (uint32_t i = TUPLE_HDR; i < len; i += 8) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        memcpy(buf + i, &x, len - i < 8 ? len - i : 8);
    }
}

/* FNV-1a over 8-byte words (the tail zero-padded). */
static uint64_t tuple_checksum(const uint8_t *tup, uint32_t len, uint64_t h)
{
    for (uint32_t i = 0; i < len; i += 8) {
        uint64_t w = 0;
        memcpy(&w, tup + i, len - i < 8 ? len - i : 8);
        h = (h ^ w) * 0x100000001b3ull;
    }
    return h;
}

/* ------------------------------------------------------ free-space map */
/* The category of a page with a gap of BYTES (rounded down), and the one a
 * request for BYTES needs (rounded up: such a page surely has them). */
#define FSM_CAT(bytes)     ((uint8_t)((bytes) / CAT_BYTES > 255 ? 255 : (bytes) / CAT_BYTES))
#define FSM_CAT_FOR(bytes) FSM_CAT((bytes) + CAT_BYTES - 1)

/* Sets a page's gap and carries it up the tree; it stops at the first
 * parent that does not change, since the path above it already agrees. */
static void fsm_set_avail(struct fsm *f, uint32_t pg, uint32_t gap)
{
    struct fsm_block *b = &f->blk[pg / FSM_LEAVES];
    uint32_t n = FSM_LEAVES - 1 + pg % FSM_LEAVES;
    b->node[n] = FSM_CAT(gap);
    while (n > 0) {
        n = (n - 1) / 2;
        uint8_t l = b->node[2 * n + 1], r = b->node[2 * n + 2], m = l > r ? l : r;
        if (b->node[n] == m)
            break;
        b->node[n] = m;
    }
}

/* Vacuum records a run of leaves, then fixes the nodes above them once
 * (fsm_vacuum_block) instead of once per leaf. */
static void fsm_record_leaf(struct fsm *f, uint32_t pg, uint32_t gap)
{
    f->blk[pg / FSM_LEAVES].node[FSM_LEAVES - 1 + pg % FSM_LEAVES] = FSM_CAT(gap);
    f->leaves_published++;
}

/* Recomputes inner nodes A..Z (one level of the tree) from their children. */
static void fsm_rebuild_level(struct fsm_block *b, uint32_t a, uint32_t z)
{
    for (uint32_t n = a; n <= z; n++) {
        uint8_t l = b->node[2 * n + 1], r = b->node[2 * n + 2];
        b->node[n] = l > r ? l : r;
    }
}

/* Brings block BI's tree up to date with its leaves [lo, hi), bottom-up. */
static void fsm_vacuum_block(struct fsm *f, uint32_t bi, uint32_t lo, uint32_t hi)
{
    uint32_t a = FSM_LEAVES - 1 + lo, z = FSM_LEAVES - 1 + hi - 1;
    while (a > 0) {
        a = (a - 1) / 2, z = (z - 1) / 2;
        fsm_rebuild_level(&f->blk[bi], a, z);
    }
}

/* The leftmost leaf of category >= CAT under a root that has it (first fit
 * keeps the table dense), or NO_PAGE if a node claims more than it holds. */
static uint32_t fsm_descend(const struct fsm_block *b, uint8_t cat)
{
    uint32_t n = 0;
    while (n < FSM_LEAVES - 1) {
        if (b->node[2 * n + 1] >= cat)
            n = 2 * n + 1;
        else if (b->node[2 * n + 2] >= cat)
            n = 2 * n + 2;
        else
            return NO_PAGE;
    }
    return n - (FSM_LEAVES - 1);
}

/* The first page with a gap of NEED bytes. */
static uint32_t fsm_search(struct fsm *f, uint32_t need)
{
    uint8_t cat = FSM_CAT_FOR(need);
    uint32_t leaf;
    f->searches++;
    for (uint32_t bi = 0; bi < f->nblocks; bi++)
        if (f->blk[bi].node[0] >= cat && (leaf = fsm_descend(&f->blk[bi], cat)) != NO_PAGE)
            return bi * FSM_LEAVES + leaf;
    return NO_PAGE;
}

/* ------------------------------------------------------------- heap */
static void heap_note_room(struct table *t, uint32_t pg)
{
    fsm_set_avail(&t->fsm, pg, page_gap(page_at(t, pg)));
}

static uint32_t heap_extend(struct table *t)
{
    if (t->npages == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 64;
        t->pages = xrealloc(t->pages, (size_t)t->cap * PAGE_SIZE);
    }
    uint32_t pg = t->npages++;
    *page_at(t, pg) = (struct page_hdr){.upper = PAGE_SIZE};
    t->fsm.nblocks = (t->npages + FSM_LEAVES - 1) / FSM_LEAVES;
    heap_note_room(t, pg);
    return pg;
}

/* Rewrites page PG with its live tuples only: the first KEEP stay (in slot
 * order, renumbered), the others go to page DEST (a split). */
static void page_repack(struct table *t, uint32_t pg, uint32_t keep, uint32_t dest)
{
    static uint8_t scratch[PAGE_SIZE];
    struct page_hdr *h = page_at(t, pg), *n = (struct page_hdr *)scratch;
    uint32_t kept = 0;
    *n = (struct page_hdr){.upper = PAGE_SIZE};
    for (uint32_t i = 0; i < h->nslots; i++) {
        struct slot s = page_slots(h)[i];
        if (s.len & DEAD) {
            t->dead_tuples--;
            continue;
        }
        const uint8_t *tup = (const uint8_t *)h + s.off;
        uint32_t to = kept++ < keep ? pg : dest;
        uint32_t slot = page_add_tuple(to == pg ? n : page_at(t, dest), tup, s.len);
        t->tid[tuple_field(tup, 0)] = to << SLOT_BITS | slot;
    }
    memcpy(h, scratch, PAGE_SIZE);
}

static void heap_compact_page(struct table *t, uint32_t pg)
{
    page_repack(t, pg, UINT32_MAX, NO_PAGE);
    t->compactions++;
}

/* A page with a gap of NEED bytes: the page the last insert used, else the
 * FSM's first fit, else a new page. */
static uint32_t heap_page_for(struct table *t, uint32_t need)
{
    uint32_t pg = t->target;
    if (pg == NO_PAGE || page_gap(page_at(t, pg)) < need)
        pg = fsm_search(&t->fsm, need);
    if (pg == NO_PAGE)
        pg = heap_extend(t);
    return t->target = pg;
}

static void heap_place(struct table *t, uint32_t pg, uint32_t rowid, uint32_t version, uint32_t len)
{
    uint8_t buf[MAX_TUPLE];
    tuple_build(buf, rowid, version, len);
    t->tid[rowid] = pg << SLOT_BITS | page_add_tuple(page_at(t, pg), buf, len);
    heap_note_room(t, pg);
}

/* Moves the later half of the page's rows to a page with room for them (the
 * page is compacted and short of one tuple's gap: never its own target). */
static void heap_split_page(struct table *t, uint32_t pg)
{
    struct page_hdr *h = page_at(t, pg);
    uint32_t keep = h->live / 2, seen = 0, need = 0;
    for (uint32_t i = 0; i < h->nslots; i++) {
        uint32_t len = page_slots(h)[i].len;
        if (!(len & DEAD) && seen++ >= keep)
            need += len + SLOT_SIZE;
    }
    uint32_t dest = heap_page_for(t, need);    /* may extend the file: h is stale now */
    page_repack(t, pg, keep, dest);
    heap_note_room(t, pg);
    heap_note_room(t, dest);
    t->splits++;
}

static void heap_insert(struct table *t, uint32_t rowid, uint32_t version, uint32_t len)
{
    heap_place(t, heap_page_for(t, len + SLOT_SIZE), rowid, version, len);
}

/* Marks the row's current version dead; returns that version. */
static uint32_t heap_delete(struct table *t, uint32_t rowid)
{
    struct page_hdr *h = page_at(t, t->tid[rowid] >> SLOT_BITS);
    struct slot *s = &page_slots(h)[t->tid[rowid] & SLOT_MASK];
    uint32_t version = tuple_field((uint8_t *)h + s->off, 1);
    s->len |= DEAD;
    h->live--, t->dead_tuples++;
    return version;
}

/* The new version stays on the row's page: compacted if its gap is short, split
 * if that is not enough (it then holds 15 rows or more: half is room enough). */
static void heap_update(struct table *t, uint32_t rowid, uint32_t len)
{
    uint32_t pg = t->tid[rowid] >> SLOT_BITS, need = len + SLOT_SIZE;
    uint32_t version = heap_delete(t, rowid) + 1;
    if (page_gap(page_at(t, pg)) < need) {
        heap_compact_page(t, pg);
        heap_note_room(t, pg);
    }
    if (page_gap(page_at(t, pg)) < need)
        heap_split_page(t, pg);
    heap_place(t, pg, rowid, version, len);
}

static uint64_t heap_fetch(const struct table *t, uint32_t rowid, uint64_t h)
{
    struct page_hdr *p = page_at(t, t->tid[rowid] >> SLOT_BITS);
    struct slot s = page_slots(p)[t->tid[rowid] & SLOT_MASK];
    return tuple_checksum((uint8_t *)p + s.off, s.len, h);
}

/* ----------------------------------------------------------- vacuum */
/* Reads the gaps of pages [lo, hi) of FSM block BI into its leaves, fixes its tree. */
static void heap_publish_block(struct table *t, uint32_t bi, uint32_t lo, uint32_t hi)
{
    for (uint32_t pg = lo; pg < hi; pg++)
        fsm_record_leaf(&t->fsm, pg, page_gap(page_at(t, pg)));
    fsm_vacuum_block(&t->fsm, bi, lo - bi * FSM_LEAVES, hi - bi * FSM_LEAVES);
}

/* Puts the room of pages [lo, hi) into the FSM, block by block. */
static void heap_publish_range(struct table *t, uint32_t lo, uint32_t hi)
{
    while (lo < hi) {
        uint32_t bi = lo / FSM_LEAVES, end = (bi + 1) * FSM_LEAVES < hi ? (bi + 1) * FSM_LEAVES : hi;
        heap_publish_block(t, bi, lo, end);
        lo = end;
    }
}

/* One step of the pass: compacts the pages with dead versions among the next BUDGET,
 * then publishes their room, so the next statements can use it. */
static void heap_vacuum_step(struct table *t, struct vacuum *vac, uint32_t budget)
{
    uint32_t stop = vac->next_blk + budget < vac->end ? vac->next_blk + budget : vac->end;
    for (uint32_t pg = vac->next_blk; pg < stop; pg++, vac->pages++)
        if (page_at(t, pg)->live < page_at(t, pg)->nslots)   /* it has dead versions */
            heap_compact_page(t, pg);
    vac->next_blk = stop;
#ifdef VPROF_CASE_FIX
    heap_publish_range(t, vac->published, vac->next_blk);
#else
    heap_publish_range(t, 0, vac->next_blk);   /* FIX: from vac->published: the earlier pages are in already */
#endif
    vac->published = vac->next_blk;
    if (vac->next_blk >= vac->end)
        vac->active = 0;
}

/* Starts a pass once dead versions reach 50 + 2% of the rows, then runs a
 * step every slice of statements until the pass has covered the table. */
static void autovacuum_step(struct table *t, struct vacuum *vac)
{
    if (!vac->active) {
        if (t->dead_tuples < 50 + t->nrows / 50)
            return;
        vac->active = 1, vac->next_blk = vac->published = 0, vac->end = t->npages;
        vac->passes++;
    }
    heap_vacuum_step(t, vac, VACUUM_STEP);
}

/* -------------------------------------------------------- workload */
struct client { rng_t rng; uint64_t reads, read_digest; };

static uint32_t row_len(rng_t *r)
{
    return MIN_TUPLE + (uint32_t)rng_below(r, MAX_TUPLE - MIN_TUPLE + 1);
}

/* Half updates, a quarter replacements (the row is rewritten wherever the
 * allocator says), a quarter point reads, on uniformly chosen rows. */
static void run_statements(struct table *t, struct client *c, int n)
{
    for (int i = 0; i < n; i++) {
        uint64_t x = rng_next(&c->rng);
        uint32_t rowid = (uint32_t)((x >> 32) % t->nrows);
        if (x % 4 < 2)
            heap_update(t, rowid, row_len(&c->rng));
        else if (x % 4 == 2)
            heap_insert(t, rowid, heap_delete(t, rowid) + 1, row_len(&c->rng));
        else
            c->read_digest = heap_fetch(t, rowid, c->read_digest), c->reads++;
        CASE_PROGRESS("statement");
    }
}

static void db_run_slice(struct table *t, struct vacuum *vac, struct client *c)
{
    run_statements(t, c, SLICE);
    autovacuum_step(t, vac);
}

static void run_workload(struct table *t, struct vacuum *vac, struct client *c, long statements)
{
    for (long done = 0; done < statements; done += SLICE)
        db_run_slice(t, vac, c);
}

int main(int argc, char **argv)
{
    opt_t opts[] = {
        {"rows", "rows in the table", 400, 1, 1 << 20, 0},
        {"statements", "statements after the load", 600000, 0, 100000000, 0},
        {"seed", "workload seed", 4242, 0, 1000000000, 0},
    };
    opts_parse(argc, argv, opts, NOPTS(opts));
    static struct table t;         /* static: the FSM is 2 MB */
    t.nrows = (uint32_t)opt_get(opts, NOPTS(opts), "rows"), t.target = NO_PAGE;
    struct vacuum vac = {0};
    struct client c = {.read_digest = 0xcbf29ce484222325ull};
    rng_seed(&c.rng, (uint64_t)opt_get(opts, NOPTS(opts), "seed"));
    t.tid = xrealloc(NULL, t.nrows * sizeof *t.tid);
    for (uint32_t rowid = 0; rowid < t.nrows; rowid++)
        heap_insert(&t, rowid, 0, row_len(&c.rng));
    run_workload(&t, &vac, &c, opt_get(opts, NOPTS(opts), "statements"));

    uint64_t digest = 0xcbf29ce484222325ull;   /* every row's place and contents */
    for (uint32_t rowid = 0; rowid < t.nrows; rowid++)
        digest = heap_fetch(&t, rowid, digest ^ t.tid[rowid]);
    printf("%u rows in %u pages, digest %016llx; %llu reads, digest %016llx\n", t.nrows, t.npages,
           (unsigned long long)digest, (unsigned long long)c.reads, (unsigned long long)c.read_digest);
    fprintf(stderr, "compactions=%llu splits=%llu fsm_searches=%llu vacuum_passes=%llu vacuum_pages=%llu "
            "leaves_published=%llu\n", (unsigned long long)t.compactions, (unsigned long long)t.splits,
            (unsigned long long)t.fsm.searches, (unsigned long long)vac.passes, (unsigned long long)vac.pages,
            (unsigned long long)t.fsm.leaves_published);
    free(t.pages), free(t.tid);
    return 0;
}
