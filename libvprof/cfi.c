/* cfi.c - the unwind rule table (see cfi.h).
 *
 * For each object: the .eh_frame_hdr search table lists every FDE sorted by
 * its first PC; each FDE's CFA program (after its CIE's initial
 * instructions) is run once, here, and every row of the resulting unwind
 * table that the tick can use is kept as {PC offset, rule}. Rows are sorted
 * by PC; a row holds until the next one, and the end of each FDE gets a
 * "no rule" row so that PCs between FDEs go to libunwind, which has its own
 * ways (or none) for code without CFI.
 *
 * The CFI is data of the program and its libraries: it is parsed as
 * untrusted input. Every read is checked against the readable segment that
 * holds it, every count and offset is bounded, and an FDE that does not
 * parse is dropped (its PCs get no rule). */
#include <link.h>
#include <string.h>
#include <sys/mman.h>

#include "cfi.h"

const uint8_t vprof_cfi_saved_reg[VPROF_CFI_NSAVE] = {3, 6, 12, 13, 14, 15};
const int8_t vprof_cfi_save_index[16] = {
    -1, -1, -1, 0, -1, -1, 1, -1, -1, -1, -1, -1, 2, 3, 4, 5,
};

struct row {
    uint32_t off;               /* PC - object's lo */
    struct vprof_cfi_rule r;
};

/* An index over each object's rows: for every PAGE bytes of its code, the
 * row in force at the page's first byte, so that a lookup searches only
 * the few rows of one page. */
#define PAGE_SHIFT 7

/* Ticks unwind through the same few call sites over and over: each object
 * remembers, per 16 bytes of code (modulo HINTS), the row found last time.
 * A hint is only a guess (threads race on it): it is used when the row it
 * names covers the PC, which two comparisons tell. The executable, where
 * most ticks land (their leaves at every PC of the program's loops), has a
 * hint for every 16 bytes of its code (up to EXE_HINTS_MAX), each set when
 * the table is built to the row in force at its first byte: a tick's first
 * lookup there is a hit too. */
#define HINT_BITS 10
#define HINTS (1u << HINT_BITS)
#define EXE_HINTS_MAX (1u << 20)

#define MAX_OBJS 64
static struct obj {
    uint64_t lo, span;
    uint32_t *off;              /* n + 1: the rows' PC offsets, sorted, then UINT32_MAX */
    struct vprof_cfi_rule *rule;    /* n: the rows' rules */
    uint32_t n;
    uint32_t *page;             /* n_pages + 1 entries */
    uint64_t n_pages;
    uint32_t *hint;             /* hint_mask + 1 row indices: see vprof_cfi_find */
    uint32_t hint_mask;
    void *map;                  /* everything above, one mapping */
    size_t map_len;
} objs[MAX_OBJS];
static int n_objs;
static struct vprof_cfi_stats stats;

/* ---------- bounded reading ---------- */

struct rd {
    const unsigned char *p, *end;
    int bad;
};

static uint64_t rd_fixed(struct rd *r, unsigned n)
{
    if (r->bad || (size_t)(r->end - r->p) < n) {
        r->bad = 1;
        return 0;
    }
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++)
        v |= (uint64_t)r->p[i] << (8 * i);
    r->p += n;
    return v;
}

/* A LEB128 number; *sign_shift (when asked) gets the shift at which a
 * signed one's sign bit is to be extended from, 64 for none. */
static uint64_t rd_leb(struct rd *r, unsigned *sign_shift)
{
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
        if (r->bad || r->p >= r->end) {
            r->bad = 1;
            return 0;
        }
        unsigned char b = *r->p++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            if (sign_shift)
                *sign_shift = shift + 7 < 64 && (b & 0x40) ? shift + 7 : 64;
            return v;
        }
    }
    r->bad = 1;                 /* longer than 64 bits */
    return 0;
}

static uint64_t rd_uleb(struct rd *r)
{
    return rd_leb(r, NULL);
}

static int64_t rd_sleb(struct rd *r)
{
    unsigned sh = 64;
    uint64_t v = rd_leb(r, &sh);
    if (sh < 64)
        v |= ~(uint64_t)0 << sh;
    return (int64_t)v;
}

