/* expr.c - the expression programs of EXPR location entries (FORMATS.md
 * §2.1): the one decoder of their tokens, the load-time checker and the
 * printer.
 *
 * vpf_expr_next and vpf_expr_check run in the runtime (the checker when the
 * metadata is loaded, the decoder in the SIGPROF handler), so they call
 * nothing: no libc, no allocation. Every token has a bounded length and the
 * string table ends with a NUL (vpf_meta_parse checks it), so decoding
 * cannot run off the table whatever the bytes are. */
#include <stdio.h>
#include <string.h>

#include "vprof_format.h"

static const char *const words[VPF_X_N] = {
    [VPF_X_ADD] = "add", [VPF_X_SUB] = "sub", [VPF_X_MUL] = "mul", [VPF_X_DIV] = "div", [VPF_X_UDIV] = "udiv",
    [VPF_X_MOD] = "mod", [VPF_X_AND] = "and", [VPF_X_OR] = "or", [VPF_X_XOR] = "xor",
    [VPF_X_SHL] = "shl", [VPF_X_SHR] = "shr", [VPF_X_SHRA] = "shra", [VPF_X_EQ] = "eq",
    [VPF_X_NE] = "ne", [VPF_X_LT] = "lt", [VPF_X_GT] = "gt", [VPF_X_LE] = "le",
    [VPF_X_GE] = "ge", [VPF_X_NEG] = "neg", [VPF_X_NOT] = "not", [VPF_X_ABS] = "abs",
    [VPF_X_DUP] = "dup", [VPF_X_DROP] = "drop", [VPF_X_SWAP] = "swap",
    [VPF_X_OVER] = "over", [VPF_X_ROT] = "rot",
};

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* A decimal integer with an optional sign at s[*i], in int64 range (at
 * most 19 digits, so the loop is bounded). */
static int parse_int(const char *s, uint32_t *i, int64_t *out)
{
    uint32_t p = *i;
    int neg = 0;
    if (s[p] == '-' || s[p] == '+')
        neg = s[p++] == '-';
    uint64_t v = 0, lim = neg ? (1ull << 63) : (1ull << 63) - 1;
    uint32_t start = p;
    while (is_digit(s[p])) {    /* (19 digits cannot overflow 64 bits) */
        if (p - start >= 19)
            return -1;
        v = v * 10 + (unsigned)(s[p] - '0');
        p++;
    }
    if (p == start || v > lim)
        return -1;
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    *i = p;
    return 0;
}

/* A word's letters packed into one number, first letter lowest. */
#define W4(a, b, c, d) ((uint32_t)(a) | (uint32_t)(b) << 8 | (uint32_t)(c) << 16 | (uint32_t)(d) << 24)

/* A word (letters only, at most 4) at s[*i]: its op, or 0. Packed and
 * switched on, so that a tick decodes a word in a few instructions. */
static int parse_word(const char *s, uint32_t *i)
{
    uint32_t n = 0, key = 0;
    while (n < 5 && s[*i + n] >= 'a' && s[*i + n] <= 'z') {
        if (n < 4)
            key |= (uint32_t)(unsigned char)s[*i + n] << (8 * n);
        n++;
    }
    if (n > 4)
        return 0;
    int op;
    switch (key) {
    case W4('a', 'd', 'd', 0): op = VPF_X_ADD; break;
    case W4('s', 'u', 'b', 0): op = VPF_X_SUB; break;
    case W4('m', 'u', 'l', 0): op = VPF_X_MUL; break;
    case W4('d', 'i', 'v', 0): op = VPF_X_DIV; break;
    case W4('u', 'd', 'i', 'v'): op = VPF_X_UDIV; break;
    case W4('m', 'o', 'd', 0): op = VPF_X_MOD; break;
    case W4('a', 'n', 'd', 0): op = VPF_X_AND; break;
    case W4('o', 'r', 0, 0): op = VPF_X_OR; break;
    case W4('x', 'o', 'r', 0): op = VPF_X_XOR; break;
    case W4('s', 'h', 'l', 0): op = VPF_X_SHL; break;
    case W4('s', 'h', 'r', 0): op = VPF_X_SHR; break;
    case W4('s', 'h', 'r', 'a'): op = VPF_X_SHRA; break;
    case W4('e', 'q', 0, 0): op = VPF_X_EQ; break;
    case W4('n', 'e', 0, 0): op = VPF_X_NE; break;
    case W4('l', 't', 0, 0): op = VPF_X_LT; break;
    case W4('g', 't', 0, 0): op = VPF_X_GT; break;
    case W4('l', 'e', 0, 0): op = VPF_X_LE; break;
    case W4('g', 'e', 0, 0): op = VPF_X_GE; break;
    case W4('n', 'e', 'g', 0): op = VPF_X_NEG; break;
    case W4('n', 'o', 't', 0): op = VPF_X_NOT; break;
    case W4('a', 'b', 's', 0): op = VPF_X_ABS; break;
    case W4('d', 'u', 'p', 0): op = VPF_X_DUP; break;
    case W4('d', 'r', 'o', 'p'): op = VPF_X_DROP; break;
    case W4('s', 'w', 'a', 'p'): op = VPF_X_SWAP; break;
    case W4('o', 'v', 'e', 'r'): op = VPF_X_OVER; break;
    case W4('r', 'o', 't', 0): op = VPF_X_ROT; break;
    default: return 0;
    }
    *i += n;
    return op;
}

