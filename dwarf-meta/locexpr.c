/* locexpr.c - turn one DWARF location description into one vprof location.
 *
 * vprof's runtime reads "register", "memory at register+offset", "memory
 * at address" and "constant" directly (docs/FORMATS.md section 2); a value
 * the program computes (an expression ending in DW_OP_stack_value) becomes
 * an EXPR program for the runtime's bounded evaluator (§2.1) when it uses
 * only integer arithmetic, registers, the frame base, addresses and memory
 * reads. Anything else (type conversions, branches, entry values) is
 * reported, not approximated. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "meta.h"
#include "dwutil.h"

struct op { Dwarf_Small atom; Dwarf_Unsigned a, b; };

#define MAX_OPS 64

static int is_const_op(Dwarf_Small a)
{
    return (a >= DW_OP_lit0 && a <= DW_OP_lit31) || a == DW_OP_const1u ||
           a == DW_OP_const1s || a == DW_OP_const2u || a == DW_OP_const2s ||
           a == DW_OP_const4u || a == DW_OP_const4s || a == DW_OP_const8u ||
           a == DW_OP_const8s || a == DW_OP_constu || a == DW_OP_consts;
}

static int64_t const_val(const struct op *o)
{
    if (o->atom >= DW_OP_lit0 && o->atom <= DW_OP_lit31)
        return o->atom - DW_OP_lit0;
    switch (o->atom) {      /* libdwarf leaves signed operands sign-extended */
    case DW_OP_const1s: return (int8_t)o->a;
    case DW_OP_const2s: return (int16_t)o->a;
    case DW_OP_const4s: return (int32_t)o->a;
    default: return (int64_t)o->a;
    }
}

int dloc_prog_add(struct dloc *d, const char *fmt, ...)
{
    size_t at = strlen(d->prog);
    char tok[64];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tok, sizeof tok, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof tok || at + (at > 0) + (size_t)n > VPF_EXPR_MAX_LEN)
        return -1;
    snprintf(d->prog + at, sizeof d->prog - at, "%s%s", at ? " " : "", tok);
    return 0;
}

int dloc_prog_base(struct dloc *d, char base, unsigned reg, int64_t k)
{
    char r[8] = "";
    if (base == 'r')
        snprintf(r, sizeof r, "%u", reg);
    if (!k)
        return dloc_prog_add(d, "%c%s", base, r);
    return dloc_prog_add(d, "%c%s%+lld", base, r, (long long)k);
}

static int is_compare(Dwarf_Small a)
{
    return a == DW_OP_eq || a == DW_OP_ne || a == DW_OP_lt || a == DW_OP_gt ||
           a == DW_OP_le || a == DW_OP_ge;
}

/* The binary and unary DWARF operations with a word of the same meaning
 * (value_read.c's evaluator gives them DWARF's semantics). */
static const char *simple_word(Dwarf_Small a)
{
    switch (a) {
    case DW_OP_plus: return "add";
    case DW_OP_minus: return "sub";
    case DW_OP_mul: return "mul";
    case DW_OP_div: return "div";
    case DW_OP_mod: return "mod";
    case DW_OP_and: return "and";
    case DW_OP_or: return "or";
    case DW_OP_xor: return "xor";
    case DW_OP_shl: return "shl";
    case DW_OP_shr: return "shr";
    case DW_OP_shra: return "shra";
    case DW_OP_eq: return "eq";
    case DW_OP_ne: return "ne";
    case DW_OP_lt: return "lt";
    case DW_OP_gt: return "gt";
    case DW_OP_le: return "le";
    case DW_OP_ge: return "ge";
    case DW_OP_neg: return "neg";
    case DW_OP_not: return "not";
    case DW_OP_abs: return "abs";
    case DW_OP_dup: return "dup";
    case DW_OP_drop: return "drop";
    case DW_OP_swap: return "swap";
    case DW_OP_over: return "over";
    case DW_OP_rot: return "rot";
    default: return NULL;
    }
}

/* The static type of a stack word: DWARF's generic word (size 0, signed
 * in gdb's evaluation), or the integer base type of a DW_OP_convert. The
 * runtime's evaluator has 64-bit words only, so a typed word is kept
 * normalized (zero- or sign-extended from its size) and an operation on it
 * gets the same result as on the type only where the low bits decide: the
 * rest is refused (typed_ok). */
struct wtype { uint8_t size, sign; };

