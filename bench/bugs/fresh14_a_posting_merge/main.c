/* Written for the vprof bug corpus by a helper that had not seen the
 * profiler (2026-11-29); not modelled on a real issue. The fix is the
 * VPROF_CASE_FIX variant; the line marked FIX is the bug.
 *
 * qserve - the query side of a full-text search engine. The indexer inverts
 * the corpus (the analyzer's output: documents as term ids) into one posting
 * list per term: ascending document ids, each with a quantized BM25 impact
 * (0..255, computed at index time, so a document's score is an integer sum
 * and does not depend on the order its terms are added in). A query is a line
 * of words; the parser looks them up in the dictionary and opens a cursor on
 * each term's list. The query is first answered as a conjunction (every word:
 * the shortest list leads, the others gallop to its candidates); when fewer
 * than k documents have every word, it is relaxed to a disjunction (any word,
 * document at a time). Either way the k best documents are kept.
 * The disjunction finds its next candidate with a linear pass over the
 * cursors or with a heap of them, whichever the planner estimates cheaper.
 *
 * The bug: plan_disjunction() estimates the number of candidate documents of
 * a disjunction as the length of its longest list. For a few words of skewed
 * frequency that is about right and the linear pass is the right choice
 * anyway (normal: 3-word queries); for long queries (buggy: 128 words) the
 * union is many times the longest list, the estimate keeps choosing the
 * linear pass, and every candidate reads all 128 cursors twice.
 */
#include "../common/corpus.h"
#include <inttypes.h>

#define DOC_END      UINT32_MAX
#define MAX_QTERMS   256
#define MAX_K        100
#define QUERY_RANK_LO 200       /* query words: below the stopwords... */
#define QUERY_RANK_HI 6000      /* ...and above the typos and rare names */
#define HEAP_READS_PER_LEVEL 2
#define ZIPF_BITS    18
#define ZIPF_SLOTS   (1u << ZIPF_BITS)

struct postings { uint32_t *docs; uint8_t *impacts; uint32_t df; };

struct dict_entry { char word[8]; uint32_t term; };

struct index {
    uint32_t ndocs, nterms;
    struct postings *lists;     /* by term id */
    struct dict_entry *dict;    /* in word order */
};

struct cursor { const uint32_t *docs; const uint8_t *impacts; uint32_t pos, len; };
struct hit { uint32_t doc, score; };
struct topk { struct hit h[MAX_K]; int n, k; };   /* best first */
struct qheap_entry { uint32_t doc; struct cursor *c; };
enum or_mode { OR_LINEAR, OR_HEAP };
struct stats { uint64_t unknown_words, and_answered, or_linear, or_heap, candidates, postings; };

static void *xmalloc(size_t n)
{
    void *p = calloc(1, n ? n : 1);
    if (!p)
        perror("calloc"), exit(1);
    return p;
}

/* ------------------------------------------------------- the indexer */
/* log2(x) for x >= 1 to within 0.09 (the impacts are quantized anyway). */
static double log2_approx(double x)
{
    int e = 0;
    while (x >= 2.0)
        x /= 2.0, e++;
    return e + (x - 1.0);
}

/* Term t's word: two-letter syllables spelling t+1 in base 80, so every
 * term has its own word (up to 80^3 terms). */
static void make_word(uint32_t t, char *w)
{
    static const char cons[] = "bdfgklmnprstvzch", vow[] = "aeiou";
    int n = 0;
    for (uint32_t v = t + 1; v; v /= 80) {
        w[n++] = cons[v % 80 / 5];
        w[n++] = vow[v % 5];
    }
    w[n] = 0;
}

static int cmp_dict_entry(const void *a, const void *b)
{
    return strcmp(((const struct dict_entry *)a)->word, ((const struct dict_entry *)b)->word);
}

/* BM25 of one posting, quantized against the index-wide bound. */
static uint8_t bm25_impact(uint32_t tf, uint32_t dl, double avgdl, double idf, double bound)
{
    const double k1 = 1.2, b = 0.75;
    double s = idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl));
    uint32_t q = (uint32_t)(s * 255.0 / bound + 0.5);
    return (uint8_t)(q > 255 ? 255 : q ? q : 1);
}

