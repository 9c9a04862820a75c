/* callgraph.c - histogram and arc table behind gmon.out.
 *
 * glibc's mcount keys an arc by (frompc bucket, selfpc), where the bucket is
 * (frompc - lowpc) / (HASHFRACTION * sizeof(ARCINDEX)) = 16 bytes, drops
 * arcs whose frompc lies outside the text, and writes the bucket's first
 * address as from_pc. We keep the same key and the same rules, but in a
 * lock-free open-addressing table (CAS to claim a slot, atomic increments),
 * so concurrent threads never lose a count the way glibc's single "busy"
 * flag does. A slot seen half-written is skipped rather than waited for (a
 * signal handler may interrupt its writer); the duplicate arc this can
 * create is summed by every gmon reader (binutils gprof too). */
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "callgraph.h"
#include "vprof_format.h"

#define HIST_BYTES_PER_BIN 4        /* HISTFRACTION * sizeof(HISTCOUNTER) */
#define FROM_BUCKET 16              /* HASHFRACTION * sizeof(ARCINDEX) */
#define MAX_PROBE 64

struct arc_slot {
    uint32_t state;                 /* 0 empty, 1 being written, 2 ready */
    uint32_t count;
    uint64_t from;                  /* frompc bucket index */
    uint64_t self;                  /* selfpc, run-time */
};

static struct {
    uint64_t lowpc, highpc, textsize, bias;
    uint16_t *bins;
    uint32_t nbins;
    size_t bins_len;
    struct arc_slot *arcs;
    uint64_t arc_mask;
    size_t arcs_len;
    uint64_t arcs_dropped;
    int on;
    unsigned short *pbuf;           /* profil(3) */
    uint64_t pbins, poff;
    unsigned pscale;
} cg;

