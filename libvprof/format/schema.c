/* schema.c - reader and writer of the schema text (FORMATS.md §1). */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vprof_format.h"

#define SCHEMA_MAGIC "# vprof-schema"
#define MAX_FIELDS 8

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    char *end = s + strlen(s);
    while (end > s && isspace((unsigned char)end[-1]))
        *--end = 0;
    return s;
}

static int split(char *line, char **f, int max)
{
    int n = 0;
    char *p = line;
    for (;;) {
        char *c = strchr(p, ',');
        if (n < max)
            f[n] = p;
        n++;
        if (!c)
            break;
        *c = 0;
        p = c + 1;
    }
    for (int i = 0; i < n && i < max; i++)
        f[i] = trim(f[i]);
    return n;
}

static int parse_uint(const char *s, uint32_t *out)
{
    char *end;
    if (!*s || !isdigit((unsigned char)*s))
        return -1;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (*end || errno || v > UINT32_MAX)
        return -1;
    *out = (uint32_t)v;
    return 0;
}

/* Duplicate detection: open addressing over (file, function, name). */
struct dedup { size_t *slot; size_t cap; };

static uint64_t var_hash(const struct vpf_schema_var *v)
{
    return vpf_var_key_hash(v->file, v->function, v->name);
}

static int var_same(const struct vpf_schema_var *a, const struct vpf_schema_var *b)
{
    return !strcmp(a->file, b->file) && !strcmp(a->function, b->function) &&
           !strcmp(a->name, b->name);
}

static int dedup_grow(struct dedup *d, const struct vpf_schema *s)
{
    size_t cap = d->cap ? d->cap * 2 : 256;
    size_t *slot = malloc(cap * sizeof *slot);
    if (!slot)
        return -1;
    for (size_t i = 0; i < cap; i++)
        slot[i] = SIZE_MAX;
    for (size_t i = 0; i < s->n_vars; i++) {
        size_t h = var_hash(&s->vars[i]) & (cap - 1);
        while (slot[h] != SIZE_MAX)
            h = (h + 1) & (cap - 1);
        slot[h] = i;
    }
    free(d->slot);
    d->slot = slot;
    d->cap = cap;
    return 0;
}

/* Returns the index of an equal variable already present, or SIZE_MAX after
 * registering index `idx` (which the caller has just appended). */
static size_t dedup_find_or_add(struct dedup *d, const struct vpf_schema *s, size_t idx)
{
    size_t h = var_hash(&s->vars[idx]) & (d->cap - 1);
    while (d->slot[h] != SIZE_MAX) {
        if (var_same(&s->vars[d->slot[h]], &s->vars[idx]))
            return d->slot[h];
        h = (h + 1) & (d->cap - 1);
    }
    d->slot[h] = idx;
    return SIZE_MAX;
}

static void free_var(struct vpf_schema_var *v)
{
    free(v->file); free(v->function); free(v->name); free(v->type);
}

static int dup_fields(char **f, int n, char **out, const char *name, size_t lineno, vpf_err *e)
{
    for (int i = 0; i < n; i++) {
        out[i] = strdup(f[i]);
        if (!out[i] || vpf_decode_field(out[i]) < 0) {
            vpf_set_err(e, "%s:%zu: field %d: %s", name, lineno, i + 1,
                        out[i] ? "malformed %-escape" : "out of memory");
            for (int j = 0; j <= i; j++)
                free(out[j]);
            return -1;
        }
    }
    return 0;
}