/* Inverts DOCS (doc d is tokens[start[d]] .. tokens[start[d+1]-1]). */
static void index_build(struct index *ix, const uint32_t *tokens, const uint32_t *start)
{
    uint32_t V = ix->nterms, N = ix->ndocs;
    uint32_t *last = xmalloc(V * sizeof *last), *fill = xmalloc(V * sizeof *fill);
    uint16_t **tf = xmalloc(V * sizeof *tf);
    for (uint32_t t = 0; t < V; t++)
        last[t] = DOC_END;
    for (uint32_t d = 0; d < N; d++)            /* document frequencies */
        for (uint32_t i = start[d]; i < start[d + 1]; i++)
            if (last[tokens[i]] != d)
                last[tokens[i]] = d, ix->lists[tokens[i]].df++;
    for (uint32_t t = 0; t < V; t++) {
        ix->lists[t].docs = xmalloc(ix->lists[t].df * sizeof(uint32_t));
        ix->lists[t].impacts = xmalloc(ix->lists[t].df);
        tf[t] = xmalloc(ix->lists[t].df * sizeof **tf);
        last[t] = DOC_END;
    }
    for (uint32_t d = 0; d < N; d++)            /* postings and term frequencies */
        for (uint32_t i = start[d]; i < start[d + 1]; i++) {
            uint32_t t = tokens[i];
            if (last[t] != d)
                last[t] = d, ix->lists[t].docs[fill[t]++] = d;
            tf[t][fill[t] - 1]++;
        }
    double avgdl = (double)start[N] / N, bound = log2_approx(N + 1.0) * 2.2;
    for (uint32_t t = 0; t < V; t++) {
        struct postings *p = &ix->lists[t];
        double idf = log2_approx(1.0 + (N - p->df + 0.5) / (p->df + 0.5));
        for (uint32_t j = 0; j < p->df; j++) {
            uint32_t d = p->docs[j];
            p->impacts[j] = bm25_impact(tf[t][j], start[d + 1] - start[d], avgdl, idf, bound);
        }
        free(tf[t]);
    }
    ix->dict = xmalloc(V * sizeof *ix->dict);
    for (uint32_t t = 0; t < V; t++)
        make_word(t, ix->dict[t].word), ix->dict[t].term = t;
    qsort(ix->dict, V, sizeof *ix->dict, cmp_dict_entry);
    free(tf), free(fill), free(last);
}

/* ---------------------------------------------------- the query side */
static uint32_t dict_lookup(const struct index *ix, const char *word)
{
    struct dict_entry key = {.term = DOC_END};
    if (strlen(word) >= sizeof key.word)
        return DOC_END;
    strcpy(key.word, word);
    const struct dict_entry *e = bsearch(&key, ix->dict, ix->nterms, sizeof key, cmp_dict_entry);
    return e ? e->term : DOC_END;
}

/* Opens a cursor per distinct indexed word of TEXT; returns their number. */
static int parse_query(const struct index *ix, const char *text, struct cursor *cs, struct stats *st)
{
    char word[16];
    int n = 0, used, dup;
    for (; n < MAX_QTERMS && sscanf(text, "%15s%n", word, &used) == 1; text += used) {
        uint32_t t = dict_lookup(ix, word);
        if (t == DOC_END || ix->lists[t].df == 0) {     /* no document has it */
            st->unknown_words++;
            continue;
        }
        const struct postings *p = &ix->lists[t];
        dup = 0;
        for (int i = 0; i < n; i++)
            dup |= cs[i].docs == p->docs;
        if (!dup)
            cs[n++] = (struct cursor){p->docs, p->impacts, 0, p->df};
    }
    return n;
}

static uint32_t cursor_doc(const struct cursor *c)
{
    return c->pos < c->len ? c->docs[c->pos] : DOC_END;
}

static uint32_t cursor_next(struct cursor *c)
{
    c->pos++;
    return cursor_doc(c);
}

/* Moves C to its first document >= TARGET: gallops 1, 2, 4, ... postings
 * ahead of its position, then binary-searches the last stride. */
