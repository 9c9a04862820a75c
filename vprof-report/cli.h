/* cli.h - vprof-report's command line: one table of options (cli.c) that
 * both parses argv and prints the usage text, so an option is added in one
 * place (a row) and documented in docs/vprof-report.md and the man page. */
#ifndef VPR_CLI_H
#define VPR_CLI_H
#include <stddef.h>
#include <stdio.h>

#include "model.h"

enum vpr_mode { VPR_MODE_REPORT, VPR_MODE_GPROF, VPR_MODE_AD_TEST };

struct vpr_cli {
    struct vpr_opts o;          /* the analysis options, with their defaults */
    int mode;                   /* enum vpr_mode */
    char **dirs[2];             /* run directories by side (VPR_NORMAL, VPR_BUGGY) */
    size_t n_dirs[2];
    char **hist_dirs[2];        /* --hist-normal/--hist-buggy */
    size_t n_hist_dirs[2];
    char **args;                /* operands left after the options */
    int n_args;
};

/* Parses argv into c (defaults first). Returns -1 to go on, or the exit
 * status to end with: 0 after --help, 2 after a usage error (message
 * printed). In report mode, positional directories are split into the two
 * sides here and at least one of each is required. */
int vpr_cli_parse(int argc, char **argv, struct vpr_cli *c);
void vpr_cli_usage(FILE *out);
void vpr_cli_free(struct vpr_cli *c);

#endif
