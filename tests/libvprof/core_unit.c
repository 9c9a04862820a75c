/* Unit tests of the sampling core's pure parts, built with ASan+UBSan by
 * t_core_unit.sh: the value reader (every location kind, size, extension,
 * deref, registers that are not known) and the PCToVarTable/VariableArray
 * (for random metadata, the chain walk finds exactly the entries whose
 * range holds the PC, as a brute-force scan does). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "value_read.h"
#include "vartable.h"

static int fails, checks;
#define CHECK(c, ...) do { checks++; if (!(c)) { fails++; printf("FAIL %s:%d: ", __FILE__, __LINE__); \
    printf(__VA_ARGS__); printf("\n"); } } while (0)

/* A fake address space: 4 KiB at FAKE_BASE, everything else faults. */
#define FAKE_BASE 0x100000ull
static unsigned char mem[4096];
static int rd(void *ctx, uint64_t addr, void *dst, size_t n)
{
    (void)ctx;
    if (addr < FAKE_BASE || addr + n > FAKE_BASE + sizeof mem || addr + n < addr)
        return -1;
    memcpy(dst, mem + (addr - FAKE_BASE), n);
    return 0;
}

static int rv(struct vpf_loc_entry e, unsigned kind, const struct vprof_regs *r,
              uint64_t bias, uint64_t *out)
{
    struct vpf_var_desc v;
    memset(&v, 0, sizeof v);
    v.kind = (uint8_t)kind;
    v.size = e.size;
    return vprof_read_value(&e, &v, NULL, r, bias, rd, NULL, out);
}