/* A DW_EH_PE-encoded pointer: absolute, or relative to its own address
 * (pcrel) or to .eh_frame_hdr (datarel); indirect, text- and function-
 * relative and aligned encodings are not used by x86-64 toolchains for
 * what we read and are refused. */
static uint64_t rd_ptr(struct rd *r, unsigned enc, uint64_t datarel)
{
    uint64_t here = (uint64_t)(uintptr_t)r->p, v;
    if (enc == 0xff || (enc & 0x80)) {
        r->bad = 1;
        return 0;
    }
    switch (enc & 0x0f) {
    case 0x00: v = rd_fixed(r, 8); break;                       /* absptr */
    case 0x01: v = rd_uleb(r); break;
    case 0x02: v = rd_fixed(r, 2); break;
    case 0x03: v = rd_fixed(r, 4); break;
    case 0x04: v = rd_fixed(r, 8); break;
    case 0x09: v = (uint64_t)rd_sleb(r); break;
    case 0x0a: v = (uint64_t)(int64_t)(int16_t)rd_fixed(r, 2); break;
    case 0x0b: v = (uint64_t)(int64_t)(int32_t)rd_fixed(r, 4); break;
    case 0x0c: v = rd_fixed(r, 8); break;
    default: r->bad = 1; return 0;
    }
    switch (enc & 0x70) {
    case 0x00: return v;
    case 0x10: return v + here;
    case 0x30: return v + datarel;
    default: r->bad = 1; return 0;
    }
}

/* Factored offsets: unsigned arithmetic, so that hostile values wrap
 * instead of overflowing (to_rule rejects what is out of range). */
static int64_t factored(uint64_t n, int64_t align)
{
    return (int64_t)(n * (uint64_t)align);
}

/* ---------- CIEs ---------- */

struct cie {
    const unsigned char *at;    /* identity */
    const unsigned char *insns, *end;
    uint64_t code_align;
    int64_t data_align;
    unsigned fde_enc;
    int has_z, signal;
    int ok;
};

static int parse_cie(const unsigned char *at, const unsigned char *mem_end,
                     uint64_t datarel, struct cie *c)
{
    struct rd r = {at, mem_end, 0};
    memset(c, 0, sizeof *c);
    c->at = at;
    uint64_t len = rd_fixed(&r, 4);
    if (len == 0xffffffffu)
        len = rd_fixed(&r, 8);
    if (r.bad || len < 4 || len > (uint64_t)(mem_end - r.p))
        return -1;
    const unsigned char *end = r.p + len;
    r.end = end;
    uint64_t id = rd_fixed(&r, 4);
    unsigned version = (unsigned)rd_fixed(&r, 1);
    if (r.bad || id != 0 || (version != 1 && version != 3 && version != 4))
        return -1;
    const unsigned char *aug = r.p;
    while (r.p < end && *r.p)
        r.p++;
    if (r.p >= end)
        return -1;
    size_t aug_n = (size_t)(r.p - aug);
    r.p++;
    if (version == 4) {
        unsigned asz = (unsigned)rd_fixed(&r, 1), ssz = (unsigned)rd_fixed(&r, 1);
        if (asz != 8 || ssz != 0)
            return -1;
    }
    c->code_align = rd_uleb(&r);
    c->data_align = rd_sleb(&r);
    uint64_t ra = version == 1 ? rd_fixed(&r, 1) : rd_uleb(&r);
    if (r.bad || ra != 16 || c->code_align == 0 || c->code_align > 16)
        return -1;
    c->fde_enc = 0;                 /* absptr unless 'R' says otherwise */
    if (aug_n) {
        if (aug[0] != 'z')
            return -1;              /* only the 'z' forms say how long their data is */
        c->has_z = 1;
        uint64_t alen = rd_uleb(&r);
        if (r.bad || alen > (uint64_t)(end - r.p))
            return -1;
        const unsigned char *aend = r.p + alen;
        struct rd a = {r.p, aend, 0};
        for (size_t i = 1; i < aug_n && !a.bad; i++) {
            switch (aug[i]) {
            case 'L': rd_fixed(&a, 1); break;
            case 'R': c->fde_enc = (unsigned)rd_fixed(&a, 1); break;
            case 'S': c->signal = 1; break;
            case 'P': {
                unsigned penc = (unsigned)rd_fixed(&a, 1);
                rd_ptr(&a, penc & 0x7f, datarel);   /* the value is not needed */
                break;
            }
            default:
                i = aug_n;          /* unknown: the rest is skipped by alen */
                break;
            }
        }
        if (a.bad)
            return -1;
        r.p = aend;
    }
    c->insns = r.p;
    c->end = end;
    c->ok = 1;
    return 0;
}