static int add_var(struct vpf_schema *s, struct dedup *d, size_t *cap, char **f,
                   const char *name, size_t lineno, vpf_err *e)
{
    uint32_t line;
    if (!*f[0] || !*f[1] || !*f[3]) {
        vpf_set_err(e, "%s:%zu: empty file, function or variable field", name, lineno);
        return -1;
    }
    if (parse_uint(f[2], &line) < 0) {
        vpf_set_err(e, "%s:%zu: line field '%s' is not a number", name, lineno, f[2]);
        return -1;
    }
    if (vpf_grow_try((void **)&s->vars, cap, s->n_vars + 1, sizeof *s->vars) < 0)
        goto oom;
    if ((s->n_vars + 1) * 2 > d->cap && dedup_grow(d, s) < 0)
        goto oom;
    char *str[4];
    char *src[4] = {f[0], f[1], f[3], f[4]};
    if (dup_fields(src, 4, str, name, lineno, e) < 0)
        return -1;
    struct vpf_schema_var *v = &s->vars[s->n_vars];
    v->file = str[0]; v->function = str[1]; v->name = str[2]; v->type = str[3];
    v->line = line;
    v->tags = vpf_tags_parse(f[5]);
    if (!strcmp(v->function, "#global"))
        v->tags |= VPF_TAG_GLOBAL;
    v->src_line = (uint32_t)lineno;
    size_t prev = dedup_find_or_add(d, s, s->n_vars);
    if (prev != SIZE_MAX) {
        s->vars[prev].tags |= v->tags;
        free_var(v);
    } else {
        s->n_vars++;
    }
    return 0;
oom:
    vpf_set_err(e, "%s:%zu: out of memory", name, lineno);
    return -1;
}

static int add_block(struct vpf_schema *s, size_t *cap, char **f,
                     const char *name, size_t lineno, vpf_err *e)
{
    uint32_t id, ls, le;
    if (parse_uint(f[3], &id) < 0 || parse_uint(f[4], &ls) < 0 || parse_uint(f[5], &le) < 0) {
        vpf_set_err(e, "%s:%zu: @block id and line range must be numbers", name, lineno);
        return -1;
    }
    if (vpf_grow_try((void **)&s->blocks, cap, s->n_blocks + 1, sizeof *s->blocks) < 0) {
        vpf_set_err(e, "%s:%zu: out of memory", name, lineno);
        return -1;
    }
    char *str[3];
    char *src[3] = {f[1], f[2], f[6]};
    if (dup_fields(src, 3, str, name, lineno, e) < 0)
        return -1;
    struct vpf_schema_block *b = &s->blocks[s->n_blocks++];
    b->file = str[0]; b->function = str[1]; b->kind = str[2];
    b->id = id; b->line_start = ls; b->line_end = le;
    return 0;
}

static int add_use(struct vpf_schema *s, size_t *cap, char **f,
                   const char *name, size_t lineno, vpf_err *e)
{
    if (!*f[1] || !*f[2] || !*f[3]) {
        vpf_set_err(e, "%s:%zu: @uses needs file, function and variable", name, lineno);
        return -1;
    }
    if (vpf_grow_try((void **)&s->uses, cap, s->n_uses + 1, sizeof *s->uses) < 0) {
        vpf_set_err(e, "%s:%zu: out of memory", name, lineno);
        return -1;
    }
    char *str[3];
    char *src[3] = {f[1], f[2], f[3]};
    if (dup_fields(src, 3, str, name, lineno, e) < 0)
        return -1;
    struct vpf_schema_use *u = &s->uses[s->n_uses++];
    u->file = str[0]; u->function = str[1]; u->variable = str[2];
    return 0;
}

/* `struct T.f`: a type word, a name, a '.', a member name. */
static int member_key_ok(const char *k)
{
    const char *dot = strrchr(k, '.');
    const char *sp = strchr(k, ' ');
    return dot && sp && sp < dot && sp > k && dot[1] && dot > sp + 1;
}

static int add_field(struct vpf_schema *s, size_t *cap, char **f,
                     const char *name, size_t lineno, vpf_err *e)
{
    uint32_t off;
    if (!*f[1] || !*f[2] || !*f[3]) {
        vpf_set_err(e, "%s:%zu: @field needs file, function and variable", name, lineno);
        return -1;
    }
    if (parse_uint(f[5], &off) < 0) {
        vpf_set_err(e, "%s:%zu: @field offset '%s' is not a number", name, lineno, f[5]);
        return -1;
    }
    if (vpf_grow_try((void **)&s->fields, cap, s->n_fields + 1, sizeof *s->fields) < 0) {
        vpf_set_err(e, "%s:%zu: out of memory", name, lineno);
        return -1;
    }
    char *str[4];
    char *src[4] = {f[1], f[2], f[3], f[4]};
    if (dup_fields(src, 4, str, name, lineno, e) < 0)
        return -1;
    if (!member_key_ok(str[3])) {
        vpf_set_err(e, "%s:%zu: @field member key '%s' is not 'struct TYPE.member'",
                    name, lineno, str[3]);
        for (int i = 0; i < 4; i++)
            free(str[i]);
        return -1;
    }
    struct vpf_schema_field *fl = &s->fields[s->n_fields++];
    fl->file = str[0]; fl->function = str[1]; fl->variable = str[2]; fl->key = str[3];
    fl->offset = off;
    return 0;
}

