/* Written for the vprof bug corpus by a helper that had not seen the
 * profiler (2026-11-29); not modelled on a real issue. The fix is the
 * VPROF_CASE_FIX variant; the line marked FIX is the bug.
 *
 * tedit - the display core of a terminal text editor replaying a recorded
 * session on a C file: each key edits the buffer, then the screen is redrawn
 * with syntax highlighting. Highlighting a line needs the lexer state at its
 * start (in a block comment, in a continued directive, or normal), which
 * depends on every line above it; the highlighter caches each line's start
 * state, correct for the prefix [0, valid]. An edit of line L shrinks the
 * prefix to L; a redraw extends it to the view's top line by lexing the
 * lines in between, so only lines between an edit and the view are relexed.
 *
 * The bug: hl_start_state() fills the cache on its way down but advances a
 * local copy of the valid prefix and never stores it back, so every redraw
 * lexes the whole file above the view again: a session on a short file
 * (normal: --lines 100) barely notices, on a long one (buggy: --lines 1200)
 * it lexes eleven times as many lines for the same keys.
 */
#include "../common/corpus.h"

#define ROWS 50                 /* a maximised terminal window */
#define COLS 160

enum { ST_NORMAL, ST_COMMENT, ST_PREPROC };  /* what a line leaves open */
enum { TK_TEXT, TK_KEYWORD, TK_IDENT, TK_NUMBER, TK_STRING, TK_COMMENT, TK_PREPROC, TK_PUNCT, TK_SPACE };
struct token { int start, len, kind; };
struct line { char *s; int len, cap; };
struct buffer { struct line *lines; int n, cap; };   /* lines[0..n) */

/* start[i] is the lexer state at the start of line i; start[0..valid] are
 * correct, the rest must be recomputed before use. */
struct highlighter { uint8_t *start; int cap, valid; };
struct editor {
    struct buffer buf;
    struct highlighter hl;
    int cur_line, cur_col, top;
    uint64_t out_digest, out_bytes, frames, lines_lexed, tokens, keys;
    size_t out_len;
    char out[16384];            /* terminal output not yet written */
    uint32_t cell_attr[ROWS][COLS];
    char cell_ch[ROWS][COLS];
};
enum { K_CHAR, K_ENTER, K_BACKSPACE, K_UP, K_DOWN, K_PGDN, K_GOTO };

static void *xrealloc(void *p, size_t n)
{
    if (!(p = realloc(p, n))) { perror("realloc"); exit(1); }
    return p;
}

/* ------------------------------------------------------------------ lexer */
static const char *const kKeywords[] = {   /* sorted for bsearch-style lookup */
    "break", "case", "char", "const", "continue", "default", "do", "double",
    "else", "enum", "extern", "float", "for", "goto", "if", "int", "long",
    "return", "short", "signed", "sizeof", "static", "struct", "switch",
    "typedef", "union", "unsigned", "void", "volatile", "while",
};

static int kw_lookup(const char *s, int len)
{
    for (int lo = 0, hi = NOPTS(kKeywords) - 1; lo <= hi;) {
        int mid = (lo + hi) / 2, c = strncmp(s, kKeywords[mid], (size_t)len);
        if (c == 0 && kKeywords[mid][len] == '\0')
            return 1;
        if (c <= 0) hi = mid - 1; else lo = mid + 1;   /* a prefix sorts first */
    }
    return 0;
}

/* Characters of identifiers and numbers (a table: this is asked per char). */
static unsigned char kIdentChar[256];
static void init_char_classes(void)
{
    for (int c = 0; c < 256; c++)
        kIdentChar[c] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}
#define is_ident_char(c) (kIdentChar[(unsigned char)(c)])

/* Lexes one token of s[pos..len) in *state and returns the position after
 * it; *state changes when a block comment or a continued directive opens or
 * closes. */
