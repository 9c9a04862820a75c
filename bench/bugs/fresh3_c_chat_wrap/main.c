/* Written for the vprof bug corpus by a helper that had not seen the
 * profiler (2026-11-28); not modelled on a real issue. The fix is the
 * VPROF_CASE_FIX variant; the line marked FIX is the bug.
 *
 * bubblewrap - the message-list renderer of a chat client. A channel's
 * history is laid out in frames of 32 messages (one scroll step): each
 * message's text is split into words, wrapped greedily into the bubble
 * width of a proportional font (advance widths and kerning pairs, in 1/64
 * pixel), and its glyphs are placed into the frame's display list, which is
 * folded into a digest (the "pixels").
 *
 * The renderer keeps a frame tick (g_frame), a clock refreshed once a frame
 * (g_now_ns, for the frame budget) and statistics (g_stats: messages, words,
 * lines, glyphs measured and placed, kerning look-ups, bytes) that nearly
 * every function reads or bumps, as UI toolkits do for their own telemetry:
 * they differ between any two runs.
 *
 * The bug: wrap_message() asks for the pen position at the end of every
 * word with pen_x_at(), which measures the text from the start of the
 * message, so wrapping a message of W words measures about W*W/2 words.
 * Chat messages of a few words (normal) do not notice; a channel where
 * people paste whole paragraphs (buggy: the same number of words in
 * messages almost five times longer) spends its time in measure_span(),
 * glyph_advance() and kern_pair(), called from the wrapping loop.
 */
#include "../common/corpus.h"
#include <time.h>

#define FONT_PX        14
#define MAX_MSG_WORDS  2048
#define MAX_MSG_LINES  2048
#define MAX_MSG_BYTES  (MAX_MSG_WORDS * 16)
#define FRAME_MESSAGES 32
#define GLYPH_SLOTS    512u
#define MAX_KERN       512

struct word { uint32_t start, end; };

struct message {
    uint32_t author, ts;           /* author index, seconds into the day */
    uint32_t len, nwords;
    char text[MAX_MSG_BYTES];
    struct word w[MAX_MSG_WORDS];
};

/* A glyph cache entry: key is face << 24 | px << 16 | code point. */
struct glyph { uint32_t key; int32_t adv; uint32_t last_frame, frames_used; };
struct kern_ent { uint16_t pair; int16_t adj; };

/* ------------------------------------------------- renderer-wide state */
static uint64_t g_now_ns, g_start_ns, g_frame_start_ns;
static uint64_t g_frame_budget_ns = 16000000ull;
static uint32_t g_frame;
static struct {
    uint64_t messages, words, lines, glyphs_measured, glyphs_placed, glyph_misses, kern_lookups,
        kern_hits, bytes, late_frames, late_messages, overlong_words;
} g_stats;

static uint32_t g_face = 1;                  /* regular; 2 is bold */
static struct glyph g_glyphs[GLYPH_SLOTS];   /* open addressing on the key */
static struct kern_ent g_kern[MAX_KERN];     /* sorted by pair (a 'kern' table) */
static uint32_t g_nkern;
static uint64_t g_digest = 1469598103934665603ull;

static uint64_t clock_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* --------------------------------------------------------------- font */
/* Helvetica-like widths in 1/1000 em for ' ' .. '~' (96 entries). */
static const uint16_t kWidths[96] = {
    278, 278, 355, 556, 556, 889, 667, 191, 333, 333, 389, 584, 278, 333, 278, 278,
    556, 556, 556, 556, 556, 556, 556, 556, 556, 556, 278, 278, 584, 584, 584, 556,
    1015, 667, 667, 722, 722, 667, 611, 778, 722, 278, 500, 667, 556, 833, 722, 778,
    667, 778, 722, 667, 611, 722, 667, 944, 667, 667, 611, 278, 278, 278, 469, 556,
    333, 556, 556, 500, 556, 556, 278, 556, 556, 222, 222, 500, 222, 833, 556, 556,
    556, 556, 333, 500, 278, 556, 500, 722, 500, 500, 500, 334, 260, 334, 584, 278,
};

