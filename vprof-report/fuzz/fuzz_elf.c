/* libFuzzer target: vprof-report's own readers of the executable: ELF
 * symbols, build-id and .vprof_schema (libelf), DWARF line table
 * (libdwarf), and the schema parse of the embedded section. */
#include <stdint.h>
#include "fuzz_file.h"
#include "lines.h"
#include "symbols.h"
#include "vprof_format.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64], err[256];
    int fd = fuzz_path(data, size, path, sizeof path);
    if (fd < 0) return 0;
    struct vpr_symtab t;
    if (vpr_symtab_load(path, &t, err, sizeof err) == 0) {
        for (size_t i = 0; i < t.n; i++) (void)vpr_sym_find(&t, t.syms[i].lo);
        if (t.schema) {
            struct vpf_schema s;
            vpf_err e;
            if (vpf_schema_parse(t.schema, t.schema_len, path, &s, &e) == 0) vpf_schema_free(&s);
        }
        struct vpr_lines *l = vpr_lines_load(path);
        const char *file;
        unsigned line;
        for (size_t i = 0; i < t.n; i++) (void)vpr_lines_lookup(l, t.syms[i].lo, &file, &line);
        vpr_lines_free(l);
        vpr_symtab_free(&t);
    }
    close(fd);
    return 0;
}
