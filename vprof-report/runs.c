/* runs.c - discovering processes in run directories. A process is a
 * layout.<id> file; values.<id> and gmon.<id>.out beside it are optional
 * (a process may have died before writing gmon, or loaded no metadata). */
#include "runs.h"
#include "vprof_xalloc.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static char *path_join(const char *d, const char *a, const char *b)
{
    return vpf_xasprintf("%s/%s%s", d, a, b ? b : "");
}

static int exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static int cmp_str(const void *a, const void *b)
{
    return strverscmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted list of <id>s of layout.<id> in dir. */
static char **list_ids(const char *dir, size_t *n, char *err, size_t errlen)
{
    DIR *d = opendir(dir);
    if (!d) {
        snprintf(err, errlen, "%s: cannot open run directory: %s", dir,
                 strerror(errno));
        return NULL;
    }
    char **ids = NULL;
    size_t cap = 0;
    *n = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (strncmp(de->d_name, "layout.", 7) != 0 || !de->d_name[7]) continue;
        ids = vpf_grow(ids, &cap, *n + 1, sizeof *ids);
        ids[(*n)++] = vpf_xstrdup(de->d_name + 7);
    }
    closedir(d);
    if (*n == 0) {
        snprintf(err, errlen, "%s: no profiles (no layout.<id> files; was the "
                 "program run with VPROF_OUT=%s?)", dir, dir);
        free(ids);
        return NULL;
    }
    qsort(ids, *n, sizeof *ids, cmp_str);
    return ids;
}

static int load_proc(const char *dir, const char *id, struct vpr_proc *p,
                     char *err, size_t errlen)
{
    memset(p, 0, sizeof *p);
    p->id = vpf_xstrdup(id);
    p->layout_path = path_join(dir, "layout.", id);
    char *v = path_join(dir, "values.", id);
    char *g = vpf_xasprintf("%s/gmon.%s.out", dir, id);
    if (exists(v)) p->values_path = v; else free(v);
    if (exists(g)) p->gmon_path = g; else free(g);
    char *l = path_join(dir, "latency.", id);
    if (exists(l)) p->latency_path = l; else free(l);
    char *k = path_join(dir, "stacks.", id);
    if (exists(k)) p->stacks_path = k; else free(k);
    char *cl = path_join(dir, "calls.", id);
    if (exists(cl)) p->calls_path = cl; else free(cl);
    vpf_err e;
    if (vpf_layout_load(p->layout_path, &p->layout, &e) < 0) {
        snprintf(err, errlen, "%s", e.msg);
        return -1;
    }
    return 0;
}

static void free_proc(struct vpr_proc *p)
{
    free(p->id); free(p->layout_path); free(p->values_path); free(p->gmon_path); free(p->latency_path);
    free(p->stacks_path);
    free(p->calls_path);
    vpf_layout_free(&p->layout);
}

static void push_run(struct vpr_side *s, const char *dir, const char *id)
{
    s->runs = vpf_grow(s->runs, &s->cap, s->n + 1, sizeof *s->runs);
    struct vpr_run *r = &s->runs[s->n++];
    memset(r, 0, sizeof *r);
    r->dir = vpf_xstrdup(dir);
    r->label = id ? vpf_xasprintf("%s/%s", dir, id) : vpf_xstrdup(dir);
}

int vpr_side_load(char *const *dirs, size_t n_dirs, int per_pid,
                  const char *exe, struct vpr_side *s, size_t *n_other,
                  char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    *n_other = 0;
    for (size_t i = 0; i < n_dirs; i++) {
        size_t n_ids;
        char **ids = list_ids(dirs[i], &n_ids, err, errlen);
        if (!ids) return -1;
        int started = 0, rc = 0;
        for (size_t j = 0; j < n_ids; j++) {
            struct vpr_proc p;
            if (rc == 0 && load_proc(dirs[i], ids[j], &p, err, errlen) < 0) {
                free_proc(&p);
                rc = -1;
            } else if (rc == 0) {
                if (exe && strcmp(p.layout.exe, exe) != 0) {
                    (*n_other)++;
                    free_proc(&p);
                } else {
                    if (per_pid || !started) push_run(s, dirs[i], per_pid ? ids[j] : NULL);
                    started = 1;
                    struct vpr_run *r = &s->runs[s->n - 1];
                    r->procs = vpf_grow(r->procs, &r->cap, r->n + 1, sizeof *r->procs);
                    r->procs[r->n++] = p;
                }
            }
            free(ids[j]);
        }
        free(ids);
        if (rc < 0) return -1;
        if (!started) {
            snprintf(err, errlen, "%s: no process of %s in this run directory",
                     dirs[i], exe);
            return -2;
        }
    }
    return 0;
}

void vpr_side_free(struct vpr_side *s)
{
    for (size_t i = 0; i < s->n; i++) {
        for (size_t j = 0; j < s->runs[i].n; j++) free_proc(&s->runs[i].procs[j]);
        free(s->runs[i].procs);
        free(s->runs[i].dir);
        free(s->runs[i].label);
    }
    free(s->runs);
    memset(s, 0, sizeof *s);
}

char *vpr_first_exe(const char *dir, char *err, size_t errlen)
{
    size_t n;
    char **ids = list_ids(dir, &n, err, errlen);
    if (!ids) return NULL;
    /* the executable with the most value-sample bytes; a shell or helper
     * started beside the program usually has none. Ties: first in id order */
    char **exes = vpf_xcalloc(n, sizeof *exes);
    off_t *bytes = vpf_xcalloc(n, sizeof *bytes), *sbytes = vpf_xcalloc(n, sizeof *sbytes);
    size_t ne = 0;
    int failed = 0;
    for (size_t i = 0; i < n && !failed; i++) {
        struct vpr_proc p;
        if (load_proc(dir, ids[i], &p, err, errlen) < 0) {
            failed = 1;
        } else {
            struct stat st;
            off_t b = p.values_path && stat(p.values_path, &st) == 0 ? st.st_size : 0;
            off_t sb = p.stacks_path && stat(p.stacks_path, &st) == 0 ? st.st_size : 0;
            size_t k;
            for (k = 0; k < ne; k++) if (!strcmp(exes[k], p.layout.exe)) break;
            if (k == ne) exes[ne++] = vpf_xstrdup(p.layout.exe);
            bytes[k] += b;
            sbytes[k] += sb;
        }
        free_proc(&p);
    }
    char *exe = NULL;
    if (!failed && ne) {
        size_t best = 0;
        off_t any = 0;
        for (size_t k = 0; k < ne; k++) any += bytes[k];
        const off_t *by = any ? bytes : sbytes;     /* no values: by stack samples */
        for (size_t k = 1; k < ne; k++) if (by[k] > by[best]) best = k;
        exe = vpf_xstrdup(exes[best]);
    }
    for (size_t k = 0; k < ne; k++) free(exes[k]);
    free(exes);
    free(bytes);
    free(sbytes);
    for (size_t i = 0; i < n; i++) free(ids[i]);
    free(ids);
    return exe;
}
