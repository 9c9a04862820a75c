/* lines.h - PC -> source file:line from the DWARF line table (libdwarf). */
#ifndef VPR_LINES_H
#define VPR_LINES_H
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

#endif
