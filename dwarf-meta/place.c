/* place.c - where one DWARF variable can be read, as location entries.
 *
 * plan() decides what to read from the type and the schema's member path;
 * place() walks the variable's location (single expression, list entries,
 * DW_AT_const_value) and emit_*() clip to the scope, resolve the frame base
 * and append entries (merged when they continue the previous one). */
#include <stdlib.h>
#include <string.h>
#include "select_int.h"
#include "dwutil.h"
#include "vprof_xalloc.h"

/* ---------- entries ---------- */

static void add_ent(struct sel *s, size_t var, uint32_t decl_line,
                    const struct vpf_loc_entry *e)
{
    /* merge with the previous entry when it continues it exactly */
    if (s->n_ents) {
        struct oent *p = &s->ents[s->n_ents - 1];
        if (p->e.var == e->var && p->e.pc_end == e->pc_start &&
            p->e.loc == e->loc && p->e.reg == e->reg && p->e.size == e->size &&
            p->e.flags == e->flags && p->e.offset == e->offset &&
            p->e.fb_offset == e->fb_offset &&
            p->e.deref_offset == e->deref_offset &&
            p->decl_line == decl_line) {
            p->e.pc_end = e->pc_end;
            return;
        }
    }
    s->ents = vpf_grow(s->ents, &s->cap_ents, s->n_ents + 1, sizeof *s->ents);
    s->ents[s->n_ents].e = *e;
    s->ents[s->n_ents].decl_line = decl_line;
    s->n_ents++;
    s->vars[var].n_entries++;
}

/* What to read, independent of where: from the type and member path. */
struct want {
    int64_t off;                /* byte offset within the variable */
    unsigned size;              /* bytes of the variable the location holds */
    uint8_t kind, rsize, lflags;/* recorded kind, bytes read, entry flags */
    int64_t deref_off;
};

static int plan(struct sel *s, struct ovar *ov, const struct var_site *v,
                struct want *w, enum why *why)
{
    const struct tinfo *t = types_classify(s->types, v->type_off);
    memset(w, 0, sizeof *w);
    if (!ov->member) {
        if (!t->ok) {
            *why = WHY_UNSUPPORTED_TYPE;
            return -1;
        }
        w->size = (unsigned)(t->obj_size ? t->obj_size : t->size);
        w->kind = t->kind;
        w->rsize = t->size;
        w->lflags = t->lflags;
        return 0;
    }
    int64_t moff = 0;
    Dwarf_Off mtype = 0;
    Dwarf_Off soff = ov->arrow ? (t->is_ptr_struct ? t->struct_off : 0)
                               : (t->is_struct ? t->struct_off : 0);
    if (!soff) {
        *why = WHY_UNSUPPORTED_TYPE;
        return -1;
    }
    if (types_member(s->types, soff, ov->member, &moff, &mtype) != 0) {
        *why = WHY_NO_MEMBER;
        return -1;
    }
    /* copy: the classify result may move when the cache grows */
    struct tinfo f = *types_classify(s->types, mtype);
    if (!f.ok) {
        *why = WHY_UNSUPPORTED_TYPE;
        return -1;
    }
    if (ov->arrow) {
        if (f.kind == VPF_KIND_PTR_BASIC) {  /* two dereferences: address */
            f.kind = VPF_KIND_PTR;
            f.size = 8;
            f.lflags = 0;
        }
        w->off = 0;
        w->size = 8;
        w->kind = f.kind;
        w->rsize = f.size;
        w->lflags = f.lflags | VPF_LF_DEREF;
        w->deref_off = moff;
    } else {
        w->off = moff;
        w->size = (unsigned)(f.obj_size ? f.obj_size : f.size);
        w->kind = f.kind;
        w->rsize = f.size;
        w->lflags = f.lflags;
    }
    return 0;
}

static int64_t fit_const(int64_t v, unsigned size, int sign)
{
    if (size >= 8)
        return v;
    uint64_t m = (1ull << (8 * size)) - 1, u = (uint64_t)v & m;
    if (sign && (u >> (8 * size - 1)))
        u |= ~m;
    return (int64_t)u;
}

/* "register + k" or "frame base + k" as a value: the program computing it. */
static int expr_from_addr(struct dloc *d)
{
    int fb = d->loc == VPF_LOC_FBREG;
    if (!fb && d->reg > VPF_RIP)
        return -1;
    d->prog[0] = 0;
    if (dloc_prog_base(d, fb ? 'f' : 'r', d->reg, d->offset))
        return -1;
    d->loc = VPF_LOC_EXPR;
    d->addr_val = 0;
    d->offset = 0;
    d->reg = 0;
    return 0;
}