static void test_value_read(void)
{
    struct vprof_regs r;
    unsigned char xmm[16 * 16];
    memset(&r, 0, sizeof r);
    memset(xmm, 0, sizeof xmm);
    for (int i = 0; i < 17; i++)
        r.r[i] = 0x1111111111111111ull * (uint64_t)(i % 15 + 1);
    r.r[VPF_RBX] = (uint64_t)-5;
    r.r[VPF_RSP] = FAKE_BASE + 1024;
    r.r[VPF_RBP] = FAKE_BASE + 2048;
    r.valid = (1u << 17) - 1;
    double d = 2.5;
    float f = -1.25f;
    memcpy(xmm + 3 * 16, &d, 8);
    memcpy(xmm + 4 * 16 + 4, &f, 4);
    r.xmm = xmm;
    int32_t neg = -7;
    memcpy(mem + 1024 + 16, &neg, 4);             /* at rsp+16 */
    uint64_t ptr = FAKE_BASE + 3000;
    memcpy(mem + 2048 - 24, &ptr, 8);             /* at rbp-24: a pointer */
    int16_t pointee = -300;
    memcpy(mem + 3000 + 8, &pointee, 2);          /* *(ptr + 8) */
    uint64_t wild = 0xdead0000;
    memcpy(mem + 100, &wild, 8);
    float gf = 3.5f;
    memcpy(mem + 200, &gf, 4);
    uint64_t out;
    struct vpf_loc_entry e;

    memset(&e, 0, sizeof e);
    e.loc = VPF_LOC_REG; e.reg = VPF_RBX; e.size = 8;
    CHECK(rv(e, VPF_KIND_SINT, &r, 0, &out) == 0 && (int64_t)out == -5, "REG rbx");
    e.size = 4;
    CHECK(rv(e, VPF_KIND_UINT, &r, 0, &out) == 0 && out == 0xfffffffbull, "REG 4 bytes unsigned");
    CHECK(rv(e, VPF_KIND_SINT, &r, 0, &out) == 0 && (int64_t)out == -5, "REG 4 bytes signed");
    e.reg = VPF_RDX; e.size = 1; e.offset = 1;    /* second byte of rdx: piece */
    CHECK(rv(e, VPF_KIND_UINT, &r, 0, &out) == 0 && out == 0x22, "REG piece offset");
    e.offset = 8;
    CHECK(rv(e, VPF_KIND_UINT, &r, 0, &out) == VPROF_READ_BAD, "REG offset past the register");
    e.offset = 0; e.reg = VPF_XMM0 + 3; e.size = 8; e.flags = VPF_LF_FLOAT;
    CHECK(rv(e, VPF_KIND_FLOAT, &r, 0, &out) == 0 && !memcmp(&out, &d, 8), "xmm3 double");
    e.reg = VPF_XMM0 + 4; e.size = 4; e.offset = 4;
    double got;
    CHECK(rv(e, VPF_KIND_FLOAT, &r, 0, &out) == 0 && (memcpy(&got, &out, 8), got == -1.25),
          "xmm4 float widened to double");
    e.offset = 0; e.flags = 0;
    struct vprof_regs callee = r;
    callee.valid = (1u << VPF_RBX) | (1u << VPF_RSP);
    callee.xmm = NULL;
    e.reg = VPF_RAX; e.size = 8;
    CHECK(rv(e, VPF_KIND_SINT, &callee, 0, &out) == VPROF_READ_NOREG, "unknown register in a caller");
    e.reg = VPF_XMM0;
    CHECK(rv(e, VPF_KIND_SINT, &callee, 0, &out) == VPROF_READ_NOREG, "no xmm in a caller");
    e.reg = 40;
    CHECK(rv(e, VPF_KIND_SINT, &r, 0, &out) == VPROF_READ_BAD, "register number out of range");

    memset(&e, 0, sizeof e);
    e.loc = VPF_LOC_BREG; e.reg = VPF_RSP; e.offset = 16; e.size = 4; e.flags = VPF_LF_SIGNED;
    CHECK(rv(e, VPF_KIND_SINT, &r, 0, &out) == 0 && (int64_t)out == -7, "BREG rsp+16");
    e.offset = 1 << 20;
    CHECK(rv(e, VPF_KIND_SINT, &r, 0, &out) == VPROF_READ_FAULT, "BREG outside memory faults");
    memset(&e, 0, sizeof e);
    e.loc = VPF_LOC_FBREG; e.reg = VPF_RBP; e.fb_offset = 16; e.offset = -40; e.size = 8;
    e.flags = VPF_LF_DEREF; e.deref_offset = 8; e.size = 2;
    CHECK(rv(e, VPF_KIND_PTR_BASIC, &r, 0, &out) == 0 && out == (uint16_t)-300, "FBREG deref p->field, zero-extended");
    e.flags |= VPF_LF_SIGNED;
    CHECK(rv(e, VPF_KIND_PTR_BASIC, &r, 0, &out) == 0 && (int64_t)out == -300, "FBREG deref, sign-extended");
    memset(&e, 0, sizeof e);
    e.loc = VPF_LOC_ADDR; e.offset = 100; e.size = 8; e.flags = VPF_LF_DEREF;
    CHECK(rv(e, VPF_KIND_PTR_BASIC, &r, FAKE_BASE, &out) == VPROF_READ_FAULT, "wild pointer deref faults");
    e.flags = 0;
    CHECK(rv(e, VPF_KIND_PTR, &r, FAKE_BASE, &out) == 0 && out == 0xdead0000, "ADDR + bias");
    CHECK(rv(e, VPF_KIND_PTR, &r, 0, &out) == VPROF_READ_FAULT, "ADDR without bias is elsewhere");
    e.offset = 200; e.size = 4;
    CHECK(rv(e, VPF_KIND_FLOAT, &r, FAKE_BASE, &out) == 0 && (memcpy(&got, &out, 8), got == 3.5),
          "float in memory widened");
    e.size = 3;
    CHECK(rv(e, VPF_KIND_SINT, &r, FAKE_BASE, &out) == VPROF_READ_BAD, "size 3 rejected");
    e.size = 2;
    CHECK(rv(e, VPF_KIND_FLOAT, &r, FAKE_BASE, &out) == VPROF_READ_BAD, "2-byte float rejected");
    memset(&e, 0, sizeof e);
    e.loc = VPF_LOC_CONST; e.offset = -42; e.size = 4;
    CHECK(rv(e, VPF_KIND_SINT, &r, 0, &out) == 0 && (int64_t)out == -42, "CONST signed");
    e.flags = VPF_LF_DEREF;
    CHECK(rv(e, VPF_KIND_SINT, &r, 0, &out) == VPROF_READ_BAD, "CONST cannot be dereferenced");
    e.loc = 9; e.flags = 0;
    CHECK(rv(e, VPF_KIND_SINT, &r, 0, &out) == VPROF_READ_BAD, "unknown location kind");
}