static int lex_next_token(const char *s, int len, int pos, uint8_t *state, struct token *tok)
{
    int p = pos;
    tok->start = pos;
    if (*state == ST_COMMENT) {
        while (p < len && !(s[p] == '*' && p + 1 < len && s[p + 1] == '/'))
            p++;
        if (p < len) { p += 2; *state = ST_NORMAL; }
        tok->kind = TK_COMMENT;
    } else if (*state == ST_PREPROC || (s[p] == '#' && pos == 0)) {
        p = len;                /* a directive runs to the end of the line */
        *state = (len > 0 && s[len - 1] == '\\') ? ST_PREPROC : ST_NORMAL;
        tok->kind = TK_PREPROC;
    } else if (s[p] == ' ' || s[p] == '\t') {
        while (p < len && (s[p] == ' ' || s[p] == '\t')) p++;
        tok->kind = TK_SPACE;
    } else if (s[p] == '/' && p + 1 < len && (s[p + 1] == '/' || s[p + 1] == '*')) {
        if (s[p + 1] == '*') { *state = ST_COMMENT; p += 2; }   /* body: next token */
        else p = len;
        tok->kind = TK_COMMENT;
    } else if (s[p] == '"' || s[p] == '\'') {
        char q = s[p++];
        while (p < len && s[p] != q) p += (s[p] == '\\' && p + 1 < len) ? 2 : 1;
        if (p < len) p++;
        tok->kind = TK_STRING;
    } else if (is_ident_char(s[p])) {   /* a word or a number */
        while (p < len && is_ident_char(s[p])) p++;
        tok->kind = s[pos] <= '9' ? TK_NUMBER : kw_lookup(s + pos, p - pos) ? TK_KEYWORD : TK_IDENT;
    } else {
        p++, tok->kind = TK_PUNCT;
    }
    tok->len = p - pos;
    return p;
}

/* The state a line leaves open for the next one (its tokens are not kept). */
static uint8_t hl_line_end_state(struct editor *ed, int line, uint8_t st)
{
    const struct line *ln = &ed->buf.lines[line];
    struct token tok;
    if (st == ST_PREPROC && ln->len == 0)
        st = ST_NORMAL;         /* an empty line ends a continued directive */
    for (int pos = 0; pos < ln->len; ed->tokens++)
        pos = lex_next_token(ln->s, ln->len, pos, &st, &tok);
    ed->lines_lexed++;
    return st;
}

/* The tokens of a visible line (at most max) and the state it leaves open. */
static uint8_t hl_line_tokens(struct editor *ed, int line, uint8_t st, struct token *out, int max, int *nout)
{
    const struct line *ln = &ed->buf.lines[line];
    int n = 0;
    if (st == ST_PREPROC && ln->len == 0)
        st = ST_NORMAL;
    for (int pos = 0; pos < ln->len; ed->tokens++) {
        pos = lex_next_token(ln->s, ln->len, pos, &st, &out[n]);
        n += n + 1 < max;
    }
    *nout = n;
    return st;
}

/* ------------------------------------------------------------ highlighter */
/* Line L was edited (or lines were inserted or removed at L): the start
 * state of L still holds, those after it may not. */
static void hl_invalidate(struct highlighter *hl, int line)
{
    hl->valid = hl->valid < line ? hl->valid : line;
}

/* The lexer state at the start of line, from the valid prefix of the cache;
 * lexes (and caches) the lines between the prefix and line. */
static uint8_t hl_start_state(struct editor *ed, int line)
{
    struct highlighter *hl = &ed->hl;
    int valid = hl->valid;
    if (line <= valid)
        return hl->start[line];
    uint8_t st = hl->start[valid];
    for (; valid < line; valid++) {
        st = hl_line_end_state(ed, valid, st);
        hl->start[valid + 1] = st;
    }
#ifdef VPROF_CASE_FIX
    hl->valid = valid;
#else
    /* FIX: store the advanced prefix back (hl->valid = valid) */
#endif
    return st;
}

/* ----------------------------------------------------------------- screen */
/* Colour of each token kind: bold << 8 | 256-colour index. */
static const uint32_t kAttr[] = {7, 0x10d, 7, 0x203, 0x202, 0x308, 0x105, 7, 7};

/* Paints a line into a screen row: its characters, then token colours. */
static void paint_row(struct editor *ed, int row, const struct line *ln, const struct token *toks, int ntok)
{
    for (int c = 0; c < COLS; c++) {
        ed->cell_ch[row][c] = c < ln->len ? ln->s[c] : ' ';
        ed->cell_attr[row][c] = 7;
    }
    for (int t = 0; t < ntok && toks[t].start < COLS; t++)
        for (int c = toks[t].start; c < toks[t].start + toks[t].len && c < COLS; c++)
            ed->cell_attr[row][c] = kAttr[toks[t].kind];
}

