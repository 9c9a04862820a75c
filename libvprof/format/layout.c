/* layout.c - the layout log (FORMATS.md §4).
 *
 * The writer formats by hand into a stack buffer and uses write(2) only
 * (vpf_textw, common.c), so the runtime may call it from its exit and
 * termination paths. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vprof_format.h"

static void put_s(struct vpf_textw *l, const char *s) { vpf_tw_put(l, s, strlen(s)); }

/* Percent-encodes like vpf_encode_field, without needing a second buffer. */
static void put_enc(struct vpf_textw *l, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == ',' || c == '\t' || c == '%' || c == '\n' || c == '\r') {
            char e[3] = {'%', hex[c >> 4], hex[c & 15]};
            vpf_tw_put(l, e, 3);
        } else {
            vpf_tw_put(l, (const char *)&c, 1);
        }
    }
}

static void put_x(struct vpf_textw *l, uint64_t v)
{
    char t[20];
    int i = sizeof t;
    do {
        t[--i] = "0123456789abcdef"[v & 15];
        v >>= 4;
    } while (v);
    t[--i] = 'x';
    t[--i] = '0';
    vpf_tw_put(l, t + i, sizeof t - (size_t)i);
}

static int flush_line(struct vpf_textw *l)
{
    vpf_tw_put(l, "\n", 1);
    vpf_tw_flush(l);
    return l->err ? -1 : 0;
}

#define TAB(l) vpf_tw_put(l, "\t", 1)

int vpf_layout_write_head(int fd, const struct vpf_layout *lay)
{
    struct vpf_textw l;
    int rc = 0;
#define LINE(key, body) do { vpf_tw_init(&l, fd); put_s(&l, key); TAB(&l); body; \
                             rc |= flush_line(&l); } while (0)
    vpf_tw_init(&l, fd);
    put_s(&l, "vprof-layout 1");
    rc |= flush_line(&l);
    LINE("pid", vpf_tw_put_u(&l, (uint64_t)lay->pid));
    LINE("ppid", vpf_tw_put_u(&l, (uint64_t)lay->ppid));
    LINE("exe", put_enc(&l, lay->exe ? lay->exe : ""));
    LINE("build_id", put_s(&l, lay->build_id ? lay->build_id : ""));
    LINE("load_bias", put_x(&l, lay->load_bias));
    LINE("text", (put_x(&l, lay->text_lo), TAB(&l), put_x(&l, lay->text_hi)));
    LINE("hz", vpf_tw_put_u(&l, lay->hz));
    if (lay->timer)
        LINE("timer", put_s(&l, lay->timer));
    LINE("unwind", vpf_tw_put_u(&l, lay->unwind));
    LINE("unwind_count", put_s(&l, lay->unwind_all ? "all" : "program"));
    LINE("meta", (put_enc(&l, lay->meta_path ? lay->meta_path : ""), TAB(&l),
                  put_enc(&l, lay->meta_status ? lay->meta_status : "none")));
    LINE("start_ns", vpf_tw_put_u(&l, lay->start_ns));
#undef LINE
    return rc;
}

int vpf_layout_write_map(int fd, uint64_t lo, uint64_t hi, uint64_t off, const char *path)
{
    struct vpf_textw l;            /* no initializer: 8 KiB memset per line */
    vpf_tw_init(&l, fd);
    put_s(&l, "map"); TAB(&l);
    put_x(&l, lo); TAB(&l); put_x(&l, hi); TAB(&l); put_x(&l, off); TAB(&l);
    put_enc(&l, path ? path : "");
    return flush_line(&l);
}

int vpf_layout_write_var(int fd, uint32_t id, const char *file,
                         const char *function, uint32_t line,
                         const char *name, const char *type, uint16_t tags,
                         uint8_t kind, uint8_t size)
{
    struct vpf_textw l;            /* no initializer: 8 KiB memset per line */
    vpf_tw_init(&l, fd);
    char t[64];
    put_s(&l, "var"); TAB(&l);
    vpf_tw_put_u(&l, id); TAB(&l);
    put_enc(&l, file); TAB(&l);
    put_enc(&l, function); TAB(&l);
    vpf_tw_put_u(&l, line); TAB(&l);
    put_enc(&l, name); TAB(&l);
    put_enc(&l, type); TAB(&l);
    vpf_tags_format(tags, t, sizeof t);
    put_s(&l, t); TAB(&l);
    vpf_tw_put_u(&l, kind); TAB(&l);
    vpf_tw_put_u(&l, size);
    return flush_line(&l);
}

int vpf_layout_write_end(int fd, uint64_t ticks, uint64_t samples,
                         uint64_t dropped, uint64_t faults, uint64_t end_ns)
{
    struct vpf_textw l;            /* no initializer: 8 KiB memset per line */
    vpf_tw_init(&l, fd);
    put_s(&l, "end\tticks="); vpf_tw_put_u(&l, ticks);
    put_s(&l, "\tsamples="); vpf_tw_put_u(&l, samples);
    put_s(&l, "\tdropped="); vpf_tw_put_u(&l, dropped);
    put_s(&l, "\tfaults="); vpf_tw_put_u(&l, faults);
    put_s(&l, "\tend_ns="); vpf_tw_put_u(&l, end_ns);
    return flush_line(&l);
}