/* ---------- the CFA program ---------- */

enum { R_SAME = 0, R_UNDEF, R_OFFSET, R_OTHER };

struct reg_rule { uint8_t how; int64_t off; };

struct state {
    uint64_t cfa_reg;
    int64_t cfa_off;
    int cfa_expr;
    struct reg_rule reg[17];    /* DWARF 0-16; 16 = return address */
};

#define MAX_REMEMBER 8

struct builder {
    struct row *rows;           /* NULL: only count */
    uint64_t n, cap;
    int full;                   /* a row did not fit */
    uint64_t lo, span;
    int signal;
};

static void to_rule_(const struct state *s, int signal, struct vprof_cfi_rule *out);

/* The row's rule for a state: all-zero (kind NONE) unless it can be used. */
static void to_rule(const struct state *s, int signal, struct vprof_cfi_rule *out)
{
    to_rule_(s, signal, out);
    if (out->kind != VPROF_CFI_STEP) {
        uint8_t k = out->kind;
        memset(out, 0, sizeof *out);
        out->kind = k;
    }
}

static void to_rule_(const struct state *s, int signal, struct vprof_cfi_rule *out)
{
    memset(out, 0, sizeof *out);
    out->kind = VPROF_CFI_NONE;
    if (signal) {
        out->kind = VPROF_CFI_SIGNAL;
        return;
    }
    if (s->cfa_expr || s->cfa_reg > 15 || s->cfa_off < INT32_MIN ||
        s->cfa_off > INT32_MAX)
        return;
    const struct reg_rule *ra = &s->reg[16];
    if (s->reg[7].how != R_SAME)
        return;                 /* rsp has a rule of its own */
    /* the end of the call chain: an undefined return address, or (the
     * x86-64 ABI's other mark, which libunwind honours) an undefined rbp */
    if (ra->how == R_UNDEF || s->reg[6].how == R_UNDEF) {
        out->kind = VPROF_CFI_END;
        return;
    }
    if (ra->how != R_OFFSET || ra->off != -8)
        return;
    for (int i = 0; i < VPROF_CFI_NSAVE; i++) {
        const struct reg_rule *g = &s->reg[vprof_cfi_saved_reg[i]];
        uint16_t bit = (uint16_t)(1u << vprof_cfi_saved_reg[i]);
        if (g->how == R_SAME)
            out->save[i] = VPROF_CFI_SAME;
        else if (g->how == R_UNDEF) {
            out->save[i] = VPROF_CFI_UNDEF;
            out->undef |= bit;
        } else if (g->how == R_OFFSET && g->off % 8 == 0 && g->off != 0 &&
                   g->off >= -127 * 8 && g->off <= 127 * 8) {
            out->save[i] = (int8_t)(g->off / 8);
            out->saved |= bit;
        } else {
            return;
        }
    }
    out->cfa_reg = (uint8_t)s->cfa_reg;
    out->cfa_off = (int32_t)s->cfa_off;
    out->kind = VPROF_CFI_STEP;
}

static void emit(struct builder *b, uint64_t pc, const struct vprof_cfi_rule *r)
{
    uint64_t off = pc - b->lo;
    if (b->n && b->rows) {
        struct row *last = &b->rows[b->n - 1];
        if (last->off == off) {         /* the same PC: the later rule wins */
            last->r = *r;
            if (b->n >= 2 && !memcmp(&b->rows[b->n - 2].r, r, sizeof *r))
                b->n--;
            return;
        }
        if (!memcmp(&last->r, r, sizeof *r))
            return;
    }
    if (b->rows) {
        if (b->n >= b->cap) {
            b->full = 1;
            return;
        }
        b->rows[b->n].off = (uint32_t)off;
        b->rows[b->n].r = *r;
    }
    b->n++;
}