/* The base type of a DW_OP_convert operand (CU-relative DIE offset; 0 is
 * the generic type). 0, or -1 for anything but an integer type of 1, 2, 4
 * or 8 bytes. */
static int convert_type(Dwarf_Debug dbg, Dwarf_Die die, Dwarf_Unsigned rel,
                        struct wtype *t)
{
    Dwarf_Off cu = 0, len = 0;
    Dwarf_Error err = NULL;
    Dwarf_Unsigned enc = 0, size = 0;
    *t = (struct wtype){0, 0};
    if (rel == 0)
        return 0;
    if (dwarf_die_CU_offset_range(die, &cu, &len, &err) != DW_DLV_OK || rel >= len)
        return -1;              /* (err is freed with the Dwarf_Debug) */
    Dwarf_Die td = dw_offdie(dbg, cu + rel);
    if (!td)
        return -1;
    int ok = dw_tag(td) == DW_TAG_base_type &&
             dw_udata(dbg, td, DW_AT_encoding, &enc) == 0 &&
             dw_udata(dbg, td, DW_AT_byte_size, &size) == 0 &&
             (size == 1 || size == 2 || size == 4 || size == 8) &&
             (enc == DW_ATE_signed || enc == DW_ATE_signed_char || enc == DW_ATE_unsigned ||
              enc == DW_ATE_unsigned_char || enc == DW_ATE_boolean);
    dwarf_dealloc_die(td);
    if (!ok)
        return -1;
    t->size = (uint8_t)size;
    t->sign = enc == DW_ATE_signed || enc == DW_ATE_signed_char;
    return 0;
}

/* Tokens that normalize the top word to type t (nothing for 8 bytes and
 * the generic word). */
static int narrow(struct dloc *d, struct wtype t)
{
    if (!t.size || t.size == 8)
        return 0;
    unsigned bits = 64 - 8u * t.size;
    if (t.sign)
        return dloc_prog_add(d, "#%u", bits) || dloc_prog_add(d, "shl") ||
               dloc_prog_add(d, "#%u", bits) || dloc_prog_add(d, "shra");
    return dloc_prog_add(d, "#%llu", (1ull << (8 * t.size)) - 1) || dloc_prog_add(d, "and");
}

/* Whether the evaluator's 64-bit operation a (DWARF op) on normalized
 * words of type t gives what gdb computes in t. Add, subtract, multiply,
 * the bitwise operations and shl depend only on the low bits; the others
 * on signedness, which the evaluator fixes (div, comparisons, abs signed;
 * mod, shr unsigned; shra arithmetic); div on an unsigned type becomes
 * udiv. */
static int typed_ok(Dwarf_Small a, struct wtype t)
{
    if (!t.size)
        return 1;
    switch (a) {
    case DW_OP_shr: return !t.sign;
    case DW_OP_shra: return t.sign || t.size == 8;
    case DW_OP_mod: return !t.sign;
    case DW_OP_div: return 1;   /* (udiv when unsigned) */
    case DW_OP_lt: case DW_OP_gt: case DW_OP_le: case DW_OP_ge:
    case DW_OP_abs:
        return t.sign || t.size < 8;
    default: return 1;
    }
}

static int is_binary(Dwarf_Small a)
{
    return a == DW_OP_plus || a == DW_OP_minus || a == DW_OP_mul || a == DW_OP_div ||
           a == DW_OP_mod || a == DW_OP_and || a == DW_OP_or || a == DW_OP_xor ||
           a == DW_OP_shl || a == DW_OP_shr || a == DW_OP_shra || is_compare(a);
}

/* One DWARF operation as program tokens, with the type stack ty of *sp
 * words kept up to date. 0, or -1 (unsupported, or past a limit). */
