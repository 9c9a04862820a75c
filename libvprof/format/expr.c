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
    while (is_digit(s[p])) {
        if (p - start >= 19)
            return -1;
        unsigned d = (unsigned)(s[p] - '0');
        if (v > (lim - d) / 10)
            return -1;
        v = v * 10 + d;
        p++;
    }
    if (p == start)
        return -1;
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    *i = p;
    return 0;
}

/* A word (letters only, at most 4) at s[*i]: its op, or 0. */
static int parse_word(const char *s, uint32_t *i)
{
    uint32_t n = 0;
    while (n < 5 && s[*i + n] >= 'a' && s[*i + n] <= 'z')
        n++;
    for (int op = VPF_X_ADD; op < VPF_X_N; op++) {
        const char *w = words[op];
        uint32_t k = 0;
        while (k < n && w[k] == s[*i + k])
            k++;
        if (k == n && w[k] == 0) {
            *i += n;
            return op;
        }
    }
    return 0;
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
    unsigned o = in->op;
    *pops = 0;
    *pushes = 0;
    if (o >= VPF_X_CONST && o <= VPF_X_ADDR)
        *pushes = 1;
    else if (o == VPF_X_DEREF)
        *pops = *pushes = 1;
    else if (o == VPF_X_PICK) {
        /* it reads word k without removing it: "pops" k + 1, puts them back */
        *pops = (unsigned)in->k + 1;
        *pushes = *pops + 1;
    } else if (o >= VPF_X_ADD && o <= VPF_X_GE) {
        *pops = 2;
        *pushes = 1;
    } else if (o >= VPF_X_NEG && o <= VPF_X_ABS) {
        *pops = *pushes = 1;
    } else if (o == VPF_X_DUP) {
        *pops = 1;
        *pushes = 2;
    } else if (o == VPF_X_DROP) {
        *pops = 1;
    } else if (o == VPF_X_SWAP) {
        *pops = *pushes = 2;
    } else if (o == VPF_X_OVER) {
        *pops = 2;
        *pushes = 3;
    } else if (o == VPF_X_ROT) {
        *pops = *pushes = 3;
    }
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
