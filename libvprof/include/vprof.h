/* vprof.h - public interface of libvprof, the vprof profiling runtime.
 *
 * A program needs nothing from this header to be profiled: build it with
 * `gcc -pg -g` and either link libvprof ahead of libc (`-lvprof`, see
 * `pkg-config --libs vprof`) or run it with LD_PRELOAD=libvprof.so. libvprof
 * then provides the gprof entry points below in place of glibc's, writes
 * gmon.out in glibc's format and, given variable metadata, value samples.
 * Settings are environment variables (see libvprof(3), docs/RUNTIME.md). */
#ifndef VPROF_H
#define VPROF_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define VPROF_VERSION "1.0"

/* gprof's entry points (glibc <sys/gmon.h> and <unistd.h>), replaced. */
void __monstartup(unsigned long lowpc, unsigned long highpc);
void monstartup(unsigned long lowpc, unsigned long highpc);
void _mcleanup(void);
void moncontrol(int mode);
int profil(unsigned short *buf, size_t bufsiz, size_t offset, unsigned int scale);

/* 1 while vprof is sampling this process, else 0. */
int vprof_active(void);

/* The <id> of this process's output files (FORMATS.md "Output naming"),
 * or NULL when it writes only gmon.out. */
const char *vprof_output_id(void);

#ifdef __cplusplus
}
#endif

/* Request and wait APIs of the stack scanner: vprof_req_start/block/end/
 * work/wake, vprof_wait_begin/end, vprof_wake. */
#include "vprof_latency.h"
#endif
