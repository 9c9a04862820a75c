/* libFuzzer target: the `perf script` reader of --waits (waits_perf.c) and
 * the analysis on whatever timeline it builds. */
#include <stdint.h>
#include <stdlib.h>
#include "fuzz_file.h"
#include "waits.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64], err[512];
    int fd = fuzz_path(data, size, path, sizeof path);
    if (fd < 0) return 0;
    struct vpr_wtimeline *tl;
    size_t n;
    if (vpr_wait_perf_load(path, 0, &tl, &n, err, sizeof err) == 0) {
        struct vpr_wopts o = {.keep = 0.2, .min = 0.01, .merge = 1, .max_depth = 64};
        for (size_t i = 0; i < n; i++) {
            struct vpr_wgraph g;
            vpr_wait_graph(&tl[i], &o, &g);
            struct vpr_wdetail *d = vpr_wait_details(&g);
            vpr_wait_details_free(d, g.n_e);
            vpr_wait_graph_free(&g);
            vpr_wait_timeline_free(&tl[i]);
        }
        free(tl);
    }
    close(fd);
    return 0;
}
