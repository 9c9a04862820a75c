/* Written for the vprof bug corpus by a helper that had not seen the
 * profiler (2026-11-29); not modelled on a real issue. The fix is the
 * VPROF_CASE_FIX variant; the line marked FIX is the bug.
 *
 * lsmkv - a log-structured key-value store with leveled compaction. A full
 * memtable is flushed as a sorted table file (entries, bloom filter) into
 * level 0, whose files overlap; levels 1..4 hold disjoint files under a byte
 * target (--l1-kb, times --fanout per level). After each flush or compaction
 * version_finalize() scores the levels, and the scheduler merges the best
 * one (score >= 1) into the next; the manifest logs every version edit. A get
 * looks in the memtable, in EVERY level-0 file, then in one file per level.
 *
 * The bug: version_finalize() scores level 0 by bytes against l0_trigger full
 * memtables, not by file count. A flush keeps only the newest version of each
 * key, so memtables of overwrites (hot counters) flush small files: level 0
 * piles up a hundred of them, and every get probes each one.
 */
#include "../common/corpus.h"

#define NLEVELS             5           /* L0..L4; the last level has no target */
#define ENTRY_BYTES         116         /* user key, sequence/type, 100-byte value */
#define BLOOM_BITS_PER_KEY  10
#define BLOOM_PROBES        7
#define FNV_PRIME           0x100000001b3ull

struct entry { uint64_t key, seq, val; };
/* A table file: sorted entries, their key range, a bloom filter of the keys. */
struct sst { uint64_t number, smallest, largest, bytes, *bloom; uint32_t bloom_bits; int n, refs; struct entry *e; };
struct level { struct sst **f; int n, cap; uint64_t bytes; };
/* The live files and, from version_finalize, the level to compact next. */
struct version { struct level lv[NLEVELS]; int best_level; double best_score; };
/* A version edit: files added to (del = 0) and deleted from (del = 1) levels. */
struct edit_item { int level, del; struct sst *f; };
struct edit { struct edit_item *it; int n, cap; };

/* The arena keeps every version; slot[] indexes the newest one of each key. */
struct memtable { struct entry *log; int n, cap; int32_t *slot; uint32_t mask; uint64_t bytes; };
struct manifest { char *buf; size_t len, cap; uint64_t records; };
struct options { uint64_t memtable_bytes, file_bytes, l1_bytes, entry_bytes, l0_trigger, fanout; };
struct stats { uint64_t flushes, compactions, moves, user_bytes, bytes_written, l0_probes; };
/* One compaction: in[0..n0) from `level`, in[n0..n) from level + 1. */
struct compaction { int level, n0, n; struct sst **in; uint64_t lo, hi; };
/* A merge input: the unread rest of one sorted run. */
struct cursor { const struct entry *p, *end; };

struct db {
    struct options o;
    struct memtable mem;
    struct version v;
    struct manifest man;            /* the log of version edits */
    struct edit edit;
    struct compaction comp;
    uint64_t next_file, seq, compact_pointer[NLEVELS];   /* round-robin position per level */
    struct stats st;
};
/* Cuts a compaction's merged output into files of about --file-kb. */
struct builder { struct db *db; int level, n, cap; struct entry *buf; };

static void *xrealloc(void *p, size_t n)
{
    if (!(p = realloc(p, n ? n : 1)))
        perror("realloc"), exit(1);
    return p;
}

static uint64_t mix64(uint64_t x)
{
    x = (x ^ x >> 30) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ x >> 27) * 0x94d049bb133111ebull;
    return x ^ x >> 31;
}

static int cmp_key(const void *a, const void *b)
{
    uint64_t x = ((const struct entry *)a)->key, y = ((const struct entry *)b)->key;
    return (x > y) - (x < y);
}

/* Double hashing as in LevelDB's filter: one 64-bit hash, BLOOM_PROBES bits. */
static void bloom_build(struct sst *f)
{
    f->bloom_bits = (uint32_t)(((uint64_t)f->n * BLOOM_BITS_PER_KEY + 63) / 64 * 64);
    f->bloom = memset(xrealloc(NULL, f->bloom_bits / 8), 0, f->bloom_bits / 8);
    for (int i = 0; i < f->n; i++) {
        uint64_t h = mix64(f->e[i].key), delta = h >> 32 | h << 32;
        for (int k = 0; k < BLOOM_PROBES; k++, h += delta)
            f->bloom[h % f->bloom_bits >> 6] |= 1ull << (h % f->bloom_bits & 63);
    }
}