static uint32_t cursor_seek(struct cursor *c, uint32_t target)
{
    uint32_t lo = c->pos, step = 1, hi;
    if (lo >= c->len || c->docs[lo] >= target)
        return cursor_doc(c);
    while ((hi = lo + step) < c->len && c->docs[hi] < target)
        lo = hi, step *= 2;
    if (hi > c->len)
        hi = c->len;
    while (lo + 1 < hi) {       /* docs[lo] < target <= docs[hi] */
        uint32_t mid = lo + (hi - lo) / 2;
        if (c->docs[mid] < target)
            lo = mid;
        else
            hi = mid;
    }
    c->pos = hi;
    return cursor_doc(c);
}

/* Is A a better hit than B: a higher score, or the same score on an earlier document. */
static int hit_better(struct hit a, struct hit b)
{
    return a.score > b.score || (a.score == b.score && a.doc < b.doc);
}

/* Keeps the k best hits, best first: k is small, so a sorted array and an
 * insertion beat a heap; most offers lose to the worst kept hit at once. */
static void topk_offer(struct topk *tk, uint32_t doc, uint32_t score)
{
    struct hit h = {doc, score};
    if (tk->n == tk->k && !hit_better(h, tk->h[tk->n - 1]))
        return;
    int i = tk->n < tk->k ? tk->n++ : tk->n - 1;
    for (; i > 0 && hit_better(h, tk->h[i - 1]); i--)
        tk->h[i] = tk->h[i - 1];
    tk->h[i] = h;
}

/* Conjunction: the shortest list leads; every other cursor gallops to the
 * lead's candidate, and a miss moves the lead past the document it hit. */
static void eval_and(struct cursor *cs, int n, struct topk *tk, struct stats *st)
{
    for (int i = 1; i < n; i++)     /* insertion sort by length */
        for (int j = i; j > 0 && cs[j].len < cs[j - 1].len; j--) {
            struct cursor t = cs[j];
            cs[j] = cs[j - 1], cs[j - 1] = t;
        }
    uint32_t doc = cursor_doc(&cs[0]);
    while (doc != DOC_END) {
        uint32_t score = cs[0].impacts[cs[0].pos], d = doc;
        int i;
        for (i = 1; i < n && (d = cursor_seek(&cs[i], doc)) == doc; i++)
            score += cs[i].impacts[cs[i].pos];
        if (i == n) {
            topk_offer(tk, doc, score);
            st->candidates++;
            doc = cursor_next(&cs[0]);
        } else {
            doc = d == DOC_END ? DOC_END : cursor_seek(&cs[0], d);
        }
    }
}

/* Disjunction, a linear pass per candidate: the smallest current document
 * of all cursors, then the sum of the cursors on it. */
static void eval_or_linear(struct cursor *cs, int n, struct topk *tk, struct stats *st)
{
    for (;;) {
        uint32_t doc = DOC_END, score = 0;
        for (int i = 0; i < n; i++) {
            uint32_t d = cursor_doc(&cs[i]);
            if (d < doc)
                doc = d;
        }
        if (doc == DOC_END)
            break;
        for (int i = 0; i < n; i++)
            if (cursor_doc(&cs[i]) == doc) {
                score += cs[i].impacts[cs[i].pos];
                cursor_next(&cs[i]);
                st->postings++;
            }
        topk_offer(tk, doc, score);
        st->candidates++;
    }
}

static void qheap_sift_down(struct qheap_entry *h, int n, int i)
{
    struct qheap_entry e = h[i];
    for (;;) {
        int c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && h[c + 1].doc < h[c].doc)
            c++;
        if (h[c].doc >= e.doc)
            break;
        h[i] = h[c], i = c;
    }
    h[i] = e;
}

/* Disjunction, a heap of the cursors keyed on their current document: the
 * top is the next candidate; each cursor on it advances and sifts down. */
