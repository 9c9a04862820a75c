/* Unit test of VPROF_STACKS's walk (libvprof/stacks.c), built with
 * ASan+UBSan by t_stacks_unit.sh: crafted signal contexts over a fake
 * stack and a fake "text" (real memory, so the guarded reads are direct),
 * with a stub of the core's unwinder (unwind.h) that plays libunwind by
 * returning the true chain. Checks the frame-pointer walk, a tick on a
 * function's first instruction and after its push, a leaf outside the
 * text handed over to frame pointers, the bottom learnt once and then
 * found without the unwinder, a library calling back into the program,
 * truncation, a broken chain, chains taken from another walk (the core's
 * values walk: whole, continued by frame pointers, cut at the bottom), a
 * full file, and that committed records are in the file while it is still
 * open (the shared mapping). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "memread.h"
#include "stacks.h"
#include "unwind.h"
#include "vprof_format.h"

static int fails, checks;
#define CHECK(c, ...) do { checks++; if (!(c)) { fails++; printf("FAIL %s:%d: ", __FILE__, __LINE__); \
    printf(__VA_ARGS__); printf("\n"); } } while (0)

/* "text": 4 KiB of code bytes; its addresses are what in_text() sees */
static unsigned char text[4096] __attribute__((aligned(64)));
#define T(off) ((uint64_t)(uintptr_t)text + (off))
#define LIB(off) (0x7f0000000000ull + (off))       /* outside the text */
static uint64_t stack[512] __attribute__((aligned(16)));
#define S(i) ((uint64_t)(uintptr_t)&stack[i])

/* ---- the unwinder stub: the true chain (callers' PCs) ---- */
static uint64_t truth[64];
static uint64_t truth_rbp[64];      /* rbp restored in that frame (0: not known) */
static unsigned n_truth, unwind_calls;

int vprof_unwind(const ucontext_t *uc, unsigned max_depth, vprof_frame_fn fn, void *arg)
{
    (void)uc;
    unwind_calls++;
    for (unsigned d = 1; d <= max_depth && d <= n_truth; d++) {
        struct vprof_regs r;
        memset(&r, 0, sizeof r);
        r.r[VPF_RIP] = truth[d - 1];
        r.valid = 1u << VPF_RIP;
        if (truth_rbp[d - 1]) {
            r.r[VPF_RBP] = truth_rbp[d - 1];
            r.valid |= 1u << VPF_RBP;
        }
        if (fn(arg, d, truth[d - 1], &r)) return 0;
    }
    return max_depth >= n_truth ? VPROF_UNWIND_END : 0;
}

static ucontext_t ctx(uint64_t rip, uint64_t rsp, uint64_t rbp)
{
    ucontext_t uc;
    memset(&uc, 0, sizeof uc);
    uc.uc_mcontext.gregs[REG_RIP] = (greg_t)rip;
    uc.uc_mcontext.gregs[REG_RSP] = (greg_t)rsp;
    uc.uc_mcontext.gregs[REG_RBP] = (greg_t)rbp;
    return uc;
}

/* A frame at stack index i: saved rbp, return address. */
static void frame(unsigned i, uint64_t saved_rbp, uint64_t ret)
{
    stack[i] = saved_rbp;
    stack[i + 1] = ret;
}

static char path[256];
static struct vpf_recfile_r rf;
static uint64_t seen;

/* The next record of the file, reopened (as a reader would, while the
 * writer still has it mapped). */
static const struct vpf_stack_rec *next_rec(void)
{
    vpf_err e;
    if (rf.base) vpf_recfile_close_r(&rf);
    if (vpf_stacks_open(path, &rf, &e) < 0) { printf("open: %s\n", e.msg); exit(1); }
    if (seen >= rf.n) return NULL;
    return vpf_stacks_rec(&rf, seen++);
}

static int same(const struct vpf_stack_rec *r, const uint64_t *want, unsigned n)
{
    if (!r || r->depth != n) return 0;
    for (unsigned i = 0; i < n; i++) if (vpf_stack_pcs_c(r)[i] != want[i]) return 0;
    return 1;
}

