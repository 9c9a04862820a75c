/* A planner's choice between two ways of doing one job (t_alternatives.sh):
 * a query answers "which documents hold any of these words" by a linear
 * pass (every list's cursor checked for every candidate document) or by a
 * heap of cursors. plan_uses_heap() should compare the linear pass's cost,
 * candidates x lists, with the heap's; it takes the candidates as the
 * longest list's length instead of the union's, so with many short lists
 * it keeps the linear pass, whose work per call then grows with lists x
 * documents. The normal run's queries have 3 lists, the buggy run's 96.
 * query_ok() guards two calls made on the same answer (count_terms, whose
 * work per call grows with the lists too, and the planner), which are no
 * choice: the caller makes both, so query_ok is not placed for them.
 *
 * Usage: plan_choice LISTS QUERIES */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))
#define NDOCS 4096
#define MAXL 128

struct list { const uint32_t *doc; uint32_t len, pos; };

static uint32_t g_postings[MAXL][NDOCS];
static volatile uint64_t sink;
static uint64_t g_terms;

NOINLINE uint32_t cursor_doc(const struct list *l)
{
    return l->pos < l->len ? l->doc[l->pos] : UINT32_MAX;
}

/* Every candidate document is checked against every list's cursor. */
NOINLINE uint64_t merge_linear(struct list *ls, int n)
{
    uint64_t hits = 0;
    for (uint32_t d = 0; d < NDOCS; d++)
        for (int i = 0; i < n; i++)
            if (cursor_doc(&ls[i]) == d) ls[i].pos++, hits += d;
    return hits;
}

static void sift(struct list **h, int n, int i)
{
    for (;;) {
        int c = 2 * i + 1;
        if (c >= n) return;
        if (c + 1 < n && cursor_doc(h[c + 1]) < cursor_doc(h[c])) c++;
        if (cursor_doc(h[i]) <= cursor_doc(h[c])) return;
        struct list *t = h[i];
        h[i] = h[c], h[c] = t, i = c;
    }
}

NOINLINE uint64_t merge_heap(struct list *ls, int n)
{
    struct list *h[MAXL];
    uint64_t hits = 0;
    for (int i = 0; i < n; i++) h[i] = &ls[i];
    for (int i = n / 2; i >= 0; i--) sift(h, n, i);
    while (cursor_doc(h[0]) != UINT32_MAX) {
        hits += cursor_doc(h[0]);
        h[0]->pos++;
        sift(h, n, 0);
    }
    return hits;
}

/* Whether the heap is cheaper: the linear pass checks every list for every
 * candidate document, the heap pays a sift per posting. */
NOINLINE int plan_uses_heap(const struct list *ls, int n)
{
    uint64_t postings = 0, longest = 0;
    int levels = 0;
    for (int i = 0; i < n; i++) {
        postings += ls[i].len;
        if (ls[i].len > longest) longest = ls[i].len;
    }
    while ((1 << levels) < n) levels++;
    uint64_t candidates = longest;  /* the bug: the union holds up to `postings` */
    return postings * 4 * (uint64_t)levels < candidates * (uint64_t)n;
}

NOINLINE int query_ok(int n)
{
    return n > 0 && n <= MAXL;
}

NOINLINE int term_present(const struct list *l)
{
    return l->len > 0;
}

NOINLINE int count_terms(const struct list *ls, int n)
{
    int k = 0;
    for (int i = 0; i < n; i++) k += term_present(&ls[i]);
    return k;
}

/* The rest of a query's work (ranking, snippets): the same in both runs. */
NOINLINE uint64_t rank_hits(uint64_t h)
{
    for (int i = 0; i < 6000; i++) h = (h ^ (h >> 29)) * 0xbf58476d1ce4e5b9ULL + (uint64_t)i;
    return h;
}

NOINLINE uint64_t run_query(struct list *ls, int n)
{
    if (!query_ok(n)) return 0;
    g_terms += (uint64_t)count_terms(ls, n);    /* query statistics */
    uint64_t h = 0;
    for (int i = 0; i < n; i++) ls[i].pos = 0;
    if (plan_uses_heap(ls, n))
        h += merge_heap(ls, n);
    else
        h += merge_linear(ls, n);
    return rank_hits(h);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s LISTS QUERIES\n", argv[0]);
        return 2;
    }
    int n = atoi(argv[1]), queries = atoi(argv[2]);
    if (n < 1 || n > MAXL) return 2;
    struct list ls[MAXL];
    uint64_t r = 7;
    for (int i = 0; i < n; i++) {            /* short lists: 24 postings each */
        uint32_t d = 0;
        for (int k = 0; k < 24; k++) {
            r = r * 6364136223846793005ULL + 1442695040888963407ULL;
            d += 1 + (uint32_t)(r >> 33) % (NDOCS / 24);
            g_postings[i][k] = d < NDOCS ? d : NDOCS - 1;
        }
        ls[i] = (struct list){g_postings[i], 24, 0};
    }
    uint64_t total = 0;
    for (int q = 0; q < queries; q++) total += run_query(ls, n);
    sink = total;
    printf("%llu %llu\n", (unsigned long long)total, (unsigned long long)g_terms);
    return 0;
}
