/* demangle.c - see demangle.h.
 *
 * Demangling is libiberty's cplus_demangle with DMGL_PARAMS | DMGL_ANSI,
 * the call and the options binutils gprof uses for its default output, with
 * bfd_demangle's handling of a `@...` version suffix (demangle the part
 * before it, keep the suffix), so that --gprof prints what `gprof -b`
 * prints. Results are cached per name: a report prints the same few
 * hundred names many times. */
#include "demangle.h"

#include <libiberty/demangle.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vprof_format.h"
#include "vprof_xalloc.h"

static int enabled = 1;

void vpr_demangle_enable(int on)
{
    enabled = on;
}

/* ---- cache: open addressing on the name's text ---- */

struct slot { char *sym, *readable; };
static struct slot *tab;
static size_t tab_cap, tab_n;

static struct slot *find(const char *sym)
{
    size_t i = (size_t)vpf_hash_str(VPF_FNV_BASIS, sym) & (tab_cap - 1);
    while (tab[i].sym && strcmp(tab[i].sym, sym)) i = (i + 1) & (tab_cap - 1);
    return &tab[i];
}

static void grow(void)
{
    size_t nc = tab_cap ? 2 * tab_cap : 256;
    struct slot *old = tab, *nt = vpf_xcalloc(nc, sizeof *nt);
    size_t oc = tab_cap;
    tab = nt;
    tab_cap = nc;
    for (size_t i = 0; i < oc; i++)
        if (old[i].sym) *find(old[i].sym) = old[i];
    free(old);
}

/* cplus_demangle of sym without a `@VERSION` / `@plt` suffix, the suffix
 * put back; NULL when sym is not a mangled name. (cplus_demangle says NULL
 * for its own lack of memory too; only what this file allocates follows
 * the tools' policy, vprof_xalloc.h.) */
static char *demangle(const char *sym)
{
    if (sym[0] != '_' || (sym[1] != 'Z' && sym[1] != 'R'))
        return NULL;                /* C names: nothing to ask */
    const char *at = strchr(sym, '@');
    char *base = at ? vpf_xasprintf("%.*s", (int)(at - sym), sym) : NULL;
    char *d = cplus_demangle(base ? base : sym, DMGL_PARAMS | DMGL_ANSI);
    free(base);
    if (d && at) {
        size_t n = strlen(d), m = strlen(at);
        char *j = vpf_xmalloc(n + m + 1);
        memcpy(j, d, n);
        memcpy(j + n, at, m + 1);
        free(d);
        d = j;
    }
    return d;
}

const char *vpr_dm(const char *sym)
{
    return enabled ? vpr_dm_always(sym) : sym;
}

const char *vpr_dm_always(const char *sym)
{
    if (!sym) return sym;
    if (sym[0] != '_' || (sym[1] != 'Z' && sym[1] != 'R')) return sym;
    if ((tab_n + 1) * 2 > tab_cap) grow();
    struct slot *s = find(sym);
    if (!s->sym) {
        s->sym = vpf_xstrdup(sym);
        s->readable = demangle(sym);        /* NULL: not mangled after all */
        tab_n++;
    }
    return s->readable ? s->readable : s->sym;
}

/* ---- short forms ---- */

