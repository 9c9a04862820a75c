/* walk.c - visit every variable DIE of the chosen CUs, with the PC ranges in
 * which it is in scope and the frame base of the function it lives in.
 *
 * Scopes: a variable is in scope in the innermost enclosing lexical block,
 * inlined subroutine or subprogram that has PC ranges. Variables of an
 * inlined copy belong to the inlined (abstract origin's) function but take
 * the copy's ranges and the frame base of the function it was inlined into.
 * Abstract instances and declarations (no PCs) are skipped. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dwutil.h"
#include "vprof_xalloc.h"

struct wstate {
    Dwarf_Debug dbg;
    var_fn on_var;
    unit_fn on_unit;
    void *ctx;
    const char *cu_name;
    uint64_t cu_base;
    struct walk_stats *st;
    int want_abstract;
};

struct scope {
    const char *function, *linkage;
    const struct pcrs *ranges;
    const struct frame_base *fb;
    int at_file_scope;
};

static Dwarf_Off ultimate_origin(Dwarf_Debug dbg, Dwarf_Die die)
{
    Dwarf_Off self = 0, o;
    Dwarf_Error err = NULL;
    dwarf_dieoffset(die, &self, &err);
    o = dw_ref(dbg, die, DW_AT_abstract_origin);
    for (int depth = 0; o && depth < 8; depth++) {
        Dwarf_Die d = dw_offdie(dbg, o);
        if (!d)
            break;
        self = o;
        o = dw_ref(dbg, d, DW_AT_abstract_origin);
        dwarf_dealloc_die(d);
    }
    return self;
}

static Dwarf_Attribute get_attr(Dwarf_Debug dbg, Dwarf_Die die, Dwarf_Half a)
{
    Dwarf_Attribute at = NULL;
    Dwarf_Error err = NULL;
    if (dwarf_attr(die, a, &at, &err) != DW_DLV_OK) {
        if (err)
            dwarf_dealloc_error(dbg, err);
        return NULL;
    }
    return at;
}

static void visit_var(struct wstate *w, Dwarf_Die die, Dwarf_Half tag,
                      const struct scope *sc)
{
    Dwarf_Debug dbg = w->dbg;
    struct var_site v;
    memset(&v, 0, sizeof v);
    v.loc = get_attr(dbg, die, DW_AT_location);
    v.cval = v.loc ? NULL : get_attr(dbg, die, DW_AT_const_value);
    /* extern declarations carry no storage; their definition is elsewhere */
    if (!v.loc && !v.cval && dw_flag(dbg, die, DW_AT_declaration))
        return;
    v.name = dw_name_via_origin(dbg, die, DW_AT_name);
    if (!v.name)
        goto out;
    Dwarf_Die td = dw_origin_with(dbg, die, DW_AT_type);
    if (td) {
        v.type_off = dw_ref(dbg, td, DW_AT_type);
        if (td != die)
            dwarf_dealloc_die(td);
    }
    Dwarf_Die ld = dw_origin_with(dbg, die, DW_AT_decl_line);
    if (ld) {
        Dwarf_Unsigned line = 0;
        dw_udata(dbg, ld, DW_AT_decl_line, &line);
        v.decl_line = (uint32_t)line;
        if (ld != die)
            dwarf_dealloc_die(ld);
    }
    v.cu_name = w->cu_name;
    v.function = sc->at_file_scope ? "#global" : sc->function;
    v.linkage = sc->at_file_scope ? NULL : sc->linkage;
    v.is_global = sc->at_file_scope;
    v.is_param = tag == DW_TAG_formal_parameter;
    v.origin = ultimate_origin(dbg, die);
    v.scope = sc->ranges;
    v.fb = sc->fb;
    if (v.function)
        w->on_var(w->ctx, dbg, die, &v);
out:
    if (v.loc)
        dwarf_dealloc_attribute(v.loc);
    if (v.cval)
        dwarf_dealloc_attribute(v.cval);
}

static void walk_children(struct wstate *w, Dwarf_Die parent,
                          const struct scope *sc, int depth);

