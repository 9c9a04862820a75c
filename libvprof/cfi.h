/* cfi.h - unwind rules per PC, compiled once from the DWARF call-frame
 * information (.eh_frame, found through .eh_frame_hdr) of the objects
 * loaded at start-up, so that a tick unwinds a frame with a binary search
 * and a few guarded loads instead of interpreting CFI (libunwind).
 *
 * A rule says: CFA = register + offset; the return address is at CFA - 8;
 * rbx, rbp, r12-r15 are saved at CFA + k*8 or keep their value. Anything
 * the table cannot express (CFA or register expressions, a register saved
 * in another register, signal trampolines, a PC without an FDE) is a "no
 * rule" answer, and the caller asks libunwind. Built outside any signal
 * handler; looked up without allocation, locks or system calls. */
#ifndef VPROF_CFI_H
#define VPROF_CFI_H

#include <stdint.h>

/* The callee-saved registers a rule tracks, in vprof_cfi_rule.save order
 * (DWARF numbers). */
#define VPROF_CFI_NSAVE 6
extern const uint8_t vprof_cfi_saved_reg[VPROF_CFI_NSAVE];

enum vprof_cfi_kind {
    VPROF_CFI_NONE = 0,         /* no usable rule here: ask libunwind */
    VPROF_CFI_STEP = 1,         /* a frame: the rule below applies */
    VPROF_CFI_END = 2,          /* the outermost frame: no caller (RA undefined) */
    VPROF_CFI_SIGNAL = 3,       /* a signal trampoline (CIE augmentation 'S'):
                                   libunwind steps it; the frame below it was
                                   interrupted, its PC is exact */
};

#define VPROF_CFI_SAME 0        /* save[]: register keeps its value */
#define VPROF_CFI_UNDEF (-128)  /* save[]: register has no value in the caller */

struct vprof_cfi_rule {
    int32_t cfa_off;
    uint8_t cfa_reg;            /* DWARF register 0-15 */
    uint8_t kind;               /* enum vprof_cfi_kind */
    uint16_t saved;             /* bit n: DWARF register n is saved (save[] says where) */
    uint16_t undef;             /* bit n: DWARF register n is undefined in the caller */
    int8_t save[VPROF_CFI_NSAVE];   /* CFA + save*8, SAME or UNDEF */
};

/* vprof_cfi_rule.save's index of a tracked DWARF register (0-15). */
extern const int8_t vprof_cfi_save_index[16];

struct vprof_cfi_stats {
    uint32_t objects;           /* objects with a table */
    uint32_t fdes;              /* FDEs compiled */
    uint32_t bad_fdes;          /* FDEs rejected (malformed: left to libunwind) */
    uint64_t rows;              /* table rows, all objects */
};

/* Builds the tables of every object loaded now (dl_iterate_phdr), the
 * executable first; at most max_rows rows in all (objects that do not fit
 * are left to libunwind). Idempotent. Not async-signal-safe. */
void vprof_cfi_build(uint64_t max_rows);

/* Compiles one object's table from its .eh_frame_hdr at hdr, its code in
 * [lo, hi) and the readable memory [mem_lo, mem_hi) that holds its CFI
 * (every read is checked against it). For tests of malformed CFI. Returns
 * the rows added, or -1 when the header is not usable. */
long vprof_cfi_add_object(uint64_t lo, uint64_t hi, const unsigned char *hdr,
                          uint64_t mem_lo, uint64_t mem_hi);

/* An object's code range [lo, hi) (its executable PT_LOAD segments) and
 * its .eh_frame_hdr, from dl_iterate_phdr: 0, or -1 when it has none. */
struct dl_phdr_info;
int vprof_cfi_object_code(const struct dl_phdr_info *info, uint64_t *lo, uint64_t *hi,
                          const unsigned char **hdr);

/* Drops every table (tests). */
void vprof_cfi_clear(void);

/* The rule for pc (the exact address of the instruction the frame is
 * executing: the interrupted PC, or a return address - 1). NULL when no
 * object's table has a rule for pc (kind NONE). Async-signal-safe. */
const struct vprof_cfi_rule *vprof_cfi_find(uint64_t pc);

/* The same, and the PCs [*lo, *hi) the rule covers (one row of the
 * table). */
const struct vprof_cfi_rule *vprof_cfi_find_span(uint64_t pc, uint64_t *lo, uint64_t *hi);

/* Whether pc lies in the code of an object with a table (mapped code:
 * reading a few bytes there cannot fault). */
int vprof_cfi_in_object(uint64_t pc);

void vprof_cfi_get_stats(struct vprof_cfi_stats *s);

#endif