/* Terminal output, a full repaint per frame. The bytes would go to
 * write(2); here they are folded into the stream digest. */
static void term_flush(struct editor *ed)
{
    size_t i = 0;
    for (uint64_t w; i + 8 <= ed->out_len; i += 8) {   /* a word at a time */
        memcpy(&w, ed->out + i, 8);
        ed->out_digest = (ed->out_digest ^ w) * 1099511628211ULL;
    }
    for (; i < ed->out_len; i++)
        ed->out_digest = (ed->out_digest ^ (uint8_t)ed->out[i]) * 1099511628211ULL;
    ed->out_bytes += ed->out_len;
    ed->out_len = 0;
}

static void term_put(struct editor *ed, const char *s, int n)
{
    if (ed->out_len + (size_t)n > sizeof ed->out)
        term_flush(ed);
    memcpy(ed->out + ed->out_len, s, (size_t)n);
    ed->out_len += (size_t)n;
}

/* Each row: a cursor move, then per run of cells of one attribute a colour
 * change (SGR) and the run's text. */
static void term_repaint(struct editor *ed)
{
    char move[24], sgr[32];
    for (int r = 0; r < ROWS; r++) {
        term_put(ed, move, snprintf(move, sizeof move, "\x1b[%d;1H", r + 1));
        for (int c = 0, end; c < COLS; c = end) {
            uint32_t attr = ed->cell_attr[r][c];
            for (end = c + 1; end < COLS && ed->cell_attr[r][end] == attr; end++)
                ;
            term_put(ed, sgr, snprintf(sgr, sizeof sgr, "\x1b[%u;38;5;%um", attr >> 8, attr & 0xff));
            term_put(ed, &ed->cell_ch[r][c], end - c);
        }
    }
    term_put(ed, move, snprintf(move, sizeof move, "\x1b[%d;%dH", ed->cur_line - ed->top + 1, ed->cur_col + 1));
}

/* Redraws the view: the state at the top line, then each visible line lexed
 * in order, carrying the state from one row to the next. */
static void view_draw(struct editor *ed)
{
    struct token toks[COLS];
    uint8_t st = hl_start_state(ed, ed->top);
    static const struct line kPastEnd = {NULL, 0, 0};
    for (int r = 0, line = ed->top; r < ROWS; r++, line++) {
        int ntok = 0;
        if (line < ed->buf.n)
            st = hl_line_tokens(ed, line, st, toks, COLS, &ntok);
        paint_row(ed, r, line < ed->buf.n ? &ed->buf.lines[line] : &kPastEnd, toks, ntok);
    }
    term_repaint(ed);
    ed->frames++;
}

/* Keeps the cursor on screen, then redraws. */
static void editor_refresh(struct editor *ed)
{
    int cur = ed->cur_line;
    ed->top = cur < ed->top ? cur : cur >= ed->top + ROWS ? cur - ROWS + 1 : ed->top;
    view_draw(ed);
}

/* ----------------------------------------------------------------- buffer */
static void line_set(struct line *ln, const char *s, int len)
{
    if (len + 1 > ln->cap)
        ln->s = xrealloc(ln->s, (size_t)(ln->cap = len + 16));
    memcpy(ln->s, s, (size_t)len);
    ln->len = len;
}

/* Inserts an empty line at index at (moving the lines below down). */
static struct line *buf_insert_line(struct editor *ed, int at)
{
    struct buffer *b = &ed->buf;
    if (b->n == b->cap)
        b->lines = xrealloc(b->lines, (size_t)(b->cap = b->cap ? 2 * b->cap : 256) * sizeof *b->lines);
    memmove(&b->lines[at + 1], &b->lines[at], (size_t)(b->n - at) * sizeof *b->lines);
    b->lines[at] = (struct line){NULL, 0, 0};
    if (++b->n + 1 > ed->hl.cap)    /* a start state per line, and one past */
        ed->hl.start = xrealloc(ed->hl.start, (size_t)(ed->hl.cap = 2 * b->n + 2));
    return &b->lines[at];
}

