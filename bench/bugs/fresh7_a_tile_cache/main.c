/* Written for the vprof bug corpus by a helper that had not seen the
 * profiler (2026-11-29); not modelled on a real issue. The fix is the
 * VPROF_CASE_FIX variant; the line marked FIX is the bug.
 *
 * tilesrv - the map tile server of a live map. The map (landuse, water and
 * building footprints) is rendered into 64x64 tiles at zoom levels 2 to 5,
 * and clients ask for viewports ("GET /view?z=..&x=..&y=..&w=..&h=..")
 * that the server composes from tiles of its memory cache. An editing feed
 * corrects building footprints while the server runs: every edit bumps the
 * map's edit sequence and stamps it on every tile, at every zoom level, that
 * the footprint covered before or covers after. A cached tile is fresh while
 * it was rendered at or after its own stamp; a stale tile is rendered again
 * on its next request.
 *
 * The bug: tile_get() compares the tile's render sequence with the map's
 * latest edit instead of the tile's own stamp, so any edit anywhere makes
 * every cached tile stale. With the feed off (normal: --edit-every 0) it
 * never shows: each tile is rendered once; with the feed on (buggy: an edit
 * every 1,000 requests) the server renders again most tiles it serves after
 * each edit, though an edit changes a few tiles.
 */
#include "../common/corpus.h"

#define TILE        64                  /* pixels per tile side */
#define ZMIN        2
#define ZMAX        5
#define SUB         16                  /* subpixels per pixel */
#define WORLD_SUB   ((TILE << ZMAX) * SUB)  /* world side in ZMAX subpixels */
#define GRID        (1 << ZMAX)         /* spatial index: one cell per ZMAX tile */
#define MAXPTS      12
#define MAXXS       (MAXPTS + 2)
#define CACHE_SLOTS 4096                /* holds the whole pyramid (1,360 tiles) */
#define VIEW_W      192
#define VIEW_H      128
#define MAX_SESSIONS 64
#define PULL        16                  /* 1/PULL of the way back to the centre per request */
#define N_LANDUSE   40                  /* polygons drawn under the buildings */
#define N_WATER     6

enum { L_LANDUSE, L_WATER, L_BUILDING };

struct feature {
    uint8_t layer, npts, alpha;
    uint32_t rgb;
    int32_t x[MAXPTS], y[MAXPTS];       /* ZMAX subpixels */
    int32_t x0, y0, x1, y1;             /* bounding box, inclusive */
};

struct idlist { uint32_t *id; uint32_t n, cap; };

struct map {
    struct feature *f;                  /* in draw order: layer, then id */
    uint32_t nfeat;
    struct idlist cell[GRID * GRID];
    uint32_t *dirty[ZMAX + 1];          /* per tile: edit_seq of its last change */
    uint32_t edit_seq;
    uint32_t *seen, stamp;              /* dedup of candidates in collect_features */
};

struct tile { uint32_t key, rendered_seq; uint32_t *px; uint64_t etag; };

struct server {
    struct map *map;
    struct tile cache[CACHE_SLOTS];
    uint32_t view[VIEW_W * VIEW_H];
    uint32_t cand[1 << 16];
    uint64_t requests, bad_requests, body_bytes, hits, stale, misses, renders, digest;
};

struct session { int z; int32_t cx, cy; };   /* viewport centre, pixels at z */

/* cos x1024 of 16 directions (sin d is cos(d - 4)): polygons without libm. */
static const int16_t kCos[16] = {1024, 946, 724, 392, 0, -392, -724, -946,
                                 -1024, -946, -724, -392, 0, 392, 724, 946};

static void *xcalloc(size_t n, size_t sz)
{
    void *p = calloc(n, sz);
    if (!p)
        perror("calloc"), exit(1);
    return p;
}

static int32_t clamp32(int64_t v, int32_t lo, int32_t hi)
{
    return v < lo ? lo : v > hi ? hi : (int32_t)v;
}

/* ------------------------------------------------------------ the map */
static void feature_bbox(struct feature *f)
{
    f->x0 = f->x1 = f->x[0], f->y0 = f->y1 = f->y[0];
    for (int i = 1; i < f->npts; i++) {
        if (f->x[i] < f->x0) f->x0 = f->x[i];
        if (f->x[i] > f->x1) f->x1 = f->x[i];
        if (f->y[i] < f->y0) f->y0 = f->y[i];
        if (f->y[i] > f->y1) f->y1 = f->y[i];
    }
}

