/* glibc-compat.h - forced into every vprof file compiled inside glibc
 * (gmon/Makefile: -include vprof/glibc-compat.h).
 *
 * Inside glibc, <sys/syscall.h> is glibc's own list and defines only the
 * __NR_ names; libvprof uses the SYS_ names of the installed header. The
 * check target fails if libvprof starts using one that is not here. */
#ifndef VPROF_GLIBC_COMPAT_H
#define VPROF_GLIBC_COMPAT_H

#include <sys/syscall.h>

#ifndef SYS_gettid
# define SYS_gettid __NR_gettid
#endif
#ifndef SYS_getpid
# define SYS_getpid __NR_getpid
#endif
#ifndef SYS_tgkill
# define SYS_tgkill __NR_tgkill
#endif
#ifndef SYS_process_vm_readv
# define SYS_process_vm_readv __NR_process_vm_readv
#endif

/* Inside libc.so, glibc's <stdlib.h> routes strtoull to a hidden alias
 * that glibc does not define on LP64 targets, where strtoull is an alias of
 * strtoul; strtoul is the same function there. Declared first, so that the
 * macro does not rename the declaration. */
#include <stdlib.h>
_Static_assert (sizeof (unsigned long) == sizeof (unsigned long long),
                "strtoull is strtoul only on LP64");
#define strtoull strtoul

#endif
