/* libFuzzer target: the calls.<id> reader (format module, vprof-cc
 * --calls' counts). */
#include <stdint.h>
#include "fuzz_file.h"
#include "vprof_format.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64];
    int fd = fuzz_path(data, size, path, sizeof path);
    if (fd < 0) return 0;
    struct vpf_calls c;
    vpf_err e;
    if (vpf_calls_load(path, &c, &e) == 0) {
        uint64_t sum = 0;
        for (size_t i = 0; i < c.n; i++) sum += c.pairs[i].count + c.pairs[i].caller[0] + c.pairs[i].callee[0];
        (void)sum;
        vpf_calls_free(&c);
    }
    close(fd);
    return 0;
}
