/* meta.c - reader and writer of variable metadata (FORMATS.md §2), and
 * the decoder, checker and printer of its EXPR programs (§2.1).
 *
 * The reader runs inside the profiled process at start-up, so it uses no
 * stdio: the file is mapped and validated in place. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vprof_format.h"

_Static_assert(sizeof(struct vpf_meta_header) == 64, "meta header layout");
_Static_assert(sizeof(struct vpf_var_desc) == 32, "var desc layout");
_Static_assert(sizeof(struct vpf_loc_entry) == 48, "loc entry layout");

static int check_str(const struct vpf_meta_header *h, uint32_t off)
{
    return off < h->strtab_size;
}

int vpf_meta_parse(const void *buf, size_t len, const char *name,
                   struct vpf_meta *m, vpf_err *e)
{
    const unsigned char *b = buf;
    memset(m, 0, sizeof *m);
    if ((uintptr_t)buf % 8) {   /* records are read in place */
        vpf_set_err(e, "%s: metadata buffer is not 8-byte aligned", name);
        return -1;
    }
    if (len < sizeof(struct vpf_meta_header)) {
        vpf_set_err(e, "%s: offset 0: file too short for a metadata header (%zu bytes)", name, len);
        return -1;
    }
    memcpy(&m->hdr, b, sizeof m->hdr);
    const struct vpf_meta_header *h = &m->hdr;
    if (memcmp(h->magic, VPF_META_MAGIC, 8)) {
        vpf_set_err(e, "%s: offset 0: not a vprof metadata file (bad magic)", name);
        return -1;
    }
    if (h->version != VPF_META_VERSION) {
        vpf_set_err(e, "%s: offset 8: unsupported metadata version %u", name, h->version);
        return -1;
    }
    if (h->header_size < sizeof *h || h->header_size > len || h->header_size % 8) {
        vpf_set_err(e, "%s: offset 10: bad header size %u", name, h->header_size);
        return -1;
    }
    if (h->build_id_len > sizeof h->build_id) {
        vpf_set_err(e, "%s: offset 28: bad build-id length %u", name, h->build_id_len);
        return -1;
    }
    uint64_t vars_off = h->header_size;
    uint64_t ents_off = vars_off + (uint64_t)h->n_vars * sizeof(struct vpf_var_desc);
    uint64_t str_off = ents_off + (uint64_t)h->n_entries * sizeof(struct vpf_loc_entry);
    uint64_t end = str_off + h->strtab_size;
    if (end > len) {
        vpf_set_err(e, "%s: offset %zu: file truncated (header announces %llu bytes)", name,
                    len, (unsigned long long)end);
        return -1;
    }
    if (h->strtab_size == 0 || b[str_off] != 0 || b[end - 1] != 0) {
        vpf_set_err(e, "%s: offset %llu: string table must start and end with NUL", name,
                    (unsigned long long)str_off);
        return -1;
    }
    m->vars = (const struct vpf_var_desc *)(b + vars_off);
    m->entries = (const struct vpf_loc_entry *)(b + ents_off);
    m->strtab = (const char *)(b + str_off);
    for (uint32_t i = 0; i < h->n_vars; i++) {
        const struct vpf_var_desc *v = &m->vars[i];
        uint64_t off = vars_off + (uint64_t)i * sizeof *v;
        if (!check_str(h, v->file) || !check_str(h, v->function) ||
            !check_str(h, v->name) || !check_str(h, v->type)) {
            vpf_set_err(e, "%s: offset %llu: variable %u: string offset out of range", name,
                        (unsigned long long)off, i);
            return -1;
        }
        if (v->kind > VPF_KIND_BOOL || !(v->size == 1 || v->size == 2 || v->size == 4 ||
                                         v->size == 8)) {
            vpf_set_err(e, "%s: offset %llu: variable %u: bad kind %u or size %u", name,
                        (unsigned long long)off, i, v->kind, v->size);
            return -1;
        }
    }
    for (uint32_t i = 0; i < h->n_entries; i++) {
        const struct vpf_loc_entry *en = &m->entries[i];
        unsigned long long off = ents_off + (uint64_t)i * sizeof *en;
        const char *why = NULL;
        if (en->var >= h->n_vars)
            why = "variable index out of range";
        else if (en->pc_end <= en->pc_start)
            why = "empty or inverted PC range";
        else if (en->loc > VPF_LOC_EXPR)
            why = "unknown location kind";
        else if ((en->loc == VPF_LOC_REG || en->loc == VPF_LOC_BREG || en->loc == VPF_LOC_FBREG) &&
                 en->reg > VPF_XMM15)
            why = "register number out of range";
        else if (en->loc == VPF_LOC_EXPR && en->reg > VPF_RIP)
            why = "frame base register out of range";
        else if (en->loc == VPF_LOC_EXPR &&
                 (en->offset <= 0 || (uint64_t)en->offset >= h->strtab_size))
            why = "expression program offset out of range";
        else if (!(en->size == 1 || en->size == 2 || en->size == 4 || en->size == 8))
            why = "bad value size";
        if (why) {
            vpf_set_err(e, "%s: offset %llu: location entry %u: %s", name, off, i, why);
            return -1;
        }
    }
    return 0;
}