static int bloom_may_contain(const struct sst *f, uint64_t key)
{
    uint64_t h = mix64(key), delta = h >> 32 | h << 32;
    for (int k = 0; k < BLOOM_PROBES; k++, h += delta) {
        uint32_t b = (uint32_t)(h % f->bloom_bits);
        if (!(f->bloom[b >> 6] >> (b & 63) & 1))
            return 0;
    }
    return 1;
}

/* Takes ownership of the n sorted entries. */
static struct sst *sst_create(struct db *db, struct entry *e, int n)
{
    struct sst *f = xrealloc(NULL, sizeof *f);
    *f = (struct sst){.number = db->next_file++, .smallest = e[0].key, .largest = e[n - 1].key,
                      .bytes = (uint64_t)n * db->o.entry_bytes, .n = n, .e = e};
    bloom_build(f);
    return f;
}

static void sst_unref(struct sst *f) { if (--f->refs == 0) free(f->e), free(f->bloom), free(f); }

/* The bloom filter first: most probes of a file are for keys it lacks. */
static int table_get(const struct sst *f, uint64_t key, uint64_t *val)
{
    struct entry probe = {.key = key}, *e;
    if (!bloom_may_contain(f, key) || !(e = bsearch(&probe, f->e, (size_t)f->n, sizeof *e, cmp_key)))
        return 0;
    return *val = e->val, 1;
}

/* Level-0 files overlap, so a get must range-check every one of them. */
static int file_covers(const struct sst *f, uint64_t key) { return key >= f->smallest && key <= f->largest; }

/* Deeper levels are sorted and disjoint: bsearch() finds the one file whose
 * range holds the key, if any. */
static int cmp_key_range(const void *k, const void *f)
{
    uint64_t key = *(const uint64_t *)k;
    const struct sst *file = *(struct sst *const *)f;
    return key < file->smallest ? -1 : key > file->largest;
}

static void mem_init(struct memtable *m, const struct options *o)
{
    uint32_t slots = 16;
    m->cap = (int)(o->memtable_bytes / o->entry_bytes) + 1;
    while (slots < 2u * (uint32_t)m->cap)       /* at most half full: short probes */
        slots <<= 1;
    m->mask = slots - 1;
    m->log = xrealloc(NULL, (size_t)m->cap * sizeof *m->log);
    m->slot = xrealloc(NULL, slots * sizeof *m->slot);
    memset(m->slot, 0xff, slots * sizeof *m->slot);    /* -1: empty */
}

/* The index slot of `key`: its newest entry, or the empty slot to use. */
static int32_t *mem_slot(const struct memtable *m, uint64_t key)
{
    for (uint32_t i = (uint32_t)mix64(key) & m->mask;; i = (i + 1) & m->mask)
        if (m->slot[i] < 0 || m->log[m->slot[i]].key == key)
            return &m->slot[i];
}

/* An overwrite costs memtable bytes like an insert: the arena keeps both. */
static void mem_add(struct memtable *m, const struct entry *e, uint64_t entry_bytes)
{
    *mem_slot(m, e->key) = m->n;
    m->log[m->n++] = *e, m->bytes += entry_bytes;
}

static void manifest_put(struct manifest *m, const char *tag, int level, const struct sst *f)
{
    char line[112];
    int len = snprintf(line, sizeof line, "%s %d %llu %016llx %016llx %llu\n", tag, level,
                       (unsigned long long)f->number, (unsigned long long)f->smallest,
                       (unsigned long long)f->largest, (unsigned long long)f->bytes);
    if (m->len + (size_t)len > m->cap)
        m->cap = 2 * (m->len + (size_t)len), m->buf = xrealloc(m->buf, m->cap);
    memcpy(m->buf + m->len, line, (size_t)len);
    m->len += (size_t)len, m->records++;
}

static void edit_push(struct edit *e, int level, int del, struct sst *f)
{
    if (e->n == e->cap)
        e->cap = e->cap ? 2 * e->cap : 16, e->it = xrealloc(e->it, (size_t)e->cap * sizeof *e->it);
    e->it[e->n++] = (struct edit_item){level, del, f};
}