/* Completes an EXPR location: the read of a memory location (its
 * address computed: the variable, or with deref the pointer, is there) and
 * a pointer to follow (p->member, *p: "add the member's offset, read")
 * become part of the program, so the entry has no deref flag; the program,
 * checked against §2.1's limits, goes into the string table and the
 * entry's offset names it. 0, or -1 (too long). */
static int expr_finish(struct sel *s, struct want *w, struct dloc *d)
{
    int deref = (w->lflags & VPF_LF_DEREF) != 0;
    if ((d->mem && dloc_prog_add(d, "d%u", deref ? 8u : w->rsize)) ||
        (deref && ((w->deref_off && (dloc_prog_add(d, "#%lld", (long long)w->deref_off) ||
                                     dloc_prog_add(d, "add"))) ||
                   dloc_prog_add(d, "d%u", w->rsize))))
        return -1;
    if (vpf_expr_check(d->prog))
        return -1;
    w->lflags &= (uint8_t)~VPF_LF_DEREF;
    w->deref_off = 0;
    d->offset = vpf_mb_str(s->mb, d->prog);
    d->reg = 0;
    return 0;
}

/* Emits the entries of one resolved location over [lo, hi). */
static void emit_range(struct sel *s, size_t var, const struct var_site *v,
                       const struct want *w0, const struct dloc *d0,
                       uint64_t lo, uint64_t hi)
{
    struct ovar *ov = &s->vars[var];
    struct want wv = *w0;
    struct dloc dv = *d0;
    const struct want *w = &wv;
    const struct dloc *d = &dv;
    if (d0->addr_val && (w0->lflags & VPF_LF_DEREF)) {
        /* a pointer whose value is an address the DWARF computes: its
         * pointee (p->member, *p) is plain memory at that address plus the
         * member's offset */
        dv.offset += w0->deref_off;
        dv.addr_val = 0;
        wv.lflags &= (uint8_t)~VPF_LF_DEREF;
        wv.deref_off = 0;
    } else if (d0->addr_val) {
        /* the value itself, "register + k" (gcc's "rdx - 1"): a program */
        if (expr_from_addr(&dv) != 0) {
            ov->skipped[WHY_COMPUTED]++;
            ov->bad_op = DW_OP_stack_value;
            return;
        }
    }
    if (dv.loc == VPF_LOC_EXPR && expr_finish(s, &wv, &dv) != 0) {
        ov->skipped[dv.mem ? WHY_UNSUPPORTED_OP : WHY_COMPUTED]++;
        ov->bad_op = 0;
        return;
    }
    struct vpf_loc_entry e;
    memset(&e, 0, sizeof e);
    e.pc_start = lo;
    e.pc_end = hi;
    e.var = (uint32_t)var;
    e.loc = d->loc;
    e.reg = d->reg;
    e.size = w->rsize;
    e.flags = w->lflags;
    e.offset = d->offset;
    e.deref_offset = w->deref_off;
    int deref = (w->lflags & VPF_LF_DEREF) != 0;

    if (d->loc == VPF_LOC_CONST) {
        if (deref) {            /* a constant pointer: nothing to read */
            ov->skipped[WHY_UNSUPPORTED_OP]++;
            return;
        }
        e.offset = fit_const(d->offset, w->rsize,
                             (w->lflags & VPF_LF_SIGNED) != 0);
    }
    if (d->loc == VPF_LOC_REG) {
        /* GPRs hold 8 bytes, xmm 16; a pointer to follow must be in a GPR */
        unsigned cap = d->reg <= VPF_R15 ? 8
                     : (d->reg >= VPF_XMM0 && d->reg <= VPF_XMM15) ? 16 : 0;
        unsigned need = deref ? 8 : w->rsize;
        if (!cap || (deref && cap != 8)) {
            ov->skipped[WHY_UNSUPPORTED_OP]++;
            ov->bad_op = DW_OP_regx;
            return;
        }
        if (d->offset < 0 || d->offset + need > cap) {
            ov->skipped[WHY_PIECE]++;
            return;
        }
    } else if ((d->loc == VPF_LOC_BREG || d->loc == VPF_LOC_FBREG) &&
               d->reg > VPF_R15) {
        ov->skipped[WHY_UNSUPPORTED_OP]++;
        return;
    }
    if (!d->fb) {               /* (FBREG, and EXPR using the frame base) */
        add_ent(s, var, v->decl_line, &e);
        return;
    }
    const struct frame_base *fb = v->fb;
    if (!fb || fb->kind == FB_NONE || fb->kind == FB_BAD) {
        ov->skipped[WHY_NO_CFA]++;
        return;
    }
    const struct cfa_row *rows;
    size_t n;
    if (fb->kind == FB_REG || fb->kind == FB_BREG) {
        e.reg = fb->reg;
        e.fb_offset = fb->kind == FB_BREG ? fb->off : 0;
        /* A frame base in rbp (clang -O0) is only set up between the
         * prologue's "mov %rsp,%rbp" and the epilogue's "pop %rbp"; the CFI
         * says exactly where: the CFA is computed from rbp there. Outside,
         * rbp is still the caller's and the slot would be read from the
         * caller's frame. Without CFI the whole range is kept. */
        n = fb->reg == VPF_RBP ? cfa_rows(s->cfa, lo, hi, &rows) : 0;
        if (n == 0) {
            add_ent(s, var, v->decl_line, &e);
            return;
        }
        for (size_t i = 0; i < n; i++) {
            if (!rows[i].ok || rows[i].reg != VPF_RBP) {
                ov->skipped[WHY_PROLOGUE]++;
                continue;
            }
            e.pc_start = rows[i].lo;
            e.pc_end = rows[i].hi;
            add_ent(s, var, v->decl_line, &e);
        }
        return;
    }
    n = cfa_rows(s->cfa, lo, hi, &rows);
    uint64_t covered = lo;
    for (size_t i = 0; i < n; i++) {
        if (!rows[i].ok) {
            ov->skipped[WHY_NO_CFA]++;
            continue;
        }
        e.pc_start = rows[i].lo;
        e.pc_end = rows[i].hi;
        e.reg = rows[i].reg;
        e.fb_offset = rows[i].off;
        add_ent(s, var, v->decl_line, &e);
        covered = rows[i].hi;
    }
    if (n == 0 || covered < hi) {
        if (n == 0)
            ov->skipped[WHY_NO_CFA]++;
    }
}