static void visit(struct wstate *w, Dwarf_Die die, const struct scope *sc,
                  int depth)
{
    Dwarf_Debug dbg = w->dbg;
    Dwarf_Half tag = dw_tag(die);
    w->st->dies++;
    switch (tag) {
    case DW_TAG_variable:
    case DW_TAG_formal_parameter:
        visit_var(w, die, tag, sc);
        return;
    case DW_TAG_subprogram:
    case DW_TAG_inlined_subroutine:
    case DW_TAG_lexical_block: {
        struct pcrs r = { 0 };
        struct frame_base fb;
        struct scope inner = *sc;
        if (die_pcrs(dbg, die, w->cu_base, &r) == 0) {
            pcrs_free(&r);
            if (tag == DW_TAG_subprogram && w->want_abstract &&
                dw_flag(dbg, die, DW_AT_inline)) {
                /* abstract instance: its variables are reported without a
                 * scope, so a schema line can say "optimized out" rather
                 * than "not found" when every inlined copy lost them */
                struct scope ab = *sc;
                ab.ranges = NULL;
                ab.at_file_scope = 0;
                ab.function = dw_name_via_origin(dbg, die, DW_AT_name);
                ab.linkage = NULL;
                ab.fb = NULL;
                if (ab.function)
                    walk_children(w, die, &ab, depth + 1);
                return;
            }
            if (tag != DW_TAG_lexical_block)
                return;         /* declaration */
            /* a block without PCs: its variables use the parent's range */
            walk_children(w, die, sc, depth + 1);
            return;
        }
        inner.ranges = &r;
        inner.at_file_scope = 0;
        if (tag != DW_TAG_lexical_block) {
            inner.function = dw_name_via_origin(dbg, die, DW_AT_name);
            inner.linkage = dw_name_via_origin(dbg, die, DW_AT_linkage_name);
            if (!inner.linkage)
                inner.linkage = dw_name_via_origin(dbg, die,
                                                DW_AT_MIPS_linkage_name);
        }
        if (tag == DW_TAG_subprogram) {
            if (frame_base_read(dbg, die, &fb) != 0)
                fb.kind = FB_NONE;
            inner.fb = &fb;
        }
        if (inner.function)
            walk_children(w, die, &inner, depth + 1);
        pcrs_free(&r);
        return;
    }
    case DW_TAG_namespace:
        if (sc->at_file_scope)
            walk_children(w, die, sc, depth + 1);
        return;
    default:
        return;
    }
}

static void walk_children(struct wstate *w, Dwarf_Die parent,
                          const struct scope *sc, int depth)
{
    Dwarf_Die c = NULL;
    Dwarf_Error err = NULL;
    if (depth > 200)            /* malformed nesting: do not blow the stack */
        return;
    if (dwarf_child(parent, &c, &err) != DW_DLV_OK) {
        if (err)
            dwarf_dealloc_error(w->dbg, err);
        return;
    }
    while (c) {
        visit(w, c, sc, depth);
        Dwarf_Die next = NULL;
        int r = dwarf_siblingof_b(w->dbg, c, 1, &next, &err);
        dwarf_dealloc_die(c);
        c = r == DW_DLV_OK ? next : NULL;
        if (r == DW_DLV_ERROR && err) {
            dwarf_dealloc_error(w->dbg, err);
            err = NULL;
        }
    }
}

/* Walks one CU DIE (of the executable, or of a split-DWARF .dwo). */
static void walk_cu(struct wstate *w, Dwarf_Debug dbg, Dwarf_Die cu,
                    cu_fn want_cu)
{
    Dwarf_Error err = NULL;
    const char *name = dw_name(dbg, cu);
    const char *dir = dw_str(dbg, cu, DW_AT_comp_dir);
    if (!name || !want_cu(w->ctx, name, dir))
        return;
    struct pcrs r = { 0 };
    Dwarf_Addr base = 0;
    if (dwarf_lowpc(cu, &base, &err) != DW_DLV_OK) {
        if (err)
            dwarf_dealloc_error(dbg, err);
        base = 0;
    }
    die_pcrs(dbg, cu, base, &r);
    w->dbg = dbg;
    w->cu_name = name;
    w->cu_base = base;
    struct scope sc = { NULL, NULL, &r, NULL, 1 };
    w->st->cus_walked++;
    walk_children(w, cu, &sc, 0);
    pcrs_free(&r);
}

/* Split DWARF (-gsplit-dwarf): the executable holds a skeleton unit that
 * names a .dwo file (relative to DW_AT_comp_dir); its DIEs live there and
 * its addresses in the executable's .debug_addr, which libdwarf reaches
 * through the "tied" Dwarf_Debug. */
