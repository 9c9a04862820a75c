/* writers.c - see writers.h. A linear pass over the schema's `@writes` per
 * query: the report asks for the few variables it shows, and a large
 * program has some 10^5 writer lines. */
#include <stdlib.h>
#include <string.h>

#include "vprof_xalloc.h"
#include "writers.h"

/* The `@field` of variable v: same file, function and name; a global's
 * member may be described by any unit (function `#global`), so there the
 * file need not match. */
static const struct vpf_schema_field *field_of(const struct vpf_schema *s,
                                               const struct vpr_var *v, int global)
{
    const struct vpf_schema_field *any = NULL;
    for (size_t i = 0; i < s->n_fields; i++) {
        const struct vpf_schema_field *f = &s->fields[i];
        if (strcmp(f->function, v->function) || strcmp(f->variable, v->name))
            continue;
        if (!strcmp(f->file, v->file))
            return f;
        if (global && !any)
            any = f;
    }
    return any;
}

/* Length of the global's name in `g`, `g.f`, `g+8`, `g->f`, `g[2]`. */
static size_t base_name_len(const char *s)
{
    size_t n = 0;
    while (s[n] && s[n] != '.' && s[n] != '+' && s[n] != '[' &&
           !(s[n] == '-' && s[n + 1] == '>'))
        n++;
    return n;
}

/* Is target `h.f`, `h+N` or `h` a write into (or over) member `key` of a
 * global instance h of its struct, as some `#global` field line says? */
static int global_instance_of(const struct vpf_schema *s, const char *target,
                              const char *key)
{
    size_t bl = base_name_len(target);
    if (target[bl] != '.' && target[bl] != '+' && target[bl])
        return 0;
    for (size_t i = 0; i < s->n_fields; i++) {
        const struct vpf_schema_field *f = &s->fields[i];
        if (strcmp(f->function, "#global") || strcmp(f->key, key))
            continue;
        if (target[bl] == '.' && !strcmp(f->variable, target))
            return 1;
        if (!target[bl] && base_name_len(f->variable) == bl &&
            !strncmp(f->variable, target, bl) && f->variable[bl] == '.')
            return 1;
        if (target[bl] == '+' && base_name_len(f->variable) == bl &&
            !strncmp(f->variable, target, bl) && f->variable[bl] == '.' &&
            strtoul(target + bl + 1, NULL, 10) == f->offset)
            return 1;
    }
    return 0;
}

static int writer_cmp(const void *pa, const void *pb)
{
    const struct vpr_writer *a = pa, *b = pb;
    int c;
    if (a->by_type != b->by_type) return a->by_type - b->by_type;
    if ((c = strcmp(a->file, b->file))) return c;
    if (a->line != b->line) return a->line < b->line ? -1 : 1;
    if ((c = strcmp(a->function, b->function))) return c;
    return strcmp(a->target, b->target);
}

/* The writer sites of the state `name` (a global `g`, `g.f`; NULL for a
 * member known only by its key) and/or of member `key` (`struct T.f`) of
 * any object of its type; off: the member's byte offset (for `g+N`). */
static long writers_scan(const struct vpf_schema *s, const char *name, int global,
                         const char *key, long off, struct vpr_writer **out)
{
    *out = NULL;
    /* `struct T` of `struct T.f`: a write of the whole object. */
    const char *dot = key ? strrchr(key, '.') : NULL;
    size_t whole_len = dot ? (size_t)(dot - key) : 0;
    /* A global's own name and, for `g.f`, its member. */
    size_t bl = name ? base_name_len(name) : 0;
    int plain = name && global && !name[bl];
    int dot_member = name && global && name[bl] == '.' && !strchr(name + bl + 1, '.') &&
                     !strstr(name + bl + 1, "->") && !strchr(name + bl + 1, '[');
    if (!plain && !dot_member && !key)
        return 0;

    struct vpr_writer *w = NULL;
    size_t n = 0, cap = 0;
    for (size_t i = 0; i < s->n_writes; i++) {
        const struct vpf_schema_write *wr = &s->writes[i];
        const char *t = wr->target;
        int direct = 0, typed = 0;
        if (plain) {
            direct = !strcmp(t, name);
        } else if (dot_member) {
            size_t tl = base_name_len(t);
            direct = !strcmp(t, name) ||
                     (tl == bl && !strncmp(t, name, bl) &&
                      (!t[bl] || (t[bl] == '+' && off >= 0 &&
                                  strtoul(t + bl + 1, NULL, 10) == (unsigned long)off)));
        }
        if (!direct && key)
            typed = !strcmp(t, key) ||
                    (whole_len && strlen(t) == whole_len && !strncmp(t, key, whole_len)) ||
                    global_instance_of(s, t, key);
        if (!direct && !typed)
            continue;
        w = vpf_grow(w, &cap, n + 1, sizeof *w);
        w[n++] = (struct vpr_writer){wr->function, wr->file, wr->line, t, !direct};
    }
    if (!n)
        return 0;
    qsort(w, n, sizeof *w, writer_cmp);
    size_t u = 1;
    for (size_t i = 1; i < n; i++)
        if (writer_cmp(&w[i], &w[u - 1]))
            w[u++] = w[i];
    *out = w;
    return (long)u;
}

