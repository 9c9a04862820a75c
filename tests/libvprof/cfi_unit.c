/* Unit tests of the unwind rule table (libvprof/cfi.c), built with ASan
 * and UBSan by t_cfi_unit.sh:
 *  - the table of this very executable answers for its own functions, and
 *    a frame-pointer function's rule is CFA = rbp + 16 with rbp at CFA-16;
 *  - malformed CFI never makes the builder or the lookup read outside the
 *    memory it was given: a copy of this executable's .eh_frame_hdr and
 *    .eh_frame is corrupted (random bytes, truncation, huge counts and
 *    lengths, pointers out of range) thousands of times and compiled from
 *    a buffer whose bounds ASan watches; lookups all over the range must
 *    return either nothing or a rule with sane fields. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfi.h"

static int fails, checks;
#define CHECK(c, ...) do { checks++; if (!(c)) { fails++; printf("FAIL %s:%d: ", __FILE__, __LINE__); \
    printf(__VA_ARGS__); printf("\n"); } } while (0)

__attribute__((noinline, optimize("no-omit-frame-pointer"))) long fp_function(long x)
{
    volatile long a[4] = {x, x + 1, x + 2, x + 3};
    return a[0] + a[3];
}

struct self {
    uint64_t text_lo, text_hi;
    const unsigned char *hdr;
    uint64_t seg_lo, seg_hi;    /* the readable segment holding the CFI */
};

static int find_self(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct self *s = data;
    const ElfW(Phdr) *eh = NULL;
    s->text_lo = UINT64_MAX;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uint64_t lo = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_GNU_EH_FRAME)
            eh = ph;
        else if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
            if (lo < s->text_lo) s->text_lo = lo;
            if (lo + ph->p_memsz > s->text_hi) s->text_hi = lo + ph->p_memsz;
        }
    }
    if (!eh)
        return 1;
    s->hdr = (const unsigned char *)(info->dlpi_addr + eh->p_vaddr);
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uint64_t lo = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && (uint64_t)(uintptr_t)s->hdr >= lo &&
            (uint64_t)(uintptr_t)s->hdr < lo + ph->p_filesz) {
            s->seg_lo = lo;
            s->seg_hi = lo + ph->p_filesz;
        }
    }
    return 1;                   /* the executable only */
}

static void test_self(const struct self *s)
{
    vprof_cfi_clear();
    long n = vprof_cfi_add_object(s->text_lo, s->text_hi, s->hdr, s->seg_lo, s->seg_hi);
    CHECK(n > 10, "this executable's table has rows (%ld)", n);
    struct vprof_cfi_stats st;
    vprof_cfi_get_stats(&st);
    CHECK(st.objects == 1 && st.bad_fdes == 0 && st.fdes > 5, "FDEs %u, rejected %u", st.fdes,
          st.bad_fdes);
    /* inside fp_function's body, after push rbp; mov rsp,rbp */
    uint64_t f = (uint64_t)(uintptr_t)&fp_function;
    const struct vprof_cfi_rule *r = NULL;
    for (uint64_t pc = f + 4; pc < f + 40 && !(r && r->cfa_reg == 6); pc++)
        r = vprof_cfi_find(pc);
    CHECK(r && r->kind == VPROF_CFI_STEP && r->cfa_reg == 6 && r->cfa_off == 16 &&
          (r->saved & (1u << 6)) && r->save[1] == -2,
          "frame-pointer rule: CFA = rbp + 16, rbp at CFA - 16");
    r = vprof_cfi_find(f);      /* first instruction: CFA = rsp + 8 */
    CHECK(r && r->kind == VPROF_CFI_STEP && r->cfa_reg == 7 && r->cfa_off == 8 && r->saved == 0,
          "entry rule: CFA = rsp + 8, nothing saved");
    CHECK(vprof_cfi_find(s->text_hi + 100) == NULL, "no rule outside the object");
    CHECK(vprof_cfi_in_object(f) && !vprof_cfi_in_object(s->text_hi), "object range");
}

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static void sane(const struct vprof_cfi_rule *r)
{
    if (!r)
        return;
    CHECK(r->kind <= VPROF_CFI_SIGNAL, "kind %u", r->kind);
    if (r->kind == VPROF_CFI_STEP)
        CHECK(r->cfa_reg < 16 && (r->saved & ~0xf048u) == 0 && (r->undef & ~0xf048u) == 0,
              "rule fields in range");
}

/* The segment holds ASan's redzones around our own constants: copied
 * without ASan's checks. */
__attribute__((no_sanitize_address)) static void copy_segment(unsigned char *dst, uint64_t src,
                                                              size_t len)
{
    const volatile unsigned char *p = (const volatile unsigned char *)(uintptr_t)src;
    for (size_t i = 0; i < len; i++)
        dst[i] = p[i];
}

/* Corrupts a private copy of the CFI segment and compiles it. The copy is
 * malloc'ed to its exact size: ASan reports any read past it. */
static void test_hostile(const struct self *s, int rounds)
{
    size_t len = s->seg_hi - s->seg_lo;
    size_t hdr_off = (size_t)((uint64_t)(uintptr_t)s->hdr - s->seg_lo);
    unsigned char *copy = malloc(len);
    long built = 0, rejected = 0;
    for (int i = 0; i < rounds; i++) {
        copy_segment(copy, s->seg_lo, len);
        size_t use = len;
        int kind = (int)(next() % 6);
        int n = 1 + (int)(next() % 16);
        for (int k = 0; k < n; k++) {
            size_t at = kind == 0 ? hdr_off + next() % 64 : next() % len;
            switch (kind) {
            case 0: case 1: copy[at] = (unsigned char)next(); break;       /* random bytes */
            case 2: copy[at] ^= (unsigned char)(1u << (next() % 8)); break; /* bit flips */
            case 3: memset(copy + at, 0xff, len - at < 4 ? len - at : 4); break; /* huge lengths */
            case 4: memset(copy + at, 0x80, len - at < 8 ? len - at : 8); break; /* long LEBs */
            default: break;
            }
        }
        if (kind == 5)          /* truncated: the buffer ends early */
            use = hdr_off + 12 + next() % (len - hdr_off - 12);
        unsigned char *buf = use == len ? copy : malloc(use);
        if (buf != copy)
            memcpy(buf, copy, use);
        vprof_cfi_clear();
        /* the CFI's pointers are relative to where it lies: moved with
         * the copy, it describes code moved by as much */
        uint64_t shift = (uint64_t)(uintptr_t)buf - s->seg_lo;
        uint64_t lo = s->text_lo + shift, hi = s->text_hi + shift;
        long r = vprof_cfi_add_object(lo, hi, buf + hdr_off, (uint64_t)(uintptr_t)buf,
                                      (uint64_t)(uintptr_t)buf + use);
        if (r < 0)
            rejected++;
        else
            built++;
        for (int k = 0; k < 64; k++)
            sane(vprof_cfi_find(lo + next() % (hi - lo + 64)));
        if (buf != copy)
            free(buf);
    }
    free(copy);
    printf("hostile CFI: %d rounds, %ld built, %ld rejected\n", rounds, built, rejected);
    CHECK(built > 0 && rejected > 0, "some corrupted tables still build, some are rejected");
    vprof_cfi_clear();
}

int main(void)
{
    struct self s;
    memset(&s, 0, sizeof s);
    dl_iterate_phdr(find_self, &s);
    if (!s.hdr) {
        printf("no .eh_frame_hdr in this executable\n");
        return 1;
    }
    test_self(&s);
    test_hostile(&s, 3000);
    printf("%d checks, %d failed\n", checks, fails);
    return fails != 0;
}