/* A star-shaped polygon around (cx, cy): n vertices in increasing
 * direction, each at a random distance between radius/2 and radius. */
static void make_polygon(struct feature *f, rng_t *r, int32_t cx, int32_t cy, int32_t radius)
{
    int n = 4 + (int)rng_below(r, MAXPTS - 3), dir = (int)rng_below(r, 16);
    for (int k = 0; k < n; k++) {
        int d = (dir + k * 16 / n) & 15;
        int64_t rad = radius / 2 + (int64_t)rng_below(r, (uint64_t)radius / 2 + 1);
        f->x[k] = clamp32(cx + rad * kCos[d] / 1024, 0, WORLD_SUB - 1);
        f->y[k] = clamp32(cy + rad * kCos[(d + 12) & 15] / 1024, 0, WORLD_SUB - 1);
    }
    f->npts = (uint8_t)n;
    feature_bbox(f);
}

static void idlist_push(struct idlist *l, uint32_t id)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 8;
        if (!(l->id = realloc(l->id, l->cap * sizeof *l->id)))
            perror("realloc"), exit(1);
    }
    l->id[l->n++] = id;
}

static void idlist_remove(struct idlist *l, uint32_t id)
{
    for (uint32_t i = 0; i < l->n; i++)
        if (l->id[i] == id) {
            l->id[i] = l->id[--l->n];
            return;
        }
}

/* The index cells (ZMAX tiles) a feature's bounding box touches. */
static void grid_update(struct map *m, uint32_t id, int add)
{
    const struct feature *f = &m->f[id];
    int shift = 6 + 4;                  /* subpixels -> pixels -> ZMAX tiles */
    for (int cy = f->y0 >> shift; cy <= f->y1 >> shift; cy++)
        for (int cx = f->x0 >> shift; cx <= f->x1 >> shift; cx++)
            add ? idlist_push(&m->cell[cy * GRID + cx], id) : idlist_remove(&m->cell[cy * GRID + cx], id);
}

static void map_generate(struct map *m, rng_t *r, uint32_t buildings)
{
    static const uint32_t kRgb[3] = {0x9cc28a, 0x5d8fd6, 0xc9b8a6};
    m->nfeat = N_LANDUSE + N_WATER + buildings;
    m->f = xcalloc(m->nfeat, sizeof *m->f);
    m->seen = xcalloc(m->nfeat, sizeof *m->seen);
    for (uint32_t i = 0; i < m->nfeat; i++) {
        struct feature *f = &m->f[i];
        f->layer = i < N_LANDUSE ? L_LANDUSE : i < N_LANDUSE + N_WATER ? L_WATER : L_BUILDING;
        f->rgb = kRgb[f->layer] ^ (uint32_t)rng_below(r, 0x101010);
        f->alpha = f->layer == L_LANDUSE ? 160 : f->layer == L_BUILDING ? 220 : 255;
        int32_t cx = (int32_t)rng_below(r, WORLD_SUB), cy = (int32_t)rng_below(r, WORLD_SUB);
        if (f->layer == L_BUILDING)
            make_polygon(f, r, cx, cy, (6 + (int32_t)rng_below(r, 18)) * SUB);
        else
            make_polygon(f, r, cx, cy, (80 + (int32_t)rng_below(r, 220)) * SUB);
        grid_update(m, i, 1);
    }
    for (int z = ZMIN; z <= ZMAX; z++)
        m->dirty[z] = xcalloc((size_t)1 << (2 * z), sizeof(uint32_t));
}

/* The edit_seq of the last edit under tile (z, tx, ty). */
static uint32_t *tile_stamp(const struct map *m, int z, int tx, int ty)
{
    return &m->dirty[z][ty * (1 << z) + tx];
}

/* Stamps the current edit on every tile, at every zoom, under the box. */
static void mark_dirty(struct map *m, const struct feature *f)
{
    for (int z = ZMIN; z <= ZMAX; z++) {
        int shift = ZMAX - z + 4 + 6;
        for (int ty = f->y0 >> shift; ty <= f->y1 >> shift; ty++)
            for (int tx = f->x0 >> shift; tx <= f->x1 >> shift; tx++)
                *tile_stamp(m, z, tx, ty) = m->edit_seq;
    }
}

