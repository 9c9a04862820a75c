/* libFuzzer target: layout log reader (format module). */
#include <stdint.h>
#include <string.h>
#include "fuzz_file.h"
#include "vprof_format.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64];
    int fd = fuzz_path(data, size, path, sizeof path);
    if (fd < 0) return 0;
    struct vpf_layout l;
    vpf_err e;
    if (vpf_layout_load(path, &l, &e) == 0) {
        volatile size_t n = strlen(l.exe);
        for (size_t i = 0; i < l.n_vars; i++)
            n += strlen(l.vars[i].name) + strlen(l.vars[i].function) + strlen(l.vars[i].file);
        for (size_t i = 0; i < l.n_maps; i++) n += l.maps[i].path ? strlen(l.maps[i].path) : 0;
        vpf_layout_free(&l);
    }
    close(fd);
    return 0;
}
