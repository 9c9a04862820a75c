/* gmon.c - glibc's gmon.out (FORMATS.md §6): the one reader, shared by
 * vprof-report's gprof mode and its vprof mode, and the writer the runtime
 * uses. Layout as glibc gmon/gmon.c write_gmon() and binutils gprof
 * gmon_io.c: a 20-byte header, then tagged records. */
#include <stdlib.h>
#include <string.h>

#include "vprof_format.h"

enum { TAG_TIME_HIST = 0, TAG_CG_ARC = 1, TAG_BB_COUNT = 2 };
#define GMON_HDR_SIZE 20        /* cookie[4] version[4] spare[12] */
#define HIST_HDR_SIZE 40        /* lowpc, highpc, hist_size, prof_rate, dimen[15], abbrev */
#define ARC_SIZE 20             /* from_pc[8] self_pc[8] count[4] */

/* ---------------- writer ---------------- */

static void w_flush(struct vpf_gmon_writer *w)
{
    if (!w->err && vpf_write_all(w->fd, w->buf, w->n) < 0)
        w->err = 1;
    w->n = 0;
}

static void w_put(struct vpf_gmon_writer *w, const void *p, size_t n)
{
    const unsigned char *s = p;
    while (n) {
        if (w->n == sizeof w->buf)
            w_flush(w);
        size_t k = sizeof w->buf - w->n;
        if (k > n)
            k = n;
        memcpy(w->buf + w->n, s, k);
        w->n += k;
        s += k;
        n -= k;
    }
}

void vpf_gmon_w_begin(struct vpf_gmon_writer *w, int fd)
{
    unsigned char hdr[GMON_HDR_SIZE] = {'g', 'm', 'o', 'n', 1, 0, 0, 0};
    w->fd = fd;
    w->err = 0;
    w->n = 0;
    w_put(w, hdr, sizeof hdr);
}

void vpf_gmon_w_hist(struct vpf_gmon_writer *w, uint64_t lowpc, uint64_t highpc,
                     const uint16_t *bins, uint32_t nbins, uint32_t prof_rate)
{
    unsigned char h[1 + HIST_HDR_SIZE] = {TAG_TIME_HIST};
    int32_t size = (int32_t)nbins, rate = (int32_t)prof_rate;
    memcpy(h + 1, &lowpc, 8);
    memcpy(h + 9, &highpc, 8);
    memcpy(h + 17, &size, 4);
    memcpy(h + 21, &rate, 4);
    memcpy(h + 25, "seconds", 7);           /* dimen[15], NUL-padded */
    h[40] = 's';
    w_put(w, h, sizeof h);
    w_put(w, bins, (size_t)nbins * sizeof *bins);
}

void vpf_gmon_w_arc(struct vpf_gmon_writer *w, uint64_t from_pc, uint64_t self_pc,
                    uint32_t count)
{
    unsigned char a[1 + ARC_SIZE] = {TAG_CG_ARC};
    memcpy(a + 1, &from_pc, 8);
    memcpy(a + 9, &self_pc, 8);
    memcpy(a + 17, &count, 4);
    w_put(w, a, sizeof a);
}

int vpf_gmon_w_end(struct vpf_gmon_writer *w)
{
    w_flush(w);
    return w->err ? -1 : 0;
}

/* ---------------- reader ---------------- */

/* Duplicate (from, self) pairs are summed into their first occurrence and
 * the file order is otherwise kept: gprof breaks ties in that order, and
 * `vprof-report --gprof` must print what gprof prints. */
struct arc_ix { struct vpf_gmon_arc a; size_t pos; };

