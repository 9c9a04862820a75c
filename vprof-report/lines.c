/* lines.c - DWARF line table via libdwarf (the 2021 API Debian ships). All
 * rows of all CUs go into one array sorted by address; a lookup takes the
 * last row at or below the address (rows end at end_sequence). */
#include "lines.h"
#include "vprof_xalloc.h"

#include <fcntl.h>
#include <libdwarf/dwarf.h>
#include <libdwarf/libdwarf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct row { uint64_t addr; uint32_t line; uint32_t file; int end; };

struct vpr_lines {
    struct row *rows;
    size_t n, cap;
    char **files;           /* interned file names */
    size_t n_files, cap_files;
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
    return x->end - y->end;   /* a sequence end sorts before a new start */
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
            l->rows = vpf_grow(l->rows, &l->cap, l->n + 1, sizeof *l->rows);
            l->rows[l->n++] = (struct row){ a, (uint32_t)ln,
                                            intern(l, src ? src : "??"), end != 0 };
            if (src) dwarf_dealloc(dbg, src, DW_DLA_STRING);
        }
    }
    dwarf_srclines_dealloc_b(ctx);
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
            dwarf_dealloc(dbg, cu, DW_DLA_DIE);
        }
    }
    dwarf_finish(dbg, &err);
    close(fd);
    if (l->n) qsort(l->rows, l->n, sizeof *l->rows, cmp_row);
    return l;
}

void vpr_lines_free(struct vpr_lines *l)
{
    if (!l) return;
    for (size_t i = 0; i < l->n_files; i++) free(l->files[i]);
    free(l->files);
    free(l->rows);
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
