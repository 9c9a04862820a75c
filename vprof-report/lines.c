/* lines.c - DWARF line table via libdwarf (the 2021 API Debian ships). All
 * rows of all CUs go into one array sorted by address; a lookup takes the
 * last row at or below the address (rows end at end_sequence). */
#include "lines.h"
#include "dwutil.h"                /* dwarf-meta's DIE helpers, die_pcrs (ranges.c) */
#include "vprof_xalloc.h"

#include <fcntl.h>
#include <libdwarf/dwarf.h>
#include <libdwarf/libdwarf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct row { uint64_t addr; uint32_t line; uint32_t file; int end; };

/* A range of code inlined from another function, depth >= 1 inside its
 * physical function; name: the source name, link: the linkage name (C++),
 * else the source name. */
struct inl { uint64_t lo, hi; uint32_t name, link; uint32_t depth; };

struct vpr_lines {
    struct row *rows;
    size_t n, cap;
    char **files;           /* interned file names (and inlined functions' names) */
    size_t n_files, cap_files;
    struct inl *inl;        /* sorted by lo */
    size_t n_inl, cap_inl;
    uint64_t inl_max;       /* the longest range, to bound a lookup */
};

static uint32_t intern(struct vpr_lines *l, const char *s)
{
    for (size_t i = l->n_files; i-- > 0;)     /* recent names first */
        if (strcmp(l->files[i], s) == 0) return (uint32_t)i;
    l->files = vpf_grow(l->files, &l->cap_files, l->n_files + 1, sizeof *l->files);
    l->files[l->n_files] = vpf_xstrdup(s);
    return (uint32_t)l->n_files++;
}

static int cmp_row(const void *a, const void *b)
{
    const struct row *x = a, *y = b;
    if (x->addr != y->addr) return x->addr < y->addr ? -1 : 1;
    return y->end - x->end;   /* a sequence end sorts before a new start */
}

static void add_cu(struct vpr_lines *l, Dwarf_Debug dbg, Dwarf_Die cu)
{
    Dwarf_Unsigned version;
    Dwarf_Small table_count;
    Dwarf_Line_Context ctx;
    Dwarf_Error err;
    if (dwarf_srclines_b(cu, &version, &table_count, &ctx, &err) != DW_DLV_OK)
        return;
    Dwarf_Line *lines;
    Dwarf_Signed n;
    size_t first = l->n;                /* this CU's first row */
    if (dwarf_srclines_from_linecontext(ctx, &lines, &n, &err) == DW_DLV_OK) {
        for (Dwarf_Signed i = 0; i < n; i++) {
            Dwarf_Addr a;
            Dwarf_Unsigned ln;
            Dwarf_Bool end = 0;
            char *src = NULL;
            if (dwarf_lineaddr(lines[i], &a, &err) != DW_DLV_OK) continue;
            if (dwarf_lineno(lines[i], &ln, &err) != DW_DLV_OK) ln = 0;
            dwarf_lineendsequence(lines[i], &end, &err);
            if (dwarf_linesrc(lines[i], &src, &err) != DW_DLV_OK) src = NULL;
            /* rows at the address where their sequence ends cover nothing
             * (gcc writes one before the end of a function): dropped, so
             * that the address belongs to the sequence starting there, or
             * to none */
            while (end && l->n > first && !l->rows[l->n - 1].end && l->rows[l->n - 1].addr == a)
                l->n--;
            l->rows = vpf_grow(l->rows, &l->cap, l->n + 1, sizeof *l->rows);
            l->rows[l->n++] = (struct row){ a, (uint32_t)ln,
                                            intern(l, src ? src : "??"), end != 0 };
            if (src) dwarf_dealloc(dbg, src, DW_DLA_STRING);
        }
    }
    dwarf_srclines_dealloc_b(ctx);
}

/* The name of an inlined subroutine: its abstract origin's attribute
 * `which` (DW_AT_name or DW_AT_linkage_name), through DW_AT_specification
 * for a C++ method defined outside its class. */
