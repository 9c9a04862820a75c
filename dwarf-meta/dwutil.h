/* dwutil.h - small libdwarf helpers shared by the walker and the types. */
#ifndef VPROF_DWUTIL_H
#define VPROF_DWUTIL_H
#include "meta.h"

/* Offsets with this bit set are in .debug_types (DWARF 4 type units). */
#define DW_OFF_TYPES (1ull << 62)

/* Global .debug_info offset referenced by attribute `a` of die, 0 if none
 * (DW_FORM_ref_sig8 is followed to its type unit). dw_offdie accepts it. */
Dwarf_Off dw_ref(Dwarf_Debug dbg, Dwarf_Die die, Dwarf_Half a);
/* Unsigned constant attribute; returns 0 if present. */
int dw_udata(Dwarf_Debug dbg, Dwarf_Die die, Dwarf_Half a, Dwarf_Unsigned *v);
int dw_flag(Dwarf_Debug dbg, Dwarf_Die die, Dwarf_Half a);
/* DW_AT_name (string owned by libdwarf) or NULL. */
const char *dw_name(Dwarf_Debug dbg, Dwarf_Die die);
const char *dw_str(Dwarf_Debug dbg, Dwarf_Die die, Dwarf_Half a);
Dwarf_Half dw_tag(Dwarf_Die die);
Dwarf_Die dw_offdie(Dwarf_Debug dbg, Dwarf_Off off);
/* Follows DW_AT_abstract_origin / DW_AT_specification to the DIE that has
 * attribute a (the concrete DIE of an inlined copy or a C++ method's
 * definition leaves it out); the caller frees it if != die. NULL if none. */
Dwarf_Die dw_origin_with(Dwarf_Debug dbg, Dwarf_Die die, Dwarf_Half a);
/* Attribute a (DW_AT_name, DW_AT_linkage_name) as a string, found that way. */
const char *dw_name_via_origin(Dwarf_Debug dbg, Dwarf_Die die, Dwarf_Half a);
#endif
