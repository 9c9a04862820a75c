/* meta.h - internal interfaces of vprof-meta (dwarf-meta/).
 *
 * Data flow: elf_info (ELF checks, build-id, embedded schema) -> walk (every
 * variable DIE with its scope PC ranges and frame base) -> locexpr (DWARF
 * expression -> one vprof location) + cfa (frame base through the CFI) ->
 * select (schema or schema-less choice, descriptors, entries) -> vpf_mb_*.
 */
#ifndef VPROF_META_H
#define VPROF_META_H

#include <stddef.h>
#include <stdint.h>
#include <libdwarf/libdwarf.h>
#include <libdwarf/dwarf.h>
#include "vprof_format.h"

/* ---------- why something could not be placed ---------- */
enum why {
    WHY_OPTIMIZED_OUT = 0,  /* no location, or empty location at these PCs */
    WHY_NOT_FOUND,          /* schema variable absent from DWARF */
    WHY_ENTRY_VALUE,        /* DW_OP_entry_value: value at function entry */
    WHY_TLS,                /* thread-local storage */
    WHY_UNSUPPORTED_OP,     /* location expression vprof cannot evaluate */
    WHY_COMPUTED,           /* value computed by an expression (stack_value) */
    WHY_UNSUPPORTED_TYPE,   /* not a basic type / pointer (or odd size) */
    WHY_NO_MEMBER,          /* s.field / p->field: no such member */
    WHY_NO_CFA,             /* frame base not reducible to register+offset */
    WHY_PROLOGUE,           /* frame base register not set up at these PCs */
    WHY_PIECE,              /* value split over pieces / partly unavailable */
    WHY_N
};
const char *why_name(enum why w);

/* ---------- PC ranges ---------- */
struct pcr { uint64_t lo, hi; };            /* [lo, hi) */
struct pcrs { struct pcr *v; size_t n, cap; };

void pcrs_add(struct pcrs *r, uint64_t lo, uint64_t hi);
void pcrs_free(struct pcrs *r);
void pcrs_copy(struct pcrs *dst, const struct pcrs *src);
/* Ranges of a DIE (low_pc/high_pc or DW_AT_ranges, DWARF 4 and 5).
 * Returns number of ranges added (0 = none). cu_base: CU base address. */
int die_pcrs(Dwarf_Debug dbg, Dwarf_Die die, uint64_t cu_base,
             struct pcrs *out);

/* ---------- a resolved location ---------- */
struct dloc {
    uint8_t loc;            /* VPF_LOC_* */
    uint8_t reg;
    int fb;                 /* loc FBREG: frame base still to resolve */
    int addr_val;           /* loc BREG/FBREG: the value is that address
                               itself (DW_OP_stack_value), not memory there */
    int64_t offset;
    char prog[VPF_EXPR_MAX_LEN + 1];    /* loc EXPR: the program (FORMATS.md
                                           §2.1); fb set when it uses "f" */
    int mem;                /* loc EXPR: prog computes the variable's
                               address (a memory location), not its value */
    int64_t piece_start;    /* byte offset of the chosen piece in the var */
    uint64_t piece_size;    /* 0 = whole variable */
};

/* How the enclosing function's DW_AT_frame_base is computed. */
enum fb_kind { FB_NONE = 0, FB_CFA, FB_REG, FB_BREG, FB_BAD };
struct frame_base { enum fb_kind kind; uint8_t reg; int64_t off; };

/* Appends fmt's output and a separating space to the program d->prog.
 * Returns 0, or -1 when it would not fit (d->prog unchanged). */
