/* libFuzzer target: latency.<id> reader (format module). */
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
    if (vpf_latency_open(path, &r, &e) == 0) {
        const struct vpf_latency_rec *v = r.recs;
        volatile uint64_t sum = 0;
        for (uint64_t i = 0; i < r.n; i++) sum += v[i].duration_ns + v[i].kind;
        vpf_recfile_close_r(&r);
    }
    close(fd);
    return 0;
}
