/* value_read.c - the single value reader (see value_read.h).
 *
 * Turns one metadata location entry plus a register file into a value. All
 * memory goes through the caller's reader, so the same code serves the
 * runtime's signal handler (guarded self reads) and the tests' ptrace
 * oracle. Async-signal-safe: no allocation, no locks, no libc calls. */
#include "value_read.h"

static int valid_size(unsigned n)
{
    return n == 1 || n == 2 || n == 4 || n == 8;
}

/* Little-endian bytes -> zero-extended integer (x86-64 is little-endian). */
static uint64_t load_le(const unsigned char *p, unsigned n)
{
    uint64_t v = 0;
    switch (n) {                /* constant sizes: inlined, no memcpy call */
    case 1: v = p[0]; break;
    case 2: { uint16_t x; __builtin_memcpy(&x, p, 2); v = x; break; }
    case 4: { uint32_t x; __builtin_memcpy(&x, p, 4); v = x; break; }
    default: __builtin_memcpy(&v, p, 8); break;
    }
    return v;
}

static uint64_t sign_extend(uint64_t v, unsigned n)
{
    if (n >= 8)
        return v;
    uint64_t sign = 1ull << (8 * n - 1);
    v &= (sign << 1) - 1;
    return (v ^ sign) - sign;
}

/* Reads register `reg` into bytes[16]; returns its width or an error. */
static int reg_bytes(const struct vprof_regs *regs, unsigned reg,
                     unsigned char bytes[16])
{
    if (reg <= VPF_RIP) {
        if (!(regs->valid & (1u << reg)))
            return VPROF_READ_NOREG;
        uint64_t v = regs->r[reg];
        for (unsigned i = 0; i < 8; i++)
            bytes[i] = (unsigned char)(v >> (8 * i));
        for (unsigned i = 8; i < 16; i++)
            bytes[i] = 0;
        return 8;
    }
    if (reg >= VPF_XMM0 && reg <= VPF_XMM15) {
        if (!regs->xmm)
            return VPROF_READ_NOREG;
        const unsigned char *x = regs->xmm + (reg - VPF_XMM0) * 16;
        for (unsigned i = 0; i < 16; i++)
            bytes[i] = x[i];
        return 16;
    }
    return VPROF_READ_BAD;
}

static int reg_value(const struct vprof_regs *regs, unsigned reg, uint64_t *out)
{
    if (reg > VPF_RIP)
        return VPROF_READ_BAD;      /* addresses come from integer registers */
    if (!(regs->valid & (1u << reg)))
        return VPROF_READ_NOREG;
    *out = regs->r[reg];
    return VPROF_READ_OK;
}

/* ---------- EXPR programs (FORMATS.md §2.1) ---------- */

/* Applies one binary operation to a (second) and b (top). DWARF's
 * arithmetic is on address-sized words: div and the comparisons are
 * signed, mod unsigned (as gdb evaluates them), shifts of 64 or more give 0
 * (shra: the sign); udiv is DW_OP_div on an unsigned type (gcc converts
 * both operands to unsigned long first). */
static int expr_binary(unsigned op, uint64_t a, uint64_t b, uint64_t *r)
{
    int64_t sa = (int64_t)a, sb = (int64_t)b;
    switch (op) {
    case VPF_X_ADD: *r = a + b; break;
    case VPF_X_SUB: *r = a - b; break;
    case VPF_X_MUL: *r = a * b; break;
    case VPF_X_DIV:
        if (!b)
            return VPROF_READ_UNDEF;
        /* INT64_MIN / -1 traps on x86-64: its wrapped result instead */
        *r = sb == -1 ? 0 - a : (uint64_t)(sa / sb);
        break;
    case VPF_X_UDIV:
        if (!b)
            return VPROF_READ_UNDEF;
        *r = a / b;
        break;
    case VPF_X_MOD:
        if (!b)
            return VPROF_READ_UNDEF;
        *r = a % b;
        break;
    case VPF_X_AND: *r = a & b; break;
    case VPF_X_OR: *r = a | b; break;
    case VPF_X_XOR: *r = a ^ b; break;
    case VPF_X_SHL: *r = b >= 64 ? 0 : a << b; break;
    case VPF_X_SHR: *r = b >= 64 ? 0 : a >> b; break;
    case VPF_X_SHRA: *r = (uint64_t)(sa >> (b >= 64 ? 63 : b)); break;
    case VPF_X_EQ: *r = sa == sb; break;
    case VPF_X_NE: *r = sa != sb; break;
    case VPF_X_LT: *r = sa < sb; break;
    case VPF_X_GT: *r = sa > sb; break;
    case VPF_X_LE: *r = sa <= sb; break;
    case VPF_X_GE: *r = sa >= sb; break;
    default: return VPROF_READ_BAD;
    }
    return VPROF_READ_OK;
}