/* Runs insns on s; with b, emits a row at each advance of the location
 * (from loc up to end_pc). Returns 0, or -1 on malformed input. */
static int run(struct rd *r, const struct cie *c, struct state *s,
               const struct state *init, struct builder *b, uint64_t loc, uint64_t end_pc)
{
    struct state stack[MAX_REMEMBER];
    int depth = 0, dirty = 1;   /* state changed since the last row */
    struct vprof_cfi_rule rule;
    while (r->p < r->end && !r->bad) {
        unsigned op = *r->p++, low = op & 0x3f;
        uint64_t reg = 0, delta = 0;
        if ((op & 0xc0) != 0x40 && (op < 0x01 || op > 0x04))
            dirty = 1;          /* not an advance: may change the state */
        int64_t off = 0;
        int advance = 0;
        switch (op & 0xc0) {
        case 0x40:                              /* advance_loc */
            delta = low;
            advance = 1;
            break;
        case 0x80:                              /* offset */
            off = factored(rd_uleb(r), c->data_align);
            if (low <= 16)
                s->reg[low] = (struct reg_rule){R_OFFSET, off};
            continue;
        case 0xc0:                              /* restore */
            if (!init)
                return -1;
            if (low <= 16)
                s->reg[low] = init->reg[low];
            continue;
        default:
            break;
        }
        if (!advance) {
            switch (op) {
            case 0x00: continue;                                    /* nop */
            case 0x01: {                                            /* set_loc */
                uint64_t to = rd_ptr(r, c->fde_enc, 0);
                if (r->bad || to < loc || to > end_pc)
                    return -1;
                delta = (to - loc) / c->code_align;
                advance = 1;
                break;
            }
            case 0x02: delta = rd_fixed(r, 1); advance = 1; break;  /* advance_loc1 */
            case 0x03: delta = rd_fixed(r, 2); advance = 1; break;
            case 0x04: delta = rd_fixed(r, 4); advance = 1; break;
            case 0x05:                                              /* offset_extended */
                reg = rd_uleb(r);
                off = factored(rd_uleb(r), c->data_align);
                if (reg <= 16)
                    s->reg[reg] = (struct reg_rule){R_OFFSET, off};
                continue;
            case 0x06:                                              /* restore_extended */
                reg = rd_uleb(r);
                if (!init)
                    return -1;
                if (reg <= 16)
                    s->reg[reg] = init->reg[reg];
                continue;
            case 0x07: case 0x08:                                   /* undefined, same_value */
                reg = rd_uleb(r);
                if (reg <= 16)
                    s->reg[reg] = (struct reg_rule){op == 0x07 ? R_UNDEF : R_SAME, 0};
                continue;
            case 0x09:                                              /* register */
                reg = rd_uleb(r);
                rd_uleb(r);
                if (reg <= 16)
                    s->reg[reg] = (struct reg_rule){R_OTHER, 0};
                continue;
            case 0x0a:                                              /* remember_state */
                if (depth >= MAX_REMEMBER)
                    return -1;
                stack[depth++] = *s;
                continue;
            case 0x0b:                                              /* restore_state */
                if (depth == 0)
                    return -1;
                /* the CFA is part of the remembered state too (libunwind,
                 * libgcc): restore all of it */
                *s = stack[--depth];
                continue;
            case 0x0c:                                              /* def_cfa */
                s->cfa_reg = rd_uleb(r);
                s->cfa_off = (int64_t)rd_uleb(r);
                s->cfa_expr = 0;
                continue;
            case 0x0d:                                              /* def_cfa_register */
                s->cfa_reg = rd_uleb(r);
                s->cfa_expr = 0;
                continue;
            case 0x0e:                                              /* def_cfa_offset */
                s->cfa_off = (int64_t)rd_uleb(r);
                continue;
            case 0x0f: {                                            /* def_cfa_expression */
                uint64_t n = rd_uleb(r);
                if (r->bad || n > (uint64_t)(r->end - r->p))
                    return -1;
                r->p += n;
                s->cfa_expr = 1;
                continue;
            }
            case 0x10: case 0x16: {                                 /* expression, val_expression */
                reg = rd_uleb(r);
                uint64_t n = rd_uleb(r);
                if (r->bad || n > (uint64_t)(r->end - r->p))
                    return -1;
                r->p += n;
                if (reg <= 16)
                    s->reg[reg] = (struct reg_rule){R_OTHER, 0};
                continue;
            }
            case 0x11:                                              /* offset_extended_sf */
                reg = rd_uleb(r);
                off = factored((uint64_t)rd_sleb(r), c->data_align);
                if (reg <= 16)
                    s->reg[reg] = (struct reg_rule){R_OFFSET, off};
                continue;
            case 0x12:                                              /* def_cfa_sf */
                s->cfa_reg = rd_uleb(r);
                s->cfa_off = factored((uint64_t)rd_sleb(r), c->data_align);
                s->cfa_expr = 0;
                continue;
            case 0x13:                                              /* def_cfa_offset_sf */
                s->cfa_off = factored((uint64_t)rd_sleb(r), c->data_align);
                continue;
            case 0x14: case 0x15:                                   /* val_offset(_sf) */
                reg = rd_uleb(r);
                if (op == 0x14) rd_uleb(r); else rd_sleb(r);
                if (reg <= 16)
                    s->reg[reg] = (struct reg_rule){R_OTHER, 0};
                continue;
            case 0x2e:                                              /* GNU_args_size */
                rd_uleb(r);
                continue;
            case 0x2f:                                              /* GNU_negative_offset_extended */
                reg = rd_uleb(r);
                off = factored(0 - rd_uleb(r), c->data_align);
                if (reg <= 16)
                    s->reg[reg] = (struct reg_rule){R_OFFSET, off};
                continue;
            default:
                return -1;                                          /* unknown opcode */
            }
        }
        if (r->bad)
            return -1;
        /* The state so far holds from loc on; the location moves. */
        if (b) {
            if (delta > (end_pc - loc) / c->code_align)
                return -1;
            if (dirty) {        /* (an unchanged state makes the same row) */
                to_rule(s, b->signal, &rule);
                emit(b, loc, &rule);
                dirty = 0;
            }
        }
        loc += delta * c->code_align;
    }
    if (r->bad)
        return -1;
    if (b && dirty) {
        to_rule(s, b->signal, &rule);
        emit(b, loc, &rule);
    }
    return 0;
}

