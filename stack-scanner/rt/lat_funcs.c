/* lat_funcs.c - VPROF_LATENCY_FUNCS: the functions whose call events are
 * written (docs/LATENCY.md). VProfiler (papers/001, §3.3.4) refines its
 * variance tree by re-instrumenting the children of the top factors and
 * recompiling; here every function is instrumented and this list only
 * limits what the scanner writes, so refining is a change of environment.
 *
 * The list names functions of the main program, comma- or white-space
 * separated; NAME* matches every name starting with NAME; "@FILE" reads
 * the names from FILE ('#' starts a comment). Names are looked up once, in
 * the program's .symtab (else .dynsym) read from /proc/self/exe, and turned
 * into run-time entry addresses (a sorted table): the scanner then checks a
 * record's function with a binary search. Functions of shared libraries
 * cannot be named, so they are not written while a list is in force.
 *
 * Runs from vprof_latency_start (normal context, before the scanner
 * starts): it may open files, map them and malloc. */
#include <elf.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lat_rt.h"

#define VL_MAX_NAMES 4096

int vl_funcs_limited;
static uint64_t *allowed;        /* sorted run-time entry addresses */
static size_t n_allowed;
static int loaded;

struct name { const char *s; size_t n; int prefix, found; };

static int is_sep(char c)
{
    return c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* Splits text into names (in place: text must stay alive). */
static size_t parse_names(char *text, struct name *out, size_t cap)
{
    size_t k = 0;
    char *p = text;
    while (*p) {
        if (*p == '#') {                /* comment to the end of the line */
            while (*p && *p != '\n') p++;
            continue;
        }
        if (is_sep(*p)) { p++; continue; }
        char *s = p;
        while (*p && !is_sep(*p) && *p != '#') p++;
        size_t n = (size_t)(p - s);
        if (k == cap) {
            vl_warn("VPROF_LATENCY_FUNCS: too many names; the rest are ignored", NULL);
            break;
        }
        int pre = s[n - 1] == '*';
        out[k++] = (struct name){ s, pre ? n - 1 : n, pre, 0 };
    }
    return k;
}

/* A file's contents, NUL-terminated (malloc'd), or NULL. */
static char *read_text(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return NULL;
    struct stat sb;
    char *buf = NULL;
    if (fstat(fd, &sb) == 0 && sb.st_size >= 0 && sb.st_size < (64 << 20) &&
        (buf = malloc((size_t)sb.st_size + 1))) {
        size_t have = 0;
        ssize_t r;
        while (have < (size_t)sb.st_size &&
               (r = read(fd, buf + have, (size_t)sb.st_size - have)) > 0)
            have += (size_t)r;
        buf[have] = 0;
    }
    close(fd);
    return buf;
}

static int name_matches(const struct name *nm, const char *sym)
{
    return nm->prefix ? strncmp(sym, nm->s, nm->n) == 0
                      : strncmp(sym, nm->s, nm->n) == 0 && sym[nm->n] == 0;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Load bias of the main program: where its program headers are (AT_PHDR)
 * minus where the file says they are. */
static uint64_t exe_bias(const Elf64_Ehdr *eh, const unsigned char *base, size_t len)
{
    uint64_t at_phdr = getauxval(AT_PHDR);
    if (!at_phdr || eh->e_phoff + (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr) > len)
        return 0;
    const Elf64_Phdr *ph = (const Elf64_Phdr *)(base + eh->e_phoff);
    for (int i = 0; i < eh->e_phnum; i++)
        if (ph[i].p_type == PT_PHDR)
            return at_phdr - ph[i].p_vaddr;
    for (int i = 0; i < eh->e_phnum; i++)
        if (ph[i].p_type == PT_LOAD && ph[i].p_offset <= eh->e_phoff &&
            eh->e_phoff < ph[i].p_offset + ph[i].p_filesz)
            return at_phdr - (ph[i].p_vaddr + eh->e_phoff - ph[i].p_offset);
    return 0;
}

/* Adds the run-time address of every function symbol of the program that
 * a name matches. */
static void resolve(struct name *names, size_t n_names)
{
    int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    if (fd < 0) { vl_warn("VPROF_LATENCY_FUNCS: cannot open /proc/self/exe", NULL); return; }
    struct stat sb;
    void *map = MAP_FAILED;
    if (fstat(fd, &sb) == 0 && (size_t)sb.st_size >= sizeof(Elf64_Ehdr))
        map = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED) { vl_warn("VPROF_LATENCY_FUNCS: cannot map the program", NULL); return; }
    const unsigned char *b = map;
    size_t len = (size_t)sb.st_size;
    const Elf64_Ehdr *eh = map;
    const Elf64_Shdr *sh = (const Elf64_Shdr *)(b + eh->e_shoff);
    const Elf64_Shdr *symtab = NULL;
    if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
        eh->e_shoff + (uint64_t)eh->e_shnum * sizeof *sh > len) {
        vl_warn("VPROF_LATENCY_FUNCS: the program is not a readable ELF64 file", NULL);
        munmap(map, len);
        return;
    }
    for (int pass = 0; pass < 2 && !symtab; pass++)
        for (int i = 0; i < eh->e_shnum; i++)
            if (sh[i].sh_type == (pass ? SHT_DYNSYM : SHT_SYMTAB) && sh[i].sh_link < eh->e_shnum) {
                symtab = &sh[i];
                break;
            }
    uint64_t bias = exe_bias(eh, b, len);
    size_t cap = 0;
    if (symtab && symtab->sh_offset + symtab->sh_size <= len &&
        sh[symtab->sh_link].sh_offset + sh[symtab->sh_link].sh_size <= len) {
        const Elf64_Sym *sym = (const Elf64_Sym *)(b + symtab->sh_offset);
        size_t n_sym = symtab->sh_size / sizeof *sym;
        const char *str = (const char *)(b + sh[symtab->sh_link].sh_offset);
        size_t str_len = sh[symtab->sh_link].sh_size;
        for (size_t i = 0; i < n_sym; i++) {
            int t = ELF64_ST_TYPE(sym[i].st_info);
            if ((t != STT_FUNC && t != STT_GNU_IFUNC) || sym[i].st_shndx == SHN_UNDEF ||
                !sym[i].st_value || sym[i].st_name >= str_len ||
                !memchr(str + sym[i].st_name, 0, str_len - sym[i].st_name))
                continue;
            const char *nm = str + sym[i].st_name;
            int hit = 0;
            for (size_t k = 0; k < n_names; k++)
                if (name_matches(&names[k], nm)) { names[k].found = 1; hit = 1; }
            if (!hit) continue;
            if (n_allowed == cap) {
                cap = cap ? 2 * cap : 64;
                uint64_t *na = realloc(allowed, cap * sizeof *na);
                if (!na) break;
                allowed = na;
            }
            allowed[n_allowed++] = bias + sym[i].st_value;
        }
    }
    if (!symtab) vl_warn("VPROF_LATENCY_FUNCS: the program has no symbol table", NULL);
    munmap(map, len);
    qsort(allowed, n_allowed, sizeof *allowed, cmp_u64);
}

