/* Written for the vprof bug corpus by a helper that had not seen the
 * profiler (2026-11-29); not modelled on a real issue. The fix is the
 * VPROF_CASE_FIX variant; the line marked FIX is the bug.
 *
 * lgrep - a grep for structured service logs. A search compiles its pattern
 * (literals, '.', bracket classes, '*', '+', '?', '^', '$') into a lazily
 * built DFA and extracts the longest literal every match must contain: the
 * prefilter. Each file is read whole into a buffer and scanned for the
 * literal with Boyer-Moore-Horspool; only the line around an occurrence goes
 * to the DFA, so the lines without the literal, most of a log, cost a few
 * skips. Matching lines are counted per file and hashed with their number.
 *
 * The saved search finds slow database spans in request logs
 * ("db:<query>=NNNNms", a second or more). A request line lists its 8
 * spans; --db-pct is the share of them that are database queries: a few in
 * a service that batches its queries (normal: 8%), all of them in one with
 * an N+1 query loop (buggy: 100%).
 *
 * The bug: scan_buffer() skips the rest of a line once the DFA accepted it,
 * but not once the DFA rejected it, so the literal search resumes inside the
 * rejected line and the DFA runs over that whole line again for each other
 * occurrence of the literal in it: harmless while a line holds the literal
 * once, 8 runs per request line when every span is a database query.
 */
#include "../common/corpus.h"

#define MAX_NODES  63     /* plus the accepting position: a 64-bit set */
#define MAX_LIT    32

/* ------------------------------------------------------------ the pattern */
enum { N_CHAR, N_ANY, N_CLASS };
enum { Q_ONE, Q_STAR, Q_PLUS, Q_QUEST };

struct re_node { uint8_t kind, quant; unsigned char ch; uint8_t set[32]; };
struct regex { struct re_node node[MAX_NODES]; int n, bol, eol; };

/* P is just after '['; returns the text after ']' or NULL if unterminated. */
static const char *parse_class(const char *p, struct re_node *nd)
{
    int negate = *p == '^', first = 1;
    p += negate;
    for (; *p && (*p != ']' || first); first = 0) {
        unsigned lo = (unsigned char)*p++, hi;
        if (lo == '\\' && *p)
            lo = (unsigned char)*p++;
        hi = lo;
        if (p[0] == '-' && p[1] && p[1] != ']')
            hi = (unsigned char)p[1], p += 2;
        for (unsigned c = lo; c <= hi; c++)
            nd->set[c >> 3] |= (uint8_t)(1u << (c & 7));
    }
    if (*p != ']')
        return NULL;
    if (negate)
        for (int i = 0; i < 32; i++)
            nd->set[i] = (uint8_t)~nd->set[i];
    nd->set['\n' >> 3] &= (uint8_t)~(1u << ('\n' & 7));   /* never across lines */
    return p + 1;
}

static int re_compile(const char *pat, struct regex *re)
{
    memset(re, 0, sizeof *re);
    const char *p = pat;
    if (*p == '^')
        re->bol = 1, p++;
    while (*p) {
        if (p[0] == '$' && p[1] == '\0') {
            re->eol = 1;
            break;
        }
        if (re->n == MAX_NODES || *p == '*' || *p == '+' || *p == '?')
            return -1;          /* too long, or a quantifier with nothing to repeat */
        struct re_node *nd = &re->node[re->n++];
        if (*p == '.') {
            nd->kind = N_ANY, p++;
        } else if (*p == '[') {
            nd->kind = N_CLASS;
            if (!(p = parse_class(p + 1, nd)))
                return -1;
        } else {
            if (*p == '\\' && !*++p)
                return -1;
            nd->kind = N_CHAR, nd->ch = (unsigned char)*p++;
        }
        nd->quant = *p == '*' ? Q_STAR : *p == '+' ? Q_PLUS : *p == '?' ? Q_QUEST : Q_ONE;
        p += nd->quant != Q_ONE;
    }
    return 0;
}

static int node_matches(const struct re_node *nd, unsigned char c)
{
    if (nd->kind != N_CLASS)
        return nd->kind == N_CHAR ? c == nd->ch : c != '\n';
    return nd->set[c >> 3] >> (c & 7) & 1;
}

/* ----------------------------------------------- the matcher: a lazy DFA */
/* An NFA state is a position in the node list (bit I: node I is next; bit N:
 * the whole pattern matched); a DFA state is a set of them. Transitions are
 * built the first time a state meets a byte, as in grep's dfa.c, and the
 * cache is flushed when it fills. */
#define MAX_DSTATES 128

struct dfa {
    const struct regex *re;
    int n, start;
    uint64_t set[MAX_DSTATES];
    uint8_t accept[MAX_DSTATES];
    int16_t next[MAX_DSTATES][256];     /* -1: not built yet */
    uint64_t built;                     /* transitions, over the flushes */
};