static void dump(const char *what, const struct vpf_stack_rec *r)
{
    if (!r) { printf("  %s: no record\n", what); return; }
    printf("  %s: depth %u flags %#x:", what, r->depth, r->flags);
    for (unsigned i = 0; i < r->depth; i++) printf(" %#llx", (unsigned long long)vpf_stack_pcs_c(r)[i]);
    printf("\n");
}

/* A tick whose chain another walk found: its callers pc[0..n), then it
 * stopped `how`; the record written. */
static const struct vpf_stack_rec *shared(const ucontext_t *uc, const uint64_t *pc, unsigned n,
                                          int how, uint64_t rbp, uint64_t time_ns)
{
    struct vprof_stack_walk sw;
    if (!vprof_stacks_begin(&sw, uc))
        return NULL;
    for (unsigned i = 0; i < n; i++)
        vprof_stacks_add(&sw, pc[i]);
    vprof_stacks_end(&sw, uc, how, rbp, time_ns, 1, 7);
    return next_rec();
}

int main(void)
{
    memset(text, 0x90, sizeof text);               /* nops: frames set up */
    text[0x100] = 0x55;                             /* push %rbp */
    text[0x101] = 0x48; text[0x102] = 0x89; text[0x103] = 0xe5;   /* mov %rsp,%rbp */
    vprof_memread_clear_safe();
    vprof_memread_add_safe(T(0), T(sizeof text));
    vprof_memread_set_stack(S(0), S(512));
    snprintf(path, sizeof path, "%s/stacks.unit", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    unlink(path);
    int fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
    char err[256];
    CHECK(fd >= 0 && vprof_stacks_open(fd, 6, 14, 1000, 1, T(0), T(sizeof text), err, sizeof err) == 0,
          "open: %s", err);

    /* 1. leaf mid-function; f1 < f2 < main (program) < R (a library: the
     * bottom, saved rbp 1 as glibc leaves it); the unwinder knows more
     * below R: another library frame and _start, in the program */
    uint64_t R = LIB(0x1000);
    frame(100, S(110), T(0x210) + 1);               /* leaf's frame: ret into f1 */
    frame(110, S(120), T(0x310) + 1);               /* f1's: ret into f2 */
    frame(120, S(130), T(0x410) + 1);               /* f2's: ret into main */
    frame(130, 1, R);                               /* main's: ret into the library */
    uint64_t want1[] = {T(0x50), T(0x210), T(0x310), T(0x410), R - 1};
    n_truth = 6;
    memcpy(truth, (uint64_t[]){T(0x210), T(0x310), T(0x410), R - 1, LIB(0x2000) - 1, T(0x20) - 1},
           6 * sizeof *truth);
    ucontext_t uc = ctx(T(0x50), S(96), S(100));
    vprof_stacks_tick(&uc, 10, 1, 7);
    const struct vpf_stack_rec *r = next_rec();
    CHECK(same(r, want1, 5) && r->tid == 7 && r->time_ns == 10 && (r->flags & VPF_REC_COMMITTED),
          "first tick: the chain cut at the library frame below main");
    if (!same(r, want1, 5)) dump("first", r);
    CHECK(r && (r->flags & VPF_STK_UNWOUND) && !(r->flags & VPF_STK_TRUNCATED) && unwind_calls == 1,
          "first tick: the unwinder asked once, to learn what lies below R (flags %#x, calls %u)",
          r ? r->flags : 0, unwind_calls);

    /* 2. the same again: R is a known bottom, frame pointers only */
    vprof_stacks_tick(&uc, 11, 3, 7);
    r = next_rec();
    CHECK(same(r, want1, 5) && !(r->flags & (VPF_STK_UNWOUND | VPF_STK_TRUNCATED)) && unwind_calls == 1
          && r->weight == 3, "second tick: the same chain without the unwinder");

    /* 3. on a function's first instruction (push %rbp): its return address
     * at [rsp], rbp still the caller's (f1's frame) */
    stack[98] = T(0x210) + 1;
    uc = ctx(T(0x100), S(98), S(110));
    vprof_stacks_tick(&uc, 12, 1, 7);
    uint64_t want3[] = {T(0x100), T(0x210), T(0x310), T(0x410), R - 1};
    r = next_rec();
    CHECK(same(r, want3, 5), "first instruction: the caller is not skipped");
    if (!same(r, want3, 5)) dump("entry", r);

    /* 4. after the push: the return address at [rsp + 8] */
    stack[97] = S(110);
    uc = ctx(T(0x101), S(97), S(110));
    uint64_t want4[] = {T(0x101), T(0x210), T(0x310), T(0x410), R - 1};
    vprof_stacks_tick(&uc, 13, 1, 7);
    r = next_rec();
    CHECK(same(r, want4, 5), "after push %%rbp: the caller is not skipped");
    if (!same(r, want4, 5)) dump("push", r);

    /* 5. leaf in a library (memset): the unwinder up to the first program
     * frame, whose restored rbp continues the walk */
    n_truth = 2;
    memcpy(truth, (uint64_t[]){LIB(0x3000) - 1, T(0x310)}, 2 * sizeof *truth);
    truth_rbp[1] = S(120);
    unsigned calls = unwind_calls;
    uc = ctx(LIB(0x5000), S(90), 0x1234567);
    vprof_stacks_tick(&uc, 14, 1, 7);
    uint64_t want5[] = {LIB(0x5000), LIB(0x3000) - 1, T(0x310), T(0x410), R - 1};
    r = next_rec();
    CHECK(same(r, want5, 5) && (r->flags & VPF_STK_UNWOUND) && unwind_calls == calls + 1,
          "leaf outside the text: unwinder to the program, then frame pointers");
    if (!same(r, want5, 5)) dump("lib leaf", r);
    truth_rbp[1] = 0;

    /* 6. a library calling back into the program (qsort's comparator):
     * the walk leaves at R2, above which the unwinder finds program frames
     * again; the record is the unwinder's, cut at the known bottom R */
    uint64_t R2 = LIB(0x4000);
    frame(200, 1, R2);                              /* cmp's frame: ret into msort */
    n_truth = 7;
    memcpy(truth, (uint64_t[]){R2 - 1, LIB(0x4100) - 1, T(0x610), T(0x410), R - 1,
                               LIB(0x2000) - 1, T(0x20) - 1}, 7 * sizeof *truth);
    uc = ctx(T(0x500), S(198), S(200));
    calls = unwind_calls;
    vprof_stacks_tick(&uc, 15, 1, 8);
    uint64_t want6[] = {T(0x500), R2 - 1, LIB(0x4100) - 1, T(0x610), T(0x410), R - 1};
    r = next_rec();
    CHECK(same(r, want6, 6) && (r->flags & VPF_STK_UNWOUND) && !(r->flags & VPF_STK_TRUNCATED),
          "callback: the library frames and the program's above them, cut at the bottom");
    if (!same(r, want6, 6)) dump("callback", r);
    vprof_stacks_tick(&uc, 16, 1, 8);
    r = next_rec();
    CHECK(same(r, want6, 6) && unwind_calls == calls + 2,
          "callback again: R2 is known not to be a bottom, so the unwinder walks it each time");

    /* 7. deeper than the 6 frames recorded: truncated */
    for (unsigned i = 0; i < 10; i++) frame(300 + 4 * i, S(304 + 4 * i), T(0x700 + 16 * i) + 1);
    uc = ctx(T(0x60), S(296), S(300));
    vprof_stacks_tick(&uc, 17, 1, 9);
    r = next_rec();
    CHECK(r && r->depth == 6 && (r->flags & VPF_STK_TRUNCATED) && vpf_stack_pcs_c(r)[5] == T(0x740),
          "a chain deeper than VPROF_STACKS: 6 frames, flagged truncated");

    /* 8. a broken chain (saved rbp below the frame): the unwinder's chain */
    frame(400, S(390), T(0x810) + 1);
    n_truth = 3;
    memcpy(truth, (uint64_t[]){T(0x810), T(0x410), R - 1}, 3 * sizeof *truth);
    calls = unwind_calls;
    uc = ctx(T(0x80), S(398), S(400));
    vprof_stacks_tick(&uc, 18, 1, 9);
    uint64_t want8[] = {T(0x80), T(0x810), T(0x410), R - 1};
    r = next_rec();
    CHECK(same(r, want8, 4) && unwind_calls == calls + 1, "broken frame pointers: the unwinder's chain");
    if (!same(r, want8, 4)) dump("broken", r);

    /* 9. chains taken from another walk (the core's values walk): the
     * callers it found, then where it stopped */
    uc = ctx(T(0x50), S(96), S(100));               /* the first tick's */
    calls = unwind_calls;
    r = shared(&uc, want1 + 1, 4, VPROF_STK_COMPLETE, 0, 21);
    CHECK(same(r, want1, 5) && !(r->flags & VPF_STK_TRUNCATED) && unwind_calls == calls,
          "a walk that reached the bottom: its chain, no other walk");
    if (!same(r, want1, 5)) dump("complete", r);

    r = shared(&uc, want1 + 1, 1, VPROF_STK_FROM_FP, S(110), 22);     /* f1's frame pointer */
    CHECK(same(r, want1, 5) && !(r->flags & VPF_STK_TRUNCATED) && unwind_calls == calls,
          "a walk that stopped at a program frame: on by its frame pointer to the bottom");
    if (!same(r, want1, 5)) dump("from fp", r);

    uint64_t many[8];
    for (unsigned i = 0; i < 8; i++) many[i] = T(0x900 + 16 * i);
    r = shared(&uc, many, 8, VPROF_STK_COMPLETE, 0, 23);
    CHECK(r && r->depth == 6 && (r->flags & VPF_STK_TRUNCATED) && vpf_stack_pcs_c(r)[5] == T(0x940),
          "more callers than VPROF_STACKS: 6 kept, flagged truncated");

    /* the walk ran to the thread's outermost frame (_start): cut at the
     * library frame below main */
    uint64_t whole[] = {T(0x410), R - 1, LIB(0x2000) - 1, T(0x20) - 1};
    uint64_t want9[] = {T(0x50), T(0x410), R - 1};
    r = shared(&uc, whole, 4, VPROF_STK_OUTERMOST, 0, 24);
    CHECK(same(r, want9, 3) && !(r->flags & VPF_STK_TRUNCATED) && unwind_calls == calls,
          "a walk to the outermost frame: cut at the bottom");
    if (!same(r, want9, 3)) dump("outermost", r);

    /* ... with more frames than the record kept: the stack walk's own */
    r = shared(&uc, many, 7, VPROF_STK_OUTERMOST, 0, 25);
    CHECK(same(r, want1, 5) && r->time_ns == 25, "outermost, frames lost: walked again alone");
    if (!same(r, want1, 5)) dump("outermost, lost", r);

    /* 10. the file holds 14 records: the 15th tick is dropped, counted */
    struct vprof_stack_walk sw;
    CHECK(!vprof_stacks_begin(&sw, &uc), "full file: no record to begin");
    vprof_stacks_tick(&uc, 19, 1, 9);
    r = next_rec();
    CHECK(r == NULL && vpf_stacks_hdr(&rf)->dropped == 2 && rf.n == 14,
          "full file: the ticks are dropped and counted (n %llu)", (unsigned long long)rf.n);

    uint64_t n, dropped;
    vprof_stacks_close(&n, &dropped);
    CHECK(n == 14 && dropped == 2, "close: 14 stored, 2 dropped");
    vpf_recfile_close_r(&rf);
    vpf_err e;
    CHECK(vpf_stacks_open(path, &rf, &e) == 0 && (vpf_stacks_hdr(&rf)->flags & VPF_STACKS_FLAG_CLEAN)
          && vpf_stacks_hdr(&rf)->frames == 6 && vpf_stacks_hdr(&rf)->hz == 1000,
          "after close: marked clean, header intact");
    vpf_recfile_close_r(&rf);
    vprof_stacks_tick(&uc, 20, 1, 9);               /* closed: nothing, no crash */

    /* a bad header: frames out of range, named by offset */
    struct vpf_stacks_header h;
    int f2 = open(path, O_RDWR);
    CHECK(f2 >= 0 && pread(f2, &h, sizeof h, 0) == (ssize_t)sizeof h, "reread header");
    h.frames = 1000;
    CHECK(pwrite(f2, &h, sizeof h, 0) == (ssize_t)sizeof h, "rewrite header");
    close(f2);
    CHECK(vpf_stacks_open(path, &rf, &e) < 0 && strstr(e.msg, "offset 48: frames 1000"),
          "frames out of range: rejected at offset 48 (%s)", e.msg);
    unlink(path);
    printf("%d checks, %d failed\n", checks, fails);
    return fails != 0;
}