static int mark(void *arg, const struct vprof_hot *h)
{
    ((unsigned char *)arg)[h->index]++;
    return 0;
}

/* Builds random metadata in memory and compares the tick's walk
 * (vprof_vartable_live) with a brute-force scan of the entries. */
static void test_vartable(unsigned seed, uint64_t div, uint64_t max_elems, int relative)
{
    srand(seed);
    const uint64_t text_lo = 0x401000, text_hi = text_lo + 5000 + (uint64_t)(rand() % 3000);
    uint64_t bias = relative ? 0x555555554000ull : 0;
    unsigned n = 1 + (unsigned)(rand() % 300);
    struct vpf_var_desc vars[4];
    memset(vars, 0, sizeof vars);
    struct vpf_loc_entry *en = calloc(n, sizeof *en);
    for (unsigned i = 0; i < n; i++) {
        uint64_t s, x;
        switch (rand() % 6) {
        case 0: s = 0; x = UINT64_MAX / 2; break;                 /* global */
        case 1: s = text_lo - 100; x = text_lo + 10; break;       /* straddles */
        case 2: s = text_hi + 5; x = text_hi + 50; break;         /* outside */
        default:
            s = text_lo + (uint64_t)(rand() % (int)(text_hi - text_lo));
            x = s + 1 + (uint64_t)(rand() % 400);
        }
        if (relative && s != 0) { s -= bias; x -= bias; }
        en[i].pc_start = s;
        en[i].pc_end = x;
        en[i].var = (uint32_t)(rand() % 4);
        en[i].loc = VPF_LOC_CONST;
        en[i].size = 8;
    }
    struct vpf_meta m;
    memset(&m, 0, sizeof m);
    m.hdr.n_vars = 4;
    m.hdr.n_entries = n;
    m.hdr.flags = relative ? VPF_META_F_RELATIVE : 0;
    m.vars = vars;
    m.entries = en;
    struct vprof_vartable t;
    char err[128];
    uint64_t lo = text_lo + bias * 0, hi = text_hi;
    if (relative) { lo = text_lo; hi = text_hi; }
    int rc = vprof_vartable_build(&t, &m, bias, lo, hi, div, max_elems, err, sizeof err);
    CHECK(rc == 0, "build: %s", err);
    if (rc) { free(en); return; }
    int bad = 0;
    unsigned char *seen = calloc(n, 1);
    for (uint64_t pc = lo - 8; pc < hi + 8 && !bad; pc++) {
        memset(seen, 0, n);
        vprof_vartable_live(&t, pc, mark, seen);
        for (unsigned i = 0; i < n && !bad; i++) {
            uint64_t s = en[i].pc_start + (relative ? bias : 0), x = en[i].pc_end + (relative ? bias : 0);
            if (x < s) x = UINT64_MAX;
            int want = pc >= s && pc < x && pc >= lo && pc < hi;
            if (seen[i] != want) {
                printf("pc %#llx entry %u [%#llx,%#llx): found %d times, want %d\n",
                       (unsigned long long)pc, i, (unsigned long long)s, (unsigned long long)x,
                       seen[i], want);
                bad = 1;
            }
        }
    }
    CHECK(!bad, "seed %u div %llu cap %llu: every entry found exactly once where live", seed,
          (unsigned long long)div, (unsigned long long)max_elems);
    free(seen);
    vprof_vartable_free(&t);
    free(en);
}

/* An EXPR entry's value with program prog (NULL: none). */
static int rx(const char *prog, unsigned kind, unsigned size, const struct vprof_regs *r,
              uint64_t bias, uint64_t *out)
{
    struct vpf_loc_entry e;
    memset(&e, 0, sizeof e);
    e.loc = VPF_LOC_EXPR;
    e.size = (uint8_t)size;
    e.reg = VPF_RSP;            /* frame base: rsp + 16 */
    e.fb_offset = 16;
    struct vpf_var_desc v;
    memset(&v, 0, sizeof v);
    v.kind = (uint8_t)kind;
    v.size = (uint8_t)size;
    return vprof_read_value(&e, &v, prog, r, bias, rd, NULL, out);
}

