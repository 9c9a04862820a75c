/* symbols.h - function symbols and the embedded schema of an ELF file. */
#ifndef VPR_SYMBOLS_H
#define VPR_SYMBOLS_H
#include <stddef.h>
#include <stdint.h>

#include "vprof_elf.h"

struct vpr_sym {
    uint64_t lo, hi;    /* link-time [lo, hi): st_value .. +st_size, or up to
                           the next symbol when the size is 0 */
    char *name;
    int global;         /* STB_GLOBAL/WEAK (gprof lists locals too) */
    int plt;            /* a PLT stub ("name@plt", "[plt]"), no function of
                           the program's: never ranked (symbols.c add_plt) */
};

struct vpr_symtab {
    char *path;
    struct vpr_sym *syms;       /* sorted by lo, one per address */
    size_t n;
    int is_pie;                 /* ET_DYN: run-time = link-time + bias */
    int dynsym_only;            /* no .symtab: static functions are missing */
    int exact;                  /* histogram time stays inside [lo, hi) (the
                                   ranking); 0: up to the next symbol (gprof) */
    char build_id[2 * VPF_BUILD_ID_MAX + 1];   /* hex, "" if the file has none */
    char *schema;               /* .vprof_schema contents, or NULL */
    size_t schema_len;
    uint64_t text_lo, text_hi;  /* link-time span of the executable sections */
    uint64_t entry;             /* the ELF entry point (e_entry, link-time): _start */
    uint64_t etext;             /* the linker's etext symbol, 0 if none: where
                                   gcrt1's profiling histogram ends */
    struct vpr_code *code;      /* the executable sections' bytes (not for
                                   --gprof): tailcalls.c reads calls and jumps */
    size_t n_code;
};

struct vpr_code { uint64_t lo; size_t n; unsigned char *b; };

/* Reads .symtab (else .dynsym) function symbols, the GNU build-id note and
 * .vprof_schema. Returns 0, or -1 with a message naming the file. */
int vpr_symtab_load(const char *path, struct vpr_symtab *t, char *err,
                    size_t errlen);
/* The same, with the symbols binutils gprof profiles (for --gprof): also
 * labels in code sections and weak non-object symbols; not local code
 * symbols with a non-numeric `.` suffix (f.cold, f.part.0: part of f) or a
 * `$`; aliases resolved as gprof resolves them. */
int vpr_symtab_load_gprof(const char *path, struct vpr_symtab *t, char *err,
                          size_t errlen);
void vpr_symtab_free(struct vpr_symtab *t);
/* Index of the symbol whose [lo, hi) holds addr, or -1. */
long vpr_sym_find(const struct vpr_symtab *t, uint64_t addr);
/* Index of the symbol named name, or -1 (first one when names repeat). */
long vpr_sym_by_name(const struct vpr_symtab *t, const char *name);
/* Length of the source function's name in the name of a piece of it gcc
 * made: "f.constprop.0", "f.isra.0", "f.part.0", "f.cold", "f.lto_priv.0",
 * "f.clone.1", "f.localalias" (a suffix of such words and numbers); strlen
 * (name) for any other name. */
size_t vpr_sym_source_len(const char *name);
/* Bytes [addr, addr + n) of the executable's code, or NULL. */
const unsigned char *vpr_sym_code(const struct vpr_symtab *t, uint64_t addr, size_t n);
/* The call gmon recorded from [lo, lo + len) (its from_pc is a bucket of
 * return addresses) to callee: when a direct call there calls callee,
 * returns callee and its return address in *ret. gmon also records a call
 * that reached callee through tail jumps (gcc's and clang's sibling calls:
 * f calls g, g ends in `jmp h`) with the return address of the call in f,
 * as if f had called h: when a direct call there calls a g that reaches
 * callee by direct jumps (g's own, or through at most 2 more functions g
 * jumps to), returns the function whose jump reaches callee (*ret: the
 * call's return address). Else -1 (an indirect call names no target). */
long vpr_sym_call_in(const struct vpr_symtab *t, uint64_t lo, size_t len, long callee,
                     uint64_t *ret);

#endif
