/* select.c - which variables to describe, and their location entries.
 *
 * Schema mode: every schema variable (`file, function, line, variable`) is
 * matched against the variables the walker reports: same function (DWARF
 * name or linkage name, `#global` at file scope), same base variable name,
 * and a CU name equal to the schema file or ending in "/file" (or the other
 * way round). When several DWARF variables match (shadowing, several blocks)
 * and some have the schema's declaration line, only those are kept.
 * Schema-less mode: every variable of basic or pointer type in the CUs whose
 * DW_AT_name matches one of the globs, one descriptor per abstract variable
 * (inlined copies share it). */
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include "select.h"
#include "dwutil.h"

struct ovar {                   /* a variable to describe */
    const char *file, *function, *name, *type;  /* owned copies */
    uint32_t line, schema_line;
    uint16_t tags;
    uint8_t kind, size;
    int have_type;
    /* schema mode: member access of the schema name */
    const char *base;           /* variable part before "." / "->" */
    const char *member;         /* NULL, or the field */
    int arrow;
    int found;                  /* some DWARF variable matched */
    int line_hit;               /* an entry came from the schema's line */
    size_t n_entries;
    unsigned skipped[WHY_N];    /* ranges (or whole variables) per reason */
    unsigned bad_op;
    Dwarf_Off origin;           /* schema-less: identity */
};

struct oent { struct vpf_loc_entry e; uint32_t decl_line; };

struct sel {
    Dwarf_Debug dbg;
    const struct elf_info *ei;
    const struct vpf_schema *schema;
    char **globs;
    struct type_cache *types, *main_types;
    struct cfa_ctx *cfa;
    uint64_t unit_serial;       /* 0: the executable; n: n-th .dwo file */
    struct ovar *vars;
    size_t n_vars, cap_vars;
    struct oent *ents;
    size_t n_ents, cap_ents;
    /* schema-less: origin -> var index (open addressing) */
    Dwarf_Off *h_key;
    size_t *h_val, h_cap, h_n;
    /* schema mode: distinct schema files (CU filter) */
    const char **files;
    size_t n_files;
    /* schema mode: base variable name -> schema variables (chained) */
    size_t *bucket, *chain, n_bucket;
};

static size_t str_hash(const char *p)
{
    size_t h = 1469598103934665603ull;
    while (*p)
        h = (h ^ (unsigned char)*p++) * 1099511628211ull;
    return h;
}

const char *why_name(enum why w)
{
    static const char *const names[WHY_N] = {
        "optimized out", "not found in DWARF", "entry value only",
        "thread-local storage (unsupported)",
        "unsupported location expression",
        "value computed by an expression", "type not basic or pointer",
        "no such member", "frame base not register+offset",
        "frame base not yet set up (prologue/epilogue)",
        "value split over pieces",
    };
    return (unsigned)w < WHY_N ? names[w] : "?";
}

static char *xstrdup(const char *s)
{
    char *d = strdup(s ? s : "");
    if (!d)
        abort();
    return d;
}

static struct ovar *new_var(struct sel *s)
{
    if (s->n_vars == s->cap_vars) {
        size_t nc = s->cap_vars ? s->cap_vars * 2 : 64;
        struct ovar *nv = realloc(s->vars, nc * sizeof *nv);
        if (!nv)
            abort();
        s->vars = nv;
        s->cap_vars = nc;
    }
    struct ovar *v = &s->vars[s->n_vars++];
    memset(v, 0, sizeof *v);
    return v;
}

struct sel *sel_new(Dwarf_Debug dbg, const struct elf_info *ei,
                    const struct vpf_schema *schema, char **globs)
{
    struct sel *s = calloc(1, sizeof *s);
    if (!s)
        abort();
    s->dbg = dbg;
    s->ei = ei;
    s->schema = schema;
    s->globs = globs;
    s->types = s->main_types = types_new(dbg);
    s->cfa = cfa_open(dbg);
    if (!s->types || !s->cfa)
        abort();
    if (schema) {
        s->files = calloc(schema->n_vars + 1, sizeof *s->files);
        if (!s->files)
            abort();
        for (size_t i = 0; i < schema->n_vars; i++) {
            const struct vpf_schema_var *sv = &schema->vars[i];
            struct ovar *v = new_var(s);
            v->file = xstrdup(sv->file);
            v->function = xstrdup(sv->function);
            v->name = xstrdup(sv->name);
            v->type = xstrdup(sv->type);
            v->line = sv->line;
            v->tags = sv->tags;
            v->schema_line = sv->src_line;
            char *base = xstrdup(sv->name), *p;
            if ((p = strstr(base, "->")) != NULL) {
                *p = 0;
                v->member = p + 2;
                v->arrow = 1;
            } else if ((p = strchr(base, '.')) != NULL) {
                *p = 0;
                v->member = p + 1;
            }
            v->base = base;
            size_t j;
            for (j = 0; j < s->n_files; j++)
                if (!strcmp(s->files[j], sv->file))
                    break;
            if (j == s->n_files)
                s->files[s->n_files++] = v->file;
        }
        /* index by base name: DWARF reports far more variables than the
         * schema names, most of them are rejected by one bucket probe */
        s->n_bucket = 64;
        while (s->n_bucket < 2 * s->n_vars)
            s->n_bucket *= 2;
        s->bucket = malloc(s->n_bucket * sizeof *s->bucket);
        s->chain = malloc((s->n_vars + 1) * sizeof *s->chain);
        if (!s->bucket || !s->chain)
            abort();
        for (size_t i = 0; i < s->n_bucket; i++)
            s->bucket[i] = SIZE_MAX;
        for (size_t i = s->n_vars; i-- > 0;) {
            size_t h = str_hash(s->vars[i].base) & (s->n_bucket - 1);
            s->chain[i] = s->bucket[h];
            s->bucket[h] = i;
        }
    }
    return s;
}