static void kern_add(unsigned char a, unsigned char b, int adj)
{
    if (g_nkern < MAX_KERN) {
        g_kern[g_nkern].pair = (uint16_t)(a << 8 | b);
        g_kern[g_nkern++].adj = (int16_t)adj;
    }
}

static int kern_cmp(const void *x, const void *y)
{
    return (int)((const struct kern_ent *)x)->pair - (int)((const struct kern_ent *)y)->pair;
}

static void font_load(void)
{
    static const char *const left = "AFLPTVWYfkrvwy", *const right = "acdeogqsuy.,";
    for (const char *a = left; *a; a++)
        for (const char *b = right; *b; b++)
            if ((*a * 7 + *b * 3) % 4 != 0)
                kern_add((unsigned char)*a, (unsigned char)*b, -((*a + *b) % 5 + 1) * 9);
    static const char *const pairs[] = {"av", "va", "ov", "vo", "ty", "yt", "rt", "ff", "fi",
                                        "Te", "To", "Wa", "LT", "AV", "AW", "Yo", "r-", "y-"};
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++)
        kern_add((unsigned char)pairs[i][0], (unsigned char)pairs[i][1], -14 - (int)i);
    qsort(g_kern, g_nkern, sizeof g_kern[0], kern_cmp);
}

/* The advance of one glyph of the current face, from the glyph cache
 * (loaded from the font's metrics on a miss); the cache remembers which
 * frames use each glyph, for eviction. */
static int32_t glyph_advance(unsigned char c)
{
    uint32_t key = g_face << 24 | (uint32_t)FONT_PX << 16 | c;
    uint32_t h = (key * 2654435761u) >> 23 & (GLYPH_SLOTS - 1);
    g_stats.glyphs_measured++;
    while (g_glyphs[h].key != key) {
        if (g_glyphs[h].key == 0) {
            g_stats.glyph_misses++;
            g_glyphs[h].key = key;
            g_glyphs[h].adv = c >= 32 && c < 128 ? kWidths[c - 32] * FONT_PX * 64 / 1000 : 0;
            break;
        }
        h = (h + 1) & (GLYPH_SLOTS - 1);
    }
    if (g_glyphs[h].last_frame != g_frame) {
        g_glyphs[h].last_frame = g_frame;
        g_glyphs[h].frames_used++;
    }
    return g_glyphs[h].adv;
}

/* Kerning between two glyphs: binary search of the pair table. */
static int32_t kern_pair(unsigned char a, unsigned char b)
{
    uint16_t key = (uint16_t)(a << 8 | b);
    uint32_t lo = 0, hi = g_nkern;
    g_stats.kern_lookups++;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (g_kern[mid].pair < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < g_nkern && g_kern[lo].pair == key) {
        g_stats.kern_hits++;
        return g_kern[lo].adj;
    }
    return 0;
}

/* Width of text[a, b): advances plus the kerning inside the span. */
static int32_t measure_span(const char *s, uint32_t a, uint32_t b)
{
    int32_t w = 0;
    for (uint32_t i = a; i < b; i++) {
        w += glyph_advance((unsigned char)s[i]);
        if (i > a)
            w += kern_pair((unsigned char)s[i - 1], (unsigned char)s[i]);
    }
    return w;
}

/* Pen position before byte OFF, measured from the start of the message so
 * that the kerning across word boundaries is included. */
static int32_t pen_x_at(const struct message *m, uint32_t off)
{
    return measure_span(m->text, 0, off);
}

/* pen_x_at(b) - pen_x_at(a), for a <= b: the kerning into byte a plus the
 * span. */
static int32_t pen_delta(const struct message *m, uint32_t a, uint32_t b)
{
    if (a >= b)
        return 0;
    if (a == 0)
        return pen_x_at(m, b);
    return kern_pair((unsigned char)m->text[a - 1], (unsigned char)m->text[a]) +
           measure_span(m->text, a, b);
}

/* ------------------------------------------------------------ wrapping */
static uint32_t split_words(struct message *m)
{
    uint32_t n = 0, i = 0;
    while (i < m->len) {
        while (i < m->len && m->text[i] == ' ')
            i++;
        if (i == m->len)
            break;
        m->w[n].start = i;
        while (i < m->len && m->text[i] != ' ')
            i++;
        m->w[n++].end = i;
    }
    m->nwords = n;
    g_stats.words += n;
    return n;
}

