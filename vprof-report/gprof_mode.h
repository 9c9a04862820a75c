/* gprof_mode.h - --gprof EXE GMON...: what binutils `gprof -b` prints. */
#ifndef VPR_GPROF_MODE_H
#define VPR_GPROF_MODE_H
#include <stddef.h>
#include <stdio.h>

/* gmons NULL: "gmon.out". Returns the exit status. */
int vpr_gprof_main(const char *exe, char **gmons, size_t n, FILE *out);

#endif
