/* cfa.c - the canonical frame address as register+offset per PC range.
 *
 * gcc describes every frame base as DW_OP_call_frame_cfa. The runtime must
 * not interpret CFI in a signal handler, so vprof-meta splits each PC range
 * at every CFA rule change (.eh_frame, else .debug_frame) and emits FBREG
 * entries whose frame base is a plain register+offset. The row table of the
 * last FDE used is cached: variables of one function ask for the same FDE. */
#include <stdlib.h>
#include <string.h>
#include "meta.h"
#include "vprof_xalloc.h"

struct fde_list { Dwarf_Cie *cies; Dwarf_Fde *fdes; Dwarf_Signed ncie, nfde; };

struct cfa_ctx {
    Dwarf_Debug dbg;
    struct fde_list eh, df;
    int have_eh, have_df;
    /* cache: rows of one FDE */
    uint64_t c_lo, c_hi;
    struct cfa_row *rows;
    size_t n, cap;
    /* result slice */
    struct cfa_row *out;
    size_t out_cap;
};

struct cfa_ctx *cfa_open(Dwarf_Debug dbg)
{
    struct cfa_ctx *c = vpf_xcalloc(1, sizeof *c);
    Dwarf_Error err = NULL;
    c->dbg = dbg;
    if (dwarf_get_fde_list_eh(dbg, &c->eh.cies, &c->eh.ncie, &c->eh.fdes,
                              &c->eh.nfde, &err) == DW_DLV_OK)
        c->have_eh = 1;
    else if (err) {
        dwarf_dealloc_error(dbg, err);
        err = NULL;
    }
    if (dwarf_get_fde_list(dbg, &c->df.cies, &c->df.ncie, &c->df.fdes,
                           &c->df.nfde, &err) == DW_DLV_OK)
        c->have_df = 1;
    else if (err)
        dwarf_dealloc_error(dbg, err);
    return c;
}

void cfa_close(struct cfa_ctx *c)
{
    if (!c)
        return;
    if (c->have_eh)
        dwarf_fde_cie_list_dealloc(c->dbg, c->eh.cies, c->eh.ncie,
                                   c->eh.fdes, c->eh.nfde);
    if (c->have_df)
        dwarf_fde_cie_list_dealloc(c->dbg, c->df.cies, c->df.ncie,
                                   c->df.fdes, c->df.nfde);
    free(c->rows);
    free(c->out);
    free(c);
}

static void push_row(struct cfa_row **v, size_t *n, size_t *cap,
                     const struct cfa_row *r)
{
    *v = vpf_grow(*v, cap, *n + 1, sizeof **v);
    (*v)[(*n)++] = *r;
}

static int find_fde(struct cfa_ctx *c, uint64_t pc, Dwarf_Fde *fde,
                    Dwarf_Addr *lo, Dwarf_Addr *hi)
{
    Dwarf_Error err = NULL;
    struct fde_list *lists[2] = { c->have_eh ? &c->eh : NULL,
                                  c->have_df ? &c->df : NULL };
    for (int i = 0; i < 2; i++) {
        if (!lists[i])
            continue;
        if (dwarf_get_fde_at_pc(lists[i]->fdes, pc, fde, lo, hi, &err)
            == DW_DLV_OK && pc >= *lo && pc <= *hi)
            return 0;
        if (err) {
            dwarf_dealloc_error(c->dbg, err);
            err = NULL;
        }
    }
    return -1;
}

/* Fills the cache with every CFA row of the FDE covering pc. */
static int load_fde(struct cfa_ctx *c, uint64_t pc)
{
    Dwarf_Fde fde;
    Dwarf_Addr lo, hi;
    Dwarf_Error err = NULL;

    c->n = 0;
    c->c_lo = c->c_hi = 0;
    if (find_fde(c, pc, &fde, &lo, &hi) != 0)
        return -1;
    /* hi from dwarf_get_fde_at_pc is the last byte (inclusive) */
    uint64_t end = hi + 1;
    uint64_t at = lo;
    for (unsigned guard = 0; at < end && guard < 100000; guard++) {
        Dwarf_Small vtype = 0;
        Dwarf_Signed offrel = 0, reg = 0, off = 0;
        Dwarf_Ptr block = NULL;
        Dwarf_Addr row_pc = 0, next = 0;
        Dwarf_Bool more = 0;
        if (dwarf_get_fde_info_for_cfa_reg3_b(fde, at, &vtype, &offrel, &reg,
                &off, &block, &row_pc, &more, &next, &err) != DW_DLV_OK) {
            if (err)
                dwarf_dealloc_error(c->dbg, err);
            break;
        }
        struct cfa_row r = { at, more && next > at && next < end ? next : end,
                             0, off, 0 };
        if (vtype == DW_EXPR_OFFSET && offrel && reg >= 0 && reg < 17) {
            r.reg = (uint8_t)reg;
            r.ok = 1;
        }
        /* merge with the previous row when the rule did not change */
        if (c->n && c->rows[c->n - 1].hi == r.lo &&
            c->rows[c->n - 1].ok == r.ok && c->rows[c->n - 1].reg == r.reg &&
            c->rows[c->n - 1].off == r.off)
            c->rows[c->n - 1].hi = r.hi;
        else
            push_row(&c->rows, &c->n, &c->cap, &r);
        at = r.hi;
    }
    c->c_lo = lo;
    c->c_hi = end;
    return c->n ? 0 : -1;
}

size_t cfa_rows(struct cfa_ctx *c, uint64_t lo, uint64_t hi,
                const struct cfa_row **rows)
{
    size_t n = 0;
    while (lo < hi) {
        if (!(lo >= c->c_lo && lo < c->c_hi) && load_fde(c, lo) != 0)
            break;              /* no CFI here: the rest stays unresolved */
        for (size_t i = 0; i < c->n && lo < hi; i++) {
            const struct cfa_row *r = &c->rows[i];
            if (r->hi <= lo || r->lo >= hi)
                continue;
            struct cfa_row s = *r;
            if (s.lo < lo)
                s.lo = lo;
            if (s.hi > hi)
                s.hi = hi;
            push_row(&c->out, &n, &c->out_cap, &s);
            lo = s.hi;
        }
        if (lo < c->c_hi)
            break;              /* gap inside the FDE: should not happen */
    }
    *rows = c->out;
    return n;
}