static int add_write(struct vpf_schema *s, size_t *cap, char **f,
                     const char *name, size_t lineno, vpf_err *e)
{
    uint32_t line;
    if (!*f[1] || !*f[2] || !*f[4]) {
        vpf_set_err(e, "%s:%zu: @writes needs file, function and target", name, lineno);
        return -1;
    }
    if (parse_uint(f[3], &line) < 0) {
        vpf_set_err(e, "%s:%zu: @writes line '%s' is not a number", name, lineno, f[3]);
        return -1;
    }
    if (vpf_grow_try((void **)&s->writes, cap, s->n_writes + 1, sizeof *s->writes) < 0) {
        vpf_set_err(e, "%s:%zu: out of memory", name, lineno);
        return -1;
    }
    char *str[3];
    char *src[3] = {f[1], f[2], f[4]};
    if (dup_fields(src, 3, str, name, lineno, e) < 0)
        return -1;
    struct vpf_schema_write *w = &s->writes[s->n_writes++];
    w->file = str[0]; w->function = str[1]; w->target = str[2];
    w->line = line;
    return 0;
}

/* `@from`, `@guard`, `@guardstate`, `@sizes`, `@items`, `@setfrom`,
 * `@addguard`, `@bounds`, `@predicate` and `@stops` lines have the same fields; their kind is the `guard` of struct vpf_schema_from. */
static const char *const from_kinds[] = {"@from", "@guard", "@guardstate", "@sizes", "@items",
                                         "@setfrom", "@addguard", "@bounds", "@predicate",
                                         "@stops"};

static int from_kind(const char *word)
{
    for (int k = 0; k < (int)(sizeof from_kinds / sizeof *from_kinds); k++)
        if (!strcmp(word, from_kinds[k])) return k;
    return -1;
}

/* One of them. */
static int add_from(struct vpf_schema *s, size_t *cap, char **f, int guard,
                    const char *name, size_t lineno, vpf_err *e)
{
    uint32_t line;
    if (!*f[1] || !*f[2] || !*f[4] || !*f[5]) {
        vpf_set_err(e, "%s:%zu: %s needs file, function, %s and callee", name, lineno, f[0],
                    guard ? "called function" : "variable");
        return -1;
    }
    if (parse_uint(f[3], &line) < 0) {
        vpf_set_err(e, "%s:%zu: %s line '%s' is not a number", name, lineno, f[0], f[3]);
        return -1;
    }
    if (vpf_grow_try((void **)&s->froms, cap, s->n_froms + 1, sizeof *s->froms) < 0) {
        vpf_set_err(e, "%s:%zu: out of memory", name, lineno);
        return -1;
    }
    char *str[4];
    char *src[4] = {f[1], f[2], f[4], f[5]};
    if (dup_fields(src, 4, str, name, lineno, e) < 0)
        return -1;
    struct vpf_schema_from *r = &s->froms[s->n_froms++];
    r->file = str[0]; r->function = str[1]; r->variable = str[2]; r->callee = str[3];
    r->line = line;
    r->guard = guard;
    return 0;
}

