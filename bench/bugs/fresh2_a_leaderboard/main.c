/* Written for the vprof bug corpus by a helper that had not seen the
 * profiler (2026-11-28); not modelled on a real issue. The fix is the
 * VPROF_CASE_FIX variant; the line marked FIX is the bug.
 *
 * ladder - the ranking service of an online game. A season is played in
 * rounds: in each round the match servers report results (simulated here by
 * simulate_match, a best-of-points duel between two players' skills) and the
 * ladder applies Elo updates. Between rounds, clients ask the ladder for
 * views: the top-10 page, the rank of one player, the players around one
 * player, a player's percentile. Every view first calls ladder_refresh(),
 * which brings the published order (a merge sort of all players by
 * displayed rating, win ratio, games played and id), the player -> position
 * map and the percentile cut-offs up to date.
 *
 * The bug: ladder_refresh() re-sorts the whole ladder on every view. The
 * ladder keeps a dirty flag (set by every rating update) but the refresh
 * never checks it, so every view after the first in a round re-sorts an
 * unchanged ladder. With few views per round (normal: 2) that is cheap;
 * with a busy client population (buggy: 30 views per round) the redundant
 * sorts more than double the run's CPU time.
 *
 * usage: leaderboard [--players N] [--rounds N] [--matches N] [--views N]
 */
#include "../common/corpus.h"

#define POINTS_TO_WIN   21
#define ELO_K           24.0
#define PAGE            10
#define NEIGHBOURS      5
#define NPCT            100

struct player {
    int    id;
    double rating;
    double skill;          /* hidden true strength, drives simulate_match */
    int    wins, losses;
    long   points_for;
};

struct ladder {
    struct player *p;
    int   n;
    int  *order;           /* player ids by rating, best first */
    int  *tmp;             /* merge-sort scratch */
    int  *pos;             /* player id -> position in order */
    double pct_cut[NPCT];  /* rating at each percentile boundary */
    int   dirty;           /* ratings changed since the last sort */
    long  sorts;           /* informative, on stderr */
};

/* ------------------------------------------------------------ match sim */
/* The match servers' random stream (xorshift64*), always inlined: the
 * rally loop draws once per point. */
static inline __attribute__((always_inline)) double draw_unit(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return (double)((*s * 2685821657736338717ULL) >> 11) * (1.0 / 9007199254740992.0);
}

/* A game to POINTS_TO_WIN, win by two; returns 1 if a wins. */
static int simulate_match(rng_t *r, struct player *a, struct player *b)
{
    double pa = a->skill / (a->skill + b->skill);
    int sa = 0, sb = 0;
    for (;;) {
        if (draw_unit(&r->s) < pa)  /* the stronger player wins more rallies */
            sa++;
        else
            sb++;
        if ((sa >= POINTS_TO_WIN || sb >= POINTS_TO_WIN) && abs(sa - sb) >= 2)
            break;
    }
    a->points_for += sa;
    b->points_for += sb;
    return sa > sb;
}

/* e^x without libm (the corpus links no -lm): Taylor series on x/1024,
 * squared back ten times; plenty for |x| < 10. */
static double exp_small(double x)
{
    double y = x / 1024.0, term = 1.0, sum = 1.0;
    for (int k = 1; k < 10; k++) {
        term *= y / k;
        sum += term;
    }
    for (int k = 0; k < 10; k++)
        sum *= sum;
    return sum;
}

static void elo_update(struct ladder *lb, struct player *a, struct player *b, int a_won)
{
    double ea = 1.0 / (1.0 + exp_small((b->rating - a->rating) * (2.302585092994046 / 400.0)));
    double sa = a_won ? 1.0 : 0.0;
    double d = ELO_K * (sa - ea);
    a->rating += d;
    b->rating -= d;
    if (a_won) { a->wins++; b->losses++; } else { b->wins++; a->losses++; }
    lb->dirty = 1;
}

/* --------------------------------------------------------- rating order */
/* The published order: displayed rating (one decimal) first, then win
 * ratio, then games played, then id, so the order is total. */