/* Greedy wrap into WIDTH: first[k] is the first word of line k. Returns
 * the number of lines. */
static uint32_t wrap_message(const struct message *m, int32_t width, uint32_t *first)
{
    uint32_t nl = 0;
    int32_t x = 0, line_x0 = 0;
    first[nl++] = 0;
    for (uint32_t i = 0; i < m->nwords; i++) {
#ifdef VPROF_CASE_FIX
        x += pen_delta(m, i ? m->w[i - 1].end : 0, m->w[i].end);
#else
        x = pen_x_at(m, m->w[i].end); /* FIX: carry the pen forward from the previous word's end (pen_delta) instead of measuring from the message start */
#endif
        if (i > first[nl - 1] && x - line_x0 > width && nl < MAX_MSG_LINES) {
            first[nl++] = i;
            line_x0 = x - pen_delta(m, m->w[i].start, m->w[i].end); /* pen at word i */
        }
        if (i == first[nl - 1] && x - line_x0 > width)
            g_stats.overlong_words++;
    }
    g_stats.lines += nl;
    return nl;
}

/* ------------------------------------------------------------ placing */
static void digest_put(uint64_t v)
{
    g_digest = (g_digest ^ v) * 1099511628211ull;
}

/* Places the glyphs of words [wa, wb) on line Y of the bubble. */
static int32_t place_line(const struct message *m, uint32_t wa, uint32_t wb, int32_t y)
{
    int32_t x = 0;
    uint32_t a = m->w[wa].start, b = m->w[wb - 1].end;
    for (uint32_t i = a; i < b; i++) {
        unsigned char c = (unsigned char)m->text[i];
        if (i > a)
            x += kern_pair((unsigned char)m->text[i - 1], c);
        if (c != ' ')
            digest_put((uint64_t)c << 40 | (uint64_t)(uint32_t)y << 20 | (uint32_t)x);
        x += glyph_advance(c);
        g_stats.glyphs_placed++;
    }
    return x;
}

static int32_t layout_message(struct message *m, int32_t width, int32_t y)
{
    static uint32_t first[MAX_MSG_LINES];
    if ((g_stats.messages++ & 7) == 0)
        g_now_ns = clock_ns();
    if (g_now_ns - g_frame_start_ns > g_frame_budget_ns)
        g_stats.late_messages++;
    g_stats.bytes += m->len;
    if (split_words(m) == 0)
        return y;
    uint32_t nl = wrap_message(m, width, first);
    int32_t bubble_w = 0, line_h = FONT_PX * 64 * 5 / 4;
    for (uint32_t k = 0; k < nl; k++) {
        uint32_t wb = k + 1 < nl ? first[k + 1] : m->nwords;
        int32_t w = place_line(m, first[k], wb, y + (int32_t)k * line_h);
        if (w > bubble_w)
            bubble_w = w;
    }
    digest_put((uint64_t)m->author << 48 | (uint64_t)m->ts << 24 | (uint32_t)bubble_w);
    return y + (int32_t)nl * line_h + 8 * 64;
}

static void frame_begin(void)
{
    g_frame++;
    g_now_ns = clock_ns();
    g_frame_start_ns = g_now_ns;
}

static void frame_end(void)
{
    g_now_ns = clock_ns();
    if (g_now_ns - g_frame_start_ns > g_frame_budget_ns)
        g_stats.late_frames++;
}

/* ------------------------------------------------------ the channel */
#define VOCAB 2048
static char g_vocab[VOCAB][16];

static void vocab_build(rng_t *r)
{
    static const char *const syl[] = {"ka", "lo", "mi", "ver", "tan", "sh", "op", "ry", "fe",
                                      "du", "ast", "wi", "gen", "pl", "ou", "ty", "ra", "ck"};
    for (int i = 0; i < VOCAB; i++) {
        int n = 1 + (int)rng_below(r, 3) + (i % 7 == 0);
        g_vocab[i][0] = 0;
        for (int k = 0; k < n; k++)
            strcat(g_vocab[i], syl[rng_below(r, sizeof syl / sizeof syl[0])]);
    }
}

