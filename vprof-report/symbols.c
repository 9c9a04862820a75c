/* symbols.c - ELF function symbols via libelf. Aliases (several names at
 * one address) keep the first global name, so every address belongs to
 * exactly one function. --gprof reads the symbols binutils gprof reads
 * instead (vpr_symtab_load_gprof). */
#include "symbols.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A symbol read from .symtab, with what the two selections need. */
struct cand {
    struct vpr_sym s;
    int func;                   /* STT_FUNC */
    size_t order;               /* position in the ELF symbol table */
};

static int cmp_sym(const void *a, const void *b)
{
    const struct vpr_sym *x = &((const struct cand *)a)->s, *y = &((const struct cand *)b)->s;
    if (x->lo != y->lo) return x->lo < y->lo ? -1 : 1;
    if (x->global != y->global) return y->global - x->global;
    return strcmp(x->name, y->name);
}

/* gprof's order: by address, then as in the ELF symbol table */
static int cmp_sym_gprof(const void *a, const void *b)
{
    const struct cand *x = a, *y = b;
    if (x->s.lo != y->s.lo) return x->s.lo < y->s.lo ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* Of two gprof symbols at one address, does b replace a? (binutils
 * symtab_finalize: global over static, function over label, a name
 * without a leading underscore, then `_x` over `__x`.) */
static int gprof_favors(const struct cand *b, const struct cand *a)
{
    if (b->s.global != a->s.global) return b->s.global;
    if (b->func != a->func) return b->func;
    if ((b->s.name[0] == '_') != (a->s.name[0] == '_')) return b->s.name[0] != '_';
    return b->s.name[0] == '_' && b->s.name[1] != '_' && a->s.name[1] == '_';
}

/* A local text symbol's name as gprof accepts it: no `$`, and after a `.`
 * only digits (nested functions "f.123", clones "f.clone.1",
 * "f.constprop.0"), so that "f.cold" or "f.part.0" count as part of f. */
static int gprof_static_name(const char *nm)
{
    if (!*nm || !strncmp(nm, "__gnu_compiled", 14) || !strncmp(nm, "___gnu_compiled", 15))
        return 0;
    for (const char *p = nm; *p; p++) {
        if (*p == '$') return 0;
        while (*p == '.') {
            int digit = 0;
            if (strlen(p) > 7 && !strncmp(p, ".clone.", 7)) p += 6;
            else if (strlen(p) > 11 && !strncmp(p, ".constprop.", 11)) p += 10;
            for (p++; *p; p++) {
                if (digit && *p == '.') break;
                if (*p < '0' || *p > '9') return 0;
                digit = 1;
            }
        }
        if (!*p) break;
    }
    return 1;
}

/* The symbols binutils gprof profiles (its classes T, W and t): defined
 * global symbols in code sections whatever their type (labels such as
 * etext), weak symbols that are not objects wherever they are, and local
 * code symbols with acceptable names. Indirect functions, absolute and
 * common symbols are not. */
static int gprof_keeps(Elf *elf, const GElf_Sym *s, const char *nm, int *global)
{
    int type = GELF_ST_TYPE(s->st_info), bind = GELF_ST_BIND(s->st_info);
    if (s->st_shndx == SHN_UNDEF || type == STT_FILE || type == STT_SECTION ||
        type == STT_GNU_IFUNC)
        return 0;
    *global = 1;
    if (bind == STB_WEAK) return type != STT_OBJECT;
    if ((bind != STB_GLOBAL && bind != STB_LOCAL) || s->st_shndx >= SHN_LORESERVE)
        return 0;
    GElf_Shdr sh;
    Elf_Scn *sec = elf_getscn(elf, s->st_shndx);
    if (!sec || !gelf_getshdr(sec, &sh) || !(sh.sh_flags & SHF_EXECINSTR)) return 0;
    *global = bind == STB_GLOBAL;
    return *global || gprof_static_name(nm);
}

static void read_build_id(Elf_Data *d, char *out)
{
    size_t off = 0, name_off, desc_off;
    GElf_Nhdr nh;
    while ((off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
        if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
            memcmp((char *)d->d_buf + name_off, "GNU", 4) == 0) {
            const unsigned char *p = (unsigned char *)d->d_buf + desc_off;
            size_t n = nh.n_descsz > 32 ? 32 : nh.n_descsz;
            for (size_t i = 0; i < n; i++) sprintf(out + 2 * i, "%02x", p[i]);
            return;
        }
    }
}

static int load(const char *path, struct vpr_symtab *t, char *err, size_t errlen,
                int gprof)
{
    memset(t, 0, sizeof *t);
    elf_version(EV_CURRENT);
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        snprintf(err, errlen, "%s: cannot open: %m", path);
        return -1;
    }
    Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
    GElf_Ehdr eh;
    if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh)) {
        snprintf(err, errlen, "%s: offset 0: not an ELF file", path);
        if (elf) elf_end(elf);
        close(fd);
        return -1;
    }
    t->path = strdup(path);
    t->is_pie = eh.e_type == ET_DYN;
    size_t shstrndx;
    elf_getshdrstrndx(elf, &shstrndx);
    Elf_Scn *scn = NULL, *symscn = NULL, *dynscn = NULL;
    while ((scn = elf_nextscn(elf, scn))) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh)) continue;
        const char *nm = elf_strptr(elf, shstrndx, sh.sh_name);
        if (sh.sh_type == SHT_SYMTAB) symscn = scn;
        else if (sh.sh_type == SHT_DYNSYM) dynscn = scn;
        else if (sh.sh_type == SHT_NOTE) {
            Elf_Data *d = elf_getdata(scn, NULL);
            if (d && !t->build_id[0]) read_build_id(d, t->build_id);
        } else if (nm && strcmp(nm, ".vprof_schema") == 0 &&
                   sh.sh_type != SHT_NOBITS) {
            Elf_Data *d = elf_getdata(scn, NULL);
            if (d && d->d_size && d->d_buf) {   /* several: concatenate, as ld does */
                t->schema = realloc(t->schema, t->schema_len + d->d_size + 1);
                memcpy(t->schema + t->schema_len, d->d_buf, d->d_size);
                t->schema_len += d->d_size;
                t->schema[t->schema_len] = 0;
            }
        }
    }
    if (!symscn) symscn = dynscn;
    size_t cap = 0, n = 0;
    struct cand *c = NULL;
    if (symscn) {
        GElf_Shdr sh;
        gelf_getshdr(symscn, &sh);
        Elf_Data *d = elf_getdata(symscn, NULL);
        size_t cnt = d && sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
        for (size_t i = 0; i < cnt; i++) {
            GElf_Sym s;
            if (!gelf_getsym(d, (int)i, &s)) continue;
            const char *nm = elf_strptr(elf, sh.sh_link, s.st_name);
            if (!nm || !*nm) continue;
            int global = GELF_ST_BIND(s.st_info) != STB_LOCAL;
            if (gprof ? !gprof_keeps(elf, &s, nm, &global)
                      : GELF_ST_TYPE(s.st_info) != STT_FUNC || s.st_shndx == SHN_UNDEF ||
                        s.st_value == 0)
                continue;
            if (n == cap) {
                cap = cap ? 2 * cap : 256;
                c = realloc(c, cap * sizeof *c);
            }
            c[n++] = (struct cand){{s.st_value, s.st_value + s.st_size, strdup(nm), global},
                                   GELF_ST_TYPE(s.st_info) == STT_FUNC, i};
        }
    }
    elf_end(elf);
    close(fd);
    if (n) qsort(c, n, sizeof *c, gprof ? cmp_sym_gprof : cmp_sym);
    size_t w = 0;               /* aliases: one symbol per address */
    for (size_t i = 0; i < n; i++) {
        if (w && c[w - 1].s.lo == c[i].s.lo) {
            uint64_t hi = c[i].s.hi > c[w - 1].s.hi ? c[i].s.hi : c[w - 1].s.hi;
            if (gprof && gprof_favors(&c[i], &c[w - 1])) {
                free(c[w - 1].s.name);
                c[w - 1] = c[i];
            } else {            /* vprof keeps the first global name */
                free(c[i].s.name);
            }
            c[w - 1].s.hi = hi;
            continue;
        }
        c[w++] = c[i];
    }
    t->syms = malloc((w ? w : 1) * sizeof *t->syms);
    for (size_t i = 0; i < w; i++) t->syms[i] = c[i].s;
    free(c);
    t->n = w;
    for (size_t i = 0; i < t->n; i++) {
        uint64_t next = i + 1 < t->n ? t->syms[i + 1].lo : t->syms[i].lo + 1;
        if (t->syms[i].hi <= t->syms[i].lo || t->syms[i].hi > next)
            t->syms[i].hi = next;
    }
    return 0;
}