static int op_to_prog(Dwarf_Debug dbg, Dwarf_Die die, const struct op *o,
                      struct dloc *d, struct wtype *ty, unsigned *sp)
{
    static const struct wtype generic = {0, 0};
    Dwarf_Small a = o->atom;
    unsigned n = *sp;
    struct wtype t;
    int rc;
    if (a == DW_OP_nop)
        return 0;
    if (a == DW_OP_convert || a == DW_OP_GNU_convert) {
        if (!n || convert_type(dbg, die, o->a, &t) != 0)
            return -1;
        /* (a word already of that type, or narrower of the same kind, is
         * normalized for it) */
        struct wtype c = ty[n - 1];
        int same = c.size && c.size <= (t.size ? t.size : 8) && c.sign == t.sign;
        if (!same && narrow(d, t))
            return -1;
        ty[n - 1] = t;
        return 0;
    }
    if (is_binary(a) || a == DW_OP_plus_uconst) {
        struct wtype x = a == DW_OP_plus_uconst ? generic : n >= 2 ? ty[n - 2] : generic;
        struct wtype y = n ? ty[n - 1] : generic;
        if (!n || (a != DW_OP_plus_uconst && n < 2) ||
            (x.size && y.size && (x.size != y.size || x.sign != y.sign)))
            return -1;
        t = x.size ? x : y;
        if (!typed_ok(a, t))
            return -1;
        rc = a == DW_OP_plus_uconst ? dloc_prog_add(d, "#%lld", (long long)o->a) ||
                                      dloc_prog_add(d, "add")
                                    : dloc_prog_add(d, "%s", a == DW_OP_div && t.size && !t.sign
                                                             ? "udiv" : simple_word(a));
        /* (and, or, xor of normalized words are normalized) */
        int keeps = is_compare(a) || a == DW_OP_and || a == DW_OP_or || a == DW_OP_xor;
        if (rc || (!keeps && narrow(d, t)))
            return -1;
        if (a != DW_OP_plus_uconst)
            n--;
        ty[n - 1] = is_compare(a) ? generic : t;
        *sp = n;
        return 0;
    }
    if (a == DW_OP_neg || a == DW_OP_not || a == DW_OP_abs) {
        if (!n || !typed_ok(a, ty[n - 1]) || dloc_prog_add(d, "%s", simple_word(a)) ||
            narrow(d, ty[n - 1]))
            return -1;
        return 0;
    }
    /* the rest push a word, read memory or move words */
    if (is_const_op(a))
        rc = dloc_prog_add(d, "#%lld", (long long)const_val(o));
    else if (a >= DW_OP_breg0 && a <= DW_OP_breg31 && a - DW_OP_breg0 <= VPF_RIP)
        rc = dloc_prog_base(d, 'r', a - DW_OP_breg0, (int64_t)o->a);
    else if (a == DW_OP_bregx && o->a <= VPF_RIP)
        rc = dloc_prog_base(d, 'r', (unsigned)o->a, (int64_t)o->b);
    else if (a == DW_OP_fbreg) {
        d->fb = 1;
        rc = dloc_prog_base(d, 'f', 0, (int64_t)o->a);
    } else if (a == DW_OP_addr && (int64_t)o->a >= 0)
        rc = dloc_prog_add(d, "a%lld", (long long)o->a);
    else if (a == DW_OP_addrx || a == DW_OP_GNU_addr_index) {
        Dwarf_Addr addr = 0;
        Dwarf_Error err = NULL;
        rc = dwarf_debug_addr_index_to_addr(die, o->a, &addr, &err) != DW_DLV_OK ||
             (int64_t)addr < 0 || dloc_prog_add(d, "a%lld", (long long)addr);
    } else if (a == DW_OP_deref || (a == DW_OP_deref_size &&
               (o->a == 1 || o->a == 2 || o->a == 4 || o->a == 8))) {
        if (!n || dloc_prog_add(d, "d%u", a == DW_OP_deref ? 8u : (unsigned)o->a))
            return -1;
        ty[n - 1] = generic;
        return 0;
    } else if (a == DW_OP_dup || a == DW_OP_over || (a == DW_OP_pick && o->a < n)) {
        unsigned from = a == DW_OP_dup ? 0 : a == DW_OP_over ? 1 : (unsigned)o->a;
        if (from >= n || n >= VPF_EXPR_MAX_STACK)
            return -1;
        if (a == DW_OP_pick ? dloc_prog_add(d, "k%u", from) : dloc_prog_add(d, "%s", simple_word(a)))
            return -1;
        ty[n] = ty[n - 1 - from];
        *sp = n + 1;
        return 0;
    } else if (a == DW_OP_drop || a == DW_OP_swap || a == DW_OP_rot) {
        unsigned need = a == DW_OP_drop ? 1 : a == DW_OP_swap ? 2 : 3;
        if (n < need || dloc_prog_add(d, "%s", simple_word(a)))
            return -1;
        if (a == DW_OP_drop) {
            *sp = n - 1;
        } else if (a == DW_OP_swap) {
            t = ty[n - 1]; ty[n - 1] = ty[n - 2]; ty[n - 2] = t;
        } else {                /* the top becomes the third */
            t = ty[n - 1]; ty[n - 1] = ty[n - 2]; ty[n - 2] = ty[n - 3]; ty[n - 3] = t;
        }
        return 0;
    } else {
        return -1;
    }
    if (rc || n >= VPF_EXPR_MAX_STACK)
        return -1;
    ty[n] = generic;
    *sp = n + 1;
    return 0;
}

