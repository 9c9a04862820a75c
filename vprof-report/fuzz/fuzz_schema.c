/* libFuzzer target: schema text parser (format module). */
#include <stdint.h>
#include "vprof_format.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct vpf_schema s;
    vpf_err e;
    if (vpf_schema_parse((const char *)data, size, "fuzz", &s, &e) == 0) vpf_schema_free(&s);
    return 0;
}