int vpf_expr_next(const char *s, uint32_t *pos, struct vpf_xins *in)
{
    uint32_t i = *pos;
    if (i > VPF_EXPR_MAX_LEN)
        return -1;
    char c = s[i];
    if (c == 0)
        return 0;
    in->reg = 0;
    in->k = 0;
    char c1 = s[i + 1];
    if (c == '#') {
        i++;
        in->op = VPF_X_CONST;
        if (parse_int(s, &i, &in->k) < 0)
            return -1;
    } else if (c == 'r' && is_digit(c1)) {
        int64_t reg;
        i++;
        if (parse_int(s, &i, &reg) < 0 || reg > VPF_RIP)
            return -1;
        in->op = VPF_X_REG;
        in->reg = (uint8_t)reg;
        if ((s[i] == '+' || s[i] == '-') && parse_int(s, &i, &in->k) < 0)
            return -1;
    } else if (c == 'f' && (c1 == 0 || c1 == ' ' || c1 == '+' || c1 == '-')) {
        i++;
        in->op = VPF_X_FB;
        if ((c1 == '+' || c1 == '-') && parse_int(s, &i, &in->k) < 0)
            return -1;
    } else if ((c == 'a' || c == 'd' || c == 'k') && is_digit(c1)) {
        i++;
        if (parse_int(s, &i, &in->k) < 0)
            return -1;
        in->op = c == 'a' ? VPF_X_ADDR : c == 'd' ? VPF_X_DEREF : VPF_X_PICK;
        if (c == 'd' && in->k != 1 && in->k != 2 && in->k != 4 && in->k != 8)
            return -1;
        if (c == 'k' && in->k >= VPF_EXPR_MAX_STACK)
            return -1;
    } else if (!(in->op = (uint8_t)parse_word(s, &i))) {
        return -1;
    }
    if (s[i] == ' ') {          /* one space, then another token */
        i++;
        if (s[i] == 0 || s[i] == ' ')
            return -1;
    } else if (s[i] != 0) {
        return -1;
    }
    *pos = i;
    return 1;
}