/* The n operations o as an EXPR program: a computed value (the operations
 * before DW_OP_stack_value), or, with mem, the address of a memory
 * location (place.c adds the read). 0, or -1 with the first operation it
 * cannot translate in *bad_op (0: the program breaks a limit of §2.1). */
static int ops_to_prog(Dwarf_Debug dbg, Dwarf_Die die, const struct op *o, size_t n,
                       int mem, struct dloc *d, unsigned *bad_op)
{
    struct wtype ty[VPF_EXPR_MAX_STACK];
    unsigned sp = 0;
    d->loc = VPF_LOC_EXPR;
    d->mem = mem;
    d->prog[0] = 0;
    d->fb = 0;
    for (size_t i = 0; i < n; i++)
        if (op_to_prog(dbg, die, &o[i], d, ty, &sp) != 0) {
            *bad_op = o[i].atom;
            return -1;
        }
    if (vpf_expr_check(d->prog)) {
        *bad_op = 0;
        return -1;
    }
    return 0;
}

/* One segment (the ops before a DW_OP_piece, or the whole expression). */
static int seg_eval(Dwarf_Debug dbg, Dwarf_Die die, const struct op *o, size_t n,
                    struct dloc *d, enum why *why, unsigned *bad_op)
{
    memset(d, 0, sizeof *d);
    if (n == 1) {
        Dwarf_Small a = o[0].atom;
        if (a == DW_OP_addr) {
            d->loc = VPF_LOC_ADDR;
            d->offset = (int64_t)o[0].a;
            return 0;
        }
        if (a == DW_OP_addrx || a == DW_OP_GNU_addr_index) {
            /* DWARF 5 (clang): an index into the CU's .debug_addr */
            Dwarf_Addr addr = 0;
            Dwarf_Error err = NULL;
            if (dwarf_debug_addr_index_to_addr(die, o[0].a, &addr, &err)
                == DW_DLV_OK) {
                d->loc = VPF_LOC_ADDR;
                d->offset = (int64_t)addr;
                return 0;
            }
        }
        if (a >= DW_OP_reg0 && a <= DW_OP_reg31) {
            d->loc = VPF_LOC_REG;
            d->reg = a - DW_OP_reg0;
            return 0;
        }
        if (a == DW_OP_regx && o[0].a <= 255) {
            d->loc = VPF_LOC_REG;
            d->reg = (uint8_t)o[0].a;
            return 0;
        }
        if (a >= DW_OP_breg0 && a <= DW_OP_breg31) {
            d->loc = VPF_LOC_BREG;
            d->reg = a - DW_OP_breg0;
            d->offset = (int64_t)o[0].a;
            return 0;
        }
        if (a == DW_OP_bregx && o[0].a <= 255) {
            d->loc = VPF_LOC_BREG;
            d->reg = (uint8_t)o[0].a;
            d->offset = (int64_t)o[0].b;
            return 0;
        }
        if (a == DW_OP_fbreg) {
            d->loc = VPF_LOC_FBREG;
            d->fb = 1;
            d->offset = (int64_t)o[0].a;
            return 0;
        }
        if (a == DW_OP_implicit_value && o[0].a >= 1 && o[0].a <= 8 &&
            o[0].b) {
            /* operand 2 points at the value bytes (little-endian) */
            uint64_t v = 0;
            memcpy(&v, (const void *)(uintptr_t)o[0].b, (size_t)o[0].a);
            d->loc = VPF_LOC_CONST;
            d->offset = (int64_t)v;
            return 0;
        }
    } else if (n == 2 && o[1].atom == DW_OP_stack_value) {
        if (is_const_op(o[0].atom)) {
            d->loc = VPF_LOC_CONST;
            d->offset = const_val(&o[0]);
            return 0;
        }
        /* "register N plus 0, as a value" is just register N */
        if (o[0].atom >= DW_OP_breg0 && o[0].atom <= DW_OP_breg31 &&
            o[0].a == 0) {
            d->loc = VPF_LOC_REG;
            d->reg = o[0].atom - DW_OP_breg0;
            return 0;
        }
        /* "register N plus k" or "frame base plus k", as a value: an
         * address, typically a pointer parameter of an inlined copy that
         * points at its caller's stack object. Useless as a number (it
         * moves with ASLR), but what it points at is memory at that
         * address: place.c uses it only to follow the pointer. */
        if (o[0].atom >= DW_OP_breg0 && o[0].atom <= DW_OP_breg31) {
            d->loc = VPF_LOC_BREG;
            d->reg = o[0].atom - DW_OP_breg0;
            d->offset = (int64_t)o[0].a;
            d->addr_val = 1;
            return 0;
        }
        if (o[0].atom == DW_OP_fbreg) {
            d->loc = VPF_LOC_FBREG;
            d->fb = 1;
            d->offset = (int64_t)o[0].a;
            d->addr_val = 1;
            return 0;
        }
    }
    /* A value the program computes from registers or memory ("rdx - 1",
     * "rax & 0xff"): a program for the runtime's evaluator, when its
     * operations are ones it has. */
    if (n >= 2 && o[n - 1].atom == DW_OP_stack_value) {
        *why = WHY_COMPUTED;
        return ops_to_prog(dbg, die, o, n - 1, 0, d, bad_op);
    }
    /* A memory location at an address computed from several operations
     * ("rbx * 8 + r12": an array element the compiler addresses): the
     * program computes the address, the read is added by place.c. */
    *why = WHY_UNSUPPORTED_OP;
    *bad_op = 0;
    if (n >= 2 && ops_to_prog(dbg, die, o, n, 1, d, bad_op) == 0)
        return 0;
    memset(d, 0, sizeof *d);
    if (*bad_op)
        return -1;              /* (the operation it could not translate) */
    /* Anything else is an operation vprof does not know. */
    *bad_op = n ? o[0].atom : 0;
    for (size_t i = 0; i < n; i++) {
        Dwarf_Small a = o[i].atom;
        int known = a == DW_OP_addr || (a >= DW_OP_reg0 && a <= DW_OP_bregx) ||
                    a == DW_OP_fbreg || is_const_op(a) ||
                    a == DW_OP_stack_value;
        if (!known) {
            *bad_op = a;
            break;
        }
    }
    return -1;
}