static void eval_or_heap(struct cursor *cs, int n, struct topk *tk, struct stats *st)
{
    struct qheap_entry h[MAX_QTERMS];
    int hn = 0;
    for (int i = 0; i < n; i++)
        h[hn++] = (struct qheap_entry){cursor_doc(&cs[i]), &cs[i]};     /* no list is empty */
    for (int i = hn / 2 - 1; i >= 0; i--)
        qheap_sift_down(h, hn, i);
    while (hn > 0) {
        uint32_t doc = h[0].doc, score = 0;
        do {
            struct cursor *c = h[0].c;
            score += c->impacts[c->pos];
            st->postings++;
            if ((h[0].doc = cursor_next(c)) == DOC_END)
                h[0] = h[--hn];
            qheap_sift_down(h, hn, 0);
        } while (hn > 0 && h[0].doc == doc);
        topk_offer(tk, doc, score);
        st->candidates++;
    }
}

/* Picks how the disjunction finds each next candidate, by the cursor reads
 * either way costs over the query: the linear pass reads all n cursors per
 * candidate; the heap sifts each posting it consumes down log2(n) levels,
 * HEAP_READS_PER_LEVEL reads a level. A few words favour the pass (no
 * sifting, the cursors share a cache line or two), many favour the heap. */
static enum or_mode plan_disjunction(const struct cursor *cs, int n, uint32_t ndocs)
{
    uint64_t postings = 0, longest = 0;
    uint32_t levels = 0;
    for (int i = 0; i < n; i++) {
        postings += cs[i].len;
        if (cs[i].len > longest)
            longest = cs[i].len;
    }
    while ((1u << levels) < (uint32_t)n)
        levels++;
#ifdef VPROF_CASE_FIX
    uint64_t candidates = postings < ndocs ? postings : ndocs;
#else
    uint64_t candidates = longest < ndocs ? longest : ndocs; /* FIX: the union may hold all the lists' postings, not just the longest list's */
#endif
    uint64_t linear = candidates * (uint64_t)n;
    uint64_t heap = postings * HEAP_READS_PER_LEVEL * levels;
    return heap < linear ? OR_HEAP : OR_LINEAR;
}

/* Answers one query line: its best tk->k hits, best first, in TK. */
static void run_query(const struct index *ix, const char *text, struct topk *tk, struct stats *st)
{
    struct cursor cs[MAX_QTERMS];
    int n = parse_query(ix, text, cs, st);
    tk->n = 0;
    if (n == 0)
        return;
    eval_and(cs, n, tk, st);
    if (tk->n == tk->k) {
        st->and_answered++;
    } else {                    /* too few documents have every word: rank by any word */
        tk->n = 0;
        for (int i = 0; i < n; i++)
            cs[i].pos = 0;
        if (plan_disjunction(cs, n, ix->ndocs) == OR_HEAP)
            eval_or_heap(cs, n, tk, st), st->or_heap++;
        else
            eval_or_linear(cs, n, tk, st), st->or_linear++;
    }
}

/* ------------------------------------------ corpus and query log */
/* Zipf(1) over the vocabulary by table lookup: term t owns a share of the
 * ZIPF_SLOTS slots proportional to 1/(t+1) (the far tail may own none). */
static uint32_t *zipf_table(uint32_t V)
{
    double total = 0, acc = 0;
    for (uint32_t t = 0; t < V; t++)
        total += 1.0 / (t + 1);
    uint32_t *slots = xmalloc(ZIPF_SLOTS * sizeof *slots), s = 0;
    for (uint32_t t = 0; t < V; t++)
        for (acc += 1.0 / (t + 1); s < ZIPF_SLOTS && s < (uint32_t)(acc / total * ZIPF_SLOTS); s++)
            slots[s] = t;
    while (s < ZIPF_SLOTS)
        slots[s++] = V - 1;
    return slots;
}

/* The corpus as the analyzer hands it over: NDOCS documents of DOC_LEN/2 to
 * 3*DOC_LEN/2 terms; doc d is tokens[start[d]] .. tokens[start[d+1]-1]. */