/* ---------- one object ---------- */

#define CIE_CACHE 8

static long build_object(struct builder *b, const unsigned char *hdr,
                         const unsigned char *mem_lo, const unsigned char *mem_hi,
                         uint32_t *n_fdes, uint32_t *n_bad)
{
    struct rd h = {hdr, mem_hi, 0};
    if (hdr < mem_lo || hdr >= mem_hi)
        return -1;
    unsigned version = (unsigned)rd_fixed(&h, 1), ptr_enc = (unsigned)rd_fixed(&h, 1);
    unsigned cnt_enc = (unsigned)rd_fixed(&h, 1), tab_enc = (unsigned)rd_fixed(&h, 1);
    if (h.bad || version != 1 || cnt_enc != 0x03 || tab_enc != 0x3b)
        return -1;
    uint64_t datarel = (uint64_t)(uintptr_t)hdr;
    uint64_t eh_frame = rd_ptr(&h, ptr_enc, datarel);
    uint64_t count = rd_fixed(&h, 4);
    if (h.bad || eh_frame < (uint64_t)(uintptr_t)mem_lo || eh_frame >= (uint64_t)(uintptr_t)mem_hi ||
        count > (uint64_t)(mem_hi - h.p) / 8)
        return -1;
    struct cie cache[CIE_CACHE];
    unsigned cache_next = 0;
    memset(cache, 0, sizeof cache);
    uint64_t prev_end = 0;
    *n_fdes = *n_bad = 0;
    for (uint64_t i = 0; i < count; i++) {
        int32_t e_loc = (int32_t)rd_fixed(&h, 4), e_fde = (int32_t)rd_fixed(&h, 4);
        uint64_t start = datarel + (uint64_t)(int64_t)e_loc;
        uintptr_t fde_at = (uintptr_t)hdr + (uintptr_t)(intptr_t)e_fde;
        if (h.bad)
            return -1;
        (*n_fdes)++;
        /* the FDE */
        if (fde_at < (uintptr_t)mem_lo || fde_at >= (uintptr_t)mem_hi) {
            (*n_bad)++;
            continue;
        }
        const unsigned char *fde = (const unsigned char *)fde_at;
        struct rd r = {fde, mem_hi, 0};
        uint64_t len = rd_fixed(&r, 4);
        if (len == 0xffffffffu)
            len = rd_fixed(&r, 8);
        if (r.bad || len < 8 || len > (uint64_t)(mem_hi - r.p)) {
            (*n_bad)++;
            continue;
        }
        r.end = r.p + len;
        const unsigned char *idp = r.p;
        uint64_t cie_off = rd_fixed(&r, 4);
        if (cie_off == 0 || cie_off > (uint64_t)(idp - mem_lo)) {
            (*n_bad)++;
            continue;
        }
        const unsigned char *cie_at = idp - cie_off;
        struct cie *c = NULL;
        for (unsigned k = 0; k < CIE_CACHE; k++)
            if (cache[k].at == cie_at)
                c = &cache[k];
        if (!c) {
            c = &cache[cache_next++ % CIE_CACHE];
            parse_cie(cie_at, mem_hi, datarel, c);
        }
        if (!c->ok) {
            (*n_bad)++;
            continue;
        }
        uint64_t pc = rd_ptr(&r, c->fde_enc, datarel);
        uint64_t range = rd_ptr(&r, c->fde_enc & 0x0f, datarel);
        if (c->has_z) {
            uint64_t alen = rd_uleb(&r);
            if (alen > (uint64_t)(r.end - r.p))
                r.bad = 1;
            else
                r.p += alen;
        }
        if (r.bad || pc != start || pc < b->lo || range == 0 || range > b->span ||
            pc - b->lo > b->span - range) {
            (*n_bad)++;
            continue;
        }
        /* FDEs are sorted; one that starts inside the previous one cuts
         * it short (malformed input stays sorted and bounded). */
        if (b->rows)
            while (b->n && b->rows[b->n - 1].off + b->lo >= pc)
                b->n--;
        /* the CIE's initial instructions, then the FDE's */
        struct state init, s;
        memset(&init, 0, sizeof init);
        struct rd ci = {c->insns, c->end, 0};
        uint64_t n_before = b->n;
        if (run(&ci, c, &init, NULL, NULL, pc, pc + range) < 0) {
            (*n_bad)++;
            continue;
        }
        s = init;
        b->signal = c->signal;
        if (run(&r, c, &s, &init, b, pc, pc + range) < 0) {
            b->n = n_before;    /* nothing of a malformed FDE */
            (*n_bad)++;
            continue;
        }
        struct vprof_cfi_rule none;
        memset(&none, 0, sizeof none);
        emit(b, pc + range, &none);
        prev_end = pc + range;
    }
    (void)prev_end;
    return (long)b->n;
}