/* Adds the positions reachable without reading: past '*' and '?' nodes. */
static uint64_t nfa_closure(const struct regex *re, uint64_t set)
{
    for (int i = 0; i < re->n; i++)
        if (set >> i & 1 && (re->node[i].quant == Q_STAR || re->node[i].quant == Q_QUEST))
            set |= 1ull << (i + 1);
    return set;
}

static uint64_t nfa_step(const struct regex *re, uint64_t set, unsigned char c)
{
    uint64_t out = 0;
    for (int i = 0; i < re->n; i++) {
        const struct re_node *nd = &re->node[i];
        if (!(set >> i & 1) || !node_matches(nd, c))
            continue;
        out |= 1ull << (i + 1);
        if (nd->quant == Q_STAR || nd->quant == Q_PLUS)
            out |= 1ull << i;
    }
    if (!re->bol)
        out |= 1;               /* a match may start at any byte */
    return nfa_closure(re, out);
}

static int dfa_state(struct dfa *d, uint64_t set)
{
    for (int s = 0; s < d->n; s++)
        if (d->set[s] == set)
            return s;
    if (d->n == MAX_DSTATES)
        return -1;
    int s = d->n++;
    d->set[s] = set;
    d->accept[s] = (uint8_t)(set >> d->re->n & 1);
    memset(d->next[s], 0xff, sizeof d->next[s]);
    return s;
}

static void dfa_init(struct dfa *d, const struct regex *re)
{
    d->re = re;
    d->n = 0;
    d->start = dfa_state(d, nfa_closure(re, 1));
}

/* The slow path: the state after S reads C, built now. Returns the new state
 * and, when the cache had to be flushed, moves *S to its rebuilt copy. */
static int dfa_build(struct dfa *d, int *s, unsigned char c)
{
    uint64_t from = d->set[*s], to = nfa_step(d->re, from, c);
    int t = dfa_state(d, to);
    if (t < 0) {
        dfa_init(d, d->re);
        *s = dfa_state(d, from);
        t = dfa_state(d, to);
    }
    d->built++;
    d->next[*s][c] = (int16_t)t;
    return t;
}

/* Does the pattern match in the line? One table step per byte; without '$'
 * it stops at the first accepting state. */
static int dfa_exec(struct dfa *d, const char *line, size_t len)
{
    int s = d->start, eol = d->re->eol;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)line[i];
        int t = d->next[s][c];
        s = t >= 0 ? t : dfa_build(d, &s, c);
        if (d->accept[s] && !eol)
            return 1;
    }
    return d->accept[s];
}

/* ------------------------------------------------------- the prefilter */
struct prefilter { unsigned char lit[MAX_LIT]; size_t len, shift[256]; };

/* The longest run of plain characters every match contains: characters that
 * occur exactly once, or a '+' one (its first copy), which ends the run. */
static size_t prefilter_init(struct prefilter *pf, const struct regex *re)
{
    int best_at = 0, best = 0, at = 0, run = 0;
    for (int i = 0; i <= re->n; i++) {
        const struct re_node *nd = &re->node[i];
        int required = i < re->n && nd->kind == N_CHAR
                       && (nd->quant == Q_ONE || nd->quant == Q_PLUS);
        if (required) {
            if (run++ == 0)
                at = i;
            if (nd->quant == Q_ONE && i + 1 < re->n)
                continue;
        }
        if (run > best && run <= MAX_LIT)
            best = run, best_at = at;
        run = 0;
    }
    pf->len = (size_t)best;
    for (int k = 0; k < best; k++)
        pf->lit[k] = re->node[best_at + k].ch;
    for (int c = 0; c < 256; c++)
        pf->shift[c] = pf->len;
    for (size_t k = 0; k + 1 < pf->len; k++)
        pf->shift[pf->lit[k]] = pf->len - 1 - k;
    return pf->len;
}

/* Boyer-Moore-Horspool: the next occurrence of the literal in [s, end). */
static const char *lit_find(const struct prefilter *pf, const char *s, const char *end)
{
    size_t m = pf->len;
    const unsigned char *p = (const unsigned char *)s, *stop = (const unsigned char *)end;
    while ((size_t)(stop - p) >= m) {
        unsigned char last = p[m - 1];
        if (last == pf->lit[m - 1] && memcmp(p, pf->lit, m - 1) == 0)
            return (const char *)p;
        p += pf->shift[last];
    }
    return NULL;
}

/* -------------------------------------------------------------- lines */
static const char *line_start(const char *buf, const char *at)
{
    while (at > buf && at[-1] != '\n')
        at--;
    return at;
}

