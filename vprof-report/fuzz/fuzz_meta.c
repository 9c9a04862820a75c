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
        /* EXPR programs: the checker and the printer on whatever they are */
        for (uint32_t i = 0; i < m.hdr.n_entries; i++) {
            const char *prog = vpf_meta_expr(&m, &m.entries[i]);
            char buf[128];
            if (!prog)
                continue;
            n += vpf_expr_check_entry(&m, &m.entries[i]) != NULL;
            vpf_expr_format(prog, buf, sizeof buf);
            n += strlen(buf);
        }
        vpf_meta_free(&m);
    }
    return 0;
}
