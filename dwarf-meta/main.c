/* main.c - vprof-meta: schema + DWARF -> variable metadata (*.vmeta).
 *
 *   vprof-meta [-s SCHEMA] [-o OUT] [--explain] [--quiet] BINARY
 *   vprof-meta --all --files GLOB[,GLOB...] [-o OUT] BINARY
 *   vprof-meta --dump FILE.vmeta
 *
 * Exit status: 0 written, 1 bad input (message names the file), 2 usage. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "meta.h"
#include "elf_info.h"
#include "select.h"
#include "vprof_xalloc.h"

static void usage(FILE *f)
{
    fprintf(f,
"usage: vprof-meta [-s SCHEMA] [-o OUT] [--explain] [--quiet] BINARY\n"
"       vprof-meta --all --files GLOB[,GLOB...] [-o OUT] [--explain] BINARY\n"
"       vprof-meta --dump FILE.vmeta\n"
"Resolves the variable schema (default: BINARY's .vprof_schema section)\n"
"through BINARY's DWARF into vprof variable metadata.\n"
"  -s, --schema FILE   schema file instead of the embedded section\n"
"  -o, --output FILE   output (default: stdout, '-')\n"
"  --all               schema-less: every basic/pointer variable ...\n"
"  --files GLOBS       ... of the CUs whose DW_AT_name matches a glob\n"
"  --explain           list every variable or range that was left out\n"
"  --quiet             no summary on stderr\n"
"  --dump FILE         print a .vmeta file as text\n");
}

static char **split_globs(const char *arg)
{
    size_t n = 1;
    for (const char *p = arg; *p; p++)
        n += *p == ',';
    char **v = vpf_xcalloc(n + 1, sizeof *v);
    char *copy = vpf_xstrdup(arg);
    size_t i = 0;
    for (char *tok = strtok(copy, ","); tok; tok = strtok(NULL, ","))
        v[i++] = tok;
    if (i == 0)
        v[i++] = copy;
    return v;
}

static int dump(const char *path)
{
    struct vpf_meta m;
    vpf_err e;
    if (vpf_meta_load(path, &m, &e) != 0) {
        fprintf(stderr, "vprof-meta: %s\n", e.msg);
        return 1;
    }
    printf("flags %u vars %u entries %u build_id ", m.hdr.flags,
           m.hdr.n_vars, m.hdr.n_entries);
    for (uint32_t i = 0; i < m.hdr.build_id_len; i++)
        printf("%02x", m.hdr.build_id[i]);
    printf("\n");
    for (uint32_t i = 0; i < m.hdr.n_vars; i++) {
        const struct vpf_var_desc *d = &m.vars[i];
        char tags[64];
        vpf_tags_format(d->tags, tags, sizeof tags);
        printf("var %u %s %s %s %s line=%u tags=%s%s kind=%s size=%u "
               "schema_line=%u\n", i, vpf_meta_str(&m, d->file),
               vpf_meta_str(&m, d->function), vpf_meta_str(&m, d->name),
               vpf_meta_str(&m, d->type), d->line, tags,
               (d->tags & VPF_TAG_GLOBAL) ? "+global" : "",
               vpf_kind_name(d->kind), d->size, d->schema_line);
    }
    static const char *const locs[] = { "ADDR", "REG", "BREG", "FBREG",
                                        "CONST", "EXPR" };
    for (uint32_t i = 0; i < m.hdr.n_entries; i++) {
        const struct vpf_loc_entry *en = &m.entries[i];
        printf("entry 0x%llx 0x%llx var=%u %s reg=%u size=%u flags=%u "
               "offset=%lld fb_offset=%lld deref_offset=%lld",
               (unsigned long long)en->pc_start,
               (unsigned long long)en->pc_end, en->var,
               en->loc <= VPF_LOC_EXPR ? locs[en->loc] : "?", en->reg, en->size,
               en->flags, (long long)en->offset, (long long)en->fb_offset,
               (long long)en->deref_offset);
        if (en->loc == VPF_LOC_EXPR) {
            /* the program as stored, and what is wrong with it, if anything */
            const char *prog = vpf_meta_expr(&m, en), *bad = vpf_expr_check_entry(&m, en);
            printf(" prog=\"%s\"%s%s", prog ? prog : "", bad ? " invalid: " : "", bad ? bad : "");
        }
        printf("\n");
    }
    vpf_meta_free(&m);
    return 0;
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        { "schema", required_argument, NULL, 's' },
        { "output", required_argument, NULL, 'o' },
        { "all", no_argument, NULL, 'A' },
        { "files", required_argument, NULL, 'F' },
        { "explain", no_argument, NULL, 'E' },
        { "quiet", no_argument, NULL, 'q' },
        { "dump", required_argument, NULL, 'D' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    const char *schema_path = NULL, *out = "-", *files = NULL;
    int all = 0, explain = 0, quiet = 0, c;
    while ((c = getopt_long(argc, argv, "s:o:qh", opts, NULL)) != -1) {
        switch (c) {
        case 's': schema_path = optarg; break;
        case 'o': out = optarg; break;
        case 'A': all = 1; break;
        case 'F': files = optarg; break;
        case 'E': explain = 1; break;
        case 'q': quiet = 1; break;
        case 'D': return dump(optarg);
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind != argc - 1 || (all && !files) || (files && !all) ||
        (all && schema_path)) {
        usage(stderr);
        return 2;
    }
    const char *bin = argv[optind];
    char err[1024];
    struct elf_info ei;
    if (elf_info_read(bin, &ei, err, sizeof err) != 0) {
        fprintf(stderr, "vprof-meta: %s\n", err);
        return 1;
    }

    struct vpf_schema schema;
    vpf_err ve;
    int have_schema = 0, rc = 1;
    memset(&schema, 0, sizeof schema);
    if (schema_path) {
        if (vpf_schema_load(schema_path, &schema, &ve) != 0) {
            fprintf(stderr, "vprof-meta: %s\n", ve.msg);
            goto out_elf;
        }
        have_schema = 1;
    } else if (!all) {
        if (!ei.schema) {
            fprintf(stderr, "vprof-meta: %s: no .vprof_schema section (not "
                    "built by vprof-cc?); give a schema with -s, or use "
                    "--all --files GLOB\n", bin);
            goto out_elf;
        }
        char name[1100];
        snprintf(name, sizeof name, "%s(.vprof_schema)", bin);
        if (vpf_schema_parse(ei.schema, ei.schema_len, name, &schema, &ve)
            != 0) {
            fprintf(stderr, "vprof-meta: %s\n", ve.msg);
            goto out_elf;
        }
        have_schema = 1;
    }

    Dwarf_Debug dbg = NULL;
    Dwarf_Error derr = NULL;
    char truepath[4096];
    int r = dwarf_init_path(bin, truepath, sizeof truepath, DW_DLC_READ,
                            DW_GROUPNUMBER_ANY, NULL, NULL, &dbg, NULL, 0,
                            NULL, &derr);
    if (r == DW_DLV_NO_ENTRY || (r == DW_DLV_OK && !ei.has_debug_info &&
                                 !strcmp(truepath, bin))) {
        if (!ei.has_debug_info && !ei.has_symtab)
            fprintf(stderr, "vprof-meta: %s: stripped: no .debug_info and "
                    "no .symtab; rebuild with -g and do not strip\n", bin);
        else
            fprintf(stderr, "vprof-meta: %s: no DWARF debug information "
                    "(.debug_info); rebuild with -g\n", bin);
        if (r == DW_DLV_OK)
            dwarf_finish(dbg, &derr);
        goto out_schema;
    }
    if (r != DW_DLV_OK) {
        fprintf(stderr, "vprof-meta: %s: cannot read DWARF: %s\n", bin,
                derr ? dwarf_errmsg(derr) : "unknown error");
        goto out_schema;
    }

    char **globs = all ? split_globs(files) : NULL;
    struct sel *s = sel_new(dbg, &ei, have_schema ? &schema : NULL, globs);
    struct walk_stats st;
    progress_start("reading DWARF");
    int wr = walk_dwarf(dbg, ei.info_size, have_schema, sel_want_cu,
                        sel_on_var, sel_on_unit, s, &st, err, sizeof err);
    progress_end();
    if (wr != 0) {
        fprintf(stderr, "vprof-meta: %s: %s\n", bin, err);
    } else {
        struct vpf_meta_builder *b = sel_build(s);
        if (!b) {
            fprintf(stderr, "vprof-meta: out of memory\n");
        } else {
            if (vpf_mb_write(b, out, &ve) != 0) {
                fprintf(stderr, "vprof-meta: %s\n", ve.msg);
            } else {
                rc = 0;
                if (!quiet || explain)
                    sel_report(s, stderr, explain);
                if (st.dwo_missing)
                    fprintf(stderr, "vprof-meta: warning: %u split-DWARF "
                            ".dwo file(s) of %s could not be read\n",
                            st.dwo_missing, bin);
                if (all && st.cus_walked == 0)
                    fprintf(stderr, "vprof-meta: warning: no compilation "
                            "unit of %s matches '%s'\n", bin, files);
            }
            vpf_mb_free(b);
        }
    }
    sel_free(s);
    if (globs) {
        free(globs[0]);
        free(globs);
    }
    dwarf_finish(dbg, &derr);
out_schema:
    if (have_schema)
        vpf_schema_free(&schema);
out_elf:
    elf_info_free(&ei);
    return rc;
}