void vpf_expr_effect(const struct vpf_xins *in, unsigned *pops, unsigned *pushes)
{
    static const uint8_t eff[VPF_X_N][2] = {
        [VPF_X_CONST] = {0, 1}, [VPF_X_REG] = {0, 1}, [VPF_X_FB] = {0, 1},
        [VPF_X_ADDR] = {0, 1}, [VPF_X_DEREF] = {1, 1},
        [VPF_X_ADD] = {2, 1}, [VPF_X_SUB] = {2, 1}, [VPF_X_MUL] = {2, 1}, [VPF_X_DIV] = {2, 1},
        [VPF_X_UDIV] = {2, 1}, [VPF_X_MOD] = {2, 1}, [VPF_X_AND] = {2, 1}, [VPF_X_OR] = {2, 1},
        [VPF_X_XOR] = {2, 1}, [VPF_X_SHL] = {2, 1}, [VPF_X_SHR] = {2, 1}, [VPF_X_SHRA] = {2, 1},
        [VPF_X_EQ] = {2, 1}, [VPF_X_NE] = {2, 1}, [VPF_X_LT] = {2, 1}, [VPF_X_GT] = {2, 1},
        [VPF_X_LE] = {2, 1}, [VPF_X_GE] = {2, 1},
        [VPF_X_NEG] = {1, 1}, [VPF_X_NOT] = {1, 1}, [VPF_X_ABS] = {1, 1},
        [VPF_X_DUP] = {1, 2}, [VPF_X_DROP] = {1, 0}, [VPF_X_SWAP] = {2, 2},
        [VPF_X_OVER] = {2, 3}, [VPF_X_ROT] = {3, 3},
    };
    if (in->op == VPF_X_PICK) {
        uint64_t k = (uint64_t)in->k < VPF_EXPR_MAX_STACK ? (uint64_t)in->k : VPF_EXPR_MAX_STACK;
        *pops = (unsigned)k + 1;
        *pushes = (unsigned)k + 2;
        return;
    }
    *pops = in->op < VPF_X_N ? eff[in->op][0] : 0;
    *pushes = in->op < VPF_X_N ? eff[in->op][1] : 0;
}

const char *vpf_expr_check(const char *s)
{
    struct vpf_xins in;
    uint32_t pos = 0;
    unsigned depth = 0, n = 0;
    int rc;
    while ((rc = vpf_expr_next(s, &pos, &in)) == 1) {
        unsigned pops, pushes;
        if (++n > VPF_EXPR_MAX_OPS)
            return "program too long (more than 32 operations)";
        vpf_expr_effect(&in, &pops, &pushes);
        if (pops > depth)
            return "stack underflow";
        depth = depth - pops + pushes;
        if (depth > VPF_EXPR_MAX_STACK)
            return "stack overflow (more than 8 words)";
    }
    if (rc < 0)
        return pos > VPF_EXPR_MAX_LEN ? "program too long (more than 255 bytes)"
                                      : "malformed operation";
    if (n == 0)
        return "empty program";
    if (depth == 0)
        return "no value left on the stack";
    return NULL;
}

const char *vpf_reg_name(unsigned reg)
{
    static const char *const gpr[] = {
        "rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp", "r8", "r9",
        "r10", "r11", "r12", "r13", "r14", "r15", "rip",
    };
    static const char *const xmm[] = {
        "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8",
        "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15",
    };
    if (reg <= VPF_RIP)
        return gpr[reg];
    if (reg >= VPF_XMM0 && reg <= VPF_XMM15)
        return xmm[reg - VPF_XMM0];
    return NULL;
}

/* Appends one token's readable form. */
static int format_one(const struct vpf_xins *in, char *buf, size_t len)
{
    switch (in->op) {
    case VPF_X_CONST:
        return snprintf(buf, len, "%lld", (long long)in->k);
    case VPF_X_REG:
    case VPF_X_FB: {
        const char *base = in->op == VPF_X_FB ? "fb" : vpf_reg_name(in->reg);
        if (!in->k)
            return snprintf(buf, len, "%s", base);
        return snprintf(buf, len, "%s%+lld", base, (long long)in->k);
    }
    case VPF_X_ADDR:
        return snprintf(buf, len, "0x%llx", (unsigned long long)in->k);
    case VPF_X_DEREF:
        return snprintf(buf, len, "deref%lld", (long long)in->k);
    case VPF_X_PICK:
        return snprintf(buf, len, "pick%lld", (long long)in->k);
    default:
        return snprintf(buf, len, "%s", in->op < VPF_X_N && words[in->op] ? words[in->op] : "?");
    }
}

void vpf_expr_format(const char *s, char *buf, size_t len)
{
    struct vpf_xins in;
    uint32_t pos = 0;
    size_t at = 0;
    int rc;
    if (!len)
        return;
    buf[0] = 0;
    while ((rc = vpf_expr_next(s, &pos, &in)) == 1 && at < len) {
        int w = format_one(&in, buf + at + (at > 0), len - at - (at > 0));
        if (at > 0)
            buf[at] = ' ';
        at += (size_t)w + (at > 0);
    }
    if (rc < 0 && at < len)
        snprintf(buf + at, len - at, "%s<malformed>", at ? " " : "");
    buf[len - 1] = 0;
}
