/* value_read.h - read one variable's value from where its metadata entry
 * says it lives.
 *
 * This is the single value reader: the runtime's SIGPROF handler uses it
 * with registers from the signal context (or a libunwind cursor for callers)
 * and a guarded self-memory reader; the tests' gdb oracle uses it with
 * registers from ptrace and a reader of the traced process's memory. It must
 * stay async-signal-safe: no allocation, no locks, no stdio, and every
 * memory access goes through the caller's reader. */
#ifndef VPROF_VALUE_READ_H
#define VPROF_VALUE_READ_H

#include <stddef.h>
#include <stdint.h>
#include "vprof_format.h"

/* Register file in DWARF x86-64 numbering (enum vpf_dwreg). */
struct vprof_regs {
    uint64_t r[17];             /* rax..r15, rip (16) */
    uint32_t valid;             /* bit n set: r[n] is known */
    const unsigned char *xmm;   /* 16 registers x 16 bytes, or NULL */
};

/* Reads n bytes at addr into dst. Returns 0, or -1 if the read would fault
 * (the reader must never fault itself). */
typedef int (*vprof_mem_read_fn)(void *ctx, uint64_t addr, void *dst, size_t n);

enum vprof_read_status {
    VPROF_READ_OK = 0,
    VPROF_READ_FAULT = -1,      /* memory not readable: skipped, counted */
    VPROF_READ_NOREG = -2,      /* register not known in this frame */
    VPROF_READ_BAD = -3,        /* malformed entry (size, register, kind) */
};

/* Computes the value of variable v at location entry e. bias is added to
 * ADDR locations when the metadata is relative (PIE). The result is the raw
 * value zero/sign-extended to 64 bits (floats as IEEE double bits) as the
 * descriptor's kind says. */
int vprof_read_value(const struct vpf_loc_entry *e,
                     const struct vpf_var_desc *v,
                     const struct vprof_regs *regs, uint64_t bias,
                     vprof_mem_read_fn rd, void *ctx, uint64_t *out);

#endif