int vpf_meta_load(const char *path, struct vpf_meta *m, vpf_err *e)
{
    memset(m, 0, sizeof *m);
    size_t len;
    void *p = vpf_map_file(path, 1, &len, e);
    if (!p)
        return -1;
    if (vpf_meta_parse(p, len, path, m, e) < 0) {
        munmap(p, len);
        memset(m, 0, sizeof *m);
        return -1;
    }
    m->owned = p;
    m->owned_len = len;
    m->owned_is_map = 1;
    return 0;
}

void vpf_meta_free(struct vpf_meta *m)
{
    if (m->owned) {
        if (m->owned_is_map)
            munmap(m->owned, m->owned_len);
        else
            free(m->owned);
    }
    memset(m, 0, sizeof *m);
}

const char *vpf_meta_str(const struct vpf_meta *m, uint32_t off)
{
    return off < m->hdr.strtab_size ? m->strtab + off : "";
}

/* The program is not checked here: a program the runtime cannot run costs
 * only its own entry (vpf_expr_check where the entry is used), so a newer
 * vprof-meta's operation leaves the rest of the file readable. */
const char *vpf_meta_expr(const struct vpf_meta *m, const struct vpf_loc_entry *e)
{
    if (e->loc != VPF_LOC_EXPR || e->offset <= 0 || (uint64_t)e->offset >= m->hdr.strtab_size)
        return NULL;
    return m->strtab + e->offset;
}

const char *vpf_expr_check_entry(const struct vpf_meta *m, const struct vpf_loc_entry *e)
{
    const char *prog = vpf_meta_expr(m, e);
    if (!prog)
        return "expression program offset out of range";
    if (e->flags & VPF_LF_DEREF)
        return "expression entry with the deref flag";
    return vpf_expr_check(prog);
}

/* ---------------- expression programs (FORMATS.md §2.1) ----------------
 *
 * The one decoder of EXPR programs' tokens, the load-time checker and the
 * printer. vpf_expr_next and vpf_expr_check run in the runtime (the checker
 * when the metadata is loaded, the decoder when the tables are built), so
 * they call nothing: no libc, no allocation. Every token has a bounded
 * length and the string table ends with a NUL (vpf_meta_parse checks it),
 * so decoding cannot run off the table whatever the bytes are. */

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

/* ---------------- builder ---------------- */

struct vpf_meta_builder {
    struct vpf_meta_header hdr;
    struct vpf_var_desc *vars;
    size_t n_vars, cap_vars;
    struct vpf_loc_entry *ents;
    size_t n_ents, cap_ents;
    char *str;
    size_t str_len, str_cap;
    uint32_t *hslot;            /* string dedup: open addressing of offsets */
    size_t hcap, hcount;
    int oom;
};

struct vpf_meta_builder *vpf_mb_new(void)
{
    struct vpf_meta_builder *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    memcpy(b->hdr.magic, VPF_META_MAGIC, 8);
    b->hdr.version = VPF_META_VERSION;
    b->hdr.header_size = sizeof b->hdr;
    b->str = malloc(b->str_cap = 4096);
    if (!b->str) {
        free(b);
        return NULL;
    }
    b->str[0] = 0;
    b->str_len = 1;
    return b;
}

static int hgrow(struct vpf_meta_builder *b)
{
    size_t cap = b->hcap ? b->hcap * 2 : 1024;
    uint32_t *slot = calloc(cap, sizeof *slot);     /* 0 = empty */
    if (!slot)
        return -1;
    for (size_t i = 0; i < b->hcap; i++) {
        if (!b->hslot[i])
            continue;
        size_t h = vpf_hash_str(VPF_FNV_BASIS, b->str + b->hslot[i]) & (cap - 1);
        while (slot[h])
            h = (h + 1) & (cap - 1);
        slot[h] = b->hslot[i];
    }
    free(b->hslot);
    b->hslot = slot;
    b->hcap = cap;
    return 0;
}