/* Runs one operation on the stack st of sp words (the caller checked that
 * it has the words the operation pops and room for what it pushes). The
 * frame base is fbreg + fboff. */
static int expr_step(const struct vpf_xins *in, uint64_t *st, unsigned sp, unsigned fbreg,
                     int64_t fboff, const struct vprof_regs *regs, vprof_mem_read_fn rd,
                     void *ctx)
{
    uint64_t *top = st + sp - 1, x;
    unsigned char buf[8];
    int rc;
    switch (in->op) {
    case VPF_X_CONST:
    case VPF_X_ADDR:            /* (the bias is in k: vprof_expr_compile) */
        top[1] = (uint64_t)in->k;
        break;
    case VPF_X_REG:
        if ((rc = reg_value(regs, in->reg, &x)) < 0)
            return rc;
        top[1] = x + (uint64_t)in->k;
        break;
    case VPF_X_FB:
        if ((rc = reg_value(regs, fbreg, &x)) < 0)
            return rc;
        top[1] = x + (uint64_t)fboff + (uint64_t)in->k;
        break;
    case VPF_X_DEREF:
        if (!valid_size((unsigned)in->k) || rd(ctx, *top, buf, (size_t)in->k) < 0)
            return VPROF_READ_FAULT;
        *top = load_le(buf, (unsigned)in->k);
        break;
    case VPF_X_PICK: top[1] = top[-in->k]; break;
    case VPF_X_NEG: *top = 0 - *top; break;
    case VPF_X_NOT: *top = ~*top; break;
    case VPF_X_ABS: *top = (int64_t)*top < 0 ? 0 - *top : *top; break;
    case VPF_X_DUP: top[1] = *top; break;
    case VPF_X_DROP: break;
    case VPF_X_SWAP: x = top[0]; top[0] = top[-1]; top[-1] = x; break;
    case VPF_X_OVER: top[1] = top[-1]; break;
    case VPF_X_ROT:             /* the top becomes the third */
        x = top[0]; top[0] = top[-1]; top[-1] = top[-2]; top[-2] = x;
        break;
    default:                    /* (pops 2: top[-1] exists) */
        if (in->op < VPF_X_ADD || in->op > VPF_X_GE)
            return VPROF_READ_BAD;
        return expr_binary(in->op, top[-1], top[0], &top[-1]);
    }
    return VPROF_READ_OK;
}

int vprof_expr_compile(const char *prog, uint64_t bias, struct vpf_xins *ins)
{
    uint32_t pos = 0;
    int n = 0;
    if (!prog || vpf_expr_check(prog))
        return -1;
    while (n < VPF_EXPR_MAX_OPS && vpf_expr_next(prog, &pos, &ins[n]) == 1) {
        if (ins[n].op == VPF_X_ADDR)
            ins[n].k = (int64_t)((uint64_t)ins[n].k + bias);
        n++;
    }
    return n;
}

/* The limits vpf_expr_check enforces at load are enforced again here (the
 * operation count, each operation's stack effect), so that the evaluator
 * is safe on its own, whatever the instructions hold. */
int vprof_expr_run(const struct vpf_xins *ins, unsigned n, unsigned fbreg, int64_t fboff,
                   const struct vprof_regs *regs, vprof_mem_read_fn rd, void *ctx,
                   uint64_t *out)
{
    uint64_t st[VPF_EXPR_MAX_STACK];
    unsigned sp = 0;
    int rc;
    if (n == 0 || n > VPF_EXPR_MAX_OPS)
        return VPROF_READ_BAD;
    for (unsigned i = 0; i < n; i++) {
        unsigned pops, pushes;
        vpf_expr_effect(&ins[i], &pops, &pushes);
        if (!pushes && ins[i].op != VPF_X_DROP)
            return VPROF_READ_BAD;      /* an unknown op */
        if (pops > sp || sp - pops + pushes > VPF_EXPR_MAX_STACK)
            return VPROF_READ_BAD;
        if ((rc = expr_step(&ins[i], st, sp, fbreg, fboff, regs, rd, ctx)) < 0)
            return rc;
        sp = sp - pops + pushes;
    }
    if (sp == 0)
        return VPROF_READ_BAD;
    *out = st[sp - 1];
    return VPROF_READ_OK;
}