static void *zmap(size_t n)
{
    void *p = mmap(NULL, n ? n : 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

int vprof_cg_setup(uint64_t lowpc, uint64_t highpc, uint64_t bias, uint64_t arcs)
{
    /* glibc __monstartup: lowpc rounded down, highpc up, to 4 bytes;
     * kcountsize = ROUNDUP(textsize / HISTFRACTION, sizeof(ARCINDEX)). */
    cg.lowpc = lowpc & ~(uint64_t)(HIST_BYTES_PER_BIN - 1);
    cg.highpc = (highpc + HIST_BYTES_PER_BIN - 1) & ~(uint64_t)(HIST_BYTES_PER_BIN - 1);
    cg.textsize = cg.highpc > cg.lowpc ? cg.highpc - cg.lowpc : 0;
    cg.bias = bias;
    uint64_t kcountsize = ((cg.textsize / 2) + 7) & ~(uint64_t)7;
    cg.nbins = (uint32_t)(kcountsize / 2);
    cg.bins_len = kcountsize;
    cg.bins = zmap(cg.bins_len);
    if (!arcs) {
        /* glibc: tolimit = textsize * ARCDENSITY / 100, in [MINARCS, MAXARCS];
         * twice that in slots keeps probes short. */
        uint64_t lim = cg.textsize * 3 / 100;
        if (lim < 50)
            lim = 50;
        if (lim > (1u << 20))
            lim = 1u << 20;
        arcs = 2 * lim;
    }
    uint64_t n = 4096;
    while (n < arcs)
        n <<= 1;
    cg.arc_mask = n - 1;
    cg.arcs_len = n * sizeof(struct arc_slot);
    cg.arcs = zmap(cg.arcs_len);
    if (!cg.bins || !cg.arcs)
        return -1;
    return 0;
}

void vprof_cg_enable(int on)
{
    __atomic_store_n(&cg.on, on, __ATOMIC_RELEASE);
}

void vprof_cg_reset(void)
{
    if (cg.bins)
        memset(cg.bins, 0, cg.bins_len);
    if (cg.arcs)
        memset(cg.arcs, 0, cg.arcs_len);
    cg.arcs_dropped = 0;
}

uint64_t vprof_cg_arcs_dropped(void)
{
    return __atomic_load_n(&cg.arcs_dropped, __ATOMIC_RELAXED);
}

void vprof_cg_set_profil(unsigned short *buf, uint64_t bufsiz, uint64_t offset, unsigned scale)
{
    __atomic_store_n(&cg.pbuf, (unsigned short *)NULL, __ATOMIC_RELEASE);
    if (!buf || !scale)
        return;
    cg.pbins = bufsiz / sizeof(unsigned short);
    cg.poff = offset;
    cg.pscale = scale;
    __atomic_store_n(&cg.pbuf, buf, __ATOMIC_RELEASE);
}

void vprof_cg_hist_tick(uint64_t pc, unsigned weight)
{
    unsigned short *pb = __atomic_load_n(&cg.pbuf, __ATOMIC_ACQUIRE);
    if (pb && pc >= cg.poff) {
        /* glibc profil: index = ((pc - offset) / 2) * scale / 65536 */
        uint64_t i = ((pc - cg.poff) / 2) * (uint64_t)cg.pscale / 65536;
        if (i < cg.pbins)
            __atomic_fetch_add(&pb[i], (unsigned short)weight, __ATOMIC_RELAXED);
    }
    if (!__atomic_load_n(&cg.on, __ATOMIC_ACQUIRE))
        return;
    if (pc >= cg.lowpc && pc < cg.highpc && cg.nbins) {
        /* the bin gprof will attribute pc to: bins evenly span the range */
        uint64_t i = (pc - cg.lowpc) * cg.nbins / cg.textsize;
        if (i < cg.nbins)
            __atomic_fetch_add(&cg.bins[i], (uint16_t)weight, __ATOMIC_RELAXED);
    }
}

/* Runs inside every profiled function's prologue: general registers only,
 * so the caller's floating-point argument registers survive untouched. */
__attribute__((target("general-regs-only"), visibility("hidden")))
void vprof_mcount_internal(uint64_t frompc, uint64_t selfpc)
{
    if (!__atomic_load_n(&cg.on, __ATOMIC_RELAXED))
        return;
    uint64_t off = frompc - cg.lowpc;
    if (off > cg.textsize)          /* glibc's test, '>' included */
        return;
    uint64_t from = off / FROM_BUCKET;
    uint64_t h = (selfpc ^ (from * 0x9E3779B97F4A7C15ull)) * 0xC2B2AE3D27D4EB4Full;
    h ^= h >> 29;
    for (unsigned p = 0; p < MAX_PROBE; p++) {
        struct arc_slot *s = &cg.arcs[(h + p) & cg.arc_mask];
        uint32_t st = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);
        if (st == 0) {
            uint32_t zero = 0;
            if (__atomic_compare_exchange_n(&s->state, &zero, 1, 0,
                                            __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
                s->from = from;
                s->self = selfpc;
                s->count = 1;
                __atomic_store_n(&s->state, 2, __ATOMIC_RELEASE);
                return;
            }
            st = zero;
        }
        if (st == 2 && s->from == from && s->self == selfpc) {
            __atomic_fetch_add(&s->count, 1, __ATOMIC_RELAXED);
            return;
        }
    }
    __atomic_fetch_add(&cg.arcs_dropped, 1, __ATOMIC_RELAXED);
}

int vprof_cg_write(int fd, uint32_t prof_rate)
{
    struct vpf_gmon_writer w;
    vpf_gmon_w_begin(&w, fd);
    if (cg.bins)
        vpf_gmon_w_hist(&w, cg.lowpc - cg.bias, cg.highpc - cg.bias, cg.bins,
                        cg.nbins, prof_rate);
    for (uint64_t i = 0; cg.arcs && i <= cg.arc_mask; i++) {
        const struct arc_slot *s = &cg.arcs[i];
        if (__atomic_load_n(&s->state, __ATOMIC_ACQUIRE) != 2)
            continue;
        vpf_gmon_w_arc(&w, cg.lowpc + s->from * FROM_BUCKET - cg.bias,
                       s->self - cg.bias, __atomic_load_n(&s->count, __ATOMIC_RELAXED));
    }
    return vpf_gmon_w_end(&w);
}