void sel_free(struct sel *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n_vars; i++) {
        free((char *)s->vars[i].file);
        free((char *)s->vars[i].function);
        free((char *)s->vars[i].name);
        free((char *)s->vars[i].type);
        free((char *)s->vars[i].base);
    }
    free(s->vars);
    free(s->ents);
    free(s->h_key);
    free(s->h_val);
    free(s->files);
    free(s->bucket);
    free(s->chain);
    if (s->types != s->main_types)
        types_free(s->types);
    types_free(s->main_types);
    cfa_close(s->cfa);
    free(s);
}

/* "src/a.c" matches CU "src/a.c", "/abs/src/a.c", "./src/a.c". */
static int file_match(const char *want, const char *cu)
{
    while (!strncmp(want, "./", 2))
        want += 2;
    while (!strncmp(cu, "./", 2))
        cu += 2;
    size_t lw = strlen(want), lc = strlen(cu);
    if (lw == lc)
        return !strcmp(want, cu);
    if (lc > lw)
        return cu[lc - lw - 1] == '/' && !strcmp(cu + lc - lw, want);
    return want[lw - lc - 1] == '/' && !strcmp(want + lw - lc, cu);
}

int sel_want_cu(void *ctx, const char *cu_name, const char *comp_dir)
{
    struct sel *s = ctx;
    (void)comp_dir;
    if (s->schema) {
        for (size_t i = 0; i < s->n_files; i++)
            if (file_match(s->files[i], cu_name))
                return 1;
        return 0;
    }
    for (char **g = s->globs; *g; g++)
        if (fnmatch(*g, cu_name, 0) == 0)
            return 1;
    return 0;
}

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
    if (s->n_ents == s->cap_ents) {
        size_t nc = s->cap_ents ? s->cap_ents * 2 : 256;
        struct oent *ne = realloc(s->ents, nc * sizeof *ne);
        if (!ne)
            abort();
        s->ents = ne;
        s->cap_ents = nc;
    }
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

