/* symbols.c - ELF function symbols via libelf. Aliases (several names at
 * one address) keep the first global name, so every address belongs to
 * exactly one function. --gprof reads the symbols binutils gprof reads
 * instead (vpr_symtab_load_gprof). */
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
    if ((x->name[0] == '[') != (y->name[0] == '[')) return x->name[0] == '[';   /* "[plt]" last */
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
 * "f.constprop.0"), so that "f.cold" or "f.part.0" count as part of f.
 *
 * binutils gprof (corefile.c core_sym_class, 2.40 and later) checks a name
 * ending in such a suffix past its end: the suffix loop stops on the name's
 * NUL and the outer loop's increment steps over it into the next string of
 * the string table, which is checked too, and so on until a string ends
 * outside the suffix loop. So "opt_get.constprop.0" is dropped when the
 * string after it is "_ZNK1A1fEv.isra.0" (as in a g++ -O2 program, where
 * its time and calls then go to the symbol below it) and kept when it is
 * "main". The same is done here, within the string table [nm, end), so that
 * --gprof prints what gprof prints. */
static int gprof_static_name(const char *nm, const char *end)
{
    if (!*nm || !strncmp(nm, "__gnu_compiled", 14) || !strncmp(nm, "___gnu_compiled", 15))
        return 0;
    for (const char *p = nm; p < end && *p; p++) {
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
        /* here *p is NUL only when the suffix loop ended the name: the
         * outer loop goes on with the next string (gprof's over-read) */
    }
    return 1;
}

/* The symbols binutils gprof profiles (its classes T, W and t): defined
 * global symbols in code sections whatever their type (labels such as
 * etext), weak symbols that are not objects wherever they are, and local
 * code symbols with acceptable names. Indirect functions, absolute and
 * common symbols are not. */
static int gprof_keeps(Elf *elf, const GElf_Sym *s, const char *nm, const char *strend,
                       int *global)
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
    return *global || gprof_static_name(nm, strend);
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

/* The symbols of scn the report profiles (defined functions) or, with
 * gprof, the ones binutils gprof profiles; unsorted. And etext. */
static struct cand *read_functions(Elf *elf, Elf_Scn *scn, struct vpr_symtab *t, int gprof,
                                   size_t *n_out)
{
    GElf_Shdr sh;
    size_t cap = 0, n = 0;
    struct cand *c = NULL;
    *n_out = 0;
    if (!scn || !gelf_getshdr(scn, &sh)) return NULL;
    Elf_Data *d = elf_getdata(scn, NULL);
    size_t cnt = d && sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
    /* the string table as one block, for gprof's check of local names
     * (gprof_static_name); only when it ends in a NUL as ELF requires */
    Elf_Scn *strscn = elf_getscn(elf, sh.sh_link);
    Elf_Data *sd = strscn ? elf_getdata(strscn, NULL) : NULL;
    const char *strtab = sd && sd->d_buf && sd->d_size &&
                         ((const char *)sd->d_buf)[sd->d_size - 1] == '\0'
                             ? sd->d_buf : NULL;
    for (size_t i = 0; i < cnt; i++) {
        GElf_Sym s;
        if (!gelf_getsym(d, (int)i, &s) || s.st_shndx == SHN_UNDEF) continue;
        const char *nm = elf_strptr(elf, sh.sh_link, s.st_name);
        if (!nm || !*nm) continue;
        if (!strcmp(nm, "etext")) t->etext = s.st_value;
        int global = GELF_ST_BIND(s.st_info) != STB_LOCAL;
        /* gprof reads the name in the table, and on past its end */
        const char *gnm = nm, *gend = nm + strlen(nm) + 1;
        if (strtab && s.st_name < sd->d_size) {
            gnm = strtab + s.st_name;
            gend = strtab + sd->d_size;
        }
        if (gprof ? !gprof_keeps(elf, &s, gnm, gend, &global)
                  : GELF_ST_TYPE(s.st_info) != STT_FUNC || s.st_value == 0)
            continue;
        uint64_t end = s.st_value + s.st_size;
        /* A size-0 label (crti's _init, assembly) would stretch to the next
         * symbol, past the end of its section: _init would take the PLT
         * stubs' time. The ranking stops it at its section's end; gprof's
         * table keeps gprof's stretching. */
        if (!gprof && !s.st_size) {
            GElf_Shdr ssh;
            Elf_Scn *sec = s.st_shndx < SHN_LORESERVE ? elf_getscn(elf, s.st_shndx) : NULL;
            if (sec && gelf_getshdr(sec, &ssh) && s.st_value >= ssh.sh_addr &&
                s.st_value < ssh.sh_addr + ssh.sh_size)
                end = ssh.sh_addr + ssh.sh_size;
        }
        c = vpf_grow(c, &cap, n + 1, sizeof *c);
        c[n++] = (struct cand){{s.st_value, end, vpf_xstrdup(nm), global, 0},
                               GELF_ST_TYPE(s.st_info) == STT_FUNC, i};
    }
    *n_out = n;
    return c;
}