static void level_insert(struct level *l, int level, struct sst *f)
{
    if (l->n == l->cap)
        l->cap = l->cap ? 2 * l->cap : 16, l->f = xrealloc(l->f, (size_t)l->cap * sizeof *l->f);
    int at = l->n;
    while (level > 0 && at > 0 && l->f[at - 1]->smallest > f->smallest)
        at--;                               /* deeper levels stay sorted by key */
    memmove(l->f + at + 1, l->f + at, (size_t)(l->n - at) * sizeof *l->f);
    l->f[at] = f, l->n++, l->bytes += f->bytes;
}

static void level_remove(struct level *l, const struct sst *f)
{
    int at = 0;
    while (l->f[at] != f)
        at++;
    memmove(l->f + at, l->f + at + 1, (size_t)(l->n - at - 1) * sizeof *l->f);
    l->n--, l->bytes -= f->bytes;
}

/* Scores the levels; the best one is compacted next if its score is >= 1. */
static void version_finalize(struct version *v, const struct options *o)
{
    uint64_t target = o->l1_bytes;             /* L1's; times fanout per level below */
    v->best_level = -1, v->best_score = -1;
    for (int level = 0; level < NLEVELS - 1; level++) {
        target *= level > 1 ? o->fanout : 1;
        double score = (double)v->lv[level].bytes / (double)target;
        if (level == 0)         /* level 0 is full at l0_trigger memtables */
#ifdef VPROF_CASE_FIX
            score = (double)v->lv[0].n / (double)o->l0_trigger;
#else
            score = (double)v->lv[0].bytes / (double)(o->l0_trigger * o->memtable_bytes); /* FIX: score by file count */
#endif
        if (score > v->best_score)
            v->best_score = score, v->best_level = level;
    }
}

/* Installs an edit (adds first: a file moved down keeps its reference). */
static void db_apply(struct db *db, struct edit *e)
{
    for (struct edit_item *it = e->it; it < e->it + e->n; it++)
        if (!it->del)
            it->f->refs++, level_insert(&db->v.lv[it->level], it->level, it->f);
    for (struct edit_item *it = e->it; it < e->it + e->n; it++) {
        manifest_put(&db->man, it->del ? "del" : "add", it->level, it->f);
        if (it->del)
            level_remove(&db->v.lv[it->level], it->f), sst_unref(it->f);
    }
    version_finalize(&db->v, &db->o);
    e->n = 0;
}

/* Key order; for one key, the newest version first. */
static int entry_before(const struct entry *a, const struct entry *b)
{
    return a->key < b->key || (a->key == b->key && a->seq > b->seq);
}

static void heap_sift_down(struct cursor *h, int n, int i)
{
    for (int m = i;; i = m) {
        int l = 2 * i + 1;
        if (l < n && entry_before(h[l].p, h[m].p))
            m = l;
        if (l + 1 < n && entry_before(h[l + 1].p, h[m].p))
            m = l + 1;
        if (m == i)
            return;
        struct cursor t = h[i];
        h[i] = h[m], h[m] = t;
    }
}

/* Merges sorted runs and hands emit() the newest version of each key. */
static void merge_runs(struct cursor *h, int n, void (*emit)(void *, const struct entry *), void *ctx)
{
    const struct entry *last = NULL;
    for (int i = n / 2 - 1; i >= 0; i--)
        heap_sift_down(h, n, i);
    while (n > 0) {
        const struct entry *e = h[0].p;
        if (!last || e->key != last->key)
            emit(ctx, e), last = e;
        if (++h[0].p == h[0].end)
            h[0] = h[--n];
        heap_sift_down(h, n, 0);
    }
}

static void builder_finish(struct builder *b)
{
    if (b->n == 0)
        return;
    struct sst *f = sst_create(b->db, b->buf, b->n);
    edit_push(&b->db->edit, b->level, 0, f);
    b->db->st.bytes_written += f->bytes;
    b->buf = NULL, b->n = b->cap = 0;
}

static void builder_add(void *ctx, const struct entry *e)
{
    struct builder *b = ctx;
    if (b->n == b->cap) {
        b->cap = (int)(b->db->o.file_bytes / b->db->o.entry_bytes) + 1;
        b->buf = xrealloc(b->buf, (size_t)b->cap * sizeof *b->buf);
    }
    b->buf[b->n++] = *e;
    if ((uint64_t)b->n * b->db->o.entry_bytes >= b->db->o.file_bytes)
        builder_finish(b);
}