static char *origin_name(Dwarf_Debug dbg, Dwarf_Die die, Dwarf_Half which)
{
    const char *s = dw_name_via_origin(dbg, die, which);
    return s ? vpf_xstrdup(s) : NULL;
}

/* Every DW_TAG_inlined_subroutine under die (functions, blocks, inlined
 * code nest), with its depth of inlining. */
static void add_inlined(struct vpr_lines *l, Dwarf_Debug dbg, Dwarf_Die die, uint64_t base,
                        uint32_t depth, int level)
{
    Dwarf_Error err = NULL;
    Dwarf_Die c;
    if (level > 64 || dwarf_child(die, &c, &err) != DW_DLV_OK) {
        if (err) dwarf_dealloc_error(dbg, err);
        return;
    }
    for (;;) {
        Dwarf_Half tag = 0;
        dwarf_tag(c, &tag, &err);
        uint32_t d = depth;
        if (tag == DW_TAG_inlined_subroutine) {
            d = depth + 1;
            char *nm = origin_name(dbg, c, DW_AT_name);
            char *ln = nm ? origin_name(dbg, c, DW_AT_linkage_name) : NULL;
            struct pcrs r = {0};
            if (nm && die_pcrs(dbg, c, base, &r) > 0) {
                uint32_t id = intern(l, nm), link = ln ? intern(l, ln) : id;
                for (size_t i = 0; i < r.n; i++) {
                    l->inl = vpf_grow(l->inl, &l->cap_inl, l->n_inl + 1, sizeof *l->inl);
                    l->inl[l->n_inl++] = (struct inl){r.v[i].lo, r.v[i].hi, id, link, d};
                    if (r.v[i].hi - r.v[i].lo > l->inl_max) l->inl_max = r.v[i].hi - r.v[i].lo;
                }
            }
            pcrs_free(&r);
            free(nm);
            free(ln);
        }
        if (tag == DW_TAG_subprogram || tag == DW_TAG_lexical_block ||
            tag == DW_TAG_inlined_subroutine || tag == DW_TAG_namespace ||
            tag == DW_TAG_class_type || tag == DW_TAG_structure_type)
            add_inlined(l, dbg, c, base, d, level + 1);
        Dwarf_Die next;
        int rc = dwarf_siblingof_b(dbg, c, 1, &next, &err);
        dwarf_dealloc(dbg, c, DW_DLA_DIE);
        if (rc != DW_DLV_OK) {
            if (err) dwarf_dealloc_error(dbg, err);
            return;
        }
        c = next;
    }
}

static int cmp_inl(const void *a, const void *b)
{
    const struct inl *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

struct vpr_lines *vpr_lines_load(const char *path)
{
    struct vpr_lines *l = vpf_xcalloc(1, sizeof *l);
    int fd = path ? open(path, O_RDONLY) : -1;
    if (fd < 0) return l;
    Dwarf_Debug dbg;
    Dwarf_Error err;
    int rc = dwarf_init_b(fd, DW_DLC_READ, DW_GROUPNUMBER_ANY, NULL, NULL, &dbg, &err);
    if (rc != DW_DLV_OK) {
        /* no debug info (stripped) or not ELF: an error object is allocated
         * without a Dwarf_Debug and must be freed through a NULL one */
        if (rc == DW_DLV_ERROR) dwarf_dealloc(NULL, err, DW_DLA_ERROR);
        close(fd);
        return l;
    }
    for (;;) {
        Dwarf_Unsigned hlen, abbr, next;
        Dwarf_Half ver, asz, lsz, xsz, typ;
        Dwarf_Sig8 sig;
        Dwarf_Unsigned toff;
        int rc = dwarf_next_cu_header_d(dbg, 1, &hlen, &ver, &abbr, &asz, &lsz,
                                        &xsz, &sig, &toff, &next, &typ, &err);
        if (rc != DW_DLV_OK) break;
        Dwarf_Die cu = NULL;
        if (dwarf_siblingof_b(dbg, NULL, 1, &cu, &err) == DW_DLV_OK) {
            add_cu(l, dbg, cu);
            Dwarf_Addr base = 0;
            if (dwarf_lowpc(cu, &base, &err) != DW_DLV_OK) base = 0;
            add_inlined(l, dbg, cu, base, 0, 0);
            dwarf_dealloc(dbg, cu, DW_DLA_DIE);
        }
    }
    dwarf_finish(dbg, &err);
    close(fd);
    if (l->n) qsort(l->rows, l->n, sizeof *l->rows, cmp_row);
    if (l->n_inl) qsort(l->inl, l->n_inl, sizeof *l->inl, cmp_inl);
    return l;
}

void vpr_lines_free(struct vpr_lines *l)
{
    if (!l) return;
    for (size_t i = 0; i < l->n_files; i++) free(l->files[i]);
    free(l->files);
    free(l->rows);
    free(l->inl);
    free(l);
}

int vpr_lines_lookup(const struct vpr_lines *l, uint64_t addr,
                     const char **file, unsigned *line)
{
    if (!l || !l->n) return -1;
    size_t lo = 0, hi = l->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (l->rows[mid].addr <= addr) lo = mid + 1; else hi = mid;
    }
    if (lo == 0) return -1;
    const struct row *r = &l->rows[lo - 1];
    if (r->end || r->line == 0) return -1;
    *file = l->files[r->file];
    *line = r->line;
    return 0;
}

