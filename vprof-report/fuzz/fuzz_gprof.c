/* libFuzzer target: --gprof's call-graph construction (cycles, time
 * propagation, printing) on arbitrary call graphs. The input is read as a
 * histogram and arcs between 24 synthetic functions, so every input reaches
 * the graph code rather than failing symbol lookup. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gprof_mode.h"

enum { NF = 24, SPAN = 64 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct vpr_sym syms[NF];
    static char names[NF][8];
    static FILE *null;
    if (!null) {
        null = fopen("/dev/null", "w");
        for (int i = 0; i < NF; i++) {
            snprintf(names[i], sizeof names[i], "f%d", i);
            syms[i] = (struct vpr_sym){0x1000 + (uint64_t)i * SPAN,
                                       0x1000 + (uint64_t)(i + 1) * SPAN, names[i], i % 3 != 0};
        }
    }
    if (size < NF) return 0;
    struct vpr_symtab t = {.syms = syms, .n = NF};
    uint32_t hist[NF * SPAN / 4];
    memset(hist, 0, sizeof hist);
    /* first NF bytes: ticks per function; then 4-byte arcs from, to, count */
    for (int i = 0; i < NF; i++) hist[i * SPAN / 4] = data[i];
    size_t n_arcs = (size - NF) / 4;
    struct vpf_gmon_arc *arcs = calloc(n_arcs ? n_arcs : 1, sizeof *arcs);
    for (size_t k = 0; k < n_arcs; k++) {
        const uint8_t *p = data + NF + 4 * k;
        arcs[k].from_pc = 0x1000 + (uint64_t)(p[0] % (NF + 1)) * SPAN + 8;  /* NF: outside */
        arcs[k].self_pc = 0x1000 + (uint64_t)(p[1] % NF) * SPAN + 4;
        arcs[k].count = (uint32_t)p[2] | (uint32_t)p[3] << 8;
    }
    struct vpf_gmon g = {.lowpc = 0x1000, .highpc = 0x1000 + NF * SPAN,
                         .hist_size = NF * SPAN / 4, .prof_rate = 100, .hist = hist,
                         .arcs = arcs, .n_arcs = n_arcs, .has_hist = 1};
    memcpy(g.dimen, "seconds", 8);
    vpr_gprof_print(null, &t, &g, NULL);
    free(arcs);
    return 0;
}