/* A message of NW words from the vocabulary (frequent words more often). */
static void message_compose(struct message *m, uint32_t nw, rng_t *r)
{
    static const char punct[] = ".,.?!";
    char *o = m->text;
    int cap = 1;
    m->author = (uint32_t)rng_below(r, 40);
    m->ts = (uint32_t)rng_below(r, 86400);
    for (uint32_t i = 0; i < nw; i++) {
        uint64_t k = rng_next(r);
        const char *v = g_vocab[(k & 1) ? (k >> 8) % 64 : (k >> 8) % VOCAB];
        size_t n = strlen(v);
        if (i)
            *o++ = ' ';
        memcpy(o, v, n);
        if (cap)
            *o = (char)(*o - 'a' + 'A');
        o += n;
        cap = 0;
        if ((k >> 40) % 9 == 0 || i + 1 == nw) {
            *o = punct[(k >> 48) % 5];
            cap = *o++ != ',';
        }
    }
    m->len = (uint32_t)(o - m->text);
}

int main(int argc, char **argv)
{
    opt_t opts[] = {
        {"words", "words in the channel history", 280000, 100, 100000000, 0},
        {"words-per-msg", "mean words per message", 6, 1, MAX_MSG_WORDS / 2, 0},
        {"width", "bubble width in pixels", 280, 40, 4000, 0},
        {"seed", "workload seed", 4242, 0, 1000000000, 0},
    };
    opts_parse(argc, argv, opts, NOPTS(opts));
    long total = opt_get(opts, NOPTS(opts), "words");
    long mean = opt_get(opts, NOPTS(opts), "words-per-msg");
    int32_t width = (int32_t)opt_get(opts, NOPTS(opts), "width") * 64;
    rng_t r;
    rng_seed(&r, (uint64_t)opt_get(opts, NOPTS(opts), "seed"));

    g_start_ns = g_now_ns = clock_ns();
    font_load();
    vocab_build(&r);
    struct message *m = malloc(sizeof *m);
    if (!m) {
        perror("malloc");
        return 1;
    }
    long words = 0, msgs = 0;
    int32_t y = 0;
    uint64_t height = 0;
    while (words < total) {
        frame_begin();
        for (int k = 0; k < FRAME_MESSAGES && words < total; k++) {
            uint32_t nw = 1 + (uint32_t)rng_below(&r, (uint64_t)(2 * mean - 1));
            if (words + nw > total)
                nw = (uint32_t)(total - words);
            message_compose(m, nw, &r);
            y = layout_message(m, width, y);
            words += nw;
            msgs++;
        }
        /* the channel list shows the newest message on one line, elided
         * when it is wider than the sidebar */
        int32_t preview = pen_x_at(m, m->len);
        digest_put((uint64_t)(preview > 220 * 64 ? 220 * 64 : preview));
        frame_end();
        height += (uint64_t)y;
        y = 0;
    }
    printf("%ld messages, %ld words, %llu lines, %llu glyphs, height %llu, digest %016llx\n",
           msgs, words, (unsigned long long)g_stats.lines,
           (unsigned long long)g_stats.glyphs_placed, (unsigned long long)height,
           (unsigned long long)g_digest);
    fprintf(stderr, "frames %u (late %llu, %llu late messages), measured %llu glyphs, "
                    "%llu kerning look-ups (%llu hits), %llu glyph cache misses, %llu bytes, "
                    "%llu overlong words, %.3f s\n",
            g_frame, (unsigned long long)g_stats.late_frames,
            (unsigned long long)g_stats.late_messages,
            (unsigned long long)g_stats.glyphs_measured, (unsigned long long)g_stats.kern_lookups,
            (unsigned long long)g_stats.kern_hits, (unsigned long long)g_stats.glyph_misses,
            (unsigned long long)g_stats.bytes,
            (unsigned long long)g_stats.overlong_words, (double)(clock_ns() - g_start_ns) / 1e9);
    return 0;
}