static Elf_Scn *section_named(Elf *elf, const char *want, GElf_Shdr *sh)
{
    size_t shstr;
    if (elf_getshdrstrndx(elf, &shstr) != 0) return NULL;
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(elf, scn))) {
        if (!gelf_getshdr(scn, sh)) continue;
        const char *nm = elf_strptr(elf, shstr, sh->sh_name);
        if (nm && !strcmp(nm, want)) return scn;
    }
    return NULL;
}

/* The PLT stubs as functions "name@plt", as objdump and perf name them:
 * a tick in a stub (every call of a library function passes one) belongs
 * to no symbol and would be "[unknown]". The i-th R_X86_64_JUMP_SLOT of
 * .rela.plt is the i-th stub: in .plt.sec when the linker wrote one (IBT),
 * else in .plt after its 16-byte header - the layout ld and lld write; a
 * relocation without a symbol (IRELATIVE) keeps its slot unnamed. What is
 * left of the PLT sections (the header, .plt.got) is "[plt]". Only for the
 * report's own views: binutils gprof has no such symbols. A stub is linker
 * glue, never a root cause: the ranking lists it after the ranked
 * functions (discount.c ranked()). */
static void add_plt(Elf *elf, struct cand **c, size_t *cap, size_t *n)
{
    GElf_Shdr rsh, psh, ssh, dsh;
    Elf_Scn *rel = section_named(elf, ".rela.plt", &rsh);
    Elf_Scn *plt = section_named(elf, ".plt", &psh);
    Elf_Scn *sec = section_named(elf, ".plt.sec", &ssh);
    uint64_t base = sec ? ssh.sh_addr : plt ? psh.sh_addr + 16 : 0;
    uint64_t limit = sec ? ssh.sh_addr + ssh.sh_size : plt ? psh.sh_addr + psh.sh_size : 0;
    Elf_Scn *dyn = rel ? elf_getscn(elf, rsh.sh_link) : NULL;
    Elf_Data *rd = rel ? elf_getdata(rel, NULL) : NULL;
    Elf_Data *dd = dyn ? elf_getdata(dyn, NULL) : NULL;
    if (rd && dd && gelf_getshdr(dyn, &dsh) && rsh.sh_type == SHT_RELA && rsh.sh_entsize && base) {
        size_t cnt = rsh.sh_size / rsh.sh_entsize;
        for (size_t i = 0; i < cnt; i++) {
            GElf_Rela r;
            GElf_Sym sym;
            uint64_t at = base + 16 * (uint64_t)i;
            if (at + 16 > limit) break;
            if (!gelf_getrela(rd, (int)i, &r) || GELF_R_TYPE(r.r_info) != R_X86_64_JUMP_SLOT ||
                !gelf_getsym(dd, (int)GELF_R_SYM(r.r_info), &sym))
                continue;
            const char *nm = elf_strptr(elf, dsh.sh_link, sym.st_name);
            if (!nm || !*nm) continue;
            char buf[512];
            snprintf(buf, sizeof buf, "%s@plt", nm);
            *c = vpf_grow(*c, cap, *n + 1, sizeof **c);
            (*c)[(*n)++] = (struct cand){{at, at + 16, vpf_xstrdup(buf), 0, 1}, 1, SIZE_MAX};
        }
    }
    static const char *const parts[] = {".plt", ".plt.sec", ".plt.got"};
    for (size_t k = 0; k < sizeof parts / sizeof *parts; k++) {
        GElf_Shdr sh;
        if (!section_named(elf, parts[k], &sh) || !sh.sh_size) continue;
        *c = vpf_grow(*c, cap, *n + 1, sizeof **c);
        (*c)[(*n)++] = (struct cand){{sh.sh_addr, sh.sh_addr + sh.sh_size, vpf_xstrdup("[plt]"), 0, 1},
                                     1, SIZE_MAX};
    }
}

/* Sorted by address, one symbol per address (vprof: the first global name;
 * gprof: the one gprof favours), each ending at the next one when its size
 * is 0 or overlaps it (gprof: always, but the last). */