/* exe: the executable's object (a hint per 16 bytes of its code). */
static long add_object(uint64_t lo, uint64_t hi, const unsigned char *hdr,
                       uint64_t mem_lo, uint64_t mem_hi, uint64_t max_rows, int exe)
{
    if (n_objs >= MAX_OBJS || hi <= lo || hi - lo > UINT32_MAX || mem_hi <= mem_lo)
        return -1;
    const unsigned char *ml = (const unsigned char *)(uintptr_t)mem_lo;
    const unsigned char *mh = (const unsigned char *)(uintptr_t)mem_hi;
    if ((uint64_t)(uintptr_t)hdr < mem_lo || (uint64_t)(uintptr_t)hdr + 12 > mem_hi)
        return -1;
    /* One pass into room for as many rows as there can be: every row but
     * an FDE's first and its end takes an advance instruction, a byte at
     * least of the segment. Untouched pages of the mapping cost nothing. */
    uint32_t count;
    memcpy(&count, hdr + 8, 4);
    if (count > (mem_hi - (uint64_t)(uintptr_t)hdr - 12) / 8)
        return -1;              /* the search table does not fit (build_object says so too) */
    uint64_t cap = (mem_hi - mem_lo) + 2 * (uint64_t)count + 16;
    if (cap > max_rows)
        cap = max_rows;
    size_t tmp_len = (size_t)cap * sizeof(struct row);
    void *tmp = mmap(NULL, tmp_len, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (tmp == MAP_FAILED)
        return -1;
    /* Page faults cost several microseconds each on a VM; populating the
     * pages the rows will likely fill, in one call, a tenth of that. */
    uint64_t likely = (uint64_t)count * 8;
    if (likely > (mem_hi - mem_lo) / 4 + 64)
        likely = (mem_hi - mem_lo) / 4 + 64;
    if (likely > cap)
        likely = cap;
    madvise(tmp, (size_t)likely * sizeof(struct row), 23 /* MADV_POPULATE_WRITE */);
    struct builder b = {tmp, 0, cap, 0, lo, hi - lo, 0};
    uint32_t nf, nb;
    if (build_object(&b, hdr, ml, mh, &nf, &nb) < 0 || b.n == 0 || b.n >= UINT32_MAX || b.full) {
        munmap(tmp, tmp_len);
        return -1;
    }
    uint64_t n = b.n, n_pages = ((hi - lo) >> PAGE_SHIFT) + 1, n_hints = HINTS;
    while (exe && n_hints < EXE_HINTS_MAX && n_hints < ((hi - lo) >> 4) + 1)
        n_hints *= 2;
    size_t len = (size_t)n * sizeof(struct vprof_cfi_rule) +
                 (size_t)(n + 1 + n_pages + 1 + n_hints) * sizeof(uint32_t);
    void *m = n ? mmap(NULL, len, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0)
                : MAP_FAILED;
    if (m == MAP_FAILED) {
        munmap(tmp, tmp_len);
        return -1;
    }
    struct obj *o = &objs[n_objs];
    o->lo = lo;
    o->span = hi - lo;
    o->n = (uint32_t)n;
    o->rule = m;
    o->off = (uint32_t *)(void *)(o->rule + n);
    o->page = o->off + n + 1;
    o->n_pages = n_pages;
    o->hint = o->page + n_pages + 1;    /* zero: row 0, checked like any hint */
    o->hint_mask = (uint32_t)n_hints - 1;
    o->map = m;
    o->map_len = len;
    for (uint64_t k = 0; k < n; k++) {
        o->off[k] = b.rows[k].off;
        o->rule[k] = b.rows[k].r;
    }
    o->off[n] = UINT32_MAX;
    munmap(tmp, tmp_len);
    uint32_t k = 0;
    for (uint64_t pg = 0; pg <= n_pages; pg++) {
        while (k + 1 < o->n && o->off[k + 1] <= (pg << PAGE_SHIFT))
            k++;
        o->page[pg] = k;
    }
    if (exe && n_hints > (hi - lo) >> 4) {      /* every 16 bytes a hint of its own */
        k = 0;
        for (uint64_t c = 0; c <= (hi - lo) >> 4; c++) {
            while (k + 1 < o->n && o->off[k + 1] <= (c << 4))
                k++;
            o->hint[c] = k;
        }
    }
    /* published last: a tick may look at objs[] while tests add objects */
    __atomic_store_n(&n_objs, n_objs + 1, __ATOMIC_RELEASE);
    stats.objects++;
    stats.fdes += nf - nb;
    stats.bad_fdes += nb;
    stats.rows += b.n;
    return (long)b.n;
}

long vprof_cfi_add_object(uint64_t lo, uint64_t hi, const unsigned char *hdr,
                          uint64_t mem_lo, uint64_t mem_hi)
{
    return add_object(lo, hi, hdr, mem_lo, mem_hi, UINT32_MAX - 1, 0);
}

struct build_arg { uint64_t max_rows; int seen; };

int vprof_cfi_object_code(const struct dl_phdr_info *info, uint64_t *lo, uint64_t *hi,
                          const unsigned char **hdr)
{
    const ElfW(Phdr) *eh = NULL;
    *lo = UINT64_MAX;
    *hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_GNU_EH_FRAME)
            eh = ph;
        else if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
            uint64_t s = info->dlpi_addr + ph->p_vaddr;
            if (s < *lo) *lo = s;
            if (s + ph->p_memsz > *hi) *hi = s + ph->p_memsz;
        }
    }
    if (!eh || *hi <= *lo)
        return -1;
    *hdr = (const unsigned char *)(uintptr_t)(info->dlpi_addr + eh->p_vaddr);
    return 0;
}

