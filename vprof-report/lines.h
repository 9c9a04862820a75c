/* lines.h - PC -> source file:line from the DWARF line table (libdwarf). */
#ifndef VPR_LINES_H
#define VPR_LINES_H
#include <stddef.h>
#include <stdint.h>

struct vpr_lines;
/* Loads every CU's line table. A file without DWARF gives an empty table
 * (lookups fail) rather than an error: line info is an extra. */
struct vpr_lines *vpr_lines_load(const char *path);
void vpr_lines_free(struct vpr_lines *l);
/* Link-time address -> file and line of the row covering it; 0 on success. */
int vpr_lines_lookup(const struct vpr_lines *l, uint64_t addr,
                     const char **file, unsigned *line);
/* The function whose code the compiler inlined at link-time address addr
 * (the innermost DW_TAG_inlined_subroutine covering it), or NULL: at -O2 a
 * static function's loop lives in its caller's symbol. */
const char *vpr_lines_inlined(const struct vpr_lines *l, uint64_t addr);
/* The functions inlined at addr, outermost first (the innermost max): the ids of
 * their linkage names (source names where there is none), each below
 * vpr_lines_n_strings(). Returns how many. */
size_t vpr_lines_inline_chain(const struct vpr_lines *l, uint64_t addr, uint32_t *ids,
                              size_t max);
size_t vpr_lines_n_strings(const struct vpr_lines *l);
const char *vpr_lines_string(const struct vpr_lines *l, uint32_t id);
/* Inlined ranges, by start address: range i's start, the id of its
 * function's linkage name (as vpr_lines_inline_chain gives it), its source
 * name, and its linkage name or NULL. */
size_t vpr_lines_n_inlined(const struct vpr_lines *l);
void vpr_lines_inlined_range(const struct vpr_lines *l, size_t i, uint64_t *lo,
                             uint32_t *link, const char **name, const char **linkage);

#endif
