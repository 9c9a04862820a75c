/* dwutil.c - small libdwarf helpers: attribute reads that free their error
 * and attribute objects, so callers stay short. */
#include "dwutil.h"

static void drop(Dwarf_Debug dbg, Dwarf_Error err)
{
    if (err)
        dwarf_dealloc_error(dbg, err);
}

Dwarf_Off dw_ref(Dwarf_Debug dbg, Dwarf_Die die, Dwarf_Half a)
{
    Dwarf_Attribute at = NULL;
    Dwarf_Error err = NULL;
    Dwarf_Off off = 0;
    if (dwarf_attr(die, a, &at, &err) != DW_DLV_OK) {
        drop(dbg, err);
        return 0;
    }
    Dwarf_Half form = 0;
    dwarf_whatform(at, &form, &err);
    if (form == DW_FORM_ref_sig8) {
        /* a type in a type unit (-fdebug-types-section): found by its
         * signature; DWARF 4 keeps those in .debug_types */
        Dwarf_Sig8 sig;
        Dwarf_Die d = NULL;
        Dwarf_Bool is_info = 1;
        off = 0;
        if (dwarf_formsig8(at, &sig, &err) == DW_DLV_OK &&
            dwarf_find_die_given_sig8(dbg, &sig, &d, &is_info, &err)
                == DW_DLV_OK) {
            if (dwarf_dieoffset(d, &off, &err) != DW_DLV_OK)
                off = 0;
            else if (!is_info)
                off |= DW_OFF_TYPES;
            dwarf_dealloc_die(d);
        }
        if (err)
            drop(dbg, err);
    } else if (dwarf_global_formref(at, &off, &err) != DW_DLV_OK) {
        drop(dbg, err);
        off = 0;
    } else if (!dwarf_get_die_infotypes_flag(die)) {
        off |= DW_OFF_TYPES;    /* a reference inside .debug_types */
    }
    dwarf_dealloc_attribute(at);
    return off;
}

int dw_udata(Dwarf_Debug dbg, Dwarf_Die die, Dwarf_Half a, Dwarf_Unsigned *v)
{
    Dwarf_Attribute at = NULL;
    Dwarf_Error err = NULL;
    int rc = -1;
    if (dwarf_attr(die, a, &at, &err) != DW_DLV_OK) {
        drop(dbg, err);
        return -1;
    }
    if (dwarf_formudata(at, v, &err) == DW_DLV_OK) {
        rc = 0;
    } else {
        Dwarf_Signed s = 0;
        drop(dbg, err);
        err = NULL;
        if (dwarf_formsdata(at, &s, &err) == DW_DLV_OK) {
            *v = (Dwarf_Unsigned)s;
            rc = 0;
        } else {
            drop(dbg, err);
        }
    }
    dwarf_dealloc_attribute(at);
    return rc;
}

int dw_flag(Dwarf_Debug dbg, Dwarf_Die die, Dwarf_Half a)
{
    Dwarf_Bool has = 0;
    Dwarf_Error err = NULL;
    if (dwarf_hasattr(die, a, &has, &err) != DW_DLV_OK) {
        drop(dbg, err);
        return 0;
    }
    return has != 0;
}

const char *dw_str(Dwarf_Debug dbg, Dwarf_Die die, Dwarf_Half a)
{
    Dwarf_Attribute at = NULL;
    Dwarf_Error err = NULL;
    char *s = NULL;
    if (dwarf_attr(die, a, &at, &err) != DW_DLV_OK) {
        drop(dbg, err);
        return NULL;
    }
    if (dwarf_formstring(at, &s, &err) != DW_DLV_OK) {
        drop(dbg, err);
        s = NULL;
    }
    dwarf_dealloc_attribute(at);
    return s;
}

const char *dw_name(Dwarf_Debug dbg, Dwarf_Die die)
{
    char *s = NULL;
    Dwarf_Error err = NULL;
    if (dwarf_diename(die, &s, &err) != DW_DLV_OK) {
        drop(dbg, err);
        return NULL;
    }
    return s;
}

Dwarf_Half dw_tag(Dwarf_Die die)
{
    Dwarf_Half t = 0;
    Dwarf_Error err = NULL;
    if (dwarf_tag(die, &t, &err) != DW_DLV_OK)
        return 0;               /* err is freed with the Dwarf_Debug */
    return t;
}

Dwarf_Die dw_offdie(Dwarf_Debug dbg, Dwarf_Off off)
{
    Dwarf_Die d = NULL;
    Dwarf_Error err = NULL;
    Dwarf_Bool is_info = !(off & DW_OFF_TYPES);
    off &= ~DW_OFF_TYPES;
    if (!off || dwarf_offdie_b(dbg, off, is_info, &d, &err) != DW_DLV_OK) {
        drop(dbg, err);
        return NULL;
    }
    return d;
}

/* Follows DW_AT_abstract_origin / DW_AT_specification to find an attribute
 * the concrete DIE leaves out. Returns the DIE that has it (caller frees if
 * != die) or NULL. */
Dwarf_Die dw_origin_with(Dwarf_Debug dbg, Dwarf_Die die, Dwarf_Half a)
{
    Dwarf_Die cur = die;
    for (int depth = 0; depth < 8; depth++) {
        if (dw_flag(dbg, cur, a))
            return cur;
        Dwarf_Off o = dw_ref(dbg, cur, DW_AT_abstract_origin);
        if (!o)
            o = dw_ref(dbg, cur, DW_AT_specification);
        Dwarf_Die next = o ? dw_offdie(dbg, o) : NULL;
        if (cur != die)
            dwarf_dealloc_die(cur);
        if (!next)
            return NULL;
        cur = next;
    }
    if (cur != die)
        dwarf_dealloc_die(cur);
    return NULL;
}

const char *dw_name_via_origin(Dwarf_Debug dbg, Dwarf_Die die, Dwarf_Half a)
{
    Dwarf_Die d = dw_origin_with(dbg, die, a);
    if (!d)
        return NULL;
    const char *s = a == DW_AT_name ? dw_name(dbg, d) : dw_str(dbg, d, a);
    if (d != die)
        dwarf_dealloc_die(d);
    return s;
}