static int add_loaded(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct build_arg *a = data;
    uint64_t lo, hi;
    const unsigned char *hdr;
    int exe = a->seen++ == 0;   /* dl_iterate_phdr reports the executable first */
    if (vprof_cfi_object_code(info, &lo, &hi, &hdr) < 0)
        return 0;
    uint64_t at = (uint64_t)(uintptr_t)hdr;
    /* the readable PT_LOAD segment that holds .eh_frame_hdr (and, with
     * every linker we know, .eh_frame after it) */
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uint64_t s = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_R) && at >= s &&
            at < s + ph->p_filesz) {
            if (stats.rows >= a->max_rows)
                return 1;
            add_object(lo, hi, (const unsigned char *)(uintptr_t)at, s, s + ph->p_filesz,
                       a->max_rows - stats.rows, exe);
            break;
        }
    }
    return 0;
}

void vprof_cfi_build(uint64_t max_rows)
{
    static int done;
    if (done)
        return;
    done = 1;
    struct build_arg a = {max_rows, 0};
    dl_iterate_phdr(add_loaded, &a);
}

void vprof_cfi_clear(void)
{
    int n = n_objs;
    __atomic_store_n(&n_objs, 0, __ATOMIC_RELEASE);
    for (int i = 0; i < n; i++)
        munmap(objs[i].map, objs[i].map_len);
    memset(objs, 0, sizeof objs);
    memset(&stats, 0, sizeof stats);
}

