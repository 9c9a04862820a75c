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
        volatile uint64_t sum = vpf_values_hdr(&r)->hz;
        struct vpf_values_iter it;
        vpf_values_iter_init(&it, &r);
        uint64_t pos;
        for (const struct vpf_value_rec *v; (v = vpf_values_next(&it, &pos));)
            sum += v->value + v->pc + v->var + v->depth + pos;
        sum += it.uncommitted + it.frames + it.orphans;
        vpf_values_iter_free(&it);
        vpf_recfile_close_r(&r);
    }
    close(fd);
    return 0;
}
