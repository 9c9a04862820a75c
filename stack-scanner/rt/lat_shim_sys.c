/* lat_shim_sys.c - interposed blocking calls, chosen by
 * VPROF_LATENCY_SYSCALLS (docs/LATENCY.md): each observed call that takes
 * VPROF_WAIT_NS or more becomes a syscall event whose func field is the
 * Linux x86-64 syscall number (sleep/usleep: nanosleep's). With
 * VPROF_LATENCY off a shim costs a load and a branch; the real function is
 * found with dlsym(RTLD_NEXT) on first use. errno is the real call's. */
#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "lat_rt.h"

static inline int observing(unsigned which)
{
    return __builtin_expect(__atomic_load_n(&vl_recording, __ATOMIC_RELAXED), 0) &&
           (vl_cfg.syscalls & (1u << which)) && !__vprof_lat_tls.internal;
}

static void sys_event(uint64_t nr, uint64_t t0, uint64_t site)
{
    uint64_t t1 = vl_now();
    if (t1 - t0 < vl_cfg.wait_ns)
        return;
    int e = errno;
    vl_emit(VPF_LAT_SYSCALL, t0, t1 - t0, nr, site, 0, 0);
    errno = e;
}

__attribute__((noinline, cold)) static void *vl_sys_resolve(const char *name)
{
    return dlsym(RTLD_NEXT, name);
}

/* The observed path is out of line so that the unobserved path of a shim
 * stays a check and a tail call (no register saves). */
#define VL_UNPAREN(...) __VA_ARGS__
#define SHIM(ret_t, name, which, nr, params, args)                           \
    static ret_t (*real_##name) params;                                      \
    __attribute__((noinline)) static ret_t                                   \
    name##_observed(uint64_t vl_site_, VL_UNPAREN params)                    \
    {                                                                        \
        uint64_t t0 = vl_now();                                              \
        ret_t vl_r_ = real_##name args;                                      \
        sys_event(nr, t0, vl_site_);                                         \
        return vl_r_;                                                        \
    }                                                                        \
    ret_t name params                                                        \
    {                                                                        \
        if (__builtin_expect(!real_##name, 0))                               \
            real_##name = (ret_t (*) params)vl_sys_resolve(#name);           \
        if (!observing(which))                                               \
            return real_##name args;                                         \
        return name##_observed((uint64_t)__builtin_return_address(0) - 1,    \
                               VL_UNPAREN args);                             \
    }

SHIM(ssize_t, read, VL_SYS_READ, SYS_read, (int fd, void *b, size_t n), (fd, b, n))
SHIM(ssize_t, write, VL_SYS_WRITE, SYS_write, (int fd, const void *b, size_t n), (fd, b, n))
SHIM(int, nanosleep, VL_SYS_NANOSLEEP, SYS_nanosleep,
     (const struct timespec *req, struct timespec *rem), (req, rem))
SHIM(int, clock_nanosleep, VL_SYS_CLOCK_NANOSLEEP, SYS_clock_nanosleep,
     (clockid_t c, int fl, const struct timespec *req, struct timespec *rem),
     (c, fl, req, rem))
SHIM(unsigned int, sleep, VL_SYS_SLEEP, SYS_nanosleep, (unsigned int s), (s))
SHIM(int, usleep, VL_SYS_USLEEP, SYS_nanosleep, (useconds_t us), (us))
SHIM(int, poll, VL_SYS_POLL, SYS_poll, (struct pollfd *f, nfds_t n, int ms), (f, n, ms))
SHIM(int, select, VL_SYS_SELECT, SYS_select,
     (int n, fd_set *r, fd_set *w, fd_set *e, struct timeval *tv), (n, r, w, e, tv))
SHIM(int, epoll_wait, VL_SYS_EPOLL_WAIT, SYS_epoll_wait,
     (int ep, struct epoll_event *ev, int max, int ms), (ep, ev, max, ms))
SHIM(int, accept, VL_SYS_ACCEPT, SYS_accept,
     (int s, struct sockaddr *a, socklen_t *l), (s, a, l))
SHIM(int, accept4, VL_SYS_ACCEPT4, SYS_accept4,
     (int s, struct sockaddr *a, socklen_t *l, int fl), (s, a, l, fl))
SHIM(int, connect, VL_SYS_CONNECT, SYS_connect,
     (int s, const struct sockaddr *a, socklen_t l), (s, a, l))
SHIM(ssize_t, recv, VL_SYS_RECV, SYS_recvfrom, (int s, void *b, size_t n, int fl),
     (s, b, n, fl))
SHIM(ssize_t, recvfrom, VL_SYS_RECVFROM, SYS_recvfrom,
     (int s, void *b, size_t n, int fl, struct sockaddr *a, socklen_t *l),
     (s, b, n, fl, a, l))
SHIM(int, fsync, VL_SYS_FSYNC, SYS_fsync, (int fd), (fd))
SHIM(int, fdatasync, VL_SYS_FDATASYNC, SYS_fdatasync, (int fd), (fd))