void vl_funcs_load(void)
{
    if (loaded || !vl_cfg.funcs || !*vl_cfg.funcs)
        return;
    loaded = 1;
    const char *spec = vl_cfg.funcs;
    char *text = spec[0] == '@' ? read_text(spec + 1) : strdup(spec);
    if (!text) {
        vl_warn("VPROF_LATENCY_FUNCS: cannot read the list; every function is recorded", spec);
        return;
    }
    struct name *names = malloc(VL_MAX_NAMES * sizeof *names);
    if (!names) { free(text); return; }
    size_t n = parse_names(text, names, VL_MAX_NAMES);
    resolve(names, n);
    char one[256];
    for (size_t k = 0; k < n; k++)
        if (!names[k].found) {
            size_t l = names[k].n < sizeof one - 2 ? names[k].n : sizeof one - 2;
            memcpy(one, names[k].s, l);
            if (names[k].prefix) one[l++] = '*';
            one[l] = 0;
            vl_warn("VPROF_LATENCY_FUNCS: no function of the program matches", one);
        }
    free(names);
    free(text);
    /* In force even when nothing matched: the user asked for a limit. */
    vl_funcs_limited = 1;
}

int vl_func_allowed(uint64_t func)
{
    size_t lo = 0, hi = n_allowed;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (allowed[mid] < func) lo = mid + 1; else hi = mid;
    }
    return lo < n_allowed && allowed[lo] == func;
}
