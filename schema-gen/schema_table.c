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

struct vsg_field {
    char *file, *function, *variable, *key;
    unsigned offset;
};

struct vsg_write {
    char *file, *function, *target;
    unsigned line;
};

struct vsg_from {
    char *file, *function, *variable, *callee;
    unsigned line;
    int guard;                  /* the kind, as struct vpf_schema_from's (0: `@from`,
                                   1: `@guard`, ... 8: `@predicate`) */
};

/* Set of strings seen (open addressing), for deduplicating lines. */
struct vsg_seen {
    char **key;
    size_t n, cap;              /* cap: power of two, or 0 */
};

struct vsg_table {
    struct vsg_field *fields;
    size_t n_fields, cap_fields;
    struct vsg_write *writes;
    size_t n_writes, cap_writes;
    struct vsg_from *froms;
    size_t n_froms, cap_froms;
    struct vsg_seen seen_fields, seen_writes, seen_froms;
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
    for (size_t i = 0; i < t->n_fields; i++) {
        free(t->fields[i].file); free(t->fields[i].function);
        free(t->fields[i].variable); free(t->fields[i].key);
    }
    for (size_t i = 0; i < t->n_writes; i++) {
        free(t->writes[i].file); free(t->writes[i].function); free(t->writes[i].target);
    }
    for (size_t i = 0; i < t->seen_fields.cap; i++)
        free(t->seen_fields.key[i]);
    for (size_t i = 0; i < t->n_froms; i++) {
        free(t->froms[i].file); free(t->froms[i].function);
        free(t->froms[i].variable); free(t->froms[i].callee);
    }
    for (size_t i = 0; i < t->seen_writes.cap; i++)
        free(t->seen_writes.key[i]);
    for (size_t i = 0; i < t->seen_froms.cap; i++)
        free(t->seen_froms.key[i]);
    free(t->seen_froms.key);
    free(t->froms);
    free(t->seen_fields.key);
    free(t->seen_writes.key);
    free(t->fields);
    free(t->writes);
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
    if (vpf_grow_try((void **)&t->vars, &t->cap_vars, t->n_vars + 1, sizeof *t->vars) < 0)
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
    if (vpf_grow_try((void **)&t->blocks, &t->cap_blocks, t->n_blocks + 1, sizeof *t->blocks) < 0)
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
    if (vpf_grow_try((void **)&t->uses, &t->cap_uses, t->n_uses + 1, sizeof *t->uses) < 0)
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

/* Adds rec (malloc'd; the set takes it) to the set: 1 if it was new, 0 if
 * already present (rec freed), -1 when out of memory (rec freed). */
static int seen_insert(struct vsg_seen *s, char *rec)
{
    if ((s->n + 1) * 2 > s->cap) {
        size_t nc = s->cap ? s->cap * 2 : 64;
        char **k = calloc(nc, sizeof *k);
        if (!k) {
            free(rec);
            return -1;
        }
        for (size_t i = 0; i < s->cap; i++) {
            if (!s->key[i])
                continue;
            size_t h = (size_t)vpf_hash_str(VPF_FNV_BASIS, s->key[i]) & (nc - 1);
            while (k[h])
                h = (h + 1) & (nc - 1);
            k[h] = s->key[i];
        }
        free(s->key);
        s->key = k;
        s->cap = nc;
    }
    size_t h = (size_t)vpf_hash_str(VPF_FNV_BASIS, rec) & (s->cap - 1);
    for (; s->key[h]; h = (h + 1) & (s->cap - 1))
        if (!strcmp(s->key[h], rec)) {
            free(rec);
            return 0;
        }
    s->key[h] = rec;
    s->n++;
    return 1;
}

/* One line's identity as a string: the fields joined by \x1f (a control
 * character no name holds; a clash would only merge two lines). */
static char *record(const char *a, const char *b, const char *c, const char *d,
                    const char *e)
{
    char *r = NULL;
    if (asprintf(&r, "%s\x1f%s\x1f%s\x1f%s\x1f%s", a, b, c, d, e) < 0)
        return NULL;
    return r;
}

int vsg_table_add_field(struct vsg_table *t, const char *file,
                        const char *function, const char *variable,
                        const char *key, unsigned offset)
{
    char *rec = record(file, function, variable, "", "");
    if (!rec)
        return -1;
    int isnew = seen_insert(&t->seen_fields, rec);
    if (isnew <= 0)
        return isnew;
    if (vpf_grow_try((void **)&t->fields, &t->cap_fields, t->n_fields + 1, sizeof *t->fields) < 0)
        return -1;
    struct vsg_field *fl = &t->fields[t->n_fields];
    fl->file = dup(file); fl->function = dup(function);
    fl->variable = dup(variable); fl->key = dup(key);
    fl->offset = offset;
    if (!fl->file || !fl->function || !fl->variable || !fl->key) {
        free(fl->file); free(fl->function); free(fl->variable); free(fl->key);
        return -1;
    }
    t->n_fields++;
    return 0;
}

int vsg_table_add_write(struct vsg_table *t, const char *file,
                        const char *function, unsigned line,
                        const char *target)
{
    char ln[16];
    snprintf(ln, sizeof ln, "%u", line);
    char *rec = record(file, function, ln, target, "");
    if (!rec)
        return -1;
    int isnew = seen_insert(&t->seen_writes, rec);
    if (isnew <= 0)
        return isnew;
    if (vpf_grow_try((void **)&t->writes, &t->cap_writes, t->n_writes + 1, sizeof *t->writes) < 0)
        return -1;
    struct vsg_write *w = &t->writes[t->n_writes];
    w->file = dup(file); w->function = dup(function); w->target = dup(target);
    w->line = line;
    if (!w->file || !w->function || !w->target) {
        free(w->file); free(w->function); free(w->target);
        return -1;
    }
    t->n_writes++;
    return 0;
}

/* Kept apart in the deduplication key: a `@from` line and a `@setfrom` line
 * may name the same file, function, line and callee. */
static const char *const from_prefix[] = {"", "g", "s", "z", "i", "f", "a", "b", "p", "t"};

int vsg_table_add_from(struct vsg_table *t, const char *file, const char *function,
                       unsigned line, const char *variable, const char *callee,
                       int guard)
{
    char ln[16];
    snprintf(ln, sizeof ln, "%s%u",
             guard >= 0 && guard < (int)(sizeof from_prefix / sizeof *from_prefix) ?
             from_prefix[guard] : "?", line);
    char *rec = record(file, function, ln, variable, callee);
    if (!rec)
        return -1;
    int isnew = seen_insert(&t->seen_froms, rec);
    if (isnew <= 0)
        return isnew;
    if (vpf_grow_try((void **)&t->froms, &t->cap_froms, t->n_froms + 1, sizeof *t->froms) < 0)
        return -1;
    struct vsg_from *r = &t->froms[t->n_froms];
    r->file = dup(file); r->function = dup(function);
    r->variable = dup(variable); r->callee = dup(callee);
    r->line = line;
    r->guard = guard;
    if (!r->file || !r->function || !r->variable || !r->callee) {
        free(r->file); free(r->function); free(r->variable); free(r->callee);
        return -1;
    }
    t->n_froms++;
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
    for (size_t i = 0; i < t->n_fields; i++) {
        const struct vsg_field *fl = &t->fields[i];
        vpf_schema_write_field(f, fl->file, fl->function, fl->variable, fl->key, fl->offset);
    }
    for (size_t i = 0; i < t->n_writes; i++) {
        const struct vsg_write *w = &t->writes[i];
        vpf_schema_write_writer(f, w->file, w->function, w->line, w->target);
    }
    for (size_t i = 0; i < t->n_froms; i++) {
        const struct vsg_from *r = &t->froms[i];
        vpf_schema_write_from(f, r->file, r->function, r->line, r->variable, r->callee,
                              r->guard);
    }
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
