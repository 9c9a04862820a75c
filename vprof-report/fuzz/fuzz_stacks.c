/* libFuzzer target: stacks.<id> reader (format module), then every record
 * the way vprof-report --contexts walks them (depth bounded by the
 * header's frames). */
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
    if (vpf_stacks_open(path, &r, &e) == 0) {
        const struct vpf_stacks_header *h = vpf_stacks_hdr(&r);
        volatile uint64_t sum = h->hz;
        for (uint64_t i = 0; i < r.n; i++) {
            const struct vpf_stack_rec *s = vpf_stacks_rec(&r, i);
            if (!(s->flags & VPF_REC_COMMITTED)) continue;
            unsigned d = s->depth < h->frames ? s->depth : h->frames;
            for (unsigned k = 0; k < d; k++) sum += vpf_stack_pcs_c(s)[k];
            sum += s->time_ns + s->tid;
        }
        vpf_recfile_close_r(&r);
    }
    close(fd);
    return 0;
}