/* The EXPR evaluator on hand-written programs: DWARF's arithmetic,
 * memory reads through the reader, the frame base, narrowing; and every
 * way a program can be wrong, at run time (vprof_read_value) and at load
 * (vpf_expr_check). */
static void test_expr(void)
{
    struct vprof_regs r, callee;
    uint64_t out = 0;
    memset(&r, 0, sizeof r);
    r.r[VPF_RAX] = 0x1234;
    r.r[VPF_RDX] = 10;
    r.r[VPF_RBP] = FAKE_BASE + 256;
    r.r[VPF_RSP] = FAKE_BASE + 1024;
    r.valid = (1u << 17) - 1;
    memset(mem, 0, sizeof mem);
    int64_t m80 = 7, m192 = 3;
    memcpy(mem + 256 - 80, &m80, 8);
    memcpy(mem + 256 - 192, &m192, 8);
    uint32_t word = 0xfffffff0u;
    memcpy(mem + 1024 + 16 + 8, &word, 4);

    /* postgres' lazy_scan_prune p: *(rbp-80) + *(rbp-192) * 0xa0c */
    CHECK(rx("r6-80 d8 r6-192 d8 #2572 mul add", VPF_KIND_UINT, 8, &r, 0, &out) == 0 &&
          out == 7 + 3 * 2572, "memory words, mul, add: %llu", (unsigned long long)out);
    CHECK(rx("r1-1", VPF_KIND_SINT, 4, &r, 0, &out) == 0 && out == 9, "rdx - 1");
    CHECK(rx("r0 #255 and", VPF_KIND_UINT, 1, &r, 0, &out) == 0 && out == 0x34, "rax & 0xff");
    CHECK(rx("#0 r1 sub", VPF_KIND_SINT, 4, &r, 0, &out) == 0 && (int64_t)out == -10,
          "0 - rdx, sign-extended from 4 bytes");
    CHECK(rx("#0 r1 sub", VPF_KIND_UINT, 2, &r, 0, &out) == 0 && out == 0xfff6,
          "narrowed to the variable's 2 bytes");
    CHECK(rx("f+8 d4", VPF_KIND_SINT, 4, &r, 0, &out) == 0 && (int64_t)out == -16,
          "frame base (rsp + 16) + 8, 4-byte read");
    CHECK(rx("a4096 d8", VPF_KIND_UINT, 8, &r, FAKE_BASE - 4096 + 256 - 80, &out) == 0 &&
          out == 7, "link-time address + load bias");
    CHECK(rx("r0 r1 sub #2 shr", VPF_KIND_UINT, 8, &r, 0, &out) == 0 &&
          out == (0x1234 - 10) >> 2, "(rax - rdx) >> 2");
    CHECK(rx("#-8 #1 shr", VPF_KIND_UINT, 8, &r, 0, &out) == 0 && out == 0x7ffffffffffffffcull,
          "shr is logical");
    CHECK(rx("#-8 #1 shra", VPF_KIND_SINT, 8, &r, 0, &out) == 0 && (int64_t)out == -4, "shra");
    CHECK(rx("#1 #64 shl", VPF_KIND_UINT, 8, &r, 0, &out) == 0 && out == 0, "shl by 64: 0");
    CHECK(rx("#-7 #2 div", VPF_KIND_SINT, 8, &r, 0, &out) == 0 && (int64_t)out == -3, "div signed");
    CHECK(rx("#-9223372036854775808 #-1 div", VPF_KIND_SINT, 8, &r, 0, &out) == 0 &&
          out == 1ull << 63, "INT64_MIN / -1 wraps, no trap");
    CHECK(rx("#7 #3 mod", VPF_KIND_SINT, 8, &r, 0, &out) == 0 && out == 1, "mod");
    CHECK(rx("#-2 #2 udiv", VPF_KIND_UINT, 8, &r, 0, &out) == 0 && out == ~0ull >> 1,
          "udiv unsigned");
    CHECK(rx("#1 #0 udiv", VPF_KIND_SINT, 8, &r, 0, &out) == VPROF_READ_UNDEF, "udiv by zero");
    CHECK(rx("#-1 #0 lt", VPF_KIND_BOOL, 1, &r, 0, &out) == 0 && out == 1, "lt signed");
    CHECK(rx("#5 neg abs not", VPF_KIND_SINT, 8, &r, 0, &out) == 0 && (int64_t)out == ~5ll,
          "neg, abs, not");
    CHECK(rx("#1 #2 #3 rot", VPF_KIND_SINT, 8, &r, 0, &out) == 0 && out == 2,
          "rot: the top becomes the third");
    CHECK(rx("#1 #2 #3 rot drop drop", VPF_KIND_SINT, 8, &r, 0, &out) == 0 && out == 3, "rot");
    CHECK(rx("#1 #2 swap", VPF_KIND_SINT, 8, &r, 0, &out) == 0 && out == 1, "swap");
    CHECK(rx("#1 #2 over", VPF_KIND_SINT, 8, &r, 0, &out) == 0 && out == 1, "over");
    CHECK(rx("#1 #2 #3 k2", VPF_KIND_SINT, 8, &r, 0, &out) == 0 && out == 1, "pick 2");
    CHECK(rx("#4 dup mul", VPF_KIND_SINT, 8, &r, 0, &out) == 0 && out == 16, "dup");

    /* failures: never a value */
    CHECK(rx("#1 #0 div", VPF_KIND_SINT, 8, &r, 0, &out) == VPROF_READ_UNDEF, "div by zero");
    CHECK(rx("#1 #0 mod", VPF_KIND_SINT, 8, &r, 0, &out) == VPROF_READ_UNDEF, "mod by zero");
    CHECK(rx("#16 d8", VPF_KIND_SINT, 8, &r, 0, &out) == VPROF_READ_FAULT, "deref fault");
    CHECK(rx("r0 d4", VPF_KIND_SINT, 4, &r, 0, &out) == VPROF_READ_FAULT, "deref of a register value");
    memset(&callee, 0, sizeof callee);
    callee.r[VPF_RBX] = 1;
    callee.valid = 1u << VPF_RBX;
    CHECK(rx("r3 r1 add", VPF_KIND_SINT, 8, &callee, 0, &out) == VPROF_READ_NOREG,
          "caller-saved register unknown in a caller frame");
    CHECK(rx("f+8 d8", VPF_KIND_SINT, 8, &callee, 0, &out) == VPROF_READ_NOREG,
          "frame base register unknown");
    CHECK(rx("r3-1", VPF_KIND_SINT, 8, &callee, 0, &out) == 0 && out == 0, "callee-saved known");
    static const char *const bad[] = {
        "add", "#1 add", "drop", "#1 #2 #3 k3", "r17", "r99", "d8", "#1 d3", "#1 d16",
        "#1 bogus", "#1  #2", "#1 ", " #1", "", "#99999999999999999999", "#1 #2 #3 #4 #5 #6 #7 #8 #9",
        "r1x", "k8", "f8", "#1 drop", "#1 #1 #1 #1 #1 #1 #1 #1 dup",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        CHECK(rx(bad[i], VPF_KIND_SINT, 8, &r, 0, &out) == VPROF_READ_BAD,
              "malformed program \"%s\" fails at run time", bad[i]);
        CHECK(vpf_expr_check(bad[i]) != NULL, "malformed program \"%s\" refused at load", bad[i]);
    }
    CHECK(rx(NULL, VPF_KIND_SINT, 8, &r, 0, &out) == VPROF_READ_BAD, "EXPR without a program");
    /* 33 operations: one too many (the depth stays within 8) */
    char longp[512] = "#1";
    for (int i = 0; i < 16; i++)
        strcat(longp, " #1 add");
    CHECK(vpf_expr_check(longp) != NULL && rx(longp, VPF_KIND_SINT, 8, &r, 0, &out) == VPROF_READ_BAD,
          "33 operations refused");
    longp[strlen(longp) - 7] = 0;
    CHECK(vpf_expr_check(longp) == NULL && rx(longp, VPF_KIND_SINT, 8, &r, 0, &out) == 0 &&
          out == 16, "31 operations run");
    /* 256 bytes: too long however few the operations */
    char wide[300] = "#1";
    while (strlen(wide) < 250)
        strcat(wide, " r1+1000000000");
    CHECK(vpf_expr_check(wide) != NULL, "program text over 255 bytes refused");
    char fmt[128];
    vpf_expr_format("r6-80 d8 f+8 #2572 mul add", fmt, sizeof fmt);
    CHECK(!strcmp(fmt, "rbp-80 deref8 fb+8 2572 mul add"), "printed readably: %s", fmt);
}