int vprof_plan_expr(const struct vprof_plan *p, const struct vprof_regs *regs,
                    vprof_mem_read_fn rd, void *ctx, uint64_t *raw)
{
    return vprof_expr_run((const struct vpf_xins *)(uintptr_t)p->off, p->shift, p->reg,
                          p->doff, regs, rd, ctx, raw);
}

void vprof_plan_make_expr(const struct vpf_loc_entry *e, const struct vpf_var_desc *v,
                          const struct vpf_xins *ins, unsigned n, struct vprof_plan *p)
{
    vprof_plan_make(e, v, 0, p);    /* the width and the extension */
    if (e->loc != VPF_LOC_EXPR || !p->size || (e->flags & VPF_LF_DEREF) || !n ||
        n > VPF_EXPR_MAX_OPS || e->reg > VPF_RIP) {
        p->op = VPROF_PLAN_GENERAL;
        return;
    }
    p->op = VPROF_PLAN_EXPR;
    p->off = (int64_t)(uintptr_t)ins;
    p->shift = (uint8_t)n;
    p->reg = e->reg;
    p->doff = e->fb_offset;
}

void vprof_plan_make(const struct vpf_loc_entry *e, const struct vpf_var_desc *v,
                     uint64_t bias, struct vprof_plan *p)
{
    unsigned size = e->size;
    int deref = (e->flags & VPF_LF_DEREF) != 0;
    int is_float = (e->flags & VPF_LF_FLOAT) || v->kind == VPF_KIND_FLOAT;
    int is_signed = (e->flags & VPF_LF_SIGNED) || v->kind == VPF_KIND_SINT;
    *p = (struct vprof_plan){.op = VPROF_PLAN_GENERAL};
    if (!valid_size(size) || (is_float && size != 4 && size != 8))
        return;                 /* malformed: the general path says so */
    p->size = (uint8_t)size;
    p->ext = (uint8_t)(64 - 8 * size);
    /* the same extension as vprof_read_value's last step: a float is
     * never sign-extended, only a 4-byte one widened */
    if (is_float)
        p->flags = size == 4 ? VPROF_PLAN_FLOAT4 : 0;
    else if (is_signed)
        p->flags = VPROF_PLAN_SIGNED;
    p->doff = e->deref_offset;
    switch (e->loc) {
    case VPF_LOC_CONST:
        if (deref)
            break;
        p->off = (int64_t)vprof_plan_extend(p, (uint64_t)e->offset & (~0ull >> p->ext));
        p->op = VPROF_PLAN_CONST;
        return;
    case VPF_LOC_REG:
        if (e->reg > VPF_RIP || e->offset < 0)
            break;              /* xmm pieces, bad offsets: byte-wise */
        if (!deref && (uint64_t)e->offset + size <= 8) {
            p->op = VPROF_PLAN_REG;
            p->reg = e->reg;
            p->shift = (uint8_t)(8 * e->offset);
            return;
        }
        if (deref && e->offset == 0) {      /* the register holds the pointer */
            p->op = VPROF_PLAN_MEM;
            p->reg = e->reg;
            p->off = e->deref_offset;
            return;
        }
        break;
    case VPF_LOC_ADDR:
        p->op = VPROF_PLAN_MEM;
        p->reg = VPROF_PLAN_NONE;
        p->off = (int64_t)((uint64_t)e->offset + bias);
        p->flags |= deref ? VPROF_PLAN_DEREF : 0;
        return;
    case VPF_LOC_BREG:
    case VPF_LOC_FBREG:
        if (e->reg > VPF_RIP)
            break;
        p->op = VPROF_PLAN_MEM;
        p->reg = e->reg;
        p->off = (int64_t)((uint64_t)e->offset +
                           (e->loc == VPF_LOC_FBREG ? (uint64_t)e->fb_offset : 0));
        p->flags |= deref ? VPROF_PLAN_DEREF : 0;
        return;
    default:
        break;
    }
    p->op = VPROF_PLAN_GENERAL;
}