int vpf_layout_write_budget(int fd, uint64_t reads, uint64_t us, uint64_t cut,
                            uint64_t overdue)
{
    struct vpf_textw l;
    vpf_tw_init(&l, fd);
    put_s(&l, "budget\treads="); vpf_tw_put_u(&l, reads);
    put_s(&l, "\tus="); vpf_tw_put_u(&l, us);
    put_s(&l, "\tcut="); vpf_tw_put_u(&l, cut);
    put_s(&l, "\toverdue="); vpf_tw_put_u(&l, overdue);
    return flush_line(&l);
}

/* ---------------- reader ---------------- */

static int split_tabs(char *s, char **f, int max)
{
    int n = 0;
    for (;;) {
        if (n < max)
            f[n] = s;
        n++;
        char *t = strchr(s, '\t');
        if (!t)
            break;
        *t = 0;
        s = t + 1;
    }
    return n;
}

static int num(const char *s, uint64_t *out)
{
    char *end;
    if (!*s)
        return -1;
    errno = 0;
    *out = strtoull(s, &end, 0);
    return (*end || errno) ? -1 : 0;
}

/* Decoded copy of a field; NULL on a bad escape, or with *oom set when
 * memory ran out (the caller then says so instead of "malformed"). */
static char *dupdec(const char *s, int *oom)
{
    char *d = strdup(s);
    if (!d)
        *oom = 1;
    else if (vpf_decode_field(d) < 0) {
        free(d);
        return NULL;
    }
    return d;
}

static int kv(const char *field, const char *key, uint64_t *out)
{
    size_t k = strlen(key);
    return strncmp(field, key, k) || field[k] != '=' ? -1 : num(field + k + 1, out);
}

