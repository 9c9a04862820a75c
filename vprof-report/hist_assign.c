/* hist_assign.c - the one mapping from histogram bins to functions, used by
 * the vprof ranking and by --gprof.
 *
 * Reproduces binutils gprof (hist.c: hist_assign_samples_1) including its
 * arithmetic: addresses in 2-byte units (sizeof (UNIT)), bin bounds
 * truncated to whole units, and credit = overlap * count / scale. The
 * truncation is why gprof's flat percentages can sum to slightly more than
 * 100; matching it keeps our numbers equal to gprof's. */
#include "hist_assign.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vprof_xalloc.h"

#define UNIT 2u

static void add_to_symbol(void *ticks, size_t sym, uint64_t addr, double credit)
{
    (void)addr;
    ((double *)ticks)[sym] += credit;
}

double vpr_hist_assign(const struct vpf_gmon *g, uint64_t bias,
                       const struct vpr_symtab *t, double *ticks)
{
    return vpr_hist_assign_each(g, bias, t, add_to_symbol, ticks);
}

/* The PLT stub whose first byte lies inside (blo, bhi) (bytes), or -1.
 * Once bound, a stub runs only its first instruction (jmp *GOT); its
 * push/jmp tail runs once, at the lazy binding. A 4-byte bin over the end
 * of one stub and the start of the next holds the next stub's ticks, which
 * the proportional split (or the 2-byte truncation) gives to the one
 * before: a loop calling a library function showed its time under the
 * neighbouring stub's name. */
static long stub_entry_in(const struct vpr_symtab *t, double blo, double bhi)
{
    if (bhi <= 0) return -1;
    long s = vpr_sym_find(t, (uint64_t)ceil(bhi) - 1);
    if (s < 0 || !t->syms[s].plt || (double)t->syms[s].lo <= blo) return -1;
    size_t n = strlen(t->syms[s].name);
    return n > 4 && strcmp(t->syms[s].name + n - 4, "@plt") == 0 ? s : -1;
}

double vpr_hist_assign_each(const struct vpf_gmon *g, uint64_t bias,
                            const struct vpr_symtab *t,
                            void (*each)(void *ctx, size_t sym, uint64_t addr, double credit),
                            void *ctx)
{
    if (!g->has_hist || !g->hist_size || !t->n || g->highpc <= g->lowpc)
        return 0;
    uint64_t lowpc = (g->lowpc - bias) / UNIT;
    double scale = (double)((g->highpc - g->lowpc) / UNIT) / (double)g->hist_size;
    if (scale <= 0) return 0;
    double total = 0;
    size_t j = 1;
    for (uint32_t i = 0; i < g->hist_size; i++) {
        double count = g->hist[i];
        if (!count) continue;
        uint64_t blo = lowpc + (uint64_t)(scale * i);
        uint64_t bhi = lowpc + (uint64_t)(scale * (i + 1));
        total += count;
        if (t->exact) {     /* the ranking's view only: gprof splits */
            double bw = (double)(g->highpc - g->lowpc) / g->hist_size;
            double b0 = (double)(g->lowpc - bias) + bw * i;
            long s = stub_entry_in(t, b0, b0 + bw);
            if (s >= 0) {
                each(ctx, (size_t)s, t->syms[s].lo, count);
                continue;
            }
        }
        for (j = j - 1; j < t->n; j++) {
            uint64_t slo = t->syms[j].lo / UNIT;
            uint64_t shi = (t->exact || j + 1 >= t->n ? t->syms[j].hi : t->syms[j + 1].lo) / UNIT;
            if (bhi < slo) break;
            if (shi < blo) continue;
            uint64_t olo = blo > slo ? blo : slo, ohi = bhi < shi ? bhi : shi;
            int64_t ov = (int64_t)ohi - (int64_t)olo;
            if (ov > 0) each(ctx, j, (olo + ohi) * UNIT / 2, (double)ov * count / scale);
        }
    }
    return total;
}

uint64_t vpr_gmon_bias(const struct vpf_gmon *g, const struct vpr_symtab *t,
                       uint64_t run_bias, int have_run_bias)
{
    if (!t->n || !g->has_hist) return have_run_bias ? run_bias : 0;
    uint64_t top = t->syms[t->n - 1].hi;
    if (g->lowpc < top) return 0;           /* already link-time */
    if (have_run_bias && g->lowpc >= run_bias) return run_bias;
    return (g->lowpc & ~0xfffull) - (t->syms[0].lo & ~0xfffull);
}

/* How far past the last code byte a histogram may end: glibc and the
 * runtime round etext up to 4 bytes. */
#define HIST_END_SLACK 16
/* How far into a function the mcount call of its prologue may lie (gcc's
 * stack-realigning prologues put it some 20 bytes in; clang calls it after
 * a variadic function's register save area - six stores and eight movaps
 * behind the pushes: 102 bytes in fresh5_a_http_keepalive's sb_printf). */
#define ARC_ENTRY_SLACK 160

static int arc_at_entry(const struct vpr_symtab *t, uint64_t pc)
{
    long s = vpr_sym_find(t, pc);
    return s >= 0 && pc - t->syms[s].lo < ARC_ENTRY_SLACK;
}

int vpr_gmon_check(const struct vpf_gmon *g, uint64_t bias, const struct vpr_symtab *t,
                   const char *path, char *err, size_t errlen)
{
    if (t->text_hi <= t->text_lo) return 0;         /* nothing to check against */
    /* gcrt1 profiles from the image's start to etext */
    uint64_t end = t->etext > t->text_lo ? t->etext : t->text_hi;
    if (g->has_hist && g->highpc > g->lowpc) {
        uint64_t lo = g->lowpc - bias, hi = g->highpc - bias;
        int whole = lo <= t->text_lo;     /* not a range the program chose itself */
        if (hi <= t->text_lo || lo >= t->text_hi || hi > end + HIST_END_SLACK ||
            (whole && hi + HIST_END_SLACK < end)) {
            snprintf(err, errlen, "%s: not a profile of %s: its histogram covers "
                     "[0x%llx, 0x%llx), the program's code [0x%llx, 0x%llx) (a gmon file "
                     "of another program, or of another build of it)", path, t->path,
                     (unsigned long long)lo, (unsigned long long)hi,
                     (unsigned long long)t->text_lo, (unsigned long long)end);
            return -1;
        }
    }
    if (t->dynsym_only) return 0;   /* static functions unknown: entries unknown */
    /* Counted per called address, not per arc: one function whose mcount
     * call lies further in than the slack, called from many sites, is one
     * address (it once rejected a run whose printf-like helper had 9 of
     * its 13 arcs). */
    uint64_t *pcs = vpf_xcalloc(g->n_arcs ? g->n_arcs : 1, sizeof *pcs);
    for (size_t i = 0; i < g->n_arcs; i++) pcs[i] = g->arcs[i].self_pc;
    qsort(pcs, g->n_arcs, sizeof *pcs, vpf_cmp_u64);
    size_t far = 0, targets = 0;
    for (size_t i = 0; i < g->n_arcs; i++) {
        if (i && pcs[i] == pcs[i - 1]) continue;
        targets++;
        far += !arc_at_entry(t, pcs[i] - bias);
    }
    free(pcs);
    if (far >= 3 && 4 * far > targets) {
        snprintf(err, errlen, "%s: not a profile of %s: %zu of the %zu functions its call "
                 "arcs lead to are entered at addresses that are no function entry of the "
                 "program (a gmon file of another program, or of another build of it)",
                 path, t->path, far, targets);
        return -1;
    }
    return 0;
}