int vprof_read_value(const struct vpf_loc_entry *e,
                     const struct vpf_var_desc *v, const char *prog,
                     const struct vprof_regs *regs, uint64_t bias,
                     vprof_mem_read_fn rd, void *ctx, uint64_t *out)
{
    struct vprof_plan plan;
    vprof_plan_make(e, v, bias, &plan);
    if (plan.op != VPROF_PLAN_GENERAL)
        return vprof_plan_read(&plan, regs, rd, ctx, out);

    unsigned size = e->size;
    int deref = (e->flags & VPF_LF_DEREF) != 0;
    int is_float = (e->flags & VPF_LF_FLOAT) || v->kind == VPF_KIND_FLOAT;
    int is_signed = (e->flags & VPF_LF_SIGNED) || v->kind == VPF_KIND_SINT;
    unsigned char buf[16] = {0};  /* (gcc -O2 cannot see every path fill it) */
    uint64_t addr = 0, raw;
    int rc;

    if (!valid_size(size) || (is_float && size != 4 && size != 8))
        return VPROF_READ_BAD;

    /* Step 1: where the value (or, with deref, the pointer) lives. */
    switch (e->loc) {
    case VPF_LOC_CONST:
        if (deref)
            return VPROF_READ_BAD;
        raw = (uint64_t)e->offset;
        for (unsigned i = 0; i < 8; i++)
            buf[i] = (unsigned char)(raw >> (8 * i));
        goto have_bytes;
    case VPF_LOC_REG: {
        unsigned char rb[16];
        int w = reg_bytes(regs, e->reg, rb);
        if (w < 0)
            return w;
        unsigned want = deref ? 8 : size;
        if (e->offset < 0 || (uint64_t)e->offset + want > (uint64_t)w)
            return VPROF_READ_BAD;
        for (unsigned i = 0; i < want; i++)
            buf[i] = rb[e->offset + i];
        if (!deref)
            goto have_bytes;
        addr = load_le(buf, 8) + (uint64_t)e->deref_offset;
        goto read_target;
    }
    case VPF_LOC_EXPR:
        if (deref)
            return VPROF_READ_BAD;
        struct vpf_xins ins[VPF_EXPR_MAX_OPS];
        int n = vprof_expr_compile(prog, bias, ins);
        if (n < 0)
            return VPROF_READ_BAD;
        if ((rc = vprof_expr_run(ins, (unsigned)n, e->reg, e->fb_offset, regs, rd, ctx,
                                 &raw)) < 0)
            return rc;
        for (unsigned i = 0; i < 8; i++)
            buf[i] = (unsigned char)(raw >> (8 * i));
        goto have_bytes;
    case VPF_LOC_ADDR:
        addr = (uint64_t)e->offset + bias;
        break;
    case VPF_LOC_BREG:
        if ((rc = reg_value(regs, e->reg, &addr)) < 0)
            return rc;
        addr += (uint64_t)e->offset;
        break;
    case VPF_LOC_FBREG:
        if ((rc = reg_value(regs, e->reg, &addr)) < 0)
            return rc;
        addr += (uint64_t)e->fb_offset + (uint64_t)e->offset;
        break;
    default:
        return VPROF_READ_BAD;
    }

    /* Step 2: a memory location; with deref it holds a pointer. */
    if (deref) {
        if (rd(ctx, addr, buf, 8) < 0)
            return VPROF_READ_FAULT;
        addr = load_le(buf, 8) + (uint64_t)e->deref_offset;
    }
read_target:
    if (rd(ctx, addr, buf, size) < 0)
        return VPROF_READ_FAULT;

have_bytes:
    raw = load_le(buf, size);
    if (is_float) {
        if (size == 4) {
            union { uint32_t u; float f; } f32 = {.u = (uint32_t)raw};
            union { double d; uint64_t u; } f64 = {.d = (double)f32.f};
            raw = f64.u;
        }
    } else if (is_signed) {
        raw = sign_extend(raw, size);
    }
    *out = raw;
    return VPROF_READ_OK;
}
