/* symbols.c - ELF function symbols via libelf. Aliases (several names at
 * one address) keep the first global name, as gprof does, so every address
 * belongs to exactly one function. */
#include "symbols.h"
#include "vprof_elf.h"
#include "vprof_xalloc.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int cmp_sym(const void *a, const void *b)
{
    const struct vpr_sym *x = a, *y = b;
    if (x->lo != y->lo) return x->lo < y->lo ? -1 : 1;
    if (x->global != y->global) return y->global - x->global;
    return strcmp(x->name, y->name);
}

/* .symtab, else .dynsym (then static functions are missing). */
static Elf_Scn *symbol_section(Elf *elf, int *dynsym_only)
{
    Elf_Scn *scn = NULL, *symscn = NULL, *dynscn = NULL;
    while ((scn = elf_nextscn(elf, scn))) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh)) continue;
        if (sh.sh_type == SHT_SYMTAB) symscn = scn;
        else if (sh.sh_type == SHT_DYNSYM) dynscn = scn;
    }
    *dynsym_only = !symscn;
    return symscn ? symscn : dynscn;
}

/* The defined function symbols of scn, unsorted; and etext. */
static void read_functions(Elf *elf, Elf_Scn *scn, struct vpr_symtab *t)
{
    GElf_Shdr sh;
    size_t cap = 0;
    if (!scn || !gelf_getshdr(scn, &sh)) return;
    Elf_Data *d = elf_getdata(scn, NULL);
    size_t cnt = d && sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
    for (size_t i = 0; i < cnt; i++) {
        GElf_Sym s;
        if (!gelf_getsym(d, (int)i, &s) || s.st_shndx == SHN_UNDEF) continue;
        const char *nm = elf_strptr(elf, sh.sh_link, s.st_name);
        if (!nm || !*nm) continue;
        if (!strcmp(nm, "etext")) t->etext = s.st_value;
        if (GELF_ST_TYPE(s.st_info) != STT_FUNC || s.st_value == 0) continue;
        t->syms = vpf_grow(t->syms, &cap, t->n + 1, sizeof *t->syms);
        struct vpr_sym *y = &t->syms[t->n++];
        y->lo = s.st_value;
        y->hi = s.st_value + s.st_size;
        y->name = vpf_xstrdup(nm);
        y->global = GELF_ST_BIND(s.st_info) != STB_LOCAL;
    }
}

/* Sorted by address, one symbol per address (the first global name), each
 * ending at the next one when its size is 0 or overlaps it. */
static void one_per_address(struct vpr_symtab *t)
{
    if (t->n) qsort(t->syms, t->n, sizeof *t->syms, cmp_sym);
    size_t w = 0;
    for (size_t i = 0; i < t->n; i++) {
        if (w && t->syms[w - 1].lo == t->syms[i].lo) {
            if (t->syms[i].hi > t->syms[w - 1].hi) t->syms[w - 1].hi = t->syms[i].hi;
            free(t->syms[i].name);
            continue;
        }
        t->syms[w++] = t->syms[i];
    }
    t->n = w;
    for (size_t i = 0; i < t->n; i++) {
        uint64_t next = i + 1 < t->n ? t->syms[i + 1].lo : t->syms[i].lo + 1;
        if (t->syms[i].hi <= t->syms[i].lo || t->syms[i].hi > next)
            t->syms[i].hi = next;
    }
}

int vpr_symtab_load(const char *path, struct vpr_symtab *t, char *err,
                    size_t errlen)
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
    struct vpf_elf_ident id;
    vpf_err e;
    int rc = -1;
    if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh))
        snprintf(err, errlen, "%s: offset 0: not an ELF file (%s)", path, elf_errmsg(-1));
    else if (vpf_elf_ident_read(elf, path, &id, &e) < 0)
        snprintf(err, errlen, "%s", e.msg);
    else {
        t->path = vpf_xstrdup(path);
        t->is_pie = eh.e_type == ET_DYN;
        vpf_build_id_hex(id.build_id, id.build_id_len, t->build_id);
        t->schema = id.schema;
        t->schema_len = id.schema_len;
        t->text_lo = id.text_lo;
        t->text_hi = id.text_hi;
        read_functions(elf, symbol_section(elf, &t->dynsym_only), t);
        one_per_address(t);
        rc = 0;
    }
    if (elf) elf_end(elf);
    close(fd);
    return rc;
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
