/* libFuzzer target: values.<id> reader (format module), then every record
 * the way vprof-report walks them. */
#include <stdint.h>
#include "fuzz_file.h"
#include "vprof_format.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64];
    int fd = fuzz_path(data, size, path, sizeof path);
    if (fd < 0) return 0;
    struct vpf_recfile_r r;
    vpf_err e;
    if (vpf_values_open(path, &r, &e) == 0) {
        const struct vpf_value_rec *v = vpf_values_recs(&r);
        volatile uint64_t sum = vpf_values_hdr(&r)->hz;
        for (uint64_t i = 0; i < r.n; i++)
            if (v[i].flags & VPF_REC_COMMITTED) sum += v[i].value + v[i].pc + v[i].var;
        vpf_recfile_close_r(&r);
    }
    close(fd);
    return 0;
}
