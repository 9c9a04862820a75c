/* Written for the vprof bug corpus by a helper that had not seen the
 * profiler (2026-11-29); not modelled on a real issue. The fix is the
 * VPROF_CASE_FIX variant; the line marked FIX is the bug.
 *
 * vtdash - a software-rendered terminal emulator running a memory monitor
 * (a top(1)-like dashboard sorted by resident size) in its pty. One event
 * loop: the child's ticks write escape sequences to the pty; PTY_READABLE
 * feeds them to the VT parser, which updates the cell grid and records
 * per-row damage; VSYNC repaints the damaged cells (a glyph cache lookup and
 * an 8x16 blit each). The child sends the cells that changed (like curses)
 * or, every --redraw-every refreshes, the whole screen (like watch(1)),
 * mostly the glyphs already there.
 *
 * The bug: term_print() damages every cell it writes, even one that already
 * holds that glyph with those attributes. Rare full repaints (normal:
 * --redraw-every 500) cost little; one per refresh (buggy: 1) makes every
 * VSYNC after a refresh re-render the whole screen.
 */
#include "../common/corpus.h"

enum { ROWS = 40, COLS = 132, GLYPH_W = 8, GLYPH_H = 16, FB_W = COLS * GLYPH_W, FB_H = ROWS * GLYPH_H };
enum { GLYPH_SLOTS = 512 /* a power of two */, PTY_READ_MAX = 4096, TABLE_TOP = 6 /* first process row */ };

/* Cell attributes: fg in bits 0-3, bg in 4-7, bold, reverse video. */
#define ATTR_FG(a)     ((a) & 0xf)
#define ATTR_BG(a)     (((a) >> 4) & 0xf)
enum { ATTR_DEFAULT = 0x07 /* light grey on black */, ATTR_BOLD = 0x100, ATTR_REVERSE = 0x200 };

struct cell { uint16_t ch, attr; };
struct damage { int16_t lo, hi; };      /* columns [lo, hi) to repaint; empty when lo >= hi */
enum { VT_GROUND, VT_ESC, VT_CSI };
struct term {
    struct cell grid[ROWS][COLS];
    struct damage dmg[ROWS];
    int cx, cy, state, nparams, params[8];
    uint16_t pen;                       /* attributes of the next character (SGR) */
    unsigned long long printed, damaged;
};

struct glyph { uint32_t key; uint8_t used, rows[GLYPH_H]; };

struct renderer {
    uint32_t *fb;
    struct glyph cache[GLYPH_SLOTS];
    unsigned long long renders, cells, misses;
};

struct proc { int pid, cpu_pm, busy; uint8_t user, cmd; long mem_kb, time_cs; };
struct dashboard {
    struct proc *procs, **order;
    int nprocs, redraw_every;
    long refreshes;
    char shown[ROWS][COLS + 1];         /* what the child believes is on screen */
    uint16_t shown_style[ROWS];
    rng_t rng;
};

struct pty { size_t head, tail; char buf[1 << 16]; };
enum { EV_CHILD_TICK, EV_PTY_READABLE, EV_VSYNC, N_EV };
struct session {
    struct term term;
    struct renderer ren;
    struct dashboard app;
    struct pty pty;
    unsigned long long vsyncs, bytes_read;
    uint64_t shots;                     /* digest of the screenshots taken so far */
};

static const uint32_t kPalette[16] = {
    0x000000, 0xcd0000, 0x00cd00, 0xcdcd00, 0x0000ee, 0xcd00cd, 0x00cdcd, 0xe5e5e5,
    0x7f7f7f, 0xff0000, 0x00ff00, 0xffff00, 0x5c5cff, 0xff00ff, 0x00ffff, 0xffffff,
};

static void damage_cell(struct term *t, int row, int col)
{
    struct damage *d = &t->dmg[row];
    if (d->lo >= d->hi)
        d->lo = d->hi = (int16_t)col;
    d->lo = (int16_t)(col < d->lo ? col : d->lo);
    d->hi = (int16_t)(col >= d->hi ? col + 1 : d->hi);
    t->damaged++;
}

/* Blanks cells with the pen's background (bce); a cell already blank is not
 * damaged, so clearing the rest of an empty line costs no repaint. */
static void erase_cells(struct term *t, int row, int from, int to)
{
    uint16_t blank = (uint16_t)((t->pen & 0xf0) | ATTR_FG(ATTR_DEFAULT));
    for (int c = from; c < to; c++) {
        struct cell *cell = &t->grid[row][c];
        if (cell->ch == ' ' && cell->attr == blank)
            continue;
        cell->ch = ' ', cell->attr = blank;
        damage_cell(t, row, c);
    }
}

