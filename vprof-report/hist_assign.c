/* hist_assign.c - the one mapping from histogram bins to functions, used by
 * the vprof ranking and by --gprof.
 *
 * Reproduces binutils gprof (hist.c: hist_assign_samples_1) including its
 * arithmetic: addresses in 2-byte units (sizeof (UNIT)), bin bounds
 * truncated to whole units, and credit = overlap * count / scale. The
 * truncation is why gprof's flat percentages can sum to slightly more than
 * 100; matching it keeps our numbers equal to gprof's. */
#include "hist_assign.h"

#define UNIT 2u

double vpr_hist_assign(const struct vpf_gmon *g, uint64_t bias,
                       const struct vpr_symtab *t, double *ticks)
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
        for (j = j - 1; j < t->n; j++) {
            uint64_t slo = t->syms[j].lo / UNIT;
            uint64_t shi = (j + 1 < t->n ? t->syms[j + 1].lo : t->syms[j].hi) / UNIT;
            if (bhi < slo) break;
            if (shi < blo) continue;
            int64_t ov = (int64_t)(bhi < shi ? bhi : shi) - (int64_t)(blo > slo ? blo : slo);
            if (ov > 0) ticks[j] += (double)ov * count / scale;
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