int dloc_prog_add(struct dloc *d, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Appends "rN+k" (base 'r') or "f+k" (base 'f'), without "+0". */
int dloc_prog_base(struct dloc *d, char base, unsigned reg, int64_t k);

/* Evaluates one location description for the byte range
 * [want_off, want_off + want_size) of the variable. Returns 0 and fills *d,
 * or -1 and sets *why (and *bad_op for WHY_UNSUPPORTED_OP). die: any DIE of
 * the CU (DW_OP_addrx indexes the CU's .debug_addr table). */
int locexpr_eval(Dwarf_Debug dbg, Dwarf_Die die, Dwarf_Locdesc_c desc, Dwarf_Unsigned n_ops,
                 int64_t want_off, unsigned want_size, struct dloc *d,
                 enum why *why, unsigned *bad_op);
int frame_base_read(Dwarf_Debug dbg, Dwarf_Die subprogram,
                    struct frame_base *fb);

/* ---------- CFA rows (frame base DW_OP_call_frame_cfa) ---------- */
struct cfa_row { uint64_t lo, hi; uint8_t reg; int64_t off; int ok; };
struct cfa_ctx;
struct cfa_ctx *cfa_open(Dwarf_Debug dbg);
void cfa_close(struct cfa_ctx *c);
/* Rows covering [lo, hi); rows with ok == 0 have a CFA that is not
 * register+offset. Returns the number of rows (array owned by c, valid until
 * the next call), 0 if no FDE covers lo. */
size_t cfa_rows(struct cfa_ctx *c, uint64_t lo, uint64_t hi,
                const struct cfa_row **rows);

/* ---------- types ---------- */
struct tinfo {
    int ok;                 /* 1: basic or pointer type we can record */
    uint8_t kind;           /* VPF_KIND_* of the recorded value */
    uint8_t size;           /* bytes read at the final location */
    uint8_t lflags;         /* VPF_LF_SIGNED / VPF_LF_FLOAT / VPF_LF_DEREF */
    uint64_t obj_size;      /* size of the variable itself (pieces) */
    int is_struct, is_ptr_struct;
    Dwarf_Off struct_off;   /* DIE of the struct (for members) */
};
struct type_cache;
struct type_cache *types_new(Dwarf_Debug dbg);
void types_free(struct type_cache *t);
/* Classifies the type at global DIE offset off (0 = no type: void). */
const struct tinfo *types_classify(struct type_cache *t, Dwarf_Off off);
/* Finds member `name` of the struct at struct_off: byte offset and type
 * offset. Returns 0, or -1 if absent / bitfield / unsupported. */
int types_member(struct type_cache *t, Dwarf_Off struct_off, const char *name,
                 int64_t *moff, Dwarf_Off *mtype);
/* C spelling of the type, e.g. "unsigned int", "char *"; static buffer. */
const char *types_name(struct type_cache *t, Dwarf_Off off);

/* ---------- the walk ---------- */
struct var_site {           /* one variable DIE as the walker found it */
    const char *cu_name;
    const char *function;   /* "#global" at file scope */
    const char *linkage;    /* function's linkage name or NULL */
    const char *name;
    uint32_t decl_line;
    Dwarf_Off origin;       /* ultimate abstract origin (identity) */
    Dwarf_Off type_off;     /* 0 = none */
    int is_param, is_global;
    Dwarf_Attribute loc;    /* DW_AT_location, or NULL */
    Dwarf_Attribute cval;   /* DW_AT_const_value, or NULL */
    const struct pcrs *scope;   /* PCs where it is in scope; NULL for a
                                 * variable of an abstract instance */
    const struct frame_base *fb;
};
typedef void (*var_fn)(void *ctx, Dwarf_Debug dbg, Dwarf_Die die,
                       const struct var_site *v);
/* CU filter: return nonzero to walk this CU. */
typedef int (*cu_fn)(void *ctx, const char *cu_name, const char *comp_dir);

/* Split DWARF: called with begin=1 before the DIEs of a .dwo file are
 * reported (they come with that file's Dwarf_Debug), begin=0 after. */
typedef void (*unit_fn)(void *ctx, Dwarf_Debug dbg, int begin);

struct walk_stats { unsigned cus, cus_walked, dwo_missing; uint64_t dies; };
/* want_abstract: also report variables of abstract instances of inlined
 * functions, with scope NULL (schema mode, for better "why" reasons). */
int walk_dwarf(Dwarf_Debug dbg, uint64_t info_size, int want_abstract,
               cu_fn want_cu, var_fn on_var, unit_fn on_unit, void *ctx,
               struct walk_stats *st, char *err, size_t errlen);

/* ---------- progress on a TTY ---------- */
void progress_start(const char *what);
void progress_update(uint64_t done, uint64_t total);
void progress_end(void);

#endif