/* Emits the entries of one resolved location over [lo, hi). */
static void emit_range(struct sel *s, size_t var, const struct var_site *v,
                       const struct want *w, const struct dloc *d,
                       uint64_t lo, uint64_t hi)
{
    struct ovar *ov = &s->vars[var];
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
    if (d->loc != VPF_LOC_FBREG) {
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
    if (v->is_global && d->loc != VPF_LOC_FBREG && whole) {
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

static void place(struct sel *s, size_t var, Dwarf_Die die,
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
     * cannot tell views apart, so no entry may claim such an address. */
    uint64_t view_pc[16];
    size_t n_view = 0;
    for (Dwarf_Unsigned i = 0; i < count && n_view < 16; i++) {
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
        if (locexpr_eval(die, desc, nops, w.off, w.size, &d, &why, &bad_op)
            != 0) {
            ov->skipped[why]++;
            if (why == WHY_UNSUPPORTED_OP || why == WHY_COMPUTED)
                ov->bad_op = bad_op;
            continue;
        }
        emit_clipped(s, var, v, &w, &d, whole, lo, hi);
    }
    dwarf_loc_head_c_dealloc(head);
    if (!any_range && ov->n_entries == before)
        ov->skipped[WHY_OPTIMIZED_OUT]++;
}

/* ---------- schema-less identity ---------- */

static size_t h_slot(struct sel *s, Dwarf_Off k)
{
    size_t h = (size_t)((k * 0x9E3779B97F4A7C15ull) >> 20) & (s->h_cap - 1);
    while (s->h_key[h] && s->h_key[h] != k)
        h = (h + 1) & (s->h_cap - 1);
    return h;
}

static size_t var_for_origin(struct sel *s, const struct var_site *v)
{
    /* DIE offsets restart in every .dwo file: the unit serial keeps them
     * apart (offsets stay far below 2^40) */
    Dwarf_Off key = v->origin + (s->unit_serial << 40);
    if (s->h_n * 2 >= s->h_cap) {
        size_t oc = s->h_cap, nc = oc ? oc * 2 : 1024;
        Dwarf_Off *ok = s->h_key;
        size_t *ov = s->h_val;
        s->h_key = calloc(nc, sizeof *s->h_key);
        s->h_val = calloc(nc, sizeof *s->h_val);
        if (!s->h_key || !s->h_val)
            abort();
        s->h_cap = nc;
        for (size_t i = 0; i < oc; i++) {
            if (ok[i]) {
                size_t h = h_slot(s, ok[i]);
                s->h_key[h] = ok[i];
                s->h_val[h] = ov[i];
            }
        }
        free(ok);
        free(ov);
    }
    size_t h = h_slot(s, key);
    if (s->h_key[h])
        return s->h_val[h];
    struct ovar *o = new_var(s);
    o->file = xstrdup(v->cu_name);
    o->function = xstrdup(v->function);
    o->name = xstrdup(v->name);
    o->type = xstrdup(types_name(s->types, v->type_off));
    o->line = v->decl_line;
    o->tags = v->is_global ? VPF_TAG_GLOBAL : 0;
    o->origin = v->origin;
    o->found = 1;
    s->h_key[h] = key;
    s->h_val[h] = s->n_vars - 1;
    s->h_n++;
    return s->n_vars - 1;
}

void sel_on_unit(void *ctx, Dwarf_Debug dbg, int begin)
{
    struct sel *s = ctx;
    if (s->types != s->main_types)
        types_free(s->types);
    s->types = s->main_types;
    if (begin) {
        s->types = types_new(dbg);
        if (!s->types)
            abort();
        s->unit_serial++;
    }
}

void sel_on_var(void *ctx, Dwarf_Debug dbg, Dwarf_Die die,
                const struct var_site *v)
{
    struct sel *s = ctx;
    if (dw_flag(dbg, die, DW_AT_artificial))
        return;                 /* compiler-made (C++ `this`, VLA bounds) */
    if (!s->schema) {
        if (!v->scope)
            return;             /* abstract instance: no PCs to describe */
        if (!types_classify(s->types, v->type_off)->ok)
            return;             /* structs, arrays...: not selected */
        place(s, var_for_origin(s, v), die, v);
        return;
    }
    size_t h = str_hash(v->name) & (s->n_bucket - 1);
    for (size_t i = s->bucket[h]; i != SIZE_MAX; i = s->chain[i]) {
        struct ovar *o = &s->vars[i];
        if (strcmp(o->base, v->name) != 0)
            continue;
        if (strcmp(o->function, v->function) != 0 &&
            !(v->linkage && !strcmp(o->function, v->linkage)))
            continue;
        if (!file_match(o->file, v->cu_name))
            continue;
        /* an abstract instance has no code: finding the variable there
         * only turns "not found" into "optimized out" if nothing else
         * places it (main_reason's default) */
        o->found = 1;
        if (v->scope)
            place(s, i, die, v);
    }
}

/* ---------- output ---------- */

size_t sel_n_placed(const struct sel *s)
{
    size_t n = 0;
    for (size_t i = 0; i < s->n_vars; i++)
        n += s->vars[i].n_entries > 0;
    return n;
}

struct vpf_meta_builder *sel_build(struct sel *s)
{
    struct vpf_meta_builder *b = vpf_mb_new();
    if (!b)
        return NULL;
    /* schema lines with a declaration line: keep the matching DWARF
     * variable's entries when there is one (shadowed names) */
    for (size_t i = 0; i < s->n_ents; i++) {
        struct ovar *o = &s->vars[s->ents[i].e.var];
        if (s->schema && o->line && s->ents[i].decl_line == o->line)
            o->line_hit = 1;
    }
    uint32_t *id = malloc((s->n_vars + 1) * sizeof *id);
    size_t *kept = calloc(s->n_vars + 1, sizeof *kept);
    if (!id || !kept)
        abort();
    for (size_t i = 0; i < s->n_ents; i++) {
        struct ovar *o = &s->vars[s->ents[i].e.var];
        if (!o->line_hit || s->ents[i].decl_line == o->line)
            kept[s->ents[i].e.var]++;
    }
    for (size_t i = 0; i < s->n_vars; i++) {
        struct ovar *o = &s->vars[i];
        o->n_entries = kept[i];
        id[i] = UINT32_MAX;
        if (!kept[i])
            continue;
        struct vpf_var_desc d;
        memset(&d, 0, sizeof d);
        d.file = vpf_mb_str(b, o->file);
        d.function = vpf_mb_str(b, o->function);
        d.name = vpf_mb_str(b, o->name);
        d.type = vpf_mb_str(b, o->type);
        d.line = o->line;
        d.tags = o->tags;
        d.kind = o->kind;
        d.size = o->size;
        d.schema_line = o->schema_line;
        id[i] = vpf_mb_add_var(b, &d);
    }
    for (size_t i = 0; i < s->n_ents; i++) {
        struct oent *oe = &s->ents[i];
        struct ovar *o = &s->vars[oe->e.var];
        if (id[oe->e.var] == UINT32_MAX ||
            (o->line_hit && oe->decl_line != o->line))
            continue;
        struct vpf_loc_entry e = oe->e;
        e.var = id[oe->e.var];
        vpf_mb_add_entry(b, &e);
    }
    free(id);
    free(kept);
    vpf_mb_set_build_id(b, s->ei->build_id, s->ei->build_id_len);
    vpf_mb_set_flags(b, s->ei->is_dyn ? VPF_META_F_RELATIVE : 0);
    return b;
}

static const char *op_name(unsigned op)
{
    const char *n = NULL;
    static char buf[16];
    if (dwarf_get_OP_name(op, &n) == DW_DLV_OK && n)
        return n;
    snprintf(buf, sizeof buf, "op 0x%02x", op);
    return buf;
}

static enum why main_reason(const struct ovar *o)
{
    if (!o->found)
        return WHY_NOT_FOUND;
    enum why best = WHY_OPTIMIZED_OUT;
    for (int w = 0; w < WHY_N; w++)
        if (o->skipped[w] > o->skipped[best])
            best = (enum why)w;
    return best;
}

void sel_report(struct sel *s, FILE *f, int explain)
{
    unsigned unplaced[WHY_N] = { 0 }, partial[WHY_N] = { 0 };
    size_t n_unplaced = 0, n_partial = 0;
    for (size_t i = 0; i < s->n_vars; i++) {
        const struct ovar *o = &s->vars[i];
        if (!o->n_entries) {
            enum why w = main_reason(o);
            unplaced[w]++;
            n_unplaced++;
            if (explain) {
                fprintf(f, "vprof-meta: %s: %s: %s: not placed: %s",
                        o->file, o->function, o->name, why_name(w));
                if ((w == WHY_UNSUPPORTED_OP || w == WHY_COMPUTED) &&
                    o->bad_op)
                    fprintf(f, " (%s)", op_name(o->bad_op));
                if (o->schema_line)
                    fprintf(f, " (schema line %u)", o->schema_line);
                fprintf(f, "\n");
            }
            continue;
        }
        int any = 0;
        for (int w = 0; w < WHY_N; w++) {
            if (!o->skipped[w])
                continue;
            partial[w] += o->skipped[w];
            any = 1;
            if (explain)
                fprintf(f, "vprof-meta: %s: %s: %s: %u range(s) skipped: "
                        "%s%s%s%s\n", o->file, o->function, o->name,
                        o->skipped[w], why_name((enum why)w),
                        (w == WHY_COMPUTED || w == WHY_UNSUPPORTED_OP) &&
                            o->bad_op ? " (" : "",
                        (w == WHY_COMPUTED || w == WHY_UNSUPPORTED_OP) &&
                            o->bad_op ? op_name(o->bad_op) : "",
                        (w == WHY_COMPUTED || w == WHY_UNSUPPORTED_OP) &&
                            o->bad_op ? ")" : "");
        }
        n_partial += any;
    }
    size_t n_entries = 0;
    for (size_t i = 0; i < s->n_vars; i++)
        n_entries += s->vars[i].n_entries;
    fprintf(f, "vprof-meta: %zu variables placed, %zu entries; %zu not "
            "placed", sel_n_placed(s), n_entries, n_unplaced);
    const char *sep = " (";
    for (int w = 0; w < WHY_N; w++) {
        if (unplaced[w]) {
            fprintf(f, "%s%u %s", sep, unplaced[w], why_name((enum why)w));
            sep = ", ";
        }
    }
    fprintf(f, "%s\n", n_unplaced ? ")" : "");
    if (n_partial) {
        fprintf(f, "vprof-meta: %zu placed variables have ranges left out",
                n_partial);
        sep = " (";
        for (int w = 0; w < WHY_N; w++) {
            if (partial[w]) {
                fprintf(f, "%s%u %s", sep, partial[w], why_name((enum why)w));
                sep = ", ";
            }
        }
        fprintf(f, ")\n");
    }
    if (!explain && (n_unplaced || n_partial))
        fprintf(f, "vprof-meta: run with --explain for the full list\n");
}