static int rank_before(const struct player *p, int x, int y)
{
    long rx = (long)(p[x].rating * 10.0 + 0.5), ry = (long)(p[y].rating * 10.0 + 0.5);
    if (rx != ry)
        return rx > ry;
    int gx = p[x].wins + p[x].losses, gy = p[y].wins + p[y].losses;
    double wx = gx ? (double)p[x].wins / gx : 0.0, wy = gy ? (double)p[y].wins / gy : 0.0;
    if (wx != wy)
        return wx > wy;
    if (gx != gy)
        return gx > gy;
    return x < y;
}

static void merge_runs(const struct player *p, const int *src, int *dst,
                       int lo, int mid, int hi)
{
    int i = lo, j = mid, k = lo;
    while (i < mid && j < hi)
        dst[k++] = rank_before(p, src[j], src[i]) ? src[j++] : src[i++];
    while (i < mid)
        dst[k++] = src[i++];
    while (j < hi)
        dst[k++] = src[j++];
}

/* Bottom-up stable merge sort of lb->order by rating. */
static void sort_by_rating(struct ladder *lb)
{
    int *a = lb->order, *b = lb->tmp;
    for (int w = 1; w < lb->n; w *= 2) {
        for (int lo = 0; lo < lb->n; lo += 2 * w) {
            int mid = lo + w < lb->n ? lo + w : lb->n;
            int hi = lo + 2 * w < lb->n ? lo + 2 * w : lb->n;
            merge_runs(lb->p, a, b, lo, mid, hi);
        }
        int *t = a; a = b; b = t;
    }
    if (a != lb->order)
        memcpy(lb->order, a, (size_t)lb->n * sizeof *a);
}

/* Brings order, pos and the percentile cut-offs up to date. */
static void ladder_refresh(struct ladder *lb)
{
#ifdef VPROF_CASE_FIX
    if (!lb->dirty)
        return;
#else
    /* FIX: return here when no rating changed since the last sort (!lb->dirty) */
#endif
    sort_by_rating(lb);
    for (int i = 0; i < lb->n; i++)
        lb->pos[lb->order[i]] = i;
    for (int c = 0; c < NPCT; c++)
        lb->pct_cut[c] = lb->p[lb->order[(long)c * lb->n / NPCT]].rating;
    lb->dirty = 0;
    lb->sorts++;
}

/* ---------------------------------------------------------------- views */
static uint64_t fold(uint64_t h, const char *s)
{
    while (*s)
        h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
    return h;
}

static uint64_t view_top_page(struct ladder *lb, uint64_t h)
{
    char line[96];
    ladder_refresh(lb);
    for (int i = 0; i < PAGE && i < lb->n; i++) {
        const struct player *q = &lb->p[lb->order[i]];
        snprintf(line, sizeof line, "%d. player%05d %.1f (%d-%d)", i + 1, q->id,
                 q->rating, q->wins, q->losses);
        h = fold(h, line);
    }
    return h;
}

static uint64_t view_rank(struct ladder *lb, int id, uint64_t h)
{
    char line[64];
    ladder_refresh(lb);
    snprintf(line, sizeof line, "player%05d rank %d of %d", id, lb->pos[id] + 1, lb->n);
    return fold(h, line);
}

static uint64_t view_neighbours(struct ladder *lb, int id, uint64_t h)
{
    char line[64];
    ladder_refresh(lb);
    int at = lb->pos[id];
    int lo = at - NEIGHBOURS < 0 ? 0 : at - NEIGHBOURS;
    int hi = at + NEIGHBOURS >= lb->n ? lb->n - 1 : at + NEIGHBOURS;
    for (int i = lo; i <= hi; i++) {
        snprintf(line, sizeof line, "%d:player%05d:%.0f", i + 1, lb->order[i],
                 lb->p[lb->order[i]].rating);
        h = fold(h, line);
    }
    return h;
}