static void buf_insert_char(struct editor *ed, char ch)
{
    struct line *ln = &ed->buf.lines[ed->cur_line];
    if (ln->len + 2 > ln->cap)
        ln->s = xrealloc(ln->s, (size_t)(ln->cap = 2 * ln->cap + 16));
    memmove(ln->s + ed->cur_col + 1, ln->s + ed->cur_col, (size_t)(ln->len - ed->cur_col));
    ln->s[ed->cur_col++] = ch;
    ln->len++;
    hl_invalidate(&ed->hl, ed->cur_line);
}

/* Enter: the tail of the cursor's line becomes a new line below it. */
static void buf_split_line(struct editor *ed)
{
    int at = ed->cur_line, col = ed->cur_col;
    struct line *next = buf_insert_line(ed, at + 1);
    struct line *cur = &ed->buf.lines[at];
    line_set(next, cur->s + col, cur->len - col);
    cur->len = col;
    hl_invalidate(&ed->hl, at);
    ed->cur_line++, ed->cur_col = 0;
}

/* Backspace: deletes the character before the cursor, or joins the line to
 * the one above it at column 0. */
static void buf_backspace(struct editor *ed)
{
    struct line *cur = &ed->buf.lines[ed->cur_line];
    if (ed->cur_col > 0) {
        memmove(cur->s + ed->cur_col - 1, cur->s + ed->cur_col, (size_t)(cur->len - ed->cur_col));
        cur->len--, ed->cur_col--;
        hl_invalidate(&ed->hl, ed->cur_line);
        return;
    }
    if (ed->cur_line == 0)
        return;
    struct line *prev = &ed->buf.lines[ed->cur_line - 1];
    int col = prev->len;
    prev->s = xrealloc(prev->s, (size_t)(prev->cap = prev->len + cur->len + 16));
    memcpy(prev->s + col, cur->s, (size_t)cur->len);
    prev->len += cur->len;
    free(cur->s);
    struct buffer *b = &ed->buf;
    memmove(&b->lines[ed->cur_line], &b->lines[ed->cur_line + 1], (size_t)(b->n - ed->cur_line - 1) * sizeof *b->lines);
    b->n--;
    ed->cur_line--, ed->cur_col = col;
    hl_invalidate(&ed->hl, ed->cur_line);
}

/* Moves to a line (clamped to the buffer), keeping the column if it fits. */
static void cursor_to(struct editor *ed, int line)
{
    ed->cur_line = line < 0 ? 0 : line >= ed->buf.n ? ed->buf.n - 1 : line;
    int len = ed->buf.lines[ed->cur_line].len;
    ed->cur_col = ed->cur_col < len ? ed->cur_col : len;
}

/* Applies one key to the buffer and cursor, then redraws the screen. */
static void editor_key(struct editor *ed, int type, int arg)
{
    switch (type) {
    case K_CHAR: buf_insert_char(ed, (char)arg); break;
    case K_ENTER: buf_split_line(ed); break;
    case K_BACKSPACE: buf_backspace(ed); break;
    case K_UP: cursor_to(ed, ed->cur_line - 1); break;
    case K_DOWN: cursor_to(ed, ed->cur_line + 1); break;
    case K_PGDN: cursor_to(ed, ed->cur_line + ROWS); break;
    case K_GOTO: /* ":N" - the target line goes to the middle of the view */
        cursor_to(ed, arg);
        ed->top = ed->cur_line > ROWS / 2 ? ed->cur_line - ROWS / 2 : 0;
        break;
    }
    ed->keys++;
    editor_refresh(ed);
    CASE_PROGRESS("key");
}

/* ---------------------------------------------------- file and session */
static void append_line(struct editor *ed, const char *fmt, long a, long b)
{
    char tmp[128];
    int len = snprintf(tmp, sizeof tmp, fmt, a, b);
    line_set(buf_insert_line(ed, ed->buf.n), tmp, len);
}

static const char *const kBodyLines[] = {   /* printf formats: (i, fn) */
    "    int v%ld = s[n - %ld] + 42; // carry",
    "    if (n > %ld && s[0] != '\\'') return %ld;",
    "    for (unsigned long i = 0; i < n; i += %ld) n ^= i; /* %ld */",
    "    puts(\"merge %ld: \\\"%ld\\\" done\");",
    "    while (n-- > %ld) continue; /* drain %ld */",
};