static void one_per_address(struct vpr_symtab *t, struct cand *c, size_t n, int gprof)
{
    if (n) qsort(c, n, sizeof *c, gprof ? cmp_sym_gprof : cmp_sym);
    size_t w = 0;
    for (size_t i = 0; i < n; i++) {
        if (w && c[w - 1].s.lo == c[i].s.lo) {
            uint64_t hi = c[i].s.hi > c[w - 1].s.hi ? c[i].s.hi : c[w - 1].s.hi;
            if (gprof && gprof_favors(&c[i], &c[w - 1])) {
                free(c[w - 1].s.name);
                c[w - 1] = c[i];
            } else {
                free(c[i].s.name);
            }
            c[w - 1].s.hi = hi;
            continue;
        }
        c[w++] = c[i];
    }
    t->syms = vpf_xcalloc(w ? w : 1, sizeof *t->syms);
    for (size_t i = 0; i < w; i++) t->syms[i] = c[i].s;
    t->n = w;
    for (size_t i = 0; i < t->n; i++) {
        uint64_t next = i + 1 < t->n ? t->syms[i + 1].lo : t->syms[i].lo + 1;
        /* gprof (symtab_finalize) ends every symbol at the next one, its
         * size unread: a call into code whose symbol gprof drops (a clone
         * "f.isra.0", gprof_static_name) is a call of the symbol below it */
        if (t->syms[i].hi <= t->syms[i].lo || t->syms[i].hi > next ||
            (gprof && i + 1 < t->n))
            t->syms[i].hi = next;
    }
}

/* The code sections' bytes, kept for reading call and jump instructions
 * (tailcalls.c): a few MB for a large program. */
static void read_code(Elf *elf, struct vpr_symtab *t)
{
    Elf_Scn *scn = NULL;
    GElf_Shdr sh;
    while ((scn = elf_nextscn(elf, scn))) {
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
            !(sh.sh_flags & SHF_EXECINSTR) || !sh.sh_size)
            continue;
        Elf_Data *d = elf_getdata(scn, NULL);
        if (!d || !d->d_buf || d->d_size != sh.sh_size) continue;
        t->code = vpf_xrealloc(t->code, t->n_code + 1, sizeof *t->code);
        struct vpr_code *c = &t->code[t->n_code++];
        c->lo = sh.sh_addr;
        c->n = d->d_size;
        c->b = vpf_xmalloc(c->n);
        memcpy(c->b, d->d_buf, c->n);
    }
}

const unsigned char *vpr_sym_code(const struct vpr_symtab *t, uint64_t addr, size_t n)
{
    for (size_t i = 0; i < t->n_code; i++) {
        const struct vpr_code *c = &t->code[i];
        if (addr >= c->lo && addr - c->lo <= c->n && n <= c->n - (addr - c->lo))
            return c->b + (addr - c->lo);
    }
    return NULL;
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
        t->entry = eh.e_entry;
        t->exact = !gprof;
        vpf_build_id_hex(id.build_id, id.build_id_len, t->build_id);
        t->schema = id.schema;
        t->schema_len = id.schema_len;
        t->text_lo = id.text_lo;
        t->text_hi = id.text_hi;
        size_t n;
        struct cand *c = read_functions(elf, symbol_section(elf, &t->dynsym_only), t, gprof, &n);
        if (!gprof) {
            size_t cap = n;
            add_plt(elf, &c, &cap, &n);
        }
        one_per_address(t, c, n, gprof);
        free(c);
        if (!gprof) read_code(elf, t);
        rc = 0;
    }
    if (elf) elf_end(elf);
    close(fd);
    return rc;
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
    for (size_t i = 0; i < t->n_code; i++) free(t->code[i].b);
    free(t->code);
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

/* gcc's clone and split suffixes (ipa-clones, ipa-split, hot/cold
 * partitioning, LTO privatization, aliases). */
static int clone_word(const char *w, size_t n)
{
    static const char *const words[] = {"constprop", "isra", "part", "cold", "lto_priv",
                                        "clone", "localalias", "specialized"};
    for (size_t i = 0; i < sizeof words / sizeof *words; i++)
        if (strlen(words[i]) == n && !strncmp(w, words[i], n)) return 1;
    return 0;
}

size_t vpr_sym_source_len(const char *name)
{
    const char *dot = strchr(name, '.');
    if (!dot || dot == name) return strlen(name);
    int words = 0;
    for (const char *p = dot; *p;) {        /* ".word" or ".123", repeated */
        const char *q = p + 1;
        size_t n = strcspn(q, ".");
        if (!n) return strlen(name);
        if (strspn(q, "0123456789") < n) {
            if (!clone_word(q, n)) return strlen(name);
            words++;
        }
        p = q + n;
    }
    return words ? (size_t)(dot - name) : strlen(name);
}