/* The scheduler: the level version_finalize chose, if its score is >= 1.
 * Level 0 goes whole (its files overlap); a deeper level gives one file,
 * round-robin over its key space; then the overlapping files below. */
static int pick_compaction(struct db *db, struct compaction *c)
{
    const struct version *v = &db->v;
    if (v->best_score < 1.0)
        return 0;
    const struct level *src = &v->lv[v->best_level], *dst = &v->lv[v->best_level + 1];
    int first = 0, end = src->n;
    if (v->best_level > 0) {
        while (first < src->n && src->f[first]->smallest <= db->compact_pointer[v->best_level])
            first++;
        first = first < src->n ? first : 0, end = first + 1;
    }
    c->level = v->best_level, c->n = 0, c->lo = UINT64_MAX, c->hi = 0;
    c->in = xrealloc(c->in, (size_t)(src->n + dst->n) * sizeof *c->in);
    for (int i = first; i < end; i++) {
        c->in[c->n++] = src->f[i];
        c->lo = src->f[i]->smallest < c->lo ? src->f[i]->smallest : c->lo;
        c->hi = src->f[i]->largest > c->hi ? src->f[i]->largest : c->hi;
    }
    c->n0 = c->n;
    for (int i = 0; i < dst->n; i++)
        if (dst->f[i]->largest >= c->lo && dst->f[i]->smallest <= c->hi)
            c->in[c->n++] = dst->f[i];
    return 1;
}

static void run_compaction(struct db *db, const struct compaction *c)
{
    int out = c->level + 1;
    db->st.compactions++;
    if (c->level > 0 && c->n == 1) {         /* nothing below overlaps: move the file down */
        edit_push(&db->edit, c->level, 1, c->in[0]);
        edit_push(&db->edit, out, 0, c->in[0]);
        db->st.moves++;
    } else {
        struct cursor *cur = xrealloc(NULL, (size_t)c->n * sizeof *cur);
        for (int i = 0; i < c->n; i++)
            cur[i] = (struct cursor){c->in[i]->e, c->in[i]->e + c->in[i]->n};
        struct builder b = {.db = db, .level = out};
        merge_runs(cur, c->n, builder_add, &b);
        builder_finish(&b);
        for (int i = 0; i < c->n; i++)
            edit_push(&db->edit, i < c->n0 ? c->level : out, 1, c->in[i]);
        free(cur);
    }
    db->compact_pointer[c->level] = c->hi;
    db_apply(db, &db->edit);
}

/* No snapshots are open, so a flush writes the newest version of each key.
 * Compactions run right after it, until no level scores >= 1. */
static void db_flush(struct db *db)
{
    struct memtable *m = &db->mem;
    struct entry *e = xrealloc(NULL, (size_t)m->n * sizeof *e);
    int n = 0;
    for (uint32_t i = 0; i <= m->mask; i++)
        if (m->slot[i] >= 0)
            e[n++] = m->log[m->slot[i]];
    qsort(e, (size_t)n, sizeof *e, cmp_key);
    struct sst *f = sst_create(db, e, n);
    db->st.flushes++, db->st.bytes_written += f->bytes;
    edit_push(&db->edit, 0, 0, f);
    db_apply(db, &db->edit);
    m->n = 0, m->bytes = 0;
    memset(m->slot, 0xff, (m->mask + 1) * sizeof *m->slot);
    while (pick_compaction(db, &db->comp))
        run_compaction(db, &db->comp);
}

static void db_put(struct db *db, uint64_t key, uint64_t val)
{
    if (db->mem.bytes + db->o.entry_bytes > db->o.memtable_bytes || db->mem.n == db->mem.cap)
        db_flush(db);
    mem_add(&db->mem, &(struct entry){key, ++db->seq, val}, db->o.entry_bytes);
    db->st.user_bytes += db->o.entry_bytes;
}

