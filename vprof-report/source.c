/* source.c - source lines for the verdicts: files read once, on demand. */
#include "vprof_xalloc.h"
#include "source.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct src_file {
    char *path;
    char *text;                 /* NUL-separated lines, NULL if unreadable */
    char **line;
    size_t n;
};

struct vpr_source {
    struct src_file *f;
    size_t n, cap;
};

struct vpr_source *vpr_source_new(void)
{
    return vpf_xcalloc(1, sizeof(struct vpr_source));
}

void vpr_source_free(struct vpr_source *s)
{
    if (!s) return;
    for (size_t i = 0; i < s->n; i++) {
        free(s->f[i].path);
        free(s->f[i].text);
        free(s->f[i].line);
    }
    free(s->f);
    free(s);
}

/* A source file bigger than this is not shown: a line of context is not
 * worth reading a generated file of many megabytes. */
#define SRC_MAX (16u << 20)

static void load(struct src_file *f)
{
    FILE *fp = fopen(f->path, "r");
    if (!fp) return;
    size_t cap = 0, len = 0;
    char buf[65536];
    size_t k;
    while ((k = fread(buf, 1, sizeof buf, fp)) > 0) {
        if (len + k + 1 > SRC_MAX) { free(f->text); f->text = NULL; fclose(fp); return; }
        if (len + k + 1 > cap) {
            cap = (len + k + 1) * 2;
            f->text = vpf_xrealloc(f->text, cap, 1);
        }
        memcpy(f->text + len, buf, k);
        len += k;
    }
    fclose(fp);
    if (!f->text) return;
    f->text[len] = 0;
    size_t lines = 1;
    for (size_t i = 0; i < len; i++) lines += f->text[i] == '\n';
    f->line = vpf_xmalloc(lines * sizeof *f->line);
    if (!f->line) { free(f->text); f->text = NULL; return; }
    char *p = f->text;
    f->n = 0;
    for (;;) {
        f->line[f->n++] = p;
        char *nl = strchr(p, '\n');
        if (!nl) break;
        *nl = 0;
        p = nl + 1;
        if (!*p) break;             /* a final newline starts no line */
    }
}

const char *vpr_source_line(struct vpr_source *s, const char *path, unsigned line)
{
    const char *l = vpr_source_raw(s, path, line);
    while (l && (*l == ' ' || *l == '\t')) l++;
    return l;
}

const char *vpr_source_raw(struct vpr_source *s, const char *path, unsigned line)
{
    if (!s || !path || !line) return NULL;
    struct src_file *f = NULL;
    for (size_t i = 0; i < s->n; i++)
        if (!strcmp(s->f[i].path, path)) { f = &s->f[i]; break; }
    if (!f) {
        if (s->n == s->cap) {
            size_t nc = s->cap ? 2 * s->cap : 8;
            s->f = vpf_xrealloc(s->f, nc, sizeof *s->f);
            s->cap = nc;
        }
        f = &s->f[s->n++];
        memset(f, 0, sizeof *f);
        f->path = vpf_xstrdup(path);
        if (f->path) load(f);
    }
    if (!f->text || line > f->n) return NULL;
    return f->line[line - 1];
}

int vpr_same_path(const char *a, const char *b)
{
    if (!a || !b) return 0;
    size_t la = strlen(a), lb = strlen(b);
    if (la < lb) { const char *t = a; a = b; b = t; size_t u = la; la = lb; lb = u; }
    if (strcmp(a + la - lb, b)) return 0;
    return la == lb || a[la - lb - 1] == '/';
}
