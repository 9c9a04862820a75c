/* select.c - which variables to describe, and the metadata built from them.
 *
 * Schema mode: every schema variable (`file, function, line, variable`) is
 * matched against the variables the walker reports: same function (DWARF
 * name or linkage name, `#global` at file scope), same base variable name,
 * and a CU name equal to the schema file or ending in "/file" (or the other
 * way round). When several DWARF variables match (shadowing, several blocks)
 * and some have the schema's declaration line, only those are kept.
 * Schema-less mode: every variable of basic or pointer type in the CUs whose
 * DW_AT_name matches one of the globs, one descriptor per abstract variable
 * (inlined copies share it). Locations: place.c; the report: report.c. */
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include "select_int.h"
#include "dwutil.h"
#include "vprof_xalloc.h"

static size_t str_hash(const char *p)
{
    return (size_t)vpf_hash_str(VPF_FNV_BASIS, p);
}

static struct ovar *new_var(struct sel *s)
{
    s->vars = vpf_grow(s->vars, &s->cap_vars, s->n_vars + 1, sizeof *s->vars);
    struct ovar *v = &s->vars[s->n_vars++];
    memset(v, 0, sizeof *v);
    return v;
}

struct sel *sel_new(Dwarf_Debug dbg, const struct elf_info *ei,
                    const struct vpf_schema *schema, char **globs)
{
    struct sel *s = vpf_xcalloc(1, sizeof *s);
    s->dbg = dbg;
    s->ei = ei;
    s->schema = schema;
    s->globs = globs;
    s->types = s->main_types = types_new(dbg);
    s->cfa = cfa_open(dbg);
    if (!(s->mb = vpf_mb_new()))
        vpf_oom();
    if (schema) {
        s->files = vpf_xcalloc(schema->n_vars + 1, sizeof *s->files);
        for (size_t i = 0; i < schema->n_vars; i++) {
            const struct vpf_schema_var *sv = &schema->vars[i];
            struct ovar *v = new_var(s);
            v->file = vpf_xstrdup(sv->file);
            v->function = vpf_xstrdup(sv->function);
            v->name = vpf_xstrdup(sv->name);
            v->type = vpf_xstrdup(sv->type);
            v->line = sv->line;
            v->tags = sv->tags;
            v->schema_line = sv->src_line;
            char *base = vpf_xstrdup(sv->name), *p;
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
        s->bucket = vpf_xcalloc(s->n_bucket, sizeof *s->bucket);
        s->chain = vpf_xcalloc(s->n_vars + 1, sizeof *s->chain);
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
    vpf_mb_free(s->mb);
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
        s->h_key = vpf_xcalloc(nc, sizeof *s->h_key);
        s->h_val = vpf_xcalloc(nc, sizeof *s->h_val);
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
    o->file = vpf_xstrdup(v->cu_name);
    o->function = vpf_xstrdup(v->function);
    o->name = vpf_xstrdup(v->name);
    o->type = vpf_xstrdup(types_name(s->types, v->type_off));
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
        s->unit_serial++;
    }
}

void sel_on_var(void *ctx, Dwarf_Debug dbg, Dwarf_Die die,
                const struct var_site *v)
{
    struct sel *s = ctx;
    /* Compiler-made variables (VLA bounds, C++ `this`) have no source name
     * worth selecting on their own; but the schema lists `this` when a
     * method reads members through it (`this->routes_`), and those are
     * placed through `this`'s location. */
    if (dw_flag(dbg, die, DW_AT_artificial) && !(s->schema && !strcmp(v->name, "this")))
        return;
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
    struct vpf_meta_builder *b = s->mb;
    if (!b)
        return NULL;
    s->mb = NULL;               /* the caller's now */
    /* schema lines with a declaration line: keep the matching DWARF
     * variable's entries when there is one (shadowed names) */
    for (size_t i = 0; i < s->n_ents; i++) {
        struct ovar *o = &s->vars[s->ents[i].e.var];
        if (s->schema && o->line && s->ents[i].decl_line == o->line)
            o->line_hit = 1;
    }
    uint32_t *id = vpf_xcalloc(s->n_vars + 1, sizeof *id);
    size_t *kept = vpf_xcalloc(s->n_vars + 1, sizeof *kept);
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
