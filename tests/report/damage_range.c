/* A range widened for nothing (t_ranges.sh): a terminal keeps, per row,
 * the span of cells to repaint (dmg[r].lo .. hi); put_char() widens it for
 * every cell it writes, even one that already holds that character, and
 * repaint() renders every cell of each span. An application that redraws
 * its whole screen every frame (the buggy run's argument, 1) makes every
 * repaint render the whole screen although almost nothing changed. The
 * cost is in repaint() and render_cell(); the missing check is in
 * put_char(), which only calls damage_cell() - the span's writer.
 *
 * Usage: damage_range REDRAW_EVERY */
#include <stdio.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))
#define ROWS 24
#define COLS 80
#define FRAMES 600

struct span { int lo, hi; };
struct term {
    unsigned short grid[ROWS][COLS];
    struct span dmg[ROWS];
    unsigned long damaged;
};

static volatile unsigned long sink;

NOINLINE void damage_cell(struct term *t, int r, int c)
{
    struct span *d = &t->dmg[r];
    if (d->lo >= d->hi) d->lo = d->hi = c;
    if (c < d->lo) d->lo = c;
    if (c >= d->hi) d->hi = c + 1;
    t->damaged++;
}

NOINLINE void put_char(struct term *t, int r, int c, unsigned short ch)
{
    t->grid[r][c] = ch;
    damage_cell(t, r, c);
}

/* Draws one cell's glyph: the work each damaged cell costs. */
NOINLINE unsigned long render_cell(const struct term *t, int r, int c)
{
    unsigned long h = t->grid[r][c];
    for (int k = 0; k < 120; k++) h = h * 6364136223846793005ul + (unsigned long)(k ^ c);
    return h;
}

NOINLINE void repaint(struct term *t)
{
    for (int r = 0; r < ROWS; r++) {
        for (int c = t->dmg[r].lo; c < t->dmg[r].hi; c++)
            sink += render_cell(t, r, c);
        t->dmg[r].lo = t->dmg[r].hi = 0;
    }
}

/* The application's frame: the whole screen every redraw_every frames,
 * else only the clock in the corner. */
NOINLINE void app_frame(struct term *t, int frame, int redraw_every)
{
    if (frame % redraw_every == 0)
        for (int r = 0; r < ROWS; r++)
            for (int c = 0; c < COLS; c++)
                put_char(t, r, c, (unsigned short)('a' + (r * 7 + c) % 26));
    put_char(t, 0, COLS - 1, (unsigned short)('0' + frame % 10));
}

int main(int argc, char **argv)
{
    static struct term t;
    int every = argc > 1 ? atoi(argv[1]) : 500;
    if (every < 1) every = 1;
    for (int f = 0; f < FRAMES; f++) {
        app_frame(&t, f, every);
        repaint(&t);
    }
    printf("%lu %lu\n", t.damaged, sink & 1);
    return 0;
}