static uint32_t *make_corpus(uint32_t ndocs, uint32_t doc_len, uint32_t vocab, rng_t *r, uint32_t *start)
{
    uint32_t *zipf = zipf_table(vocab);
    for (uint32_t d = 0; d < ndocs; d++)
        start[d + 1] = start[d] + doc_len / 2 + (uint32_t)rng_below(r, doc_len + 1);
    uint32_t *tokens = xmalloc(start[ndocs] * sizeof *tokens);
    for (uint32_t i = 0; i < start[ndocs]; i++)
        tokens[i] = zipf[rng_next(r) >> (64 - ZIPF_BITS)];
    free(zipf);
    return tokens;
}

/* A query line of NWORDS words of the mid-frequency band; about one word in
 * 40 is misspelled (not in the dictionary). */
static void make_query(const struct index *ix, int nwords, rng_t *r, char *out)
{
    uint32_t hi = ix->nterms < QUERY_RANK_HI ? ix->nterms : QUERY_RANK_HI;
    for (int i = 0; i < nwords; i++) {
        char word[8];
        make_word(QUERY_RANK_LO + (uint32_t)rng_below(r, hi - QUERY_RANK_LO), word);
        out += sprintf(out, i ? " %s" : "%s", word);
        if (rng_below(r, 40) == 0)
            *out++ = 'x', *out = 0;
    }
}

int main(int argc, char **argv)
{
    opt_t opts[] = {
        {"docs", "documents in the corpus", 24000, 1, 10000000, 0},
        {"doc-len", "average words per document", 80, 1, 10000, 0},
        {"vocab", "distinct terms", 30000, QUERY_RANK_HI, 512000, 0},
        {"queries", "queries in the log", 2000, 1, 10000000, 0},
        {"terms", "words per query", 3, 1, MAX_QTERMS, 0},
        {"k", "hits per query", 10, 1, MAX_K, 0},
        {"seed", "workload seed", 4242, 0, 1000000000, 0},
    };
    opts_parse(argc, argv, opts, NOPTS(opts));
    uint32_t ndocs = (uint32_t)opt_get(opts, NOPTS(opts), "docs");
    uint32_t vocab = (uint32_t)opt_get(opts, NOPTS(opts), "vocab");
    long nqueries = opt_get(opts, NOPTS(opts), "queries");
    int nterms = (int)opt_get(opts, NOPTS(opts), "terms");
    rng_t r;
    rng_seed(&r, (uint64_t)opt_get(opts, NOPTS(opts), "seed"));
    uint32_t *start = xmalloc((ndocs + 1) * sizeof *start);
    uint32_t *tokens = make_corpus(ndocs, (uint32_t)opt_get(opts, NOPTS(opts), "doc-len"), vocab, &r, start);
    struct index ix = {.ndocs = ndocs, .nterms = vocab, .lists = xmalloc(vocab * sizeof *ix.lists)};
    index_build(&ix, tokens, start);
    free(tokens), free(start);
    struct stats st = {0};
    struct topk tk = {.k = (int)opt_get(opts, NOPTS(opts), "k")};
    char *line = xmalloc((size_t)MAX_QTERMS * 10 + 1);
    uint64_t digest = 0xcbf29ce484222325ull, total_hits = 0, score_sum = 0;
    for (long q = 0; q < nqueries; q++) {
        make_query(&ix, nterms, &r, line);
        run_query(&ix, line, &tk, &st);
        for (int i = 0; i < tk.n; i++) {
            digest = (digest ^ ((uint64_t)tk.h[i].doc << 20 | tk.h[i].score)) * 0x100000001b3ull;
            score_sum += tk.h[i].score;
        }
        total_hits += (uint64_t)tk.n;
        CASE_PROGRESS("query");
    }
    printf("%ld queries over %u documents: %" PRIu64 " hits, score sum %" PRIu64 ", %" PRIu64
           " candidates, digest %016" PRIx64 "\n", nqueries, ndocs, total_hits, score_sum, st.candidates, digest);
    fprintf(stderr, "and_answered=%" PRIu64 " or_linear=%" PRIu64 " or_heap=%" PRIu64 " postings=%" PRIu64
            " unknown_words=%" PRIu64 "\n", st.and_answered, st.or_linear, st.or_heap, st.postings, st.unknown_words);
    return 0;
}