uint32_t vpf_mb_str(struct vpf_meta_builder *b, const char *s)
{
    if (!s || !*s)
        return 0;
    if ((b->hcount + 1) * 2 > b->hcap && hgrow(b) < 0) {
        b->oom = 1;
        return 0;
    }
    size_t h = vpf_hash_str(VPF_FNV_BASIS, s) & (b->hcap - 1);
    while (b->hslot[h]) {
        if (!strcmp(b->str + b->hslot[h], s))
            return b->hslot[h];
        h = (h + 1) & (b->hcap - 1);
    }
    size_t n = strlen(s) + 1;
    if (b->str_len + n > UINT32_MAX) {
        b->oom = 1;
        return 0;
    }
    if (b->str_len + n > b->str_cap) {
        size_t cap = b->str_cap;
        while (b->str_len + n > cap)
            cap *= 2;
        char *p = realloc(b->str, cap);
        if (!p) {
            b->oom = 1;
            return 0;
        }
        b->str = p;
        b->str_cap = cap;
    }
    uint32_t off = (uint32_t)b->str_len;
    memcpy(b->str + off, s, n);
    b->str_len += n;
    b->hslot[h] = off;
    b->hcount++;
    return off;
}

uint32_t vpf_mb_add_var(struct vpf_meta_builder *b, const struct vpf_var_desc *v)
{
    if (vpf_grow_try((void **)&b->vars, &b->cap_vars, b->n_vars + 1, sizeof *v) < 0) {
        b->oom = 1;
        return UINT32_MAX;
    }
    b->vars[b->n_vars] = *v;
    return (uint32_t)b->n_vars++;
}

void vpf_mb_add_entry(struct vpf_meta_builder *b, const struct vpf_loc_entry *en)
{
    if (vpf_grow_try((void **)&b->ents, &b->cap_ents, b->n_ents + 1, sizeof *en) < 0) {
        b->oom = 1;
        return;
    }
    b->ents[b->n_ents++] = *en;
}

void vpf_mb_set_build_id(struct vpf_meta_builder *b, const uint8_t *id, size_t len)
{
    if (len > sizeof b->hdr.build_id)
        len = sizeof b->hdr.build_id;
    memset(b->hdr.build_id, 0, sizeof b->hdr.build_id);
    if (len)
        memcpy(b->hdr.build_id, id, len);
    b->hdr.build_id_len = (uint32_t)len;
}

void vpf_mb_set_flags(struct vpf_meta_builder *b, uint32_t flags) { b->hdr.flags = flags; }
size_t vpf_mb_n_vars(const struct vpf_meta_builder *b) { return b->n_vars; }
size_t vpf_mb_n_entries(const struct vpf_meta_builder *b) { return b->n_ents; }

static int cmp_entry(const void *a, const void *b)
{
    const struct vpf_loc_entry *x = a, *y = b;
    if (x->pc_start != y->pc_start)
        return x->pc_start < y->pc_start ? -1 : 1;
    if (x->var != y->var)
        return x->var < y->var ? -1 : 1;
    return x->pc_end < y->pc_end ? -1 : x->pc_end > y->pc_end;
}

int vpf_mb_write(struct vpf_meta_builder *b, const char *path, vpf_err *e)
{
    if (b->oom) {
        vpf_set_err(e, "%s: out of memory while building metadata", path);
        return -1;
    }
    if (b->n_ents)  /* qsort(NULL, 0) is undefined */
        qsort(b->ents, b->n_ents, sizeof *b->ents, cmp_entry);
    b->hdr.n_vars = (uint32_t)b->n_vars;
    b->hdr.n_entries = (uint32_t)b->n_ents;
    b->hdr.strtab_size = (uint32_t)b->str_len;
    int to_stdout = !strcmp(path, "-");
    FILE *f = to_stdout ? stdout : fopen(path, "wb");
    if (!f) {
        vpf_set_err(e, "%s: %s", path, strerror(errno));
        return -1;
    }
    int ok = fwrite(&b->hdr, sizeof b->hdr, 1, f) == 1 &&
             (!b->n_vars || fwrite(b->vars, sizeof *b->vars, b->n_vars, f) == b->n_vars) &&
             (!b->n_ents || fwrite(b->ents, sizeof *b->ents, b->n_ents, f) == b->n_ents) &&
             fwrite(b->str, 1, b->str_len, f) == b->str_len;
    ok = (to_stdout ? fflush(f) : fclose(f)) == 0 && ok;
    if (!ok) {
        vpf_set_err(e, "%s: write error: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

void vpf_mb_free(struct vpf_meta_builder *b)
{
    if (!b)
        return;
    free(b->vars);
    free(b->ents);
    free(b->str);
    free(b->hslot);
    free(b);
}
