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
    if (dwarf_global_formref(at, &off, &err) != DW_DLV_OK) {
        drop(dbg, err);
        off = 0;
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
    if (!off || dwarf_offdie_b(dbg, off, 1, &d, &err) != DW_DLV_OK) {
        drop(dbg, err);
        return NULL;
    }
    return d;
}