/* A C file of about nlines lines: functions with block comments above
 * them, macros (some continued over two lines), strings and line comments. */
static void load_source(struct editor *ed, rng_t *rng, int nlines)
{
    for (long fn = 0; ed->buf.n < nlines; fn++) {
        append_line(ed, "/*", 0, 0);
        for (long i = rng_below(rng, 3) + 1; i > 0; i--)
            append_line(ed, " * step %ld of the %ld-way merge, see below", i, fn);
        append_line(ed, " */", 0, 0);
        if (rng_below(rng, 3) == 0) {
            append_line(ed, "#define SLOT_%ld(x) \\", fn, 0);
            append_line(ed, "    ((x) * %ld + %ld)", fn, rng_below(rng, 100));
        }
        append_line(ed, "static int merge_%ld(const char *s, unsigned long n)", fn, 0);
        append_line(ed, "{", 0, 0);
        for (long i = rng_below(rng, 10) + 4; i > 0; i--)
            append_line(ed, kBodyLines[rng_below(rng, NOPTS(kBodyLines))], i, fn);
        append_line(ed, "    return (int)n;", 0, 0);
        append_line(ed, "}", 0, 0);
        append_line(ed, "", 0, 0);
    }
    ed->hl.start[0] = ST_NORMAL;
}

static const char *const kSnippets[] = {
    "x += 1;", "/* TODO */", "\"tmp\"", "#define Q 1\n", "if (n) return 0;\n",
    "/* fold", "*/", "n >>= 2; // fast path\n", "static int k;\n",
};

/* One burst of a recorded session: jump somewhere and type, page through
 * the file, move around, or erase what was just typed. */
static void play_burst(struct editor *ed, rng_t *rng)
{
    uint64_t what = rng_below(rng, 10);
    if (what < 4) {
        editor_key(ed, K_GOTO, (int)rng_below(rng, (uint64_t)ed->buf.n));
        const char *s = kSnippets[rng_below(rng, NOPTS(kSnippets))];
        for (; *s; s++)
            editor_key(ed, *s == '\n' ? K_ENTER : K_CHAR, *s);
    } else if (what < 7) {
        for (int i = 0; i < 3; i++) editor_key(ed, K_PGDN, 0);
    } else if (what < 9) {
        for (uint64_t i = rng_below(rng, 6) + 1; i > 0; i--)
            editor_key(ed, rng_below(rng, 2) ? K_DOWN : K_UP, 0);
    } else {
        for (uint64_t i = rng_below(rng, 5) + 1; i > 0; i--)
            editor_key(ed, K_BACKSPACE, 0);
    }
}

static void session_replay(struct editor *ed, rng_t *rng, long keys)
{
    while ((long)ed->keys < keys)
        play_burst(ed, rng);
}

int main(int argc, char **argv)
{
    opt_t opts[] = {
        {"lines", "lines of the C file the session edits", 300, 30, 1000000, 0},
        {"keys", "keys in the recorded session", 4000, 1, 10000000, 0},
        {"seed", "seed of the file and the session", 7, 1, 1L << 30, 0}};
    opts_parse(argc, argv, opts, NOPTS(opts));
    init_char_classes();
    static struct editor ed;
    ed.out_digest = 1469598103934665603ULL;
    rng_t rng;                  /* the file and the session come from one seed */
    rng_seed(&rng, (uint64_t)opt_get(opts, NOPTS(opts), "seed"));
    load_source(&ed, &rng, (int)opt_get(opts, NOPTS(opts), "lines"));
    session_replay(&ed, &rng, opt_get(opts, NOPTS(opts), "keys"));
    term_flush(&ed);
    printf("keys=%llu lines=%d out_bytes=%llu out=%016llx\n", (unsigned long long)ed.keys,
           ed.buf.n, (unsigned long long)ed.out_bytes, (unsigned long long)ed.out_digest);
    fprintf(stderr, "frames=%llu lines_relexed=%llu tokens=%llu\n", (unsigned long long)ed.frames,
            (unsigned long long)ed.lines_lexed, (unsigned long long)ed.tokens);
    return 0;
}
