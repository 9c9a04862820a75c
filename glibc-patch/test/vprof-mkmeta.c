/* vprof-mkmeta.c - writes a small variable metadata file for the demo's
 * global variables, through the format module's builder (the demo must not
 * depend on vprof-meta, which has its own tests).
 *
 * usage: vprof-mkmeta OUT.vmeta NAME:ADDR:SIZE:PC_LO:PC_HI...
 *   each variable is a signed integer global at link-time address ADDR,
 *   readable while the PC is in [PC_LO, PC_HI) (hex addresses). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vprof_format.h"

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s OUT.vmeta NAME:ADDR:SIZE:PC_LO:PC_HI...\n", argv[0]);
        return 2;
    }
    struct vpf_meta_builder *b = vpf_mb_new();
    if (!b) {
        fprintf(stderr, "vprof-mkmeta: out of memory\n");
        return 1;
    }
    for (int i = 2; i < argc; i++) {
        char name[256];
        unsigned long long addr, lo, hi;
        unsigned size;
        if (sscanf(argv[i], "%255[^:]:%llx:%u:%llx:%llx", name, &addr, &size, &lo, &hi) != 5 ||
            (size != 1 && size != 2 && size != 4 && size != 8) || lo >= hi) {
            fprintf(stderr, "vprof-mkmeta: %s: expected NAME:ADDR:SIZE:PC_LO:PC_HI\n", argv[i]);
            return 2;
        }
        struct vpf_var_desc v = {
            .file = vpf_mb_str(b, "vprof-static-demo.c"),
            .function = vpf_mb_str(b, "#global"),
            .name = vpf_mb_str(b, name),
            .type = vpf_mb_str(b, "long"),
            .tags = VPF_TAG_GLOBAL,
            .kind = VPF_KIND_SINT,
            .size = (uint8_t)size,
        };
        struct vpf_loc_entry e = {
            .pc_start = lo, .pc_end = hi,
            .var = vpf_mb_add_var(b, &v),
            .loc = VPF_LOC_ADDR, .size = (uint8_t)size, .flags = VPF_LF_SIGNED,
            .offset = (int64_t)addr,
        };
        vpf_mb_add_entry(b, &e);
    }
    vpf_err err;
    if (vpf_mb_write(b, argv[1], &err) < 0) {
        fprintf(stderr, "vprof-mkmeta: %s\n", err.msg);
        return 1;
    }
    vpf_mb_free(b);
    return 0;
}