static int db_get(struct db *db, uint64_t key, uint64_t *val)
{
    int32_t s = *mem_slot(&db->mem, key);
    if (s >= 0)
        return *val = db->mem.log[s].val, 1;
    for (int i = db->v.lv[0].n - 1; i >= 0; i--) {          /* newest first */
        const struct sst *f = db->v.lv[0].f[i];
        if (db->st.l0_probes++, file_covers(f, key) && table_get(f, key, val))
            return 1;
    }
    for (int l = 1; l < NLEVELS; l++) {
        struct sst *const *f = bsearch(&key, db->v.lv[l].f, (size_t)db->v.lv[l].n, sizeof *f, cmp_key_range);
        if (f && table_get(*f, key, val))
            return 1;
    }
    return 0;
}

/* Records are inserted once, their keys spread; counters are overwritten. */
static uint64_t record_key(uint64_t id) { return mix64(id + 1); }
static uint64_t counter_key(uint64_t id) { return mix64(id | 1ull << 40); }

int main(int argc, char **argv)
{
    opt_t opts[] = {
        {"ops", "operations (puts and gets)", 700000, 1, 100000000, 0},
        {"get-pct", "percent of operations that are gets", 50, 0, 100, 0},
        {"update-pct", "percent of puts that bump a hot counter", 10, 0, 100, 0},
        {"counters", "hot counters", 32, 1, 1 << 20, 0},
        {"memtable-kb", "memtable size", 128, 1, 1 << 20, 0},
        {"file-kb", "target size of compaction outputs", 256, 1, 1 << 20, 0},
        {"l1-kb", "byte target of level 1", 1024, 1, 1 << 20, 0},
        {"fanout", "growth of the byte target per level", 10, 2, 100, 0},
        {"l0-trigger", "level-0 files that start a compaction", 4, 1, 1000, 0},
        {"seed", "workload seed", 4242, 0, 1000000000, 0},
    };
    opts_parse(argc, argv, opts, NOPTS(opts));
#define OPT(name) opt_get(opts, NOPTS(opts), name)
    long ops = OPT("ops"), get_pct = OPT("get-pct"), update_pct = OPT("update-pct");
    uint64_t counters = (uint64_t)OPT("counters");
    struct db db = {.o = {.memtable_bytes = (uint64_t)OPT("memtable-kb") << 10,
                          .file_bytes = (uint64_t)OPT("file-kb") << 10,
                          .l1_bytes = (uint64_t)OPT("l1-kb") << 10,
                          .entry_bytes = ENTRY_BYTES,
                          .l0_trigger = (uint64_t)OPT("l0-trigger"), .fanout = (uint64_t)OPT("fanout")},
                    .next_file = 1};
    rng_t r;
    rng_seed(&r, (uint64_t)OPT("seed"));
#undef OPT
    mem_init(&db.mem, &db.o);
    version_finalize(&db.v, &db.o);
    uint64_t records = 0, gets = 0, found = 0, get_digest = 0xcbf29ce484222325ull;
    for (long op = 0; op < ops; op++) {
        if ((long)rng_below(&r, 100) < get_pct) {
            /* Reads: mostly records (an eighth of the ids not written yet), some counters. */
            uint64_t key = rng_below(&r, 10) ? record_key(rng_below(&r, records + records / 8 + 1))
                                             : counter_key(rng_below(&r, counters));
            uint64_t val = 0;
            int hit = db_get(&db, key, &val);
            gets++, found += (uint64_t)hit;
            get_digest = (get_digest ^ (hit ? val : key)) * FNV_PRIME;
        } else {
            uint64_t key = (long)rng_below(&r, 100) < update_pct ? counter_key(rng_below(&r, counters))
                                                                  : record_key(records++);
            db_put(&db, key, mix64(key ^ (db.seq << 1)));
        }
        CASE_PROGRESS("op");
    }
    printf("%llu records, %llu gets, %llu found, digest %016llx\n", (unsigned long long)records,
           (unsigned long long)gets, (unsigned long long)found, (unsigned long long)get_digest);
    fprintf(stderr, "flushes=%llu compactions=%llu moves=%llu l0_probes=%llu write_amp=%.2f manifest_records=%llu\n",
            (unsigned long long)db.st.flushes, (unsigned long long)db.st.compactions, (unsigned long long)db.st.moves,
            (unsigned long long)db.st.l0_probes, (double)db.st.bytes_written / (double)(db.st.user_bytes + 1),
            (unsigned long long)db.man.records);
    return 0;   /* the files die with the process */
}