/* Writes one printable character at the cursor and advances it. Autowrap is
 * not modelled: the last column is overwritten, as with DECAWM off. */
static void term_print(struct term *t, uint16_t ch)
{
    struct cell *c = &t->grid[t->cy][t->cx];
#ifdef VPROF_CASE_FIX
    if (c->ch != ch || c->attr != t->pen)
        damage_cell(t, t->cy, t->cx);
#else
    damage_cell(t, t->cy, t->cx);   /* FIX: damage the cell only when ch or pen differs from it */
#endif
    c->ch = ch, c->attr = t->pen;
    t->printed++;
    if (t->cx < COLS - 1)
        t->cx++;
}

static int clamp(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

static void apply_sgr(struct term *t)
{
    for (int i = 0; i < (t->nparams ? t->nparams : 1); i++) {
        int p = t->nparams ? t->params[i] : 0;
        uint16_t a = t->pen;
        if (p == 0) a = ATTR_DEFAULT;
        else if (p == 1) a |= ATTR_BOLD;
        else if (p == 7) a |= ATTR_REVERSE;
        else if (p >= 30 && p <= 37) a = (uint16_t)((a & ~0xf) | (p - 30));
        else if (p >= 40 && p <= 47) a = (uint16_t)((a & ~0xf0) | (p - 40) << 4);
        t->pen = a;
    }
}

static void csi_dispatch(struct term *t, uint8_t final)
{
    int p0 = t->nparams > 0 ? t->params[0] : 0;
    if (final == 'H' || final == 'f') {
        t->cy = clamp((p0 ? p0 : 1) - 1, 0, ROWS - 1);
        t->cx = clamp((t->nparams > 1 && t->params[1] ? t->params[1] : 1) - 1, 0, COLS - 1);
    } else if (final == 'K') {                      /* EL 0: to the end, 1: to the cursor, 2: all */
        erase_cells(t, t->cy, p0 == 0 ? t->cx : 0, p0 == 1 ? t->cx + 1 : COLS);
    } else if (final == 'm') {
        apply_sgr(t);
    }                                               /* ED, modes (DECTCEM), regions: ignored */
}

/* The VT parser: a subset of ECMA-48 (C0 controls, CSI with numeric
 * parameters), enough for what curses-style programs send. */
static void vt_feed(struct term *t, const uint8_t *buf, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint8_t b = buf[i];
        switch (t->state) {
        case VT_GROUND:
            if (b == 0x1b) t->state = VT_ESC;
            else if (b >= 0x20 && b < 0x7f) term_print(t, b);
            else if (b == '\r') t->cx = 0;         /* LF, BEL, BS: not sent by the child */
            break;
        case VT_ESC:
            t->state = b == '[' ? VT_CSI : VT_GROUND;   /* charsets, keypad modes: ignored */
            t->nparams = 0, t->params[0] = 0;
            break;
        case VT_CSI:
            if ((b >= '0' && b <= '9') || b == ';') {
                if (t->nparams == 0) t->nparams = 1;
                int *p = &t->params[t->nparams - 1];
                if (b != ';') *p = *p < 10000 ? *p * 10 + (b - '0') : *p;
                else if (t->nparams < 8) t->params[t->nparams++] = 0;
            } else if (b >= 0x40 && b <= 0x7e) {       /* '?' private markers fall through */
                csi_dispatch(t, b);
                t->state = VT_GROUND;
            }
            break;
        }
    }
}

/* The built-in bitmap font: shapes derived from the code point (what they
 * look like does not matter here, the pixels they cost do). */
static void rasterize_glyph(struct glyph *g, uint16_t ch, int bold)
{
    uint64_t h = 0x9e3779b97f4a7c15ull * (ch + 1);
    for (int y = 0; y < GLYPH_H; y++) {
        h ^= h >> 29, h *= 0xbf58476d1ce4e5b9ull;
        uint8_t row = ch == ' ' || y < 2 || y > 13 ? 0 : (uint8_t)(h >> 56) & 0x7e;
        g->rows[y] = bold ? (uint8_t)(row | row >> 1) : row;
    }
}

static const struct glyph *glyph_lookup(struct renderer *r, uint16_t ch, int bold)
{
    uint32_t key = (uint32_t)ch << 1 | (bold != 0);
    uint32_t i = (key * 2654435761u) >> 23 & (GLYPH_SLOTS - 1);
    while (r->cache[i].used && r->cache[i].key != key)
        i = (i + 1) & (GLYPH_SLOTS - 1);
    struct glyph *g = &r->cache[i];
    if (!g->used) {
        g->used = 1, g->key = key;
        rasterize_glyph(g, ch, bold);
        r->misses++;
    }
    return g;
}

