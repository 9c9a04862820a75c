/* select_int.h - state shared by select.c (choice, output), place.c
 * (locations -> entries) and report.c (what was left out, and why). */
#ifndef VPROF_SELECT_INT_H
#define VPROF_SELECT_INT_H
#include "select.h"

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
    /* the output's builder from the start: EXPR programs go into its
     * string table (deduplicated) as they are placed, so an entry's offset
     * is final and equal programs compare equal when entries merge */
    struct vpf_meta_builder *mb;
    /* schema-less: origin -> var index (open addressing) */
    Dwarf_Off *h_key;
    size_t *h_val, h_cap, h_n;
    /* schema mode: distinct schema files (CU filter) */
    const char **files;
    size_t n_files;
    /* schema mode: base variable name -> schema variables (chained) */
    size_t *bucket, *chain, n_bucket;
};

/* place.c: resolves one DWARF variable for output variable `var`. */
void place(struct sel *s, size_t var, Dwarf_Die die,
           const struct var_site *v);
#endif
