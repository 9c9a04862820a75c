/* select.h - choose variables (schema or schema-less), place them, emit. */
#ifndef VPROF_SELECT_H
#define VPROF_SELECT_H
#include <stdio.h>
#include "meta.h"
#include "elf_info.h"

struct sel;
/* schema != NULL: schema mode; else globs (NULL-terminated) select CUs. */
struct sel *sel_new(Dwarf_Debug dbg, const struct elf_info *ei,
                    const struct vpf_schema *schema, char **globs);
void sel_free(struct sel *s);
int sel_want_cu(void *s, const char *cu_name, const char *comp_dir);
void sel_on_var(void *s, Dwarf_Debug dbg, Dwarf_Die die,
                const struct var_site *v);
/* A split-DWARF .dwo starts (begin=1) or ends: its type DIEs and DIE
 * offsets belong to its own Dwarf_Debug. */
void sel_on_unit(void *s, Dwarf_Debug dbg, int begin);
/* Builds the metadata (descriptors of placed variables, their entries). */
struct vpf_meta_builder *sel_build(struct sel *s);
/* Summary of what could not be placed (counts per reason); with explain,
 * one line per variable and reason. */
void sel_report(struct sel *s, FILE *f, int explain);
size_t sel_n_placed(const struct sel *s);
#endif