/* The ranges covering addr, into out[depth - 1] (ranges of one depth do not
 * overlap); returns the deepest depth, at most max. */
static size_t covering(const struct vpr_lines *l, uint64_t addr, const struct inl **out,
                       size_t max)
{
    if (!l || !l->n_inl) return 0;
    size_t lo = 0, hi = l->n_inl;
    while (lo < hi) {               /* first range starting after addr */
        size_t mid = lo + (hi - lo) / 2;
        if (l->inl[mid].lo <= addr) lo = mid + 1; else hi = mid;
    }
    size_t n = 0;
    for (size_t i = lo; i-- > 0 && l->inl[i].lo + l->inl_max > addr;) {
        const struct inl *e = &l->inl[i];
        if (addr >= e->hi || e->depth == 0 || e->depth > max) continue;
        out[e->depth - 1] = e;
        if (e->depth > n) n = e->depth;
    }
    return n;
}

const char *vpr_lines_inlined(const struct vpr_lines *l, uint64_t addr)
{
    const struct inl *c[64] = {0};
    size_t n = covering(l, addr, c, 64);
    while (n > 0 && !c[n - 1]) n--;
    return n ? l->files[c[n - 1]->name] : NULL;
}

size_t vpr_lines_inline_chain(const struct vpr_lines *l, uint64_t addr, uint32_t *ids,
                              size_t max)
{
    const struct inl *c[64] = {0};
    size_t n = covering(l, addr, c, 64), k = 0;
    for (size_t d = 0; d < n; d++)          /* a gap: broken DWARF, skip it */
        if (c[d]) c[k++] = c[d];
    /* a chain deeper than max keeps its innermost functions: the code at
     * addr is theirs, the outer ones are callers whose ticks matter less */
    size_t skip = k > max ? k - max : 0;
    for (size_t d = skip; d < k; d++) ids[d - skip] = c[d]->link;
    return k - skip;
}

size_t vpr_lines_n_inlined(const struct vpr_lines *l)
{
    return l ? l->n_inl : 0;
}

void vpr_lines_inlined_range(const struct vpr_lines *l, size_t i, uint64_t *lo,
                             uint32_t *link, const char **name, const char **linkage)
{
    const struct inl *e = &l->inl[i];
    *lo = e->lo;
    *link = e->link;
    *name = l->files[e->name];
    *linkage = e->link != e->name ? l->files[e->link] : NULL;
}

const char *vpr_lines_string(const struct vpr_lines *l, uint32_t id)
{
    return l->files[id];
}

size_t vpr_lines_n_strings(const struct vpr_lines *l)
{
    return l ? l->n_files : 0;
}
