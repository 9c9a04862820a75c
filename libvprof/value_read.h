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
    VPROF_READ_BAD = -3,        /* malformed entry (size, register, kind, program) */
    VPROF_READ_UNDEF = -4,      /* EXPR: no value here (division by zero) */
};

/* Computes the value of variable v at location entry e. bias is added to
 * ADDR locations when the metadata is relative (PIE). The result is the raw
 * value zero/sign-extended to 64 bits (floats as IEEE double bits) as the
 * descriptor's kind says. prog: an EXPR entry's program text
 * (vpf_meta_expr), NULL for the other kinds (an EXPR entry without one is
 * VPROF_READ_BAD). The program is checked again as it runs (operation
 * count, stack depth, registers), so an unchecked one cannot do harm
 * either: it only fails. */
int vprof_read_value(const struct vpf_loc_entry *e,
                     const struct vpf_var_desc *v, const char *prog,
                     const struct vprof_regs *regs, uint64_t bias,
                     vprof_mem_read_fn rd, void *ctx, uint64_t *out);

/* ---------- plans: an entry's reading worked out once ----------
 *
 * vprof_read_value decides the same things about an entry on every call:
 * which location kind, which register, the address when it is static,
 * the width and the extension. A plan is that decision made once (when the
 * runtime builds its tables); vprof_plan_read then does only what depends
 * on the registers and memory of the moment. vprof_read_value itself reads
 * through a plan whenever the entry has one, so the two cannot drift
 * apart. Entries a plan does not cover (xmm registers, register pieces
 * that need byte handling, malformed entries; EXPR programs unless the
 * caller decoded them, vprof_plan_make_expr) are VPROF_PLAN_GENERAL: the
 * caller uses vprof_read_value. */
enum vprof_plan_op {
    VPROF_PLAN_GENERAL = 0,     /* no plan: vprof_read_value's general path */
    VPROF_PLAN_CONST,           /* the value is `off` */
    VPROF_PLAN_REG,             /* register `reg`, bytes from `shift`/8 */
    VPROF_PLAN_MEM,             /* memory at reg + off (reg NONE: at off) */
    VPROF_PLAN_ABS8,            /* memory at off, where 8 bytes are known
                                   readable: one plain 8-byte load, the
                                   extension keeps `size` bytes of it
                                   (set by the caller: vprof_plan_set_direct) */
    VPROF_PLAN_EXPR,            /* an EXPR program, decoded once: `shift`
                                   instructions at `off` (a pointer), frame
                                   base `reg` + `doff` (vprof_plan_make_expr) */
};
#define VPROF_PLAN_NONE 0xff    /* plan.reg: no base register */
enum vprof_plan_flag {
    VPROF_PLAN_DEREF = 1u << 0,     /* the location holds a pointer; + doff */
    VPROF_PLAN_SIGNED = 1u << 1,
    VPROF_PLAN_FLOAT4 = 1u << 2,    /* 4-byte float, widened to double */
    VPROF_PLAN_DIRECT = 1u << 3,    /* MEM without base register or deref, at an
                                       address known readable: a plain load
                                       (set by the caller, vprof_plan_set_direct) */
};

struct vprof_plan {
    int64_t off, doff;
    uint8_t op, reg, size, flags;
    uint8_t shift;              /* REG: right shift of the register, bits;
                                   EXPR: instructions */
    uint8_t ext;                /* 64 - 8 * size: the extension's shift */
};

/* Works out e's plan (op GENERAL when it has none). */
void vprof_plan_make(const struct vpf_loc_entry *e, const struct vpf_var_desc *v,
                     uint64_t bias, struct vprof_plan *p);

/* ---------- EXPR programs (FORMATS.md §2.1) ----------
 * A program is decoded once (the runtime: when it builds its tables) into
 * at most VPF_EXPR_MAX_OPS instructions, the load bias added to its
 * addresses: vprof_expr_compile returns their count, or -1 when the
 * program is invalid (vpf_expr_check). vprof_expr_run evaluates them,
 * checking the stack again at each one (VPROF_READ_BAD when it would
 * leave its 8 words); a register not known in the frame is
 * VPROF_READ_NOREG, a memory read that would fault VPROF_READ_FAULT, a
 * division by zero VPROF_READ_UNDEF. Async-signal-safe. */
int vprof_expr_compile(const char *prog, uint64_t bias, struct vpf_xins *ins);
int vprof_expr_run(const struct vpf_xins *ins, unsigned n, unsigned fbreg, int64_t fboff,
                   const struct vprof_regs *regs, vprof_mem_read_fn rd, void *ctx,
                   uint64_t *out);
/* An EXPR plan running ins[0..n) (which must outlive it); GENERAL when the
 * entry cannot have one. */
void vprof_plan_make_expr(const struct vpf_loc_entry *e, const struct vpf_var_desc *v,
                          const struct vpf_xins *ins, unsigned n, struct vprof_plan *p);
/* An EXPR plan's raw value (before the extension). */
int vprof_plan_expr(const struct vprof_plan *p, const struct vprof_regs *regs,
                    vprof_mem_read_fn rd, void *ctx, uint64_t *raw);