int vpr_symtab_load(const char *path, struct vpr_symtab *t, char *err, size_t errlen)
{
    return load(path, t, err, errlen, 0);
}

int vpr_symtab_load_gprof(const char *path, struct vpr_symtab *t, char *err, size_t errlen)
{
    return load(path, t, err, errlen, 1);
}

void vpr_symtab_free(struct vpr_symtab *t)
{
    for (size_t i = 0; i < t->n; i++) free(t->syms[i].name);
    free(t->syms);
    free(t->schema);
    free(t->path);
    memset(t, 0, sizeof *t);
}

long vpr_sym_find(const struct vpr_symtab *t, uint64_t addr)
{
    size_t lo = 0, hi = t->n;
    while (lo < hi) {               /* last symbol with lo <= addr */
        size_t mid = lo + (hi - lo) / 2;
        if (t->syms[mid].lo <= addr) lo = mid + 1; else hi = mid;
    }
    if (lo == 0) return -1;
    const struct vpr_sym *s = &t->syms[lo - 1];
    return addr < s->hi ? (long)(lo - 1) : -1;
}

long vpr_sym_by_name(const struct vpr_symtab *t, const char *name)
{
    for (size_t i = 0; i < t->n; i++)
        if (strcmp(t->syms[i].name, name) == 0) return (long)i;
    return -1;
}