static void blit_cell(uint32_t *fb, int row, int col, const struct glyph *g, uint32_t fg, uint32_t bg)
{
    for (int y = 0; y < GLYPH_H; y++) {
        uint32_t *px = fb + (size_t)(row * GLYPH_H + y) * FB_W + (size_t)col * GLYPH_W;
        unsigned bits = g->rows[y];
        for (int x = 0; x < GLYPH_W; x++)
            px[x] = bits >> (7 - x) & 1 ? fg : bg;
    }
}

static void render_cell(struct session *s, int row, int col)
{
    const struct cell *c = &s->term.grid[row][col];
    int bold = (c->attr & ATTR_BOLD) != 0;
    uint32_t fg = kPalette[ATTR_FG(c->attr) | (bold ? 8 : 0)], bg = kPalette[ATTR_BG(c->attr)];
    if (c->attr & ATTR_REVERSE)
        fg ^= bg, bg ^= fg, fg ^= bg;
    blit_cell(s->ren.fb, row, col, glyph_lookup(&s->ren, c->ch, bold), fg, bg);
    s->ren.cells++;
}

/* FNV-1a over 64-bit words (every size hashed here is a multiple of 8). */
static uint64_t fnv1a(const void *p, size_t n, uint64_t h)
{
    for (size_t i = 0; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, (const char *)p + i, 8);
        h = (h ^ w) * 0x100000001b3ull;
    }
    return h;
}

static const char *const kUsers[] = {"root", "postgres", "www-data", "redis", "alice", "bob"};
static const char *const kCmds[] = {"postgres", "nginx", "redis-server", "python3", "java", "node",
                                    "sshd", "systemd", "kworker/2:1", "cc1", "rustc"};

static int by_res_desc(const void *a, const void *b)
{
    const struct proc *p = *(struct proc *const *)a, *q = *(struct proc *const *)b;
    if (p->mem_kb != q->mem_kb)
        return p->mem_kb < q->mem_kb ? 1 : -1;
    return p->pid - q->pid;
}

/* One refresh interval (100 ms) of the monitored machine. */
static void sample_procs(struct dashboard *d)
{
    for (int i = 0; i < d->nprocs; i++) {
        struct proc *p = &d->procs[i];
        if (p->busy)
            p->cpu_pm = clamp(p->cpu_pm + (int)rng_below(&d->rng, 161) - 80, 0, 1000);
        else
            p->cpu_pm = rng_below(&d->rng, 100) < 3 ? (int)rng_below(&d->rng, 30) : 0;
        p->time_cs += p->cpu_pm / 100;
        if (p->busy && rng_below(&d->rng, 8) == 0)
            p->mem_kb += (long)rng_below(&d->rng, 4096) - 2048;
    }
}

static void pad_line(char *line, int len)
{
    len = clamp(len, 0, COLS);
    memset(line + len, ' ', (size_t)(COLS - len));
    line[COLS] = '\0';
}

static void compose_screen(struct dashboard *d, char lines[ROWS][COLS + 1], uint16_t style[ROWS])
{
    long t = d->refreshes / 10 + 36000;
    int running = 0, total_pm = 0;
    for (int i = 0; i < d->nprocs; i++)
        running += d->procs[i].cpu_pm > 0, total_pm += d->procs[i].cpu_pm;
    for (int r = 0; r < ROWS; r++)
        style[r] = ATTR_DEFAULT;
    pad_line(lines[0], snprintf(lines[0], COLS + 1, "vtdash - %02ld:%02ld:%02ld up 12 days,  load average: %.2f",
                                t / 3600 % 24, t / 60 % 60, t % 60, total_pm / 1000.0));
    style[0] = ATTR_DEFAULT | ATTR_BOLD;
    pad_line(lines[1], snprintf(lines[1], COLS + 1, "Tasks: %d total, %d running, %d sleeping",
                                d->nprocs, running, d->nprocs - running));
    pad_line(lines[2], 0), pad_line(lines[3], 0), pad_line(lines[4], 0);
    pad_line(lines[5], snprintf(lines[5], COLS + 1, "%7s %-9s %9s %9s %6s %10s  %s",
                                "PID", "USER", "VIRT", "RES", "%CPU", "TIME+", "COMMAND"));
    style[5] = ATTR_DEFAULT | ATTR_REVERSE;
    qsort(d->order, (size_t)d->nprocs, sizeof *d->order, by_res_desc);
    for (int r = TABLE_TOP; r < ROWS - 1; r++) {
        const struct proc *p = d->order[r - TABLE_TOP];
        pad_line(lines[r], snprintf(lines[r], COLS + 1, "%7d %-9s %9ld %9ld %6.1f %7ld:%02ld  %s",
                                    p->pid, kUsers[p->user], p->mem_kb * 3, p->mem_kb, p->cpu_pm / 10.0,
                                    p->time_cs / 6000, p->time_cs / 100 % 60, kCmds[p->cmd]));
        if (p->cpu_pm >= 500)
            style[r] = 1 | ATTR_BOLD;               /* hot processes in bright red */
    }
    pad_line(lines[ROWS - 1], snprintf(lines[ROWS - 1], COLS + 1, "q quit  h help  s delay  k kill"));
    style[ROWS - 1] = 6;
}