/* Marks a plan's static address readable (size bytes there, or 8 with
 * wide): loads bypass the reader. */
static inline void vprof_plan_set_direct(struct vprof_plan *p, int wide)
{
    if (p->op == VPROF_PLAN_MEM && p->reg == VPROF_PLAN_NONE && !(p->flags & VPROF_PLAN_DEREF)) {
        if (wide)
            p->op = VPROF_PLAN_ABS8;
        else
            p->flags |= VPROF_PLAN_DIRECT;
    }
}

/* Raw bytes -> the value a plan's extension (ext, flags) makes: the low
 * 64 - ext bits, sign-extended, or a 4-byte float widened to double. */
static inline __attribute__((always_inline)) uint64_t vprof_extend(uint64_t raw, unsigned ext,
                                                                   unsigned flags)
{
    if (!ext)                   /* 8 bytes: nothing to extend (a float is 4) */
        return raw;
    raw <<= ext;
    if (flags & VPROF_PLAN_SIGNED)
        return (uint64_t)((int64_t)raw >> ext);
    raw >>= ext;
    if (flags & VPROF_PLAN_FLOAT4) {
        union { uint32_t u; float f; } f32 = {.u = (uint32_t)raw};
        union { double d; uint64_t u; } f64 = {.d = (double)f32.f};
        raw = f64.u;
    }
    return raw;
}

static inline __attribute__((always_inline)) uint64_t vprof_plan_extend(const struct vprof_plan *p,
                                                                        uint64_t raw)
{
    return vprof_extend(raw, p->ext, p->flags);
}

/* A REG plan's value (the case of vprof_plan_read, for a caller that
 * dispatches on the plan itself): VPROF_READ_OK or NOREG. */
static inline __attribute__((always_inline)) int
vprof_plan_reg(const struct vprof_plan *p, const struct vprof_regs *regs, uint64_t *out)
{
    if (!(regs->valid & (1u << p->reg)))
        return VPROF_READ_NOREG;
    *out = vprof_plan_extend(p, regs->r[p->reg] >> p->shift);
    return VPROF_READ_OK;
}

/* Where a MEM plan's value lies (not DIRECT): its base register plus the
 * offset, through the pointer there (read with rd) when the plan
 * dereferences. VPROF_READ_OK, NOREG or FAULT. The first half of
 * vprof_plan_read's MEM case: a caller may read the value itself later
 * (the tick batches the reads that need a system call). */
static inline __attribute__((always_inline)) int
vprof_plan_locate(const struct vprof_plan *p, const struct vprof_regs *regs,
                  vprof_mem_read_fn rd, void *ctx, uint64_t *where)
{
    uint64_t addr = (uint64_t)p->off;
    if (p->reg != VPROF_PLAN_NONE) {
        if (!(regs->valid & (1u << p->reg)))
            return VPROF_READ_NOREG;
        addr += regs->r[p->reg];
    }
    if (p->flags & VPROF_PLAN_DEREF) {
        uint64_t ptr = 0;
        if (rd(ctx, addr, &ptr, 8) < 0)
            return VPROF_READ_FAULT;
        addr = ptr + (uint64_t)p->doff;
    }
    *where = addr;
    return VPROF_READ_OK;
}

/* Reads through a plan (not GENERAL); same results as vprof_read_value.
 * Inline, so that a caller passing its own reader gets it inlined. */
static inline __attribute__((always_inline)) int
vprof_plan_read(const struct vprof_plan *p, const struct vprof_regs *regs,
                vprof_mem_read_fn rd, void *ctx, uint64_t *out)
{
    uint64_t addr, raw = 0;
    switch (p->op) {
    case VPROF_PLAN_ABS8:
        __builtin_memcpy(&raw, (const void *)(uintptr_t)p->off, 8);
        break;
    case VPROF_PLAN_CONST:
        *out = (uint64_t)p->off;
        return VPROF_READ_OK;
    case VPROF_PLAN_REG:
        return vprof_plan_reg(p, regs, out);
    case VPROF_PLAN_EXPR: {
        int rc = vprof_plan_expr(p, regs, rd, ctx, &raw);
        if (rc != VPROF_READ_OK)
            return rc;
        break;
    }
    case VPROF_PLAN_MEM:
        addr = (uint64_t)p->off;
        if (p->flags & VPROF_PLAN_DIRECT) {
            switch (p->size) {
            case 1: __builtin_memcpy(&raw, (const void *)(uintptr_t)addr, 1); break;
            case 2: __builtin_memcpy(&raw, (const void *)(uintptr_t)addr, 2); break;
            case 4: __builtin_memcpy(&raw, (const void *)(uintptr_t)addr, 4); break;
            default: __builtin_memcpy(&raw, (const void *)(uintptr_t)addr, 8); break;
            }
            break;
        }
        int rc = vprof_plan_locate(p, regs, rd, ctx, &addr);
        if (rc != VPROF_READ_OK)
            return rc;
        if (rd(ctx, addr, &raw, p->size) < 0)
            return VPROF_READ_FAULT;
        break;
    default:
        return VPROF_READ_BAD;
    }
    *out = vprof_plan_extend(p, raw);
    return VPROF_READ_OK;
}

#endif