int vpf_layout_load(const char *path, struct vpf_layout *lay, vpf_err *e)
{
    memset(lay, 0, sizeof *lay);
    FILE *f = fopen(path, "r");
    if (!f) {
        vpf_set_err(e, "%s: %s", path, strerror(errno));
        return -1;
    }
    char *line = NULL;
    size_t cap = 0, lineno = 0, maps_cap = 0, vars_cap = 0;
    ssize_t len;
    int rc = -1, oom = 0;
    while ((errno = 0, len = getline(&line, &cap, f)) >= 0) {
        lineno++;
        if (len && line[len - 1] == '\n')
            line[--len] = 0;
        if (lineno == 1) {
            if (strcmp(line, "vprof-layout 1")) {
                vpf_set_err(e, "%s:1: not a vprof layout log (expected 'vprof-layout 1')", path);
                goto out;
            }
            continue;
        }
        if (!*line)
            continue;
        char *fl[12];
        int n = split_tabs(line, fl, 12);
        const char *k = fl[0];
        uint64_t v = 0, v2 = 0, v3 = 0;
        int bad = 0;
        /* A key given twice is a corrupt log, not a newer value. */
        if ((!strcmp(k, "exe") && lay->exe) || (!strcmp(k, "build_id") && lay->build_id) ||
            (!strcmp(k, "meta") && lay->meta_path)) {
            vpf_set_err(e, "%s:%zu: duplicate '%s' line", path, lineno, k);
            goto out;
        }
        if (!strcmp(k, "pid") && n == 2) bad = num(fl[1], &v), lay->pid = (int)v;
        else if (!strcmp(k, "ppid") && n == 2) bad = num(fl[1], &v), lay->ppid = (int)v;
        else if (!strcmp(k, "exe") && n == 2) bad = !(lay->exe = dupdec(fl[1], &oom));
        else if (!strcmp(k, "build_id") && n == 2) bad = oom = !(lay->build_id = strdup(fl[1]));
        else if (!strcmp(k, "load_bias") && n == 2) bad = num(fl[1], &lay->load_bias);
        else if (!strcmp(k, "text") && n == 3)
            bad = num(fl[1], &lay->text_lo) || num(fl[2], &lay->text_hi);
        else if (!strcmp(k, "hz") && n == 2) bad = num(fl[1], &v), lay->hz = (uint32_t)v;
        else if (!strcmp(k, "unwind") && n == 2) bad = num(fl[1], &v), lay->unwind = (uint32_t)v;
        else if (!strcmp(k, "timer") && n == 2 && !lay->timer)
            bad = oom = !(lay->timer = strdup(fl[1]));
        else if (!strcmp(k, "unwind_count") && n == 2) {
            lay->unwind_all = !strcmp(fl[1], "all");
            bad = !lay->unwind_all && strcmp(fl[1], "program");
            lay->has_unwind_count = 1;
        }
        else if (!strcmp(k, "meta") && n == 3)
            bad = !(lay->meta_path = dupdec(fl[1], &oom)) || !(lay->meta_status = dupdec(fl[2], &oom));
        else if (!strcmp(k, "start_ns") && n == 2) bad = num(fl[1], &lay->start_ns);
        else if (!strcmp(k, "map") && n == 5) {
            bad = num(fl[1], &v) || num(fl[2], &v2) || num(fl[3], &v3);
            if (!bad && vpf_grow_try((void **)&lay->maps, &maps_cap, lay->n_maps + 1,
                                     sizeof *lay->maps) < 0)
                bad = oom = 1;
            if (!bad) {
                struct vpf_layout_map *m = &lay->maps[lay->n_maps];
                m->lo = v; m->hi = v2; m->off = v3;
                bad = !(m->path = dupdec(fl[4], &oom));
                if (!bad) lay->n_maps++;
            }
        } else if (!strcmp(k, "var") && n == 10) {
            uint64_t id, ln, kind, size;
            bad = num(fl[1], &id) || num(fl[4], &ln) || num(fl[8], &kind) || num(fl[9], &size) ||
                  id > UINT32_MAX || kind > VPF_KIND_BOOL || size > 8;
            if (!bad && vpf_grow_try((void **)&lay->vars, &vars_cap, lay->n_vars + 1,
                                     sizeof *lay->vars) < 0)
                bad = oom = 1;
            if (!bad) {
                struct vpf_layout_var *lv = &lay->vars[lay->n_vars];
                memset(lv, 0, sizeof *lv);
                lv->id = (uint32_t)id; lv->line = (uint32_t)ln;
                lv->tags = vpf_tags_parse(fl[7]);
                lv->kind = (uint8_t)kind; lv->size = (uint8_t)size;
                lv->file = dupdec(fl[2], &oom); lv->function = dupdec(fl[3], &oom);
                lv->name = dupdec(fl[5], &oom); lv->type = dupdec(fl[6], &oom);
                if (!lv->file || !lv->function || !lv->name || !lv->type) {
                    free(lv->file); free(lv->function); free(lv->name); free(lv->type);
                    bad = 1;
                } else {
                    if (!strcmp(lv->function, "#global"))
                        lv->tags |= VPF_TAG_GLOBAL;
                    if (lv->id != lay->n_vars) {
                        vpf_set_err(e, "%s:%zu: var ids must be dense and in order "
                                    "(expected %zu)", path, lineno, lay->n_vars);
                        free(lv->file); free(lv->function); free(lv->name); free(lv->type);
                        goto out;
                    }
                    lay->n_vars++;
                }
            }
        } else if (!strcmp(k, "end")) {
            for (int i = 1; i < n && i < 12 && !bad; i++)
                bad = kv(fl[i], "ticks", &lay->ticks) && kv(fl[i], "samples", &lay->samples) &&
                      kv(fl[i], "dropped", &lay->dropped) && kv(fl[i], "faults", &lay->faults) &&
                      kv(fl[i], "end_ns", &lay->end_ns);
            lay->has_end = 1;
        } else if (!strcmp(k, "budget")) {
            for (int i = 1; i < n && i < 12 && !bad; i++)
                bad = kv(fl[i], "reads", &lay->tick_reads) && kv(fl[i], "us", &lay->tick_us) &&
                      kv(fl[i], "cut", &lay->ticks_cut) &&
                      kv(fl[i], "overdue", &lay->ticks_overdue);
            lay->has_budget = 1;
        } else {
            /* Unknown keys from newer writers are ignored; known keys with the
             * wrong shape are not. */
            static const char *known[] = {"pid", "ppid", "exe", "build_id", "load_bias",
                                          "text", "hz", "timer", "unwind", "unwind_count", "meta",
                                          "start_ns", "map", "var"};
            for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
                if (!strcmp(k, known[i]))
                    bad = 1;
        }
        if (bad && oom) {
            vpf_set_err(e, "%s:%zu: out of memory", path, lineno);
            goto out;
        }
        if (bad) {
            vpf_set_err(e, "%s:%zu: malformed '%s' line", path, lineno, k);
            goto out;
        }
    }
    if (errno == ENOMEM || ferror(f)) {
        vpf_set_err(e, "%s:%zu: %s", path, lineno + 1,
                    errno == ENOMEM ? "out of memory" : "read error");
        goto out;
    }
    if (lineno == 0) {
        vpf_set_err(e, "%s: empty layout log", path);
        goto out;
    }
    if (!lay->exe) {
        vpf_set_err(e, "%s: layout log has no 'exe' line (truncated?)", path);
        goto out;
    }
    rc = 0;
out:
    free(line);
    fclose(f);
    if (rc < 0)
        vpf_layout_free(lay);
    return rc;
}

void vpf_layout_free(struct vpf_layout *lay)
{
    free(lay->exe); free(lay->build_id); free(lay->meta_path); free(lay->meta_status);
    free(lay->timer);
    for (size_t i = 0; i < lay->n_maps; i++)
        free(lay->maps[i].path);
    for (size_t i = 0; i < lay->n_vars; i++) {
        free(lay->vars[i].file); free(lay->vars[i].function);
        free(lay->vars[i].name); free(lay->vars[i].type);
    }
    free(lay->maps);
    free(lay->vars);
    memset(lay, 0, sizeof *lay);
}
