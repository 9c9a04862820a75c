/* ranges.c - PC range vectors and the PC ranges of a DIE.
 *
 * A DIE's code lives in [low_pc, high_pc) or in a DW_AT_ranges list:
 * .debug_ranges for DWARF 2-4 (with base-address-selection entries) or
 * .debug_rnglists for DWARF 5 (DW_FORM_rnglistx or sec_offset). */
#include <stdlib.h>
#include <string.h>
#include "meta.h"
#include "vprof_xalloc.h"

void pcrs_add(struct pcrs *r, uint64_t lo, uint64_t hi)
{
    if (hi <= lo)
        return;
    r->v = vpf_grow(r->v, &r->cap, r->n + 1, sizeof *r->v);
    r->v[r->n].lo = lo;
    r->v[r->n].hi = hi;
    r->n++;
}

void pcrs_free(struct pcrs *r)
{
    free(r->v);
    memset(r, 0, sizeof *r);
}

void pcrs_copy(struct pcrs *dst, const struct pcrs *src)
{
    dst->n = 0;
    for (size_t i = 0; i < src->n; i++)
        pcrs_add(dst, src->v[i].lo, src->v[i].hi);
}

static int ranges_v4(Dwarf_Debug dbg, Dwarf_Die die, Dwarf_Off off,
                     uint64_t base, struct pcrs *out)
{
    Dwarf_Ranges *rb = NULL;
    Dwarf_Signed n = 0;
    Dwarf_Unsigned bytes = 0;
    Dwarf_Off real = 0;
    Dwarf_Error err = NULL;
    int added = 0;

    if (dwarf_get_ranges_b(dbg, off, die, &real, &rb, &n, &bytes, &err)
        != DW_DLV_OK) {
        if (err)
            dwarf_dealloc_error(dbg, err);
        return 0;
    }
    for (Dwarf_Signed i = 0; i < n; i++) {
        if (rb[i].dwr_type == DW_RANGES_END)
            break;
        if (rb[i].dwr_type == DW_RANGES_ADDRESS_SELECTION) {
            base = rb[i].dwr_addr2;
            continue;
        }
        pcrs_add(out, base + rb[i].dwr_addr1, base + rb[i].dwr_addr2);
        added++;
    }
    dwarf_ranges_dealloc(dbg, rb, n);
    return added;
}

static int ranges_v5(Dwarf_Debug dbg, Dwarf_Attribute at, Dwarf_Half form,
                     Dwarf_Unsigned val, struct pcrs *out)
{
    Dwarf_Rnglists_Head head = 0;
    Dwarf_Unsigned count = 0, goff = 0;
    Dwarf_Error err = NULL;
    int added = 0;

    if (dwarf_rnglists_get_rle_head(at, form, val, &head, &count, &goff,
                                    &err) != DW_DLV_OK) {
        if (err)
            dwarf_dealloc_error(dbg, err);
        return 0;
    }
    for (Dwarf_Unsigned i = 0; i < count; i++) {
        unsigned len = 0, code = 0;
        Dwarf_Unsigned r1 = 0, r2 = 0, c1 = 0, c2 = 0;
        Dwarf_Bool unavail = 0;
        if (dwarf_get_rnglists_entry_fields_a(head, i, &len, &code, &r1, &r2,
                &unavail, &c1, &c2, &err) != DW_DLV_OK) {
            if (err)
                dwarf_dealloc_error(dbg, err);
            break;
        }
        if (code == DW_RLE_end_of_list)
            break;
        if (unavail || code == DW_RLE_base_address ||
            code == DW_RLE_base_addressx)
            continue;
        pcrs_add(out, c1, c2);  /* libdwarf returns cooked addresses */
        added++;
    }
    dwarf_dealloc_rnglists_head(head);
    return added;
}

int die_pcrs(Dwarf_Debug dbg, Dwarf_Die die, uint64_t cu_base,
             struct pcrs *out)
{
    Dwarf_Error err = NULL;
    Dwarf_Addr lo = 0, hi = 0;
    Dwarf_Half form = 0;
    enum Dwarf_Form_Class cls = DW_FORM_CLASS_UNKNOWN;

    if (dwarf_lowpc(die, &lo, &err) == DW_DLV_OK) {
        if (dwarf_highpc_b(die, &hi, &form, &cls, &err) == DW_DLV_OK) {
            if (cls == DW_FORM_CLASS_CONSTANT)
                hi += lo;
            if (hi > lo) {
                pcrs_add(out, lo, hi);
                return 1;
            }
            return 0;
        }
    }
    if (err) {
        dwarf_dealloc_error(dbg, err);
        err = NULL;
    }
    Dwarf_Attribute at = NULL;
    if (dwarf_attr(die, DW_AT_ranges, &at, &err) != DW_DLV_OK) {
        if (err)
            dwarf_dealloc_error(dbg, err);
        return 0;
    }
    int added = 0;
    Dwarf_Half version = 0, offsz = 0;
    dwarf_whatform(at, &form, &err);
    dwarf_get_version_of_die(die, &version, &offsz);
    if (form == DW_FORM_rnglistx || version >= 5) {
        Dwarf_Unsigned val = 0;
        Dwarf_Off goff = 0;
        int rc;
        if (form == DW_FORM_rnglistx) {
            rc = dwarf_formudata(at, &val, &err);
        } else {
            rc = dwarf_global_formref(at, &goff, &err);
            val = goff;
        }
        if (rc == DW_DLV_OK)
            added = ranges_v5(dbg, at, form, val, out);
    } else {
        Dwarf_Off off = 0;
        if (dwarf_global_formref(at, &off, &err) == DW_DLV_OK)
            added = ranges_v4(dbg, die, off, cu_base, out);
    }
    if (err)
        dwarf_dealloc_error(dbg, err);
    dwarf_dealloc_attribute(at);
    return added;
}