/* The row in force at pc: its object and index; NULL when no object's
 * table covers pc. */
static inline const struct obj *find_row(uint64_t pc, uint32_t *row)
{
    int n = __atomic_load_n(&n_objs, __ATOMIC_ACQUIRE);
    for (int i = 0; i < n; i++) {
        const struct obj *o = &objs[i];
        uint64_t x = pc - o->lo;
        if (x >= o->span)
            continue;
        uint32_t *hint = &o->hint[(x >> 4) & o->hint_mask];
        uint32_t lo = __atomic_load_n(hint, __ATOMIC_RELAXED);
        const uint32_t *off = o->off;
        /* (hints are only ever row indices < n; off[n] is UINT32_MAX) */
        if (!(off[lo] <= x && off[lo + 1] > x)) {
            /* the last row at or before x, among those of x's page */
            uint64_t pg = x >> PAGE_SHIFT;
            uint32_t hi = o->page[pg + 1] + 1;
            lo = o->page[pg];
            while (hi - lo > 1) {
                uint32_t mid = lo + (hi - lo) / 2;
                if (off[mid] <= x)
                    lo = mid;
                else
                    hi = mid;
            }
            if (off[lo] > x)
                return NULL;
            __atomic_store_n(hint, lo, __ATOMIC_RELAXED);
        }
        *row = lo;
        return o;
    }
    return NULL;
}

const struct vprof_cfi_rule *vprof_cfi_find(uint64_t pc)
{
    uint32_t k;
    const struct obj *o = find_row(pc, &k);
    if (!o || o->rule[k].kind == VPROF_CFI_NONE)
        return NULL;
    return &o->rule[k];
}

const struct vprof_cfi_rule *vprof_cfi_find_span(uint64_t pc, uint64_t *lo, uint64_t *hi)
{
    uint32_t k;
    const struct obj *o = find_row(pc, &k);
    if (!o || o->rule[k].kind == VPROF_CFI_NONE)
        return NULL;
    *lo = o->lo + o->off[k];
    *hi = o->lo + (o->off[k + 1] < o->span ? o->off[k + 1] : o->span);
    return &o->rule[k];
}

int vprof_cfi_in_object(uint64_t pc)
{
    int n = __atomic_load_n(&n_objs, __ATOMIC_ACQUIRE);
    for (int i = 0; i < n; i++)
        if (pc - objs[i].lo < objs[i].span)
            return 1;
    return 0;
}

void vprof_cfi_get_stats(struct vprof_cfi_stats *s)
{
    *s = stats;
}