int locexpr_eval(Dwarf_Debug dbg, Dwarf_Die die, Dwarf_Locdesc_c desc, Dwarf_Unsigned n_ops,
                 int64_t want_off, unsigned want_size, struct dloc *d,
                 enum why *why, unsigned *bad_op)
{
    struct op ops[MAX_OPS];
    Dwarf_Error err = NULL;

    if (n_ops == 0) {
        *why = WHY_OPTIMIZED_OUT;
        return -1;
    }
    if (n_ops > MAX_OPS) {
        *why = WHY_UNSUPPORTED_OP;
        *bad_op = 0;
        return -1;
    }
    for (Dwarf_Unsigned i = 0; i < n_ops; i++) {
        Dwarf_Unsigned a = 0, b = 0, c = 0, r1, r2, r3, br;
        Dwarf_Small atom = 0;
        if (dwarf_get_location_op_value_d(desc, i, &atom, &a, &b, &c, &r1,
                                          &r2, &r3, &br, &err) != DW_DLV_OK) {
            /* err belongs to the Dwarf_Debug; freed at dwarf_finish */
            *why = WHY_UNSUPPORTED_OP;
            *bad_op = 0;
            return -1;
        }
        ops[i].atom = atom;
        ops[i].a = a;
        ops[i].b = b;
    }
    /* An entry value or a TLS address anywhere disqualifies the whole
     * expression, even a piece that looks readable: gdb treats the whole
     * variable as unavailable then, and gdb is the reference. */
    for (Dwarf_Unsigned i = 0; i < n_ops; i++) {
        if (ops[i].atom == DW_OP_entry_value ||
            ops[i].atom == DW_OP_GNU_entry_value) {
            *why = WHY_ENTRY_VALUE;
            return -1;
        }
        if (ops[i].atom == DW_OP_GNU_push_tls_address ||
            ops[i].atom == DW_OP_form_tls_address) {
            *why = WHY_TLS;
            return -1;
        }
    }