static const char *line_end(const char *at, const char *end)
{
    while (at < end && *at != '\n')
        at++;
    return at;
}

static uint64_t count_newlines(const char *from, const char *to)
{
    uint64_t n = 0;
    for (; from < to; from++)
        n += *from == '\n';
    return n;
}

/* ------------------------------------------------------------- search */
struct searcher {
    struct regex re;
    struct dfa dfa;
    struct prefilter pf;
    uint64_t files, bytes, files_matched, lines_matched, verifies, digest;
};

/* Line numbers are counted lazily, from the last reported line on. */
struct file_scan { int file_no; const char *counted; uint64_t line_no, matches; };

static void report_match(struct searcher *sr, struct file_scan *fs, const char *ls, const char *le)
{
    fs->line_no += count_newlines(fs->counted, ls);
    fs->counted = ls;
    fs->matches++;
    uint64_t h = 0xcbf29ce484222325ull ^ ((uint64_t)fs->file_no << 32 | fs->line_no);
    for (const char *c = ls; c < le; c++)
        h = (h ^ (unsigned char)*c) * 0x100000001b3ull;
    sr->digest = (sr->digest ^ h) * 0x9e3779b97f4a7c15ull;
    sr->lines_matched++;
}

/* Jumps from one occurrence of the literal to the next; the line around an
 * occurrence is a candidate the DFA decides on. */
static void scan_buffer(struct searcher *sr, struct file_scan *fs, const char *buf, size_t n)
{
    const char *end = buf + n, *pos = buf, *hit;
    while ((hit = lit_find(&sr->pf, pos, end)) != NULL) {
        const char *ls = line_start(buf, hit), *le = line_end(hit, end);
        pos = hit + sr->pf.len;                         /* the next occurrence */
        sr->verifies++;
        if (dfa_exec(&sr->dfa, ls, (size_t)(le - ls))) {
            report_match(sr, fs, ls, le);
            pos = le;                                   /* a line is reported once */
        }
#ifdef VPROF_CASE_FIX
        else
            pos = le;                                   /* and rejected once */
#else
        /* FIX: skip the rest of a rejected line too (pos = le), as for a reported one */
#endif
    }
}

static void search_file(struct searcher *sr, int file_no, const char *buf, size_t n)
{
    sr->files++, sr->bytes += n;
    struct file_scan fs = {file_no, buf, 1, 0};
    scan_buffer(sr, &fs, buf, n);
    if (fs.matches) {
        sr->files_matched++;
        sr->digest = (sr->digest ^ ((uint64_t)file_no << 20 | fs.matches)) * 0x100000001b3ull;
    }
}

/* ------------------------------------------- the log files being searched */
struct gen_params { int lines, spans, db_pct, slow_permille; uint64_t seed; };

static const char *const kDbQueries[] = {"select_order", "select_order_lines", "update_stock",
                                         "insert_audit", "select_customer", "select_price_rule"};
static const char *const kOtherSpans[] = {"cache:get_session", "cache:get_cart", "http:pricing",
                                          "http:tax_quote", "http:fraud_check", "queue:publish"};
static const char *const kRoutes[] = {"/api/v1/orders/", "/api/v1/carts/", "/api/v1/customers/"};

static void put_str(char **o, const char *s)
{
    while (*s)
        *(*o)++ = *s++;
}

/* Decimal, zero-padded to WIDTH digits. */
static void put_uint(char **o, uint64_t v, int width)
{
    char tmp[24];
    int n = 0;
    do
        tmp[n++] = (char)('0' + v % 10), v /= 10;
    while (v || n < width);
    while (n)
        *(*o)++ = tmp[--n];
}

static void put_timestamp(char **o, uint32_t secs, uint32_t ms)
{
    put_str(o, "ts=2026-11-29T"), put_uint(o, secs / 3600 % 24, 2), *(*o)++ = ':';
    put_uint(o, secs / 60 % 60, 2), *(*o)++ = ':', put_uint(o, secs % 60, 2), *(*o)++ = '.';
    put_uint(o, ms, 3), *(*o)++ = 'Z';
}

/* "db:<query>=<ms>ms" or another kind of span; few queries take a second. */
static uint32_t put_span(char **o, rng_t *r, const struct gen_params *g)
{
    int db = (int)rng_below(r, 100) < g->db_pct;
    int slow = (int)rng_below(r, 1000) < (db ? g->slow_permille : 20);
    uint32_t ms = slow ? 1000 + (uint32_t)rng_below(r, 4000) : 1 + (uint32_t)rng_below(r, 240);
    put_str(o, db ? "db:" : ""), put_str(o, (db ? kDbQueries : kOtherSpans)[rng_below(r, 6)]);
    *(*o)++ = '=', put_uint(o, ms, 1), put_str(o, "ms");
    return ms;
}

