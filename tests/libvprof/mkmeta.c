/* mkmeta - test helper: writes a .vmeta file from a small text description,
 * through the format module's builder, so that runtime tests can use
 * hand-written metadata independent of vprof-meta.
 *
 *   flags N                       header flags (1 = PIE-relative)
 *   buildid HEX                   build-id the metadata claims to describe
 *   var NAME FUNCTION KIND SIZE   KIND: sint uint float ptrb ptr bool
 *   entry VAR PC_START PC_END LOC REG SIZE FLAGS OFFSET [FB_OFFSET [DEREF_OFFSET]]
 *                                 LOC: addr reg breg fbreg const expr; VAR by name;
 *                                 expr: OFFSET is the program with '_' for
 *                                 its spaces (FORMATS.md §2.1), put into the
 *                                 string table, or @N for string table offset N
 * Numbers take C syntax (0x.. for hex). Usage: mkmeta IN OUT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vprof_format.h"

#define MAXV 4096
static char *names[MAXV];
static unsigned n_names;

static int kind_of(const char *s)
{
    static const char *k[] = {"sint", "uint", "float", "ptrb", "ptr", "bool"};
    for (int i = 0; i < 6; i++)
        if (!strcmp(s, k[i]))
            return i;
    return -1;
}

static int loc_of(const char *s)
{
    static const char *k[] = {"addr", "reg", "breg", "fbreg", "const", "expr"};
    for (int i = 0; i < 6; i++)
        if (!strcmp(s, k[i]))
            return i;
    return -1;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: mkmeta IN OUT\n");
        return 2;
    }
    FILE *in = fopen(argv[1], "r");
    if (!in) {
        perror(argv[1]);
        return 2;
    }
    struct vpf_meta_builder *b = vpf_mb_new();
    char line[1024];
    unsigned ln = 0;
    while (fgets(line, sizeof line, in)) {
        ln++;
        char w[12][256];
        int n = sscanf(line, "%255s %255s %255s %255s %255s %255s %255s %255s %255s %255s %255s %255s",
                       w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7], w[8], w[9], w[10], w[11]);
        if (n <= 0 || w[0][0] == '#')
            continue;
        if (!strcmp(w[0], "flags") && n == 2) {
            vpf_mb_set_flags(b, (uint32_t)strtoul(w[1], NULL, 0));
        } else if (!strcmp(w[0], "buildid") && n == 2) {
            uint8_t id[32];
            size_t k = 0;
            for (const char *h = w[1]; h[0] && h[1] && k < 32; h += 2) {
                unsigned x;
                sscanf(h, "%2x", &x);
                id[k++] = (uint8_t)x;
            }
            vpf_mb_set_build_id(b, id, k);
        } else if (!strcmp(w[0], "var") && n == 5 && kind_of(w[3]) >= 0 && n_names < MAXV) {
            struct vpf_var_desc v;
            memset(&v, 0, sizeof v);
            v.file = vpf_mb_str(b, "test.c");
            v.function = vpf_mb_str(b, w[2]);
            v.name = vpf_mb_str(b, w[1]);
            v.type = vpf_mb_str(b, w[3]);
            v.kind = (uint8_t)kind_of(w[3]);
            v.size = (uint8_t)atoi(w[4]);
            v.tags = !strcmp(w[2], "#global") ? VPF_TAG_GLOBAL : 0;
            vpf_mb_add_var(b, &v);
            names[n_names++] = strdup(w[1]);
        } else if (!strcmp(w[0], "entry") && n >= 9 && loc_of(w[4]) >= 0) {
            struct vpf_loc_entry en;
            memset(&en, 0, sizeof en);
            unsigned v;
            for (v = 0; v < n_names && strcmp(names[v], w[1]); v++) {}
            if (v == n_names) {
                fprintf(stderr, "%s:%u: unknown variable %s\n", argv[1], ln, w[1]);
                return 1;
            }
            en.var = v;
            en.pc_start = strtoull(w[2], NULL, 0);
            en.pc_end = strtoull(w[3], NULL, 0);
            en.loc = (uint8_t)loc_of(w[4]);
            en.reg = (uint8_t)strtoul(w[5], NULL, 0);
            en.size = (uint8_t)strtoul(w[6], NULL, 0);
            en.flags = (uint8_t)strtoul(w[7], NULL, 0);
            en.offset = strtoll(w[8], NULL, 0);
            if (en.loc == VPF_LOC_EXPR && w[8][0] == '@') {
                en.offset = strtoll(w[8] + 1, NULL, 0);
            } else if (en.loc == VPF_LOC_EXPR) {
                for (char *c = w[8]; *c; c++)
                    *c = *c == '_' ? ' ' : *c;
                en.offset = vpf_mb_str(b, w[8]);
            }
            en.fb_offset = n > 9 ? strtoll(w[9], NULL, 0) : 0;
            en.deref_offset = n > 10 ? strtoll(w[10], NULL, 0) : 0;
            vpf_mb_add_entry(b, &en);
        } else {
            fprintf(stderr, "%s:%u: cannot parse: %s", argv[1], ln, line);
            return 1;
        }
    }
    vpf_err e;
    if (vpf_mb_write(b, argv[2], &e) < 0) {
        fprintf(stderr, "mkmeta: %s\n", e.msg);
        return 1;
    }
    vpf_mb_free(b);
    return 0;
}
