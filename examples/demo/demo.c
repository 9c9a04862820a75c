/* demo.c — a small program with a planted performance bug, to show what
 * vprof finds that gprof does not (see README.md).
 *
 * A toy search-engine indexer. It generates documents from a fixed seed,
 * splits them into words, buffers (term, document) postings, and merges the
 * buffer into the sorted index whenever the buffer outgrows its memory
 * budget. Merging is the expensive, necessary part: it sorts the buffer and
 * rewrites the whole index.
 *
 * The bug is in the cheap caller, ingest_all(): each shard reserves a
 * quarter of the memory limit, and the budget left for the buffer is the
 * limit minus the reservations. With one shard that leaves 3/4 of the limit;
 * with four shards it leaves nothing, so the index is merged after every
 * single document. gprof blames merge_buffer_into_index() and its sort,
 * which are fine; vprof sees that `budget` (and `c->shards`) take values in
 * the buggy run that never occur in the normal one, in ingest_all().
 *
 * Usage: demo CONFIG   (normal.in or buggy.in: key = value lines) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Functions this small would be inlined at -O2; keeping them separate lets
 * every profiler name them (in a real program they live in other files). */
#define NOINLINE __attribute__((noinline))

struct config {
    long docs;           /* documents to index */
    long words_per_doc;  /* words in each document */
    long mem_limit;      /* bytes the indexer may use */
    long shards;         /* index shards sharing that memory */
};

struct posting {
    uint32_t term, doc;
};

static struct posting *buffer, *index_, *merged;
static size_t n_buffer, n_index, cap_postings;
static long n_merges;
static uint64_t rng_state = 0x2545F4914F6CDD1DULL;

NOINLINE static uint64_t next_random(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 2685821657736338717ULL;
}

/* Reads "key = value" lines; unknown keys and bad numbers are errors. */
NOINLINE static int read_config(const char *path, struct config *c)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        perror(path);
        return -1;
    }
    char line[256], key[64];
    long value;
    int lineno = 0, rc = 0;
    *c = (struct config){ 2000, 40, 64 * 1024, 1 };
    while (fgets(line, sizeof line, f)) {
        lineno++;
        if (line[0] == '#' || line[strspn(line, " \t\r\n")] == 0)
            continue;
        if (sscanf(line, " %63[a-z_] = %ld", key, &value) != 2 || value < 1) {
            fprintf(stderr, "%s:%d: expected 'key = positive number'\n", path, lineno);
            rc = -1;
        } else if (!strcmp(key, "docs")) c->docs = value;
        else if (!strcmp(key, "words_per_doc")) c->words_per_doc = value;
        else if (!strcmp(key, "mem_limit")) c->mem_limit = value;
        else if (!strcmp(key, "shards")) c->shards = value;
        else {
            fprintf(stderr, "%s:%d: unknown key '%s'\n", path, lineno, key);
            rc = -1;
        }
    }
    fclose(f);
    return rc;
}

/* Maps a word to its term id (FNV-1a into a 64k vocabulary). */
NOINLINE static uint32_t term_id(const char *word)
{
    uint32_t h = 2166136261u;
    for (; *word; word++)
        h = (h ^ (uint8_t)*word) * 16777619u;
    return h & 0xffff;
}

/* Generates document DOC and appends one posting per word to the buffer. */
NOINLINE static void tokenize_document(long doc, long n_words)
{
    static const char *syllables[] = { "ka", "lo", "mi", "ne", "ru", "sa", "to", "vi" };
    char word[32];
    for (long w = 0; w < n_words; w++) {
        int len = 0, parts = 1 + (int)(next_random() % 4);
        for (int p = 0; p < parts; p++)
            len += snprintf(word + len, sizeof word - (size_t)len, "%s",
                            syllables[next_random() % 8]);
        buffer[n_buffer++] = (struct posting){ term_id(word), (uint32_t)doc };
    }
}

static int posting_less(const struct posting *a, const struct posting *b)
{
    return a->term != b->term ? a->term < b->term : a->doc < b->doc;
}

/* Bottom-up merge sort of the buffer, using `merged` as scratch space. */
NOINLINE static void sort_buffer(void)
{
    struct posting *src = buffer, *dst = merged;
    for (size_t width = 1; width < n_buffer; width *= 2) {
        for (size_t lo = 0; lo < n_buffer; lo += 2 * width) {
            size_t mid = lo + width < n_buffer ? lo + width : n_buffer;
            size_t hi = lo + 2 * width < n_buffer ? lo + 2 * width : n_buffer;
            size_t i = lo, j = mid, k = lo;
            while (i < mid || j < hi)
                dst[k++] = (j == hi || (i < mid && !posting_less(&src[j], &src[i])))
                           ? src[i++] : src[j++];
        }
        struct posting *t = src;
        src = dst;
        dst = t;
    }
    if (src != buffer)
        memcpy(buffer, src, n_buffer * sizeof *buffer);
}

/* Sorts the buffer and merges it into the index (rewriting the index). */
NOINLINE static void merge_buffer_into_index(void)
{
    sort_buffer();
    size_t i = 0, j = 0, k = 0;
    while (i < n_index || j < n_buffer) {
        if (j == n_buffer || (i < n_index && !posting_less(&buffer[j], &index_[i])))
            merged[k++] = index_[i++];
        else
            merged[k++] = buffer[j++];
    }
    struct posting *t = index_;
    index_ = merged;
    merged = t;
    n_index = k;
    n_buffer = 0;
    n_merges++;
}

/* The root cause lives here: a cheap function that only decides how often
 * the expensive merge runs. */
NOINLINE static void ingest_all(const struct config *c)
{
    /* Each shard keeps a quarter of the limit for its own cache. */
    long reserved = c->mem_limit / 4;
    long budget = c->mem_limit - reserved * c->shards;  /* BUG: must not go below mem_limit / 4 */

    for (long doc = 0; doc < c->docs; doc++) {
        tokenize_document(doc, c->words_per_doc);
        if ((long)(n_buffer * sizeof(struct posting)) > budget)
            merge_buffer_into_index();
    }
    merge_buffer_into_index();
}

NOINLINE static uint64_t index_checksum(void)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n_index; i++)
        h = (h ^ ((uint64_t)index_[i].term << 32 | index_[i].doc)) * 1099511628211ULL;
    return h;
}

int main(int argc, char **argv)
{
    struct config c;
    if (argc != 2) {
        fprintf(stderr, "usage: %s CONFIG   (e.g. normal.in or buggy.in)\n", argv[0]);
        return 2;
    }
    if (read_config(argv[1], &c) != 0)
        return 2;
    cap_postings = (size_t)(c.docs * c.words_per_doc) + 1;
    buffer = malloc(cap_postings * sizeof *buffer);
    index_ = malloc(cap_postings * sizeof *index_);
    merged = malloc(cap_postings * sizeof *merged);
    if (!buffer || !index_ || !merged) {
        perror("malloc");
        return 1;
    }
    ingest_all(&c);
    printf("indexed %ld documents (%zu postings) with %ld shard(s): %ld merges, "
           "checksum %016llx\n", c.docs, n_index, c.shards, n_merges,
           (unsigned long long)index_checksum());
    free(buffer);
    free(index_);
    free(merged);
    return 0;
}
