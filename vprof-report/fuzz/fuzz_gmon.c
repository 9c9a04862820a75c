/* libFuzzer target: gmon.out reader (format module) and the histogram
 * assignment vprof-report and --gprof run on it. */
#include <stdint.h>
#include "fuzz_file.h"
#include "hist_assign.h"
#include "vprof_format.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64];
    int fd = fuzz_path(data, size, path, sizeof path);
    if (fd < 0) return 0;
    struct vpf_gmon g;
    vpf_err e;
    if (vpf_gmon_load(path, &g, &e) == 0) {
        struct vpr_sym syms[3] = {{0x1000, 0x1040, "a", 1}, {0x1040, 0x1100, "b", 1},
                                  {0x1100, 0x1200, "c", 0}};
        struct vpr_symtab t = {.syms = syms, .n = 3};
        double ticks[3] = {0};
        /* bound the work: huge histograms are valid but slow */
        if (g.hist_size < (1u << 20)) vpr_hist_assign(&g, 0, &t, ticks);
        vpf_gmon_free(&g);
    }
    close(fd);
    return 0;
}