static uint64_t view_percentile(struct ladder *lb, int id, uint64_t h)
{
    char line[64];
    ladder_refresh(lb);
    double r = lb->p[id].rating;
    int c = 0;
    while (c + 1 < NPCT && lb->pct_cut[c + 1] >= r)
        c++;
    snprintf(line, sizeof line, "player%05d top %d%%", id, c + 1);
    return fold(h, line);
}

/* One client request, chosen by the request mix. */
static uint64_t serve_view(struct ladder *lb, rng_t *r, uint64_t h)
{
    int id = (int)rng_below(r, (uint64_t)lb->n);
    switch (rng_below(r, 8)) {
    case 0: return view_top_page(lb, h);
    case 1: case 2: return view_neighbours(lb, id, h);
    case 3: return view_percentile(lb, id, h);
    default: return view_rank(lb, id, h);
    }
}

/* --------------------------------------------------------------- season */
static void play_round(struct ladder *lb, rng_t *r, long matches)
{
    for (long m = 0; m < matches; m++) {
        int a = (int)rng_below(r, (uint64_t)lb->n);
        int b = (int)rng_below(r, (uint64_t)lb->n - 1);
        if (b >= a)
            b++;
        int a_won = simulate_match(r, &lb->p[a], &lb->p[b]);
        elo_update(lb, &lb->p[a], &lb->p[b], a_won);
    }
}

static uint64_t run_season(struct ladder *lb, long rounds, long matches, long views)
{
    rng_t games, clients;
    rng_seed(&games, 20261128);
    rng_seed(&clients, 77);
    uint64_t h = 1469598103934665603ULL;
    for (long round = 0; round < rounds; round++) {
        play_round(lb, &games, matches);
        for (long v = 0; v < views; v++)
            h = serve_view(lb, &clients, h);
    }
    return h;
}

static void ladder_init(struct ladder *lb, int n)
{
    rng_t r;
    rng_seed(&r, 4242);
    lb->n = n;
    lb->p = calloc((size_t)n, sizeof *lb->p);
    lb->order = malloc((size_t)n * sizeof *lb->order);
    lb->tmp = malloc((size_t)n * sizeof *lb->tmp);
    lb->pos = malloc((size_t)n * sizeof *lb->pos);
    if (!lb->p || !lb->order || !lb->tmp || !lb->pos) { perror("malloc"); exit(1); }
    for (int i = 0; i < n; i++) {
        lb->p[i].id = i;
        lb->p[i].rating = 1500.0;
        lb->p[i].skill = 0.5 + (double)rng_below(&r, 1000) / 1000.0;
        lb->order[i] = i;
    }
    lb->dirty = 1;
}

int main(int argc, char **argv)
{
    opt_t opts[] = {
        { "players", "registered players", 2500, 2, 1000000, 0 },
        { "rounds",  "rounds in the season", 50, 1, 100000, 0 },
        { "matches", "matches per round", 10000, 1, 10000000, 0 },
        { "views",   "client views per round", 2, 1, 100000, 0 },
    };
    opts_parse(argc, argv, opts, NOPTS(opts));
    int players = (int)opt_get(opts, NOPTS(opts), "players");
    long rounds = opt_get(opts, NOPTS(opts), "rounds");
    long matches = opt_get(opts, NOPTS(opts), "matches");
    long views = opt_get(opts, NOPTS(opts), "views");

    struct ladder lb;
    memset(&lb, 0, sizeof lb);
    ladder_init(&lb, players);
    uint64_t h = run_season(&lb, rounds, matches, views);

    ladder_refresh(&lb);
    const struct player *best = &lb.p[lb.order[0]];
    printf("players=%d rounds=%ld views=%ld champion=player%05d rating=%.2f digest=%016llx\n",
           players, rounds, rounds * views, best->id, best->rating, (unsigned long long)h);
    fprintf(stderr, "sorts=%ld\n", lb.sorts);
    free(lb.p); free(lb.order); free(lb.tmp); free(lb.pos);
    return 0;
}