/* The child writes a refresh at once; the pty's buffer holds several. */
static void pty_write(struct pty *p, const char *s, size_t n)
{
    if (p->tail + n > sizeof p->buf)
        fprintf(stderr, "pty buffer overflow\n"), exit(1);
    memcpy(p->buf + p->tail, s, n);
    p->tail += n;
}

/* Sends one row: the columns [from, to) of its text; a plain row repainted
 * from column 0 stops at its last non-blank and clears the rest (EL). */
static void emit_row(struct pty *p, int row, const char *text, uint16_t style, int from, int to)
{
    char seq[48];
    int clear = from == 0 && to == COLS && style == ATTR_DEFAULT;
    if (clear)
        while (to > 0 && text[to - 1] == ' ')
            to--;
    pty_write(p, seq, (size_t)snprintf(seq, sizeof seq, "\x1b[%d;%dH\x1b[0;%d%s%sm", row + 1, from + 1,
                                       30 + (style & 7), style & ATTR_BOLD ? ";1" : "", style & ATTR_REVERSE ? ";7" : ""));
    pty_write(p, text + from, (size_t)(to - from));
    pty_write(p, clear ? "\x1b[0m\x1b[K" : "\x1b[0m", clear ? 7 : 4);
}

/* The child's refresh: recompute the screen and write it to the pty, as a
 * diff against what it sent before or, every redraw_every, in full. */
static void on_child_tick(struct session *s)
{
    struct dashboard *d = &s->app;
    char lines[ROWS][COLS + 1];
    uint16_t style[ROWS];
    sample_procs(d);
    compose_screen(d, lines, style);
    int full = d->refreshes % d->redraw_every == 0;
    if (d->refreshes == 0)
        pty_write(&s->pty, "\x1b[?25l", 6);            /* DECTCEM: hide the cursor */
    for (int r = 0; r < ROWS; r++) {
        int from = 0, to = COLS;
        if (!full && style[r] == d->shown_style[r]) {
            while (from < COLS && lines[r][from] == d->shown[r][from])
                from++;
            if (from == COLS)
                continue;
            while (lines[r][to - 1] == d->shown[r][to - 1])
                to--;
        }
        emit_row(&s->pty, r, lines[r], style[r], from, to);
        memcpy(d->shown[r], lines[r], COLS + 1);
        d->shown_style[r] = style[r];
    }
    d->refreshes++;
}

static void on_pty_readable(struct session *s)
{
    struct pty *p = &s->pty;
    size_t n = p->tail - p->head < PTY_READ_MAX ? p->tail - p->head : PTY_READ_MAX;
    vt_feed(&s->term, (const uint8_t *)p->buf + p->head, n);
    p->head += n, s->bytes_read += n;
    if (p->head == p->tail)
        p->head = p->tail = 0;
}

/* Repaints what changed since the last frame: the damaged columns of each
 * row (the child hides the cursor, as top does, so there is none to draw). */
static void on_vsync(struct session *s)
{
    struct term *t = &s->term;
    int painted = 0;
    for (int r = 0; r < ROWS; r++) {
        for (int c = t->dmg[r].lo; c < t->dmg[r].hi; c++)
            render_cell(s, r, c), painted = 1;
        t->dmg[r] = (struct damage){0, 0};
    }
    s->ren.renders += (unsigned long long)painted;
    if (++s->vsyncs % 500 == 0)                     /* the test harness's screenshot */
        s->shots = fnv1a(s->ren.fb, sizeof(uint32_t) * FB_W * FB_H, s->shots);
}

static void (*const kHandlers[N_EV])(struct session *) = {on_child_tick, on_pty_readable, on_vsync};

