/* gprof_mode.h - --gprof EXE GMON...: what binutils `gprof -b` prints. */
#ifndef VPR_GPROF_MODE_H
#define VPR_GPROF_MODE_H
#include <stddef.h>
#include <stdio.h>

#include "symbols.h"
#include "vprof_format.h"

/* gmons NULL: "gmon.out". Returns the exit status. */
int vpr_gprof_main(const char *exe, char **gmons, size_t n, FILE *out);
/* The printing part, on loaded symbols and gmon data; exe is only used for
 * the file names of static functions in the index (NULL: none). */
int vpr_gprof_print(FILE *out, const struct vpr_symtab *t,
                    const struct vpf_gmon *g, const char *exe);

#endif