/* The variable table refuses EXPR entries with an invalid program (and
 * counts them) but keeps the valid ones. */
static void test_expr_refused(void)
{
    static const char strtab[] = "\0r1-1\0#1 add\0r0 #255 and";
    struct vpf_var_desc var;
    memset(&var, 0, sizeof var);
    var.size = 8;
    struct vpf_loc_entry en[4];
    memset(en, 0, sizeof en);
    var.kind = VPF_KIND_UINT;
    for (int i = 0; i < 4; i++) {
        en[i].pc_start = 0x401000 + 16 * (uint64_t)i;
        en[i].pc_end = en[i].pc_start + 16;
        en[i].loc = VPF_LOC_EXPR;
        en[i].size = 8;
    }
    en[0].offset = 1;           /* valid */
    en[1].offset = 6;           /* stack underflow */
    en[2].offset = 13;          /* valid */
    en[3].offset = 13;
    en[3].flags = VPF_LF_DEREF; /* not for EXPR */
    struct vpf_meta m;
    memset(&m, 0, sizeof m);
    m.hdr.n_vars = 1;
    m.hdr.n_entries = 4;
    m.hdr.strtab_size = sizeof strtab;
    m.vars = &var;
    m.entries = en;
    m.strtab = strtab;
    struct vprof_vartable t;
    char err[128];
    int rc = vprof_vartable_build(&t, &m, 0, 0x401000, 0x402000, 1, 1u << 20, err, sizeof err);
    CHECK(rc == 0 && t.n_refused == 2, "two invalid EXPR entries refused (%u)", t.n_refused);
    unsigned char seen[4] = {0};
    for (uint64_t pc = 0x401000; pc < 0x401040; pc++)
        vprof_vartable_live(&t, pc, mark, seen);
    CHECK(seen[0] == 16 && seen[1] == 0 && seen[2] == 16 && seen[3] == 0,
          "only the valid ones are live (%u %u %u %u)", seen[0], seen[1], seen[2], seen[3]);
    /* the valid ones are decoded once, into plans that read what the
     * general path reads */
    struct vprof_regs r;
    memset(&r, 0, sizeof r);
    r.r[VPF_RAX] = 0x1234;
    r.r[VPF_RDX] = 10;
    r.valid = 3;
    uint64_t a = 0, b = 0;
    CHECK(rc == 0 && t.hot[0].plan.op == VPROF_PLAN_EXPR && t.hot[2].plan.op == VPROF_PLAN_EXPR &&
          t.code_n == 4, "EXPR plans, 4 instructions decoded");
    CHECK(rc == 0 && vprof_plan_read(&t.hot[0].plan, &r, rd, NULL, &a) == 0 && a == 9 &&
          vprof_read_value(&en[0], &var, strtab + 1, &r, 0, rd, NULL, &b) == 0 && b == a,
          "plan and general path agree (rdx - 1 = %llu, %llu)", (unsigned long long)a,
          (unsigned long long)b);
    CHECK(rc == 0 && vprof_plan_read(&t.hot[2].plan, &r, rd, NULL, &a) == 0 && a == 0x34,
          "plan: rax & 0xff");
    r.valid = 1;
    CHECK(rc == 0 && vprof_plan_read(&t.hot[0].plan, &r, rd, NULL, &a) == VPROF_READ_NOREG,
          "plan: unknown register");
    if (rc == 0)
        vprof_vartable_free(&t);
}

int main(void)
{
    test_value_read();
    test_expr();
    test_expr_refused();
    for (unsigned s = 1; s <= 12; s++)
        test_vartable(s, s % 3 == 0 ? 1 : 2, s % 4 == 0 ? 500 : 1u << 26, s % 2);
    printf("%d checks, %d failed\n", checks, fails);
    return fails != 0;
}