    /* Split at DW_OP_piece; choose the piece holding the wanted bytes. */
    size_t seg = 0;
    int64_t pstart = 0;
    int saw_piece = 0;
    for (size_t i = 0; i <= n_ops; i++) {
        if (i < n_ops && ops[i].atom == DW_OP_bit_piece) {
            *why = WHY_PIECE;
            return -1;
        }
        if (i < n_ops && ops[i].atom != DW_OP_piece)
            continue;
        if (i == n_ops && saw_piece)
            break;              /* trailing ops after the last piece: none */
        uint64_t psize = i < n_ops ? ops[i].a : 0;
        int whole = i == n_ops;  /* no DW_OP_piece at all */
        saw_piece |= !whole;
        if (whole || (want_off >= pstart &&
                      want_off + (int64_t)want_size <= pstart + (int64_t)psize)) {
            if (i == seg) {     /* empty piece: this part is optimized out */
                *why = WHY_OPTIMIZED_OUT;
                return -1;
            }
            if (seg_eval(dbg, die, ops + seg, i - seg, d, why, bad_op) != 0)
                return -1;
            int64_t delta = want_off - pstart;
            d->piece_start = pstart;
            d->piece_size = psize;
            if (d->loc == VPF_LOC_CONST) {
                if (delta > 0)
                    d->offset = delta >= 8 ? 0
                              : (int64_t)((uint64_t)d->offset >> (8 * delta));
            } else if (d->loc == VPF_LOC_EXPR && d->mem) {
                /* the wanted bytes are further on in memory */
                if (delta > 0 && (dloc_prog_add(d, "#%lld", (long long)delta) ||
                                  dloc_prog_add(d, "add"))) {
                    *why = WHY_PIECE;
                    return -1;
                }
            } else if (d->loc == VPF_LOC_EXPR) {
                /* the wanted bytes of the piece's value */
                if (delta > 0 && (delta >= 8 || dloc_prog_add(d, "#%d", (int)(8 * delta)) ||
                                  dloc_prog_add(d, "shr"))) {
                    *why = WHY_PIECE;
                    return -1;
                }
            } else {
                /* REG: byte offset within the register; memory: address */
                d->offset += delta;
            }
            return 0;
        }
        pstart += (int64_t)psize;
        seg = i + 1;
    }
    /* bytes past the last piece are undefined, i.e. optimized out */
    *why = want_off >= pstart ? WHY_OPTIMIZED_OUT : WHY_PIECE;
    return -1;
}

int frame_base_read(Dwarf_Debug dbg, Dwarf_Die subprogram,
                    struct frame_base *fb)
{
    Dwarf_Attribute at = NULL;
    Dwarf_Error err = NULL;
    Dwarf_Loc_Head_c head = NULL;
    Dwarf_Unsigned count = 0;

    memset(fb, 0, sizeof *fb);
    if (dwarf_attr(subprogram, DW_AT_frame_base, &at, &err) != DW_DLV_OK) {
        if (err)
            dwarf_dealloc_error(dbg, err);
        return -1;
    }
    fb->kind = FB_BAD;
    if (dwarf_get_loclist_c(at, &head, &count, &err) == DW_DLV_OK) {
        Dwarf_Small lle = 0, src = 0;
        Dwarf_Unsigned rlo, rhi, nops = 0, eoff, loff;
        Dwarf_Bool unavail = 0;
        Dwarf_Addr lo, hi;
        Dwarf_Locdesc_c desc = NULL;
        /* A location *list* frame base is rare (old gcc); not supported. */
        if (count == 1 &&
            dwarf_get_locdesc_entry_d(head, 0, &lle, &rlo, &rhi, &unavail,
                &lo, &hi, &nops, &desc, &src, &eoff, &loff, &err) == DW_DLV_OK
            && src == 0 && nops == 1) {
            Dwarf_Small atom = 0;
            Dwarf_Unsigned a = 0, b, c, r1, r2, r3, br;
            if (dwarf_get_location_op_value_d(desc, 0, &atom, &a, &b, &c, &r1,
                    &r2, &r3, &br, &err) == DW_DLV_OK) {
                if (atom == DW_OP_call_frame_cfa) {
                    fb->kind = FB_CFA;
                } else if (atom >= DW_OP_reg0 && atom <= DW_OP_reg31) {
                    fb->kind = FB_REG;
                    fb->reg = atom - DW_OP_reg0;
                } else if (atom >= DW_OP_breg0 && atom <= DW_OP_breg31) {
                    fb->kind = FB_BREG;
                    fb->reg = atom - DW_OP_breg0;
                    fb->off = (int64_t)a;
                }
            }
        }
        dwarf_loc_head_c_dealloc(head);
    }
    if (err)
        dwarf_dealloc_error(dbg, err);
    dwarf_dealloc_attribute(at);
    return 0;
}
