/* schema_table.c - collection and rendering of one translation unit's schema
 * (see schema_table.h). The text itself is written by the shared format
 * module (vpf_schema_write_*), so the pass and vprof-meta cannot disagree on
 * the syntax. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schema_table.h"
#include "vprof_format.h"

struct vsg_var {
    char *file, *function, *name, *type;
    unsigned line, tags;
};

struct vsg_block {
    char *file, *function, *kind;
    unsigned id, line_start, line_end;
};

struct vsg_use {
    char *file, *function, *variable;
};

struct vsg_table {
    struct vsg_use *uses;
    size_t n_uses, cap_uses;
    struct vsg_var *vars;
    size_t n_vars, cap_vars;
    struct vsg_block *blocks;
    size_t n_blocks, cap_blocks;
    size_t *slot;               /* open-addressing index into vars */
    size_t n_slots;             /* power of two, or 0 */
};

struct vsg_table *vsg_table_new(void)
{
    return calloc(1, sizeof(struct vsg_table));
}

void vsg_table_free(struct vsg_table *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->n_vars; i++) {
        free(t->vars[i].file); free(t->vars[i].function);
        free(t->vars[i].name); free(t->vars[i].type);
    }
    for (size_t i = 0; i < t->n_blocks; i++) {
        free(t->blocks[i].file); free(t->blocks[i].function);
        free(t->blocks[i].kind);
    }
    for (size_t i = 0; i < t->n_uses; i++) {
        free(t->uses[i].file); free(t->uses[i].function); free(t->uses[i].variable);
    }
    free(t->uses);
    free(t->vars);
    free(t->blocks);
    free(t->slot);
    free(t);
}

static size_t var_hash(const char *file, const char *function, const char *name)
{
    return (size_t)vpf_var_key_hash(file, function, name);
}

static int rehash(struct vsg_table *t)
{
    size_t n = t->n_slots ? t->n_slots * 2 : 64;
    size_t *slot = malloc(n * sizeof *slot);
    if (!slot)
        return -1;
    for (size_t i = 0; i < n; i++)
        slot[i] = SIZE_MAX;
    for (size_t i = 0; i < t->n_vars; i++) {
        const struct vsg_var *v = &t->vars[i];
        size_t h = var_hash(v->file, v->function, v->name) & (n - 1);
        while (slot[h] != SIZE_MAX)
            h = (h + 1) & (n - 1);
        slot[h] = i;
    }
    free(t->slot);
    t->slot = slot;
    t->n_slots = n;
    return 0;
}

static int grow(void **arr, size_t *cap, size_t n, size_t elem)
{
    if (n < *cap)
        return 0;
    size_t nc = *cap ? *cap * 2 : 32;
    void *p = realloc(*arr, nc * elem);
    if (!p)
        return -1;
    *arr = p;
    *cap = nc;
    return 0;
}

static char *dup(const char *s)
{
    return strdup(s ? s : "");
}

int vsg_table_add_var(struct vsg_table *t, const char *file,
                      const char *function, unsigned line, const char *name,
                      const char *type, unsigned tags)
{
    if ((t->n_vars + 1) * 2 > t->n_slots && rehash(t) < 0)
        return -1;
    size_t mask = t->n_slots - 1;
    size_t h = var_hash(file, function, name) & mask;
    for (; t->slot[h] != SIZE_MAX; h = (h + 1) & mask) {
        struct vsg_var *v = &t->vars[t->slot[h]];
        if (!strcmp(v->file, file) && !strcmp(v->function, function) &&
            !strcmp(v->name, name)) {
            v->tags |= tags;
            return 0;
        }
    }
    if (grow((void **)&t->vars, &t->cap_vars, t->n_vars, sizeof *t->vars) < 0)
        return -1;
    struct vsg_var *v = &t->vars[t->n_vars];
    v->file = dup(file); v->function = dup(function);
    v->name = dup(name); v->type = dup(type);
    v->line = line;
    v->tags = tags;
    if (!v->file || !v->function || !v->name || !v->type) {
        free(v->file); free(v->function); free(v->name); free(v->type);
        return -1;
    }
    t->slot[h] = t->n_vars++;
    return 0;
}

int vsg_table_add_block(struct vsg_table *t, const char *file,
                        const char *function, unsigned id, unsigned line_start,
                        unsigned line_end, const char *kind)
{
    if (grow((void **)&t->blocks, &t->cap_blocks, t->n_blocks, sizeof *t->blocks) < 0)
        return -1;
    struct vsg_block *b = &t->blocks[t->n_blocks];
    b->file = dup(file); b->function = dup(function); b->kind = dup(kind);
    b->id = id;
    b->line_start = line_start;
    b->line_end = line_end;
    if (!b->file || !b->function || !b->kind) {
        free(b->file); free(b->function); free(b->kind);
        return -1;
    }
    t->n_blocks++;
    return 0;
}

int vsg_table_add_use(struct vsg_table *t, const char *file,
                      const char *function, const char *variable)
{
    /* Uses arrive function by function: a repeat can only be among the
     * current function's entries at the end. */
    for (size_t i = t->n_uses; i-- > 0 && !strcmp(t->uses[i].function, function);)
        if (!strcmp(t->uses[i].variable, variable) && !strcmp(t->uses[i].file, file))
            return 0;
    if (grow((void **)&t->uses, &t->cap_uses, t->n_uses, sizeof *t->uses) < 0)
        return -1;
    struct vsg_use *u = &t->uses[t->n_uses];
    u->file = dup(file); u->function = dup(function); u->variable = dup(variable);
    if (!u->file || !u->function || !u->variable) {
        free(u->file); free(u->function); free(u->variable);
        return -1;
    }
    t->n_uses++;
    return 0;
}

size_t vsg_table_n_vars(const struct vsg_table *t) { return t->n_vars; }
size_t vsg_table_n_blocks(const struct vsg_table *t) { return t->n_blocks; }

char *vsg_table_text(const struct vsg_table *t, size_t *len)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    if (!f)
        return NULL;
    vpf_schema_write_header(f);
    for (size_t i = 0; i < t->n_vars; i++) {
        const struct vsg_var *v = &t->vars[i];
        /* The global bit is implied by the "#global" function field. */
        vpf_schema_write_var(f, v->file, v->function, v->line, v->name,
                             v->type, (uint16_t)(v->tags & ~VPF_TAG_GLOBAL));
    }
    for (size_t i = 0; i < t->n_blocks; i++) {
        const struct vsg_block *b = &t->blocks[i];
        vpf_schema_write_block(f, b->file, b->function, b->id, b->line_start,
                               b->line_end, b->kind);
    }
    for (size_t i = 0; i < t->n_uses; i++)
        vpf_schema_write_use(f, t->uses[i].file, t->uses[i].function, t->uses[i].variable);
    if (ferror(f)) {
        fclose(f);
        free(buf);
        return NULL;
    }
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    *len = n;
    return buf;
}