int vpf_schema_parse(const char *text, size_t len, const char *name,
                     struct vpf_schema *s, vpf_err *e)
{
    memset(s, 0, sizeof *s);
    struct dedup d = {0};
    size_t var_cap = 0, blk_cap = 0, use_cap = 0, fld_cap = 0, wr_cap = 0, from_cap = 0, lineno = 0;
    int seen_header = 0, rc = -1;
    char *buf = malloc(len + 1);
    if (!buf) {
        vpf_set_err(e, "%s: out of memory", name);
        return -1;
    }
    memcpy(buf, text, len);
    buf[len] = 0;
    for (size_t i = 0; i < len; i++)    /* section padding between objects */
        if (buf[i] == 0)
            buf[i] = '\n';
    char *p = buf;
    while (p) {
        char *nl = strchr(p, '\n');
        if (nl)
            *nl = 0;
        lineno++;
        char *line = trim(p);
        p = nl ? nl + 1 : NULL;
        if (!*line)
            continue;
        if (!strncmp(line, SCHEMA_MAGIC, strlen(SCHEMA_MAGIC))) {
            uint32_t ver;
            if (parse_uint(trim(line + strlen(SCHEMA_MAGIC)), &ver) < 0 || ver != 1) {
                vpf_set_err(e, "%s:%zu: unsupported schema version '%s'", name, lineno,
                            line + strlen(SCHEMA_MAGIC));
                goto out;
            }
            seen_header = 1;
            continue;
        }
        if (line[0] == '#')
            continue;
        if (!seen_header) {
            vpf_set_err(e, "%s:%zu: not a vprof schema (missing '# vprof-schema 1' line)",
                        name, lineno);
            goto out;
        }
        char *f[MAX_FIELDS];
        int n = split(line, f, MAX_FIELDS);
        if (!strcmp(f[0], "@uses")) {
            if (n != 4) {
                vpf_set_err(e, "%s:%zu: @uses line needs 4 fields, found %d", name, lineno, n);
                goto out;
            }
            if (add_use(s, &use_cap, f, name, lineno, e) < 0)
                goto out;
        } else if (!strcmp(f[0], "@block")) {
            if (n != 7) {
                vpf_set_err(e, "%s:%zu: @block line needs 7 fields, found %d", name, lineno, n);
                goto out;
            }
            if (add_block(s, &blk_cap, f, name, lineno, e) < 0)
                goto out;
        } else if (!strcmp(f[0], "@field")) {
            if (n != 6) {
                vpf_set_err(e, "%s:%zu: @field line needs 6 fields, found %d", name, lineno, n);
                goto out;
            }
            if (add_field(s, &fld_cap, f, name, lineno, e) < 0)
                goto out;
        } else if (!strcmp(f[0], "@writes")) {
            if (n != 5) {
                vpf_set_err(e, "%s:%zu: @writes line needs 5 fields, found %d", name, lineno, n);
                goto out;
            }
            if (add_write(s, &wr_cap, f, name, lineno, e) < 0)
                goto out;
        } else if (from_kind(f[0]) >= 0) {
            if (n != 6) {
                vpf_set_err(e, "%s:%zu: %s line needs 6 fields, found %d", name, lineno, f[0], n);
                goto out;
            }
            if (add_from(s, &from_cap, f, from_kind(f[0]), name, lineno, e) < 0)
                goto out;
        } else if (f[0][0] == '@') {
            continue;   /* a line kind of a later version: skipped (FORMATS.md §1) */
        } else {
            if (n != 6) {
                vpf_set_err(e, "%s:%zu: expected 6 comma-separated fields "
                            "(file, function, line, variable, type, tags), found %d",
                            name, lineno, n);
                goto out;
            }
            if (add_var(s, &d, &var_cap, f, name, lineno, e) < 0)
                goto out;
        }
    }
    if (!seen_header) {
        vpf_set_err(e, "%s: empty schema (no '# vprof-schema 1' line)", name);
        goto out;
    }
    rc = 0;
out:
    free(d.slot);
    free(buf);
    if (rc < 0)
        vpf_schema_free(s);
    return rc;
}

int vpf_schema_load(const char *path, struct vpf_schema *s, vpf_err *e)
{
    size_t len;
    char *buf = vpf_read_file(path, &len, e);
    if (!buf)
        return -1;
    int rc = vpf_schema_parse(buf, len, path, s, e);
    free(buf);
    return rc;
}