static int cmp_arc_key(const void *a, const void *b)
{
    const struct arc_ix *x = a, *y = b;
    if (x->a.from_pc != y->a.from_pc)
        return x->a.from_pc < y->a.from_pc ? -1 : 1;
    if (x->a.self_pc != y->a.self_pc)
        return x->a.self_pc < y->a.self_pc ? -1 : 1;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static int cmp_arc_pos(const void *a, const void *b)
{
    const struct arc_ix *x = a, *y = b;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static int merge_arcs(struct vpf_gmon *g)
{
    if (g->n_arcs < 2)
        return 0;
    struct arc_ix *t = malloc(g->n_arcs * sizeof *t);
    if (!t)
        return -1;
    for (size_t i = 0; i < g->n_arcs; i++)
        t[i] = (struct arc_ix){g->arcs[i], i};
    qsort(t, g->n_arcs, sizeof *t, cmp_arc_key);
    size_t o = 0;
    for (size_t i = 1; i < g->n_arcs; i++) {
        if (t[i].a.from_pc == t[o].a.from_pc && t[i].a.self_pc == t[o].a.self_pc)
            t[o].a.count += t[i].a.count;
        else
            t[++o] = t[i];
    }
    size_t n = o + 1;
    qsort(t, n, sizeof *t, cmp_arc_pos);
    for (size_t i = 0; i < n; i++)
        g->arcs[i] = t[i].a;
    g->n_arcs = n;
    free(t);
    return 0;
}

/* Parses one file into g, adding to what g already holds. */
static int parse_into(struct vpf_gmon *g, const unsigned char *b, size_t len,
                      const char *path, vpf_err *e)
{
    if (len < GMON_HDR_SIZE || memcmp(b, "gmon", 4)) {
        vpf_set_err(e, "%s: offset 0: not a gmon.out file (bad cookie)", path);
        return -1;
    }
    int32_t version;
    memcpy(&version, b + 4, 4);
    if (version != 1) {
        vpf_set_err(e, "%s: offset 4: unsupported gmon version %d", path, version);
        return -1;
    }
    size_t off = GMON_HDR_SIZE, arcs_cap = g->n_arcs;
    while (off < len) {
        size_t rec = off;
        unsigned tag = b[off++];
        if (tag == TAG_TIME_HIST) {
            if (len - off < HIST_HDR_SIZE) {
                vpf_set_err(e, "%s: offset %zu: truncated histogram header", path, rec);
                return -1;
            }
            uint64_t lo, hi;
            int32_t size, rate;
            memcpy(&lo, b + off, 8);
            memcpy(&hi, b + off + 8, 8);
            memcpy(&size, b + off + 16, 4);
            memcpy(&rate, b + off + 20, 4);
            if (size < 0 || hi < lo) {
                vpf_set_err(e, "%s: offset %zu: bad histogram range or size", path, rec);
                return -1;
            }
            off += HIST_HDR_SIZE;
            if ((len - off) / 2 < (size_t)size) {
                vpf_set_err(e, "%s: offset %zu: histogram truncated (%d bins announced)",
                            path, rec, size);
                return -1;
            }
            if (!g->has_hist) {
                g->lowpc = lo;
                g->highpc = hi;
                g->hist_size = (uint32_t)size;
                g->prof_rate = (uint32_t)rate;
                memcpy(g->dimen, b + off - 16, 15);
                g->dimen[15] = 0;
                g->dimen_abbrev = (char)b[off - 1];
                g->hist = calloc(size ? (size_t)size : 1, sizeof *g->hist);
                if (!g->hist) {
                    vpf_set_err(e, "%s: out of memory", path);
                    return -1;
                }
                g->has_hist = 1;
            } else if (lo != g->lowpc || hi != g->highpc || (uint32_t)size != g->hist_size) {
                vpf_set_err(e, "%s: offset %zu: histogram range differs from the first "
                            "profile's (different executable or load address?)", path, rec);
                return -1;
            }
            for (int32_t i = 0; i < size; i++) {
                uint16_t c;
                memcpy(&c, b + off + 2 * (size_t)i, 2);
                g->hist[i] += c;
            }
            off += 2 * (size_t)size;
        } else if (tag == TAG_CG_ARC) {
            if (len - off < ARC_SIZE) {
                vpf_set_err(e, "%s: offset %zu: truncated call-graph arc", path, rec);
                return -1;
            }
            if (vpf_grow_try((void **)&g->arcs, &arcs_cap, g->n_arcs + 1, sizeof *g->arcs) < 0) {
                vpf_set_err(e, "%s: out of memory", path);
                return -1;
            }
            struct vpf_gmon_arc *a = &g->arcs[g->n_arcs++];
            memcpy(&a->from_pc, b + off, 8);
            memcpy(&a->self_pc, b + off + 8, 8);
            memcpy(&a->count, b + off + 16, 4);
            off += ARC_SIZE;
        } else if (tag == TAG_BB_COUNT) {
            /* basic-block counts (gcc -a, obsolete): skipped but validated */
            int32_t n;
            if (len - off < 4) {
                vpf_set_err(e, "%s: offset %zu: truncated basic-block record", path, rec);
                return -1;
            }
            memcpy(&n, b + off, 4);
            off += 4;
            if (n < 0 || (len - off) / 16 < (size_t)n) {
                vpf_set_err(e, "%s: offset %zu: truncated basic-block record", path, rec);
                return -1;
            }
            off += 16 * (size_t)n;
        } else {
            vpf_set_err(e, "%s: offset %zu: unknown record tag %u", path, rec, tag);
            return -1;
        }
    }
    if (merge_arcs(g) < 0) {
        vpf_set_err(e, "%s: out of memory", path);
        return -1;
    }
    return 0;
}

int vpf_gmon_merge(struct vpf_gmon *g, const char *path, vpf_err *e)
{
    size_t len;
    unsigned char *b = vpf_read_file(path, &len, e);
    if (!b)
        return -1;
    int rc = parse_into(g, b, len, path, e);
    free(b);
    return rc;
}

int vpf_gmon_load(const char *path, struct vpf_gmon *g, vpf_err *e)
{
    memset(g, 0, sizeof *g);
    if (vpf_gmon_merge(g, path, e) < 0) {
        vpf_gmon_free(g);
        return -1;
    }
    return 0;
}

void vpf_gmon_free(struct vpf_gmon *g)
{
    free(g->hist);
    free(g->arcs);
    memset(g, 0, sizeof *g);
}