/* The event loop: a readable pty is served first (as epoll reports it with
 * the timers that are due); otherwise the earliest timer fires. */
static void session_run(struct session *s, long refreshes)
{
    static const long long kPeriod[N_EV] = {100000, 0, 16667};    /* microseconds */
    long long due[N_EV] = {0, 0, 8000};
    for (;;) {
        int ev = s->pty.tail > s->pty.head ? EV_PTY_READABLE : -1;
        if (ev < 0) {
            for (int k = 0; k < N_EV; k++)
                if (kPeriod[k] && (k != EV_CHILD_TICK || s->app.refreshes < refreshes) &&
                    (ev < 0 || due[k] < due[ev]))
                    ev = k;
            due[ev] += kPeriod[ev];
        }
        kHandlers[ev](s);
        CASE_PROGRESS("event");
        if (ev == EV_VSYNC && s->app.refreshes >= refreshes)
            break;                                  /* the last refresh is on screen */
    }
}

static void dashboard_init(struct dashboard *d, int nprocs, int redraw_every, uint64_t seed)
{
    rng_seed(&d->rng, seed);
    d->nprocs = nprocs, d->redraw_every = redraw_every, d->refreshes = 0;
    if (!(d->procs = calloc((size_t)nprocs, sizeof *d->procs)) ||
        !(d->order = calloc((size_t)nprocs, sizeof *d->order)))
        fprintf(stderr, "out of memory\n"), exit(1);
    for (int i = 0; i < nprocs; i++) {
        struct proc *p = &d->procs[i];
        p->pid = 1 + i * 7 + (int)rng_below(&d->rng, 7);
        p->busy = rng_below(&d->rng, 100) < 4;
        p->cpu_pm = p->busy ? (int)rng_below(&d->rng, 1000) : 0;
        p->user = (uint8_t)rng_below(&d->rng, 6), p->cmd = (uint8_t)rng_below(&d->rng, 11);
        p->mem_kb = 2048 + (long)rng_below(&d->rng, 1 << 20), p->time_cs = (long)rng_below(&d->rng, 1 << 22);
        d->order[i] = p;
    }
    for (int r = 0; r < ROWS; r++)
        pad_line(d->shown[r], 0), d->shown_style[r] = ATTR_DEFAULT;
}

int main(int argc, char **argv)
{
    opt_t opts[] = {
        {"refreshes", "refreshes of the dashboard (10 per second)", 900, 1, 1000000, 0},
        {"procs", "processes on the monitored machine", 3000, ROWS, 1000000, 0},
        {"redraw-every", "the dashboard repaints the whole screen every N refreshes", 500, 1, 1000000, 0},
        {"seed", "workload seed", 2026, 0, 1000000000, 0},
    };
    opts_parse(argc, argv, opts, NOPTS(opts));
    struct session *s = calloc(1, sizeof *s);
    if (!s || !(s->ren.fb = calloc((size_t)FB_W * FB_H, sizeof(uint32_t))))     /* black: kPalette[0] */
        return fprintf(stderr, "out of memory\n"), 1;
    dashboard_init(&s->app, (int)opt_get(opts, NOPTS(opts), "procs"),
                   (int)opt_get(opts, NOPTS(opts), "redraw-every"), (uint64_t)opt_get(opts, NOPTS(opts), "seed"));
    for (int r = 0; r < ROWS; r++)
        for (int c = 0; c < COLS; c++)
            s->term.grid[r][c] = (struct cell){' ', ATTR_DEFAULT};
    s->term.pen = ATTR_DEFAULT;
    session_run(s, opt_get(opts, NOPTS(opts), "refreshes"));
    uint64_t fb = fnv1a(s->ren.fb, sizeof(uint32_t) * FB_W * FB_H, 0xcbf29ce484222325ull);
    printf("%ld refreshes, %llu vsyncs, %llu bytes from the pty, %llu chars printed; grid %016llx, "
           "framebuffer %016llx, screenshots %016llx\n", s->app.refreshes, s->vsyncs, s->bytes_read,
           s->term.printed, (unsigned long long)fnv1a(s->term.grid, sizeof s->term.grid, 0xcbf29ce484222325ull),
           (unsigned long long)fb, (unsigned long long)s->shots);
    fprintf(stderr, "damaged_cells=%llu renders=%llu cells_rendered=%llu glyph_misses=%llu\n",
            s->term.damaged, s->ren.renders, s->ren.cells, s->ren.misses);
    free(s->ren.fb), free(s->app.procs), free(s->app.order), free(s);
    return 0;
}