/* One correction from the editing feed: a footprint moved by up to 4 px. */
static void map_apply_edit(struct map *m, rng_t *r)
{
    uint32_t id = N_LANDUSE + N_WATER + (uint32_t)rng_below(r, m->nfeat - N_LANDUSE - N_WATER);
    struct feature *f = &m->f[id];
    int32_t dx = (int32_t)rng_below(r, 8 * SUB + 1) - 4 * SUB;
    int32_t dy = (int32_t)rng_below(r, 8 * SUB + 1) - 4 * SUB;
    m->edit_seq++;
    mark_dirty(m, f);
    grid_update(m, id, 0);
    for (int i = 0; i < f->npts; i++) {
        f->x[i] = clamp32((int64_t)f->x[i] + dx, 0, WORLD_SUB - 1);
        f->y[i] = clamp32((int64_t)f->y[i] + dy, 0, WORLD_SUB - 1);
    }
    feature_bbox(f);
    grid_update(m, id, 1);
    mark_dirty(m, f);
}

/* ------------------------------------------------------------ rendering */
/* Features whose box touches tile (z, tx, ty), in draw order. */
static uint32_t collect_features(struct map *m, int z, int tx, int ty, uint32_t *out)
{
    int span = 1 << (ZMAX - z);
    uint32_t n = 0;
    m->stamp++;
    for (int cy = ty * span; cy < (ty + 1) * span; cy++)
        for (int cx = tx * span; cx < (tx + 1) * span; cx++) {
            const struct idlist *l = &m->cell[cy * GRID + cx];
            for (uint32_t i = 0; i < l->n; i++)
                if (m->seen[l->id[i]] != m->stamp) {
                    m->seen[l->id[i]] = m->stamp;
                    out[n++] = l->id[i];
                }
        }
    for (uint32_t i = 1; i < n; i++) {  /* insertion sort: lists are short */
        uint32_t v = out[i], j = i;
        for (; j > 0 && out[j - 1] > v; j--)
            out[j] = out[j - 1];
        out[j] = v;
    }
    return n;
}

/* x of every polygon edge crossing the row whose centre is yc (subpixels at
 * the tile's zoom), sorted. */
static int polygon_row_crossings(const struct feature *f, int shift, int64_t yc, int64_t *xs)
{
    int n = 0;
    for (int i = 0, j = f->npts - 1; i < f->npts; j = i++) {
        int64_t xi = f->x[i] >> shift, yi = f->y[i] >> shift;
        int64_t xj = f->x[j] >> shift, yj = f->y[j] >> shift;
        if ((yi <= yc && yc < yj) || (yj <= yc && yc < yi)) {
            int64_t x = xi + (yc - yi) * (xj - xi) / (yj - yi);
            int k = n++;
            for (; k > 0 && xs[k - 1] > x; k--)
                xs[k] = xs[k - 1];
            xs[k] = x;
        }
    }
    return n;
}

static void fill_span(uint32_t *row, int x0, int x1, uint32_t rgb, unsigned a)
{
    for (int x = x0; x < x1; x++) {
        uint32_t d = row[x], out = 0;
        for (int c = 0; c < 24; c += 8) {
            unsigned dc = (d >> c) & 255, sc = (rgb >> c) & 255;
            out |= ((dc * (255 - a) + sc * a) / 255) << c;
        }
        row[x] = out;
    }
}

/* Scanline fill, sampling pixel centres in global coordinates so that a
 * polygon split over tiles renders exactly as one. */
static void draw_polygon(uint32_t *px, int z, int tx, int ty, const struct feature *f)
{
    int shift = ZMAX - z;
    int64_t ox = (int64_t)tx * TILE, oy = (int64_t)ty * TILE;
    int64_t row0 = (f->y0 >> shift) / SUB, row1 = (f->y1 >> shift) / SUB;
    int64_t xs[MAXXS];
    for (int64_t y = row0 > oy ? row0 : oy; y <= row1 && y < oy + TILE; y++) {
        int n = polygon_row_crossings(f, shift, y * SUB + SUB / 2, xs);
        for (int k = 0; k + 1 < n; k += 2) {
            int64_t a = (xs[k] + SUB / 2 - 1) / SUB - ox;   /* first centre >= xs[k] */
            int64_t b = (xs[k + 1] + SUB / 2 - 1) / SUB - ox;
            if (a < 0) a = 0;
            if (b > TILE) b = TILE;
            if (a < b)
                fill_span(px + (y - oy) * TILE, (int)a, (int)b, f->rgb, f->alpha);
        }
    }
}

