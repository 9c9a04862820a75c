/* libFuzzer target: variable metadata parser (format module). */
#include <stdint.h>
#include <string.h>
#include "vprof_format.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct vpf_meta m;
    vpf_err e;
    if (vpf_meta_parse(data, size, "fuzz", &m, &e) == 0) {
        volatile size_t n = 0;
        for (uint32_t i = 0; i < m.hdr.n_vars; i++)
            n += strlen(vpf_meta_str(&m, m.vars[i].name));
        vpf_meta_free(&m);
    }
    return 0;
}