int vpr_cols(const char *s)
{
    int n = 0;
    for (; *s; s++) n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

struct buf { char *p; size_t n, cap; };

static void put(struct buf *b, const char *s, size_t n)
{
    b->p = vpf_grow(b->p, &b->cap, b->n + n + 1, 1);
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = 0;
}

static void puts_(struct buf *b, const char *s) { put(b, s, strlen(s)); }

static int ident_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* Length of an operator token at s[i] whose symbol would confuse bracket
 * matching (`operator<`, `operator()`, `operator->`), else 0. */
static size_t op_len(const char *s, size_t i)
{
    if (strncmp(s + i, "operator", 8) || (i > 0 && ident_char(s[i - 1])) ||
        ident_char(s[i + 8]))
        return 0;
    const char *p = s + i + 8;
    if ((p[0] == '(' && p[1] == ')') || (p[0] == '[' && p[1] == ']')) return 10;
    size_t n = strspn(p, "<>=!+-*/%^&|~,");
    return n ? 8 + n : 0;
}

/* Index just past the bracket group that opens at s[i]. */
static size_t skip_group(const char *s, size_t i)
{
    int depth = 0;
    for (size_t j = i; s[j];) {
        size_t op = op_len(s, j);
        if (op) { j += op; continue; }
        if (s[j] == '-' && s[j + 1] == '>') { j += 2; continue; }
        if (strchr("<([{", s[j])) depth++;
        else if (strchr(">)]}", s[j]) && --depth == 0) return j + 1;
        j++;
    }
    return strlen(s);
}

static const char anon_ns[] = "(anonymous namespace)";

/* s[from, to) with template arguments as <…> and parameter lists as (...);
 * for a whole name (top), the return type of a template function and
 * everything after the last parameter list (cv-qualifiers, [clone .cold])
 * dropped, but not inside `{lambda(int)#1}`. */
static void collapse(struct buf *b, const char *s, size_t from, size_t to, int top)
{
    size_t start = b->n;            /* where this name begins in b */
    int params = 0, conversion = 0, after_op = 0;
    for (size_t i = from; i < to;) {
        size_t op = op_len(s, i);
        if (op) { put(b, s + i, op); i += op; after_op = 1; continue; }
        int space_after_op = after_op && s[i] == ' ';      /* operator<< <int> */
        after_op = 0;
        if (!strncmp(s + i, anon_ns, sizeof anon_ns - 1)) {
            puts_(b, anon_ns);
            i += sizeof anon_ns - 1;
            continue;
        }
        char c = s[i];
        if (c == '<' || c == '(' || c == '{') {
            size_t j = skip_group(s, i);
            if (j > to) j = to;
            if (c == '<') {
                puts_(b, "<\xE2\x80\xA6>");                 /* <…> */
            } else if (c == '{') {               /* {lambda(int)#1}: keep */
                puts_(b, "{");
                collapse(b, s, i + 1, j > i + 1 ? j - 1 : j, 0);
                puts_(b, "}");
            } else {
                puts_(b, j - i == 2 ? "()" : "(...)");
                params = 1;
                if (top && strncmp(s + j, "::", 2)) return;   /* qualifiers etc. */
            }
            i = j;
            continue;
        }
        if (c == ' ' && top && !params && !conversion && !space_after_op) {
            /* `operator new`, `operator int`: the operator's own words */
            if (b->n - start >= 8 && !strncmp(b->p + b->n - 8, "operator", 8)) {
                conversion = 1;
            } else {                    /* a return type ends here */
                b->n = start;
                if (b->p) b->p[b->n] = 0;
                i++;
                continue;
            }
        }
        put(b, &c, 1);
        i++;
    }
}

/* Byte offset just past the first n columns of s. */
static size_t cols_bytes(const char *s, int n)
{
    int k = 0;
    size_t i = 0;
    for (; s[i]; i++)
        if (((unsigned char)s[i] & 0xC0) != 0x80 && k++ == n) break;
    return i;
}

/* s into dst in at most cols columns: cut to cols - 1 and `~` when wider. */
static int finish(char *dst, size_t len, const char *s, int cols, int pad)
{
    if (!len) return 0;
    int w = vpr_cols(s), cut = w > cols;
    size_t n = strlen(s);
    if (cut) {
        n = cols > 0 ? cols_bytes(s, cols - 1) : 0;
        w = cols > 0 ? cols : 0;
    }
    if (n > len - 1) n = len - 1;
    memcpy(dst, s, n);
    size_t k = n;
    if (cut && cols > 0 && k + 1 < len) dst[k++] = '~';
    for (; pad && w < cols && k + 1 < len; w++) dst[k++] = ' ';
    dst[k] = 0;
    return w;
}

/* s with its leading scopes replaced by `…::`, one at a time, until it
 * fits cols (ns::Cls<…>::f(...) -> …::Cls<…>::f(...) -> …::f(...)), or as
 * short as that gets. Returns malloc'ed text, or NULL when s has no scope. */
static char *drop_scopes(const char *s, int cols)
{
    char *scoped = NULL;
    for (size_t i = 0; s[i] && vpr_cols(scoped ? scoped : s) > cols;) {
        if (strchr("<({", s[i])) { i = skip_group(s, i); continue; }
        size_t op = op_len(s, i);
        if (op) { i += op; continue; }
        if (s[i] == ':' && s[i + 1] == ':') {
            free(scoped);
            scoped = vpf_xasprintf("\xE2\x80\xA6%s", s + i);     /* … */
            i += 2;
            continue;
        }
        i++;
    }
    return scoped;
}

int vpr_dm_fit(char *dst, size_t len, const char *sym, int cols, int pad)
{
    const char *name = sym ? sym : "", *r = vpr_dm(name);
    if (vpr_cols(r) <= cols || !strcmp(r, name))       /* fits, or not C++ */
        return finish(dst, len, r, cols, pad);
    struct buf b = {0};
    collapse(&b, r, 0, strlen(r), 1);
    if (!b.p) return finish(dst, len, r, cols, pad);
    /* too wide: "(...)" says least, then the outer scopes */
    size_t n = strlen(b.p);
    if (vpr_cols(b.p) > cols && n > 2 && b.p[n - 1] == ')') {
        if (!strcmp(b.p + n - 2, "()")) b.p[n - 2] = 0;
        else if (n > 5 && !strcmp(b.p + n - 5, "(...)")) b.p[n - 5] = 0;
    }
    char *s = vpr_cols(b.p) > cols ? drop_scopes(b.p, cols) : NULL;
    int w = finish(dst, len, s ? s : b.p, cols, pad);
    free(s);
    free(b.p);
    return w;
}