/* A tile's ETag: FNV-1a over pairs of pixels. */
static uint64_t tile_etag(const uint32_t *px)
{
    uint64_t h = 1469598103934665603ull;
    for (int i = 0; i < TILE * TILE; i += 2)
        h = (h ^ ((uint64_t)px[i] << 32 | px[i + 1])) * 1099511628211ull;
    return h;
}

static void render_tile(struct server *s, int z, int tx, int ty, struct tile *t)
{
    uint32_t *px = t->px;
    for (int i = 0; i < TILE * TILE; i++)
        px[i] = 0xf2efe9;               /* land */
    uint32_t n = collect_features(s->map, z, tx, ty, s->cand);
    for (uint32_t i = 0; i < n; i++)
        draw_polygon(px, z, tx, ty, &s->map->f[s->cand[i]]);
    t->etag = tile_etag(px);
    s->renders++;
}

/* ------------------------------------------------------------ tile cache */
static uint32_t tile_key(int z, int tx, int ty)
{
    return (uint32_t)z << 24 | (uint32_t)tx << 12 | (uint32_t)ty;
}

static struct tile *cache_slot(struct server *s, uint32_t key)
{
    uint32_t h = (key * 2654435761u) >> 20;             /* 12 bits */
    while (s->cache[h].px && s->cache[h].key != key)
        h = (h + 1) & (CACHE_SLOTS - 1);
    return &s->cache[h];
}

/* The cached tile, rendered again first when the map changed under it. */
static const struct tile *tile_get(struct server *s, int z, int tx, int ty)
{
    struct tile *t = cache_slot(s, tile_key(z, tx, ty));
    if (t->px) {                        /* cached: is it still current? */
#ifdef VPROF_CASE_FIX
        int fresh = t->rendered_seq >= *tile_stamp(s->map, z, tx, ty);
#else
        int fresh = t->rendered_seq >= s->map->edit_seq;    /* FIX: compare with *tile_stamp() */
#endif
        if (fresh) {
            s->hits++;
            return t;
        }
        s->stale++;
    } else {
        t->key = tile_key(z, tx, ty);
        t->px = xcalloc(TILE * TILE, sizeof *t->px);
        s->misses++;
    }
    render_tile(s, z, tx, ty, t);
    t->rendered_seq = s->map->edit_seq;
    return t;
}

/* ------------------------------------------------------------ requests */
static void blit_tile(uint32_t *view, int vw, int vx, int vy, int w, int h,
                      const uint32_t *px, int sx, int sy)
{
    for (int r = 0; r < h; r++)
        memcpy(view + (size_t)(vy + r) * vw + vx, px + (sy + r) * TILE + sx, (size_t)w * 4);
}

/* Composes the viewport; its ETag combines the tiles' ETags and offsets. */
static void serve_viewport(struct server *s, int z, int x, int y, int w, int h)
{
    uint64_t etag = (uint64_t)z << 48 ^ (uint64_t)x << 24 ^ (uint64_t)y;
    for (int ty = y / TILE; ty <= (y + h - 1) / TILE; ty++)
        for (int tx = x / TILE; tx <= (x + w - 1) / TILE; tx++) {
            const struct tile *t = tile_get(s, z, tx, ty);
            int x0 = tx * TILE > x ? tx * TILE : x, x1 = (tx + 1) * TILE < x + w ? (tx + 1) * TILE : x + w;
            int y0 = ty * TILE > y ? ty * TILE : y, y1 = (ty + 1) * TILE < y + h ? (ty + 1) * TILE : y + h;
            blit_tile(s->view, w, x0 - x, y0 - y, x1 - x0, y1 - y0, t->px, x0 - tx * TILE, y0 - ty * TILE);
            etag = (etag ^ t->etag) * 0x100000001b3ull;
        }
    s->body_bytes += (uint64_t)w * h * sizeof *s->view;
    s->digest = (s->digest ^ etag) * 0x100000001b3ull;
}

static int query_param(const char *q, const char *name, long *out)
{
    size_t len = strlen(name);
    for (const char *p = q; p && *p; p = strchr(p, '&'), p = p ? p + 1 : NULL)
        if (strncmp(p, name, len) == 0 && p[len] == '=') {
            char *end;
            *out = strtol(p + len + 1, &end, 10);
            return end != p + len + 1 && (*end == '&' || *end == '\0');
        }
    return 0;
}