long vpr_writers_of(const struct vpr_model *m, const struct vpr_var *v,
                    struct vpr_writer **out)
{
    *out = NULL;
    if (!m->has_schema || !v->name || !v->function || !v->file)
        return 0;
    const struct vpf_schema *s = &m->schema;
    int global = (v->tags & VPF_TAG_GLOBAL) || !strcmp(v->function, "#global");
    const struct vpf_schema_field *fld = field_of(s, v, global);
    return writers_scan(s, v->name, global, fld ? fld->key : NULL,
                        fld ? (long)fld->offset : -1, out);
}

int vpr_var_is_state(const struct vpr_model *m, const struct vpr_var *v, const char *state)
{
    if (!m->has_schema || !v->name || !v->function || !v->file || !state || !*state) return 0;
    int global = (v->tags & VPF_TAG_GLOBAL) || !strcmp(v->function, "#global");
    if (global && !strcmp(v->name, state)) return 1;
    const struct vpf_schema_field *fld = field_of(&m->schema, v, global);
    return fld && !strcmp(fld->key, state);
}

/* A `@writes` target as a `@guardstate` line names the state: a member key
 * (`struct T.f`, `class T.f`, `union T.f`) or a global (`g`, `g.f`, `g+N`). */
long vpr_writers_of_state(const struct vpr_model *m, const char *state,
                          struct vpr_writer **out)
{
    *out = NULL;
    if (!m->has_schema || !state || !*state) return 0;
    const struct vpf_schema *s = &m->schema;
    if (!strncmp(state, "struct ", 7) || !strncmp(state, "class ", 6) ||
        !strncmp(state, "union ", 6))
        return writers_scan(s, NULL, 0, state, -1, out);
    size_t bl = base_name_len(state);
    const char *key = NULL;
    long off = -1;
    if (state[bl] == '.')               /* g.f: its member key joins typed writers */
        for (size_t i = 0; i < s->n_fields; i++)
            if (!strcmp(s->fields[i].function, "#global") &&
                !strcmp(s->fields[i].variable, state)) {
                key = s->fields[i].key;
                off = (long)s->fields[i].offset;
                break;
            }
    if (state[bl] == '+') {             /* g+N: the global's member at offset N */
        char name[256];
        snprintf(name, sizeof name, "%.*s", (int)bl, state);
        return writers_scan(s, name, 1, NULL, -1, out);
    }
    return writers_scan(s, state, 1, key, off, out);
}

/* Is schema line r one of f's (by its linkage name, or its source name)? */
static int line_of(const struct vpf_schema_from *r, const struct vpr_func *f)
{
    return !strcmp(r->function, f->name) || (f->src_name && !strcmp(r->function, f->src_name));
}

/* f's first schema line of kind `guard` whose variable field is `variable`,
 * or NULL. */
static const struct vpf_schema_from *first_line(const struct vpr_model *m,
                                                const struct vpr_func *f, int guard,
                                                const char *variable)
{
    if (!m->has_schema || !variable) return NULL;
    for (size_t i = 0; i < m->schema.n_froms; i++) {
        const struct vpf_schema_from *r = &m->schema.froms[i];
        if (r->guard == guard && !strcmp(r->variable, variable) && line_of(r, f)) return r;
    }
    return NULL;
}

/* The schema's `@guard` line for f's calls of callee: the predicate whose
 * answer they wait for (`if (block_needs_seal(w, len)) seal_block(w);`),
 * NULL if none. A cheap predicate, inlined and never sampled, is then the
 * decision the changed call count reports. */
const struct vpf_schema_from *vpr_call_guard(const struct vpr_model *m, const struct vpr_func *f,
                                             const char *callee)
{
    return first_line(m, f, 1, callee);
}

const struct vpf_schema_from *vpr_call_alternative(const struct vpr_model *m,
                                                   const struct vpr_func *f,
                                                   const struct vpf_schema_from *g,
                                                   const struct vpf_schema_from *after)
{
    if (!m->has_schema || !g) return NULL;
    for (size_t i = after ? (size_t)(after - m->schema.froms) + 1 : 0; i < m->schema.n_froms;
         i++) {
        const struct vpf_schema_from *r = &m->schema.froms[i];
        if (r->guard == 1 && !strcmp(r->callee, g->callee) && strcmp(r->variable, g->variable) &&
            line_of(r, f))
            return r;
    }
    return NULL;
}

/* The schema's `@guardstate` lines for f's calls of callee, the first line
 * for each state (a global or member whose value a deciding branch reads:
 * `if (!c->valid) rebuild(c);`; an `||` chain or a comparison of two loaded
 * values gives several, and so may several call sites), in schema order:
 * at most max into out, their number returned. */
size_t vpr_call_states(const struct vpr_model *m, const struct vpr_func *f, const char *callee,
                       const struct vpf_schema_from **out, size_t max)
{
    if (!m->has_schema) return 0;
    size_t n = 0;
    for (size_t i = 0; i < m->schema.n_froms && n < max; i++) {
        const struct vpf_schema_from *r = &m->schema.froms[i];
        if (r->guard != 2 || strcmp(r->variable, callee) || !line_of(r, f)) continue;
        size_t k = 0;
        while (k < n && strcmp(out[k]->callee, r->callee)) k++;
        if (k == n) out[n++] = r;
    }
    return n;
}

const struct vpf_schema_from *vpr_call_state_guard(const struct vpr_model *m,
                                                   const struct vpr_func *f, const char *callee)
{
    const struct vpf_schema_from *st;
    return vpr_call_states(m, f, callee, &st, 1) ? st : NULL;
}

const struct vpf_schema_from *vpr_add_guard(const struct vpr_model *m, const struct vpr_func *f,
                                            const char *container)
{
    return first_line(m, f, 6, container);
}