static void walk_dwo(struct wstate *w, Dwarf_Debug dbg, Dwarf_Die skel,
                     cu_fn want_cu)
{
    const char *dwo = dw_str(dbg, skel, DW_AT_dwo_name);
    if (!dwo)
        dwo = dw_str(dbg, skel, DW_AT_GNU_dwo_name);
    const char *dir = dw_str(dbg, skel, DW_AT_comp_dir);
    char path[4096];
    if (!dwo)
        return;
    if (dwo[0] == '/' || !dir)
        snprintf(path, sizeof path, "%s", dwo);
    else
        snprintf(path, sizeof path, "%s/%s", dir, dwo);
    Dwarf_Debug d2 = NULL;
    Dwarf_Error err = NULL;
    if (dwarf_init_path(path, NULL, 0, DW_DLC_READ, DW_GROUPNUMBER_DWO, NULL,
                        NULL, &d2, NULL, 0, NULL, &err) != DW_DLV_OK) {
        w->st->dwo_missing++;
        return;
    }
    if (dwarf_set_tied_dbg(d2, dbg, &err) == DW_DLV_OK) {
        if (w->on_unit)
            w->on_unit(w->ctx, d2, 1);
        for (;;) {
            Dwarf_Unsigned hlen = 0, typeoff = 0, next = 0;
            Dwarf_Half ver = 0, asz = 0, lsz = 0, esz = 0, cutype = 0;
            Dwarf_Off abbr = 0;
            Dwarf_Sig8 sig;
            int rc = dwarf_next_cu_header_d(d2, 1, &hlen, &ver, &abbr, &asz,
                    &lsz, &esz, &sig, &typeoff, &next, &cutype, &err);
            if (rc != DW_DLV_OK)
                break;
            Dwarf_Die cu = NULL;
            if (dwarf_siblingof_b(d2, NULL, 1, &cu, &err) != DW_DLV_OK)
                break;
            walk_cu(w, d2, cu, want_cu);
            dwarf_dealloc_die(cu);
        }
        if (w->on_unit)
            w->on_unit(w->ctx, d2, 0);
        w->dbg = dbg;
    } else {
        w->st->dwo_missing++;
    }
    dwarf_finish(d2, &err);
}

int walk_dwarf(Dwarf_Debug dbg, uint64_t info_size, int want_abstract,
               cu_fn want_cu, var_fn on_var, unit_fn on_unit, void *ctx,
               struct walk_stats *st, char *errbuf, size_t errlen)
{
    struct wstate w = { dbg, on_var, on_unit, ctx, NULL, 0, st,
                        want_abstract };
    Dwarf_Off *cu_off = NULL;
    size_t n = 0, cap = 0;
    memset(st, 0, sizeof *st);
    /* Pass 1: the offsets of all unit headers. Reading a .dwo resolves
     * addresses through the executable's units and so restarts libdwarf's
     * own "next unit" iteration; units are visited from this list. */
    for (Dwarf_Unsigned hdr = 0;;) {
        Dwarf_Unsigned hlen = 0, typeoff = 0, next = 0;
        Dwarf_Half ver = 0, asz = 0, lsz = 0, esz = 0, cutype = 0;
        Dwarf_Off abbr = 0;
        Dwarf_Sig8 sig;
        Dwarf_Error err = NULL;
        int rc = dwarf_next_cu_header_d(dbg, 1, &hlen, &ver, &abbr, &asz,
                                        &lsz, &esz, &sig, &typeoff, &next,
                                        &cutype, &err);
        if (rc == DW_DLV_NO_ENTRY)
            break;
        if (rc == DW_DLV_ERROR || next <= hdr) {
            snprintf(errbuf, errlen, "offset %llu: bad compilation unit "
                     "header after %zu units: %s", (unsigned long long)hdr,
                     n, err ? dwarf_errmsg(err) : "no progress");
            free(cu_off);
            return -1;
        }
        cu_off = vpf_grow(cu_off, &cap, n + 1, sizeof *cu_off);
        cu_off[n++] = hdr;
        hdr = next;
    }
    for (size_t i = 0; i < n; i++) {
        Dwarf_Off die_off = 0;
        Dwarf_Error err = NULL;
        st->cus++;
        progress_update(cu_off[i], info_size);
        Dwarf_Die cu = NULL;
        if (dwarf_get_cu_die_offset_given_cu_header_offset_b(dbg, cu_off[i],
                1, &die_off, &err) != DW_DLV_OK ||
            !(cu = dw_offdie(dbg, die_off))) {
            snprintf(errbuf, errlen, "offset %llu: compilation unit has no "
                     "DIE", (unsigned long long)cu_off[i]);
            free(cu_off);
            return -1;
        }
        if (dw_tag(cu) == DW_TAG_skeleton_unit ||
            dw_flag(dbg, cu, DW_AT_GNU_dwo_name) ||
            dw_flag(dbg, cu, DW_AT_dwo_name))
            walk_dwo(&w, dbg, cu, want_cu);
        else
            walk_cu(&w, dbg, cu, want_cu);
        dwarf_dealloc_die(cu);
    }
    free(cu_off);
    return 0;
}