/* Location [lo, hi) of a list entry (or the whole scope, lo == hi == 0),
 * clipped to the scope. */
static void emit_clipped(struct sel *s, size_t var, const struct var_site *v,
                         const struct want *w, const struct dloc *d,
                         int whole, uint64_t lo, uint64_t hi)
{
    const struct pcrs *sc = v->scope;
    if (v->is_global && !d->fb && whole) {
        /* a global is readable at every PC of the program */
        if (s->ei->text_hi > s->ei->text_lo)
            emit_range(s, var, v, w, d, s->ei->text_lo, s->ei->text_hi);
        return;
    }
    for (size_t i = 0; sc && i < sc->n; i++) {
        uint64_t a = sc->v[i].lo, b = sc->v[i].hi;
        if (!whole) {
            if (lo > a)
                a = lo;
            if (hi < b)
                b = hi;
        }
        if (a < b)
            emit_range(s, var, v, w, d, a, b);
    }
}

void place(struct sel *s, size_t var, Dwarf_Die die,
                  const struct var_site *v)
{
    struct ovar *ov = &s->vars[var];
    struct want w;
    enum why why = WHY_OPTIMIZED_OUT;
    unsigned bad_op = 0;
    Dwarf_Error err = NULL;

    if (plan(s, ov, v, &w, &why) != 0) {
        ov->skipped[why]++;
        return;
    }
    ov->kind = w.kind;
    ov->size = w.rsize;
    ov->have_type = 1;
    if (v->cval) {
        Dwarf_Unsigned u = 0;
        Dwarf_Signed sv = 0;
        struct dloc d = { .loc = VPF_LOC_CONST };
        if (ov->member || (w.lflags & VPF_LF_DEREF)) {
            ov->skipped[WHY_UNSUPPORTED_OP]++;
            return;
        }
        Dwarf_Block *blk = NULL;
        Dwarf_Half form = 0;
        dwarf_whatform(v->cval, &form, &err);
        if (form == DW_FORM_block1 || form == DW_FORM_block2 ||
            form == DW_FORM_block4 || form == DW_FORM_block) {
            /* the value's bytes, little-endian (gcc: float, double) */
            if (dwarf_formblock(v->cval, &blk, &err) != DW_DLV_OK ||
                blk->bl_len != w.rsize) {
                if (blk)
                    dwarf_dealloc(s->dbg, blk, DW_DLA_BLOCK);
                ov->skipped[WHY_UNSUPPORTED_OP]++;
                return;
            }
            uint64_t bits = 0;
            memcpy(&bits, blk->bl_data, blk->bl_len);
            d.offset = (int64_t)bits;
            dwarf_dealloc(s->dbg, blk, DW_DLA_BLOCK);
        } else if ((w.lflags & VPF_LF_SIGNED) &&
                   dwarf_formsdata(v->cval, &sv, &err) == DW_DLV_OK) {
            d.offset = sv;
        } else if (dwarf_formudata(v->cval, &u, &err) == DW_DLV_OK) {
            d.offset = (int64_t)u;
        } else {
            ov->skipped[WHY_UNSUPPORTED_OP]++;
            return;
        }
        emit_clipped(s, var, v, &w, &d, 1, 0, 0);
        return;
    }
    if (!v->loc) {
        ov->skipped[WHY_OPTIMIZED_OUT]++;
        return;
    }
    Dwarf_Loc_Head_c head = NULL;
    Dwarf_Unsigned count = 0;
    if (dwarf_get_loclist_c(v->loc, &head, &count, &err) != DW_DLV_OK) {
        ov->skipped[WHY_UNSUPPORTED_OP]++;
        return;
    }
    size_t before = ov->n_entries;
    int any_range = 0;
    /* Location views (gcc): empty entries [a, a) mean the variable takes
     * several values at the very instruction a, one per view. A sampled PC
     * cannot tell views apart, so no entry may claim such an address,
     * however many there are (16 were kept, the rest could be claimed). */
    uint64_t *view_pc = vpf_xcalloc(count ? count : 1, sizeof *view_pc);
    size_t n_view = 0;
    for (Dwarf_Unsigned i = 0; i < count; i++) {
        Dwarf_Small lle = 0, src = 0;
        Dwarf_Unsigned rlo, rhi, nops = 0, eoff, loff;
        Dwarf_Bool unavail = 0;
        Dwarf_Addr lo = 0, hi = 0;
        Dwarf_Locdesc_c desc = NULL;
        if (dwarf_get_locdesc_entry_d(head, i, &lle, &rlo, &rhi, &unavail,
                &lo, &hi, &nops, &desc, &src, &eoff, &loff, &err)
            == DW_DLV_OK && src != 0 && lo == hi && !unavail &&
            lle != DW_LLE_base_address && lle != DW_LLE_base_addressx &&
            lle != DW_LLE_end_of_list)
            view_pc[n_view++] = lo;
    }
    for (Dwarf_Unsigned i = 0; i < count; i++) {
        Dwarf_Small lle = 0, src = 0;
        Dwarf_Unsigned rlo, rhi, nops = 0, eoff, loff;
        Dwarf_Bool unavail = 0;
        Dwarf_Addr lo = 0, hi = 0;
        Dwarf_Locdesc_c desc = NULL;
        if (dwarf_get_locdesc_entry_d(head, i, &lle, &rlo, &rhi, &unavail,
                &lo, &hi, &nops, &desc, &src, &eoff, &loff, &err)
            != DW_DLV_OK) {
            ov->skipped[WHY_UNSUPPORTED_OP]++;
            break;
        }
        int whole = src == 0;   /* a single expression: the whole scope */
        if (!whole) {
            /* base-address and end entries carry no location */
            if (lle == DW_LLE_base_address || lle == DW_LLE_base_addressx ||
                lle == DW_LLE_end_of_list || unavail || hi <= lo)
                continue;
        }
        for (size_t k = 0; !whole && k < n_view; k++)
            if (lo == view_pc[k])
                lo++;           /* not an instruction start any more */
        if (!whole && hi <= lo)
            continue;
        any_range = 1;
        struct dloc d;
        if (locexpr_eval(s->dbg, die, desc, nops, w.off, w.size, &d, &why, &bad_op)
            != 0) {
            ov->skipped[why]++;
            if (why == WHY_UNSUPPORTED_OP || why == WHY_COMPUTED)
                ov->bad_op = bad_op;
            continue;
        }
        emit_clipped(s, var, v, &w, &d, whole, lo, hi);
    }
    free(view_pc);
    dwarf_loc_head_c_dealloc(head);
    if (!any_range && ov->n_entries == before)
        ov->skipped[WHY_OPTIMIZED_OUT]++;
}