/* "GET /view?z=Z&x=X&y=Y&w=W&h=H": a viewport, pixels at zoom Z. */
static void handle_request(struct server *s, const char *line)
{
    long z, x, y, w, h;
    const char *q = strncmp(line, "GET /view?", 10) == 0 ? line + 10 : NULL;
    s->requests++;
    if (!q || !query_param(q, "z", &z) || !query_param(q, "x", &x) || !query_param(q, "y", &y)
        || !query_param(q, "w", &w) || !query_param(q, "h", &h) || z < ZMIN || z > ZMAX
        || w < 1 || w > VIEW_W || h < 1 || h > VIEW_H || x < 0 || y < 0
        || x + w > (long)TILE << z || y + h > (long)TILE << z) {
        s->bad_requests++;
        return;
    }
    serve_viewport(s, (int)z, (int)x, (int)y, (int)w, (int)h);
}

/* A viewer pans a little each request and zooms now and then; viewers
 * drift back to the city centre, where most of them look. */
static void next_request(struct session *v, rng_t *r, char *buf, size_t len)
{
    uint64_t roll = rng_below(r, 100);
    if (roll < 4 && v->z < ZMAX)
        v->z++, v->cx *= 2, v->cy *= 2;
    else if (roll < 8 && v->z > ZMIN)
        v->z--, v->cx /= 2, v->cy /= 2;
    int32_t side = TILE << v->z;
    v->cx += (int32_t)rng_below(r, 49) - 24 + (side / 2 - v->cx) / PULL;
    v->cy += (int32_t)rng_below(r, 49) - 24 + (side / 2 - v->cy) / PULL;
    v->cx = clamp32(v->cx, VIEW_W / 2, side - VIEW_W / 2);
    v->cy = clamp32(v->cy, VIEW_H / 2, side - VIEW_H / 2);
    snprintf(buf, len, "GET /view?z=%d&x=%d&y=%d&w=%d&h=%d", v->z,
             (int)(v->cx - VIEW_W / 2), (int)(v->cy - VIEW_H / 2), VIEW_W, VIEW_H);
}

static void run_clients(struct server *s, long nreq, long edit_every, int nsess, rng_t *r)
{
    struct session sess[MAX_SESSIONS];
    char line[128];
    for (int i = 0; i < nsess; i++) {
        sess[i].z = ZMIN + (int)rng_below(r, ZMAX - ZMIN + 1);
        sess[i].cx = (int32_t)rng_below(r, (uint64_t)TILE << sess[i].z);
        sess[i].cy = (int32_t)rng_below(r, (uint64_t)TILE << sess[i].z);
    }
    for (long i = 0; i < nreq; i++) {
        if (edit_every > 0 && i > 0 && i % edit_every == 0)
            map_apply_edit(s->map, r);
        next_request(&sess[i % nsess], r, line, sizeof line);
        handle_request(s, line);
        CASE_PROGRESS("request");
    }
}

int main(int argc, char **argv)
{
    opt_t opts[] = {
        {"requests", "viewport requests served", 80000, 1, 10000000, 0},
        {"edit-every", "requests between two footprint edits (0: feed off)", 0, 0, 100000000, 0},
        {"buildings", "building footprints on the map", 2500, 1, 50000, 0},
        {"sessions", "viewers panning the map", 8, 1, MAX_SESSIONS, 0},
    };
    opts_parse(argc, argv, opts, NOPTS(opts));
    rng_t r;
    rng_seed(&r, 0x7113cac4e);
    static struct map map;              /* static: the cache and buffers are large */
    static struct server srv;
    map_generate(&map, &r, (uint32_t)opt_get(opts, NOPTS(opts), "buildings"));
    srv.map = &map;
    run_clients(&srv, opt_get(opts, NOPTS(opts), "requests"), opt_get(opts, NOPTS(opts), "edit-every"),
                (int)opt_get(opts, NOPTS(opts), "sessions"), &r);
    printf("requests=%llu bad=%llu body_bytes=%llu etags=%016llx\n", (unsigned long long)srv.requests,
           (unsigned long long)srv.bad_requests, (unsigned long long)srv.body_bytes, (unsigned long long)srv.digest);
    fprintf(stderr, "edits=%u hits=%llu stale=%llu misses=%llu renders=%llu\n", map.edit_seq, (unsigned long long)srv.hits,
            (unsigned long long)srv.stale, (unsigned long long)srv.misses, (unsigned long long)srv.renders);
    return 0;
}