void vpf_schema_free(struct vpf_schema *s)
{
    for (size_t i = 0; i < s->n_vars; i++)
        free_var(&s->vars[i]);
    for (size_t i = 0; i < s->n_blocks; i++) {
        free(s->blocks[i].file); free(s->blocks[i].function); free(s->blocks[i].kind);
    }
    for (size_t i = 0; i < s->n_uses; i++) {
        free(s->uses[i].file); free(s->uses[i].function); free(s->uses[i].variable);
    }
    for (size_t i = 0; i < s->n_fields; i++) {
        free(s->fields[i].file); free(s->fields[i].function);
        free(s->fields[i].variable); free(s->fields[i].key);
    }
    for (size_t i = 0; i < s->n_writes; i++) {
        free(s->writes[i].file); free(s->writes[i].function); free(s->writes[i].target);
    }
    for (size_t i = 0; i < s->n_froms; i++) {
        free(s->froms[i].file); free(s->froms[i].function);
        free(s->froms[i].variable); free(s->froms[i].callee);
    }
    free(s->froms);
    free(s->vars);
    free(s->blocks);
    free(s->uses);
    free(s->fields);
    free(s->writes);
    memset(s, 0, sizeof *s);
}

void vpf_schema_write_header(FILE *f)
{
    fputs("# vprof-schema 1\n", f);
}

static void put_field(FILE *f, const char *s, const char *sep)
{
    char buf[4096];
    vpf_encode_field(s ? s : "", buf, sizeof buf);
    fputs(buf, f);
    fputs(sep, f);
}

void vpf_schema_write_var(FILE *f, const char *file, const char *function,
                          unsigned line, const char *name, const char *type,
                          uint16_t tags)
{
    char t[64];
    /* A leading '@' or '#' would make the reader take the line for a
     * line kind or a comment: escape it (decoded like any %XX). */
    if (file && (file[0] == '@' || file[0] == '#')) {
        fprintf(f, "%%%02X", (unsigned char)file[0]);
        file++;
    }
    put_field(f, file, ", ");
    put_field(f, function, ", ");
    fprintf(f, "%u, ", line);
    put_field(f, name, ", ");
    put_field(f, type, ", ");
    vpf_tags_format(tags, t, sizeof t);
    fprintf(f, "%s\n", t);
}

void vpf_schema_write_block(FILE *f, const char *file, const char *function,
                            unsigned id, unsigned line_start,
                            unsigned line_end, const char *kind)
{
    fputs("@block, ", f);
    put_field(f, file, ", ");
    put_field(f, function, ", ");
    fprintf(f, "%u, %u, %u, ", id, line_start, line_end);
    put_field(f, kind, "\n");
}

void vpf_schema_write_use(FILE *f, const char *file, const char *function,
                          const char *variable)
{
    fputs("@uses, ", f);
    put_field(f, file, ", ");
    put_field(f, function, ", ");
    put_field(f, variable, "\n");
}

void vpf_schema_write_field(FILE *f, const char *file, const char *function,
                            const char *variable, const char *key,
                            unsigned offset)
{
    fputs("@field, ", f);
    put_field(f, file, ", ");
    put_field(f, function, ", ");
    put_field(f, variable, ", ");
    put_field(f, key, ", ");
    fprintf(f, "%u\n", offset);
}

void vpf_schema_write_writer(FILE *f, const char *file, const char *function,
                             unsigned line, const char *target)
{
    fputs("@writes, ", f);
    put_field(f, file, ", ");
    put_field(f, function, ", ");
    fprintf(f, "%u, ", line);
    put_field(f, target, "\n");
}

void vpf_schema_write_from(FILE *f, const char *file, const char *function,
                           unsigned line, const char *variable, const char *callee,
                           int guard)
{
    fputs(guard >= 0 && guard < (int)(sizeof from_kinds / sizeof *from_kinds) ?
          from_kinds[guard] : "@from", f);
    fputs(", ", f);
    put_field(f, file, ", ");
    put_field(f, function, ", ");
    fprintf(f, "%u, ", line);
    put_field(f, variable, ", ");
    put_field(f, callee, "\n");
}