static void put_request_line(char **o, rng_t *r, uint32_t secs, const struct gen_params *g)
{
    uint32_t total = 0;
    put_timestamp(o, secs, (uint32_t)rng_below(r, 1000));
    put_str(o, " level=info svc=orders req="), put_uint(o, rng_next(r) >> 24, 12);
    put_str(o, " route="), put_str(o, kRoutes[rng_below(r, 3)]);
    put_uint(o, rng_below(r, 100000), 1);
    put_str(o, rng_below(r, 50) ? " status=200 spans=" : " status=503 spans=");
    for (int k = 0; k < g->spans; k++) {
        if (k)
            *(*o)++ = ',';
        total += put_span(o, r, g);
    }
    put_str(o, " dur="), put_uint(o, total + 2, 1), put_str(o, "ms\n");
}

/* The lines a search for database spans skips, most of every log: pool
 * stats, health checks, consumer lag. */
static void put_noise_line(char **o, rng_t *r, uint32_t secs)
{
    static const char *const kinds[][2] = {
        {" level=debug svc=orders msg=\"pool stats\" pool=orders-pg idle=", " busy="},
        {" level=info svc=gateway msg=\"health check\" target=orders-", " latency_us="},
        {" level=info svc=orders msg=\"consumer lag\" topic=order-events partition=", " lag="}};
    const char *const *k = kinds[rng_below(r, 3)];
    put_timestamp(o, secs, (uint32_t)rng_below(r, 1000));
    put_str(o, k[0]), put_uint(o, rng_below(r, 16), 1);
    put_str(o, k[1]), put_uint(o, rng_below(r, 5000), 1);
    *(*o)++ = '\n';
}

/* One rotated log file: an hour of lines, a quarter of them requests. */
static size_t gen_log_file(char *buf, int file_no, const struct gen_params *g)
{
    rng_t r;
    char *o = buf;
    rng_seed(&r, g->seed * 1000003u + (uint64_t)file_no);
    for (int i = 0; i < g->lines; i++) {
        uint32_t secs = (uint32_t)file_no * 3600 + (uint32_t)i * 3600 / (uint32_t)g->lines;
        if (rng_below(&r, 4) == 0)
            put_request_line(&o, &r, secs, g);
        else
            put_noise_line(&o, &r, secs);
    }
    return (size_t)(o - buf);
}

int main(int argc, char **argv)
{
    opt_t opts[] = {
        {"files", "log files searched", 480, 1, 100000, 0},
        {"lines", "lines per log file", 600, 1, 100000, 0},
        {"spans", "spans listed per request line", 8, 1, 200, 0},
        {"db-pct", "share of spans that are database queries (%)", 8, 0, 100, 0},
        {"slow-permille", "database queries of a second or more (per mille)", 3, 0, 1000, 0},
        {"seed", "workload seed", 4242, 0, 1000000000, 0},
    };
    opts_parse(argc, argv, opts, NOPTS(opts));
    struct gen_params g = {(int)opts[1].value, (int)opts[2].value, (int)opts[3].value,
                           (int)opts[4].value, (uint64_t)opts[5].value};
    int files = (int)opt_get(opts, NOPTS(opts), "files");
    static const char kSlowDbSpan[] = "db:[a-z_]+=[0-9][0-9][0-9][0-9]+ms";
    struct searcher *sr = calloc(1, sizeof *sr);
    /* the longest line: its fixed fields, then spans of at most 40 bytes */
    char *buf = malloc((size_t)g.lines * (160 + 40 * (size_t)g.spans) + 4096);
    if (!sr || !buf)
        return perror("malloc"), 1;
    if (re_compile(kSlowDbSpan, &sr->re) != 0 || !prefilter_init(&sr->pf, &sr->re)) {
        fprintf(stderr, "bad pattern, or one without a literal to prefilter on: '%s'\n", kSlowDbSpan);
        return 2;
    }
    dfa_init(&sr->dfa, &sr->re);
    for (int f = 0; f < files; f++) {
        size_t n = gen_log_file(buf, f, &g);
        search_file(sr, f, buf, n);
        CASE_PROGRESS("file");
    }
    printf("%llu files, %llu with matches, %llu matching lines, digest %016llx\n",
           (unsigned long long)sr->files, (unsigned long long)sr->files_matched,
           (unsigned long long)sr->lines_matched, (unsigned long long)sr->digest);
    fprintf(stderr, "literal=\"%.*s\" bytes=%llu verifies=%llu dfa_transitions=%llu\n",
            (int)sr->pf.len, (const char *)sr->pf.lit, (unsigned long long)sr->bytes,
            (unsigned long long)sr->verifies, (unsigned long long)sr->dfa.built);
    free(buf), free(sr);
    return 0;
}
