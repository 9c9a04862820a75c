/* lat_shim_sys.c - interposed blocking calls, chosen by
 * VPROF_LATENCY_SYSCALLS (docs/LATENCY.md): each observed call that takes
 * VPROF_WAIT_NS or more becomes a syscall event whose func field is the
 * Linux x86-64 syscall number (sleep/usleep: nanosleep's). With
 * VPROF_LATENCY off a shim costs a load and a branch. The real functions
 * are bound by vl_sys_bind before the first profiling tick (lat_rt.h says
 * why), or on first use when a call comes earlier. errno is the real
 * call's.
 *
 * Calls on a file descriptor also write an fd wait event (kind 10: the
 * descriptor's class and device or peer, FORMATS.md §5.1) unless they failed
 * with EAGAIN (a non-blocking descriptor did not wait). A write on a pipe or
 * socket pair leaves a waker note before the data moves (lat_wake.c), and a
 * read that waited on one looks for it: who fed the pipe woke the reader.
 * pipe(), pipe2(), socketpair(), close(), dup2() and dup3() keep the
 * descriptor cache of lat_fdclass.c; they are observed whenever latency
 * events are recorded, whatever VPROF_LATENCY_SYSCALLS says. */
#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "lat_rt.h"
#include "lat_wake.h"

static inline int observing(unsigned which)
{
    return __builtin_expect(__atomic_load_n(&vl_recording, __ATOMIC_RELAXED), 0) &&
           (vl_cfg.syscalls & (1u << which)) && !__vprof_lat_tls.internal;
}

static inline int recording(void)
{
    return __builtin_expect(__atomic_load_n(&vl_recording, __ATOMIC_RELAXED), 0) &&
           !__vprof_lat_tls.internal;
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

/* Before a call on fd: a write into a pipe or socket pair is a wake-up of
 * whoever waits on the other end. */
static inline void fd_before(int fd, int writes, uint64_t site)
{
    uint64_t id;
    uint32_t c;
    if (writes && (c = vl_fd_cached(fd, &id)) && (c == VPF_FD_PIPE || c == VPF_FD_SOCKPAIR))
        vl_wake_note(id, vl_now(), site);
}

/* After a call on fd that began at t0 and returned failed (rc < 0). */
static void fd_event(uint64_t nr, int fd, int failed, uint64_t t0, uint64_t site)
{
    uint64_t t1 = vl_now();
    if (t1 - t0 < vl_cfg.wait_ns)
        return;
    int e = errno;
    vl_emit(VPF_LAT_SYSCALL, t0, t1 - t0, nr, site, 0, 0);
    if (!(failed && (e == EAGAIN || e == EWOULDBLOCK))) {
        uint64_t id = 0;
        uint32_t c = vl_fd_class(fd, &id);
        if (c) {
            vl_emit(VPF_LAT_FD_WAIT, t0, t1 - t0, id, site, (uint32_t)fd,
                    (uint32_t)nr | c << 16);
            if (c == VPF_FD_PIPE || c == VPF_FD_SOCKPAIR)
                vl_wake_event(id, t0, t1, VPF_WAKE_PIPE);
        }
    }
    errno = e;
}

__attribute__((noinline, cold)) static void *vl_sys_resolve(const char *name)
{
    return dlsym(RTLD_NEXT, name);
}

#define RESOLVE(fn) do { if (__builtin_expect(!real_##fn, 0))                 \
        real_##fn = (__typeof__(real_##fn))vl_sys_resolve(#fn); } while (0)

/* The observed path is out of line so that the unobserved path of a shim
 * stays a check and a tail call (no register saves). before/after run
 * around the real call in the observed path (t0, vl_r_ and vl_site_ are
 * in scope for after). A new shim goes into vl_sys_bind too. */
#define VL_UNPAREN(...) __VA_ARGS__
#define SHIM_WITH(ret_t, name, which, params, args, before, after)            \
    static ret_t (*real_##name) params;                                      \
    __attribute__((noinline)) static ret_t                                   \
    name##_observed(uint64_t vl_site_, VL_UNPAREN params)                    \
    {                                                                        \
        before;                                                              \
        uint64_t t0 = vl_now();                                              \
        ret_t vl_r_ = real_##name args;                                      \
        after;                                                               \
        return vl_r_;                                                        \
    }                                                                        \
    ret_t name params                                                        \
    {                                                                        \
        RESOLVE(name);                                                       \
        if (!observing(which))                                               \
            return real_##name args;                                         \
        return name##_observed((uint64_t)__builtin_return_address(0) - 1,    \
                               VL_UNPAREN args);                             \
    }

#define SHIM(ret_t, name, which, nr, params, args)                           \
    SHIM_WITH(ret_t, name, which, params, args, (void)0, sys_event(nr, t0, vl_site_))

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

/* A call whose first argument is a descriptor; writes says whether it
 * feeds the descriptor (a wake-up of the reader). */
#define FD_SHIM(ret_t, name, which, nr, writes, params, args)                \
    SHIM_WITH(ret_t, name, which, params, args, fd_before(fd, writes, vl_site_), \
              fd_event(nr, fd, vl_r_ == (ret_t)-1, t0, vl_site_))

FD_SHIM(ssize_t, read, VL_SYS_READ, SYS_read, 0, (int fd, void *b, size_t n), (fd, b, n))
FD_SHIM(ssize_t, write, VL_SYS_WRITE, SYS_write, 1, (int fd, const void *b, size_t n),
        (fd, b, n))
/* pread/pwrite count as read/write in VPROF_LATENCY_SYSCALLS. */
FD_SHIM(ssize_t, pread, VL_SYS_READ, SYS_pread64, 0, (int fd, void *b, size_t n, off_t o),
        (fd, b, n, o))
FD_SHIM(ssize_t, pread64, VL_SYS_READ, SYS_pread64, 0,
        (int fd, void *b, size_t n, off64_t o), (fd, b, n, o))
FD_SHIM(ssize_t, pwrite, VL_SYS_WRITE, SYS_pwrite64, 0,
        (int fd, const void *b, size_t n, off_t o), (fd, b, n, o))
FD_SHIM(ssize_t, pwrite64, VL_SYS_WRITE, SYS_pwrite64, 0,
        (int fd, const void *b, size_t n, off64_t o), (fd, b, n, o))
FD_SHIM(int, accept, VL_SYS_ACCEPT, SYS_accept, 0,
        (int fd, struct sockaddr *a, socklen_t *l), (fd, a, l))
FD_SHIM(int, accept4, VL_SYS_ACCEPT4, SYS_accept4, 0,
        (int fd, struct sockaddr *a, socklen_t *l, int fl), (fd, a, l, fl))
FD_SHIM(int, connect, VL_SYS_CONNECT, SYS_connect, 0,
        (int fd, const struct sockaddr *a, socklen_t l), (fd, a, l))
FD_SHIM(ssize_t, recv, VL_SYS_RECV, SYS_recvfrom, 0, (int fd, void *b, size_t n, int fl),
        (fd, b, n, fl))
FD_SHIM(ssize_t, recvfrom, VL_SYS_RECVFROM, SYS_recvfrom, 0,
        (int fd, void *b, size_t n, int fl, struct sockaddr *a, socklen_t *l),
        (fd, b, n, fl, a, l))
FD_SHIM(int, fsync, VL_SYS_FSYNC, SYS_fsync, 0, (int fd), (fd))
FD_SHIM(int, fdatasync, VL_SYS_FDATASYNC, SYS_fdatasync, 0, (int fd), (fd))

/* ---- the descriptor cache (lat_fdclass.c) ---- */

static int (*real_pipe)(int[2]);
static int (*real_pipe2)(int[2], int);
static int (*real_socketpair)(int, int, int, int[2]);
static int (*real_close)(int);
static int (*real_dup2)(int, int);
static int (*real_dup3)(int, int, int);

/* Both ends of a new channel get one id: the pipe's inode, or the smaller
 * of the socket pair's two inodes. */
static void channel_made(const int fds[2], uint32_t cls)
{
    int e = errno;
    struct stat a, b;
    if (fstat(fds[0], &a) == 0 && fstat(fds[1], &b) == 0) {
        uint64_t id = a.st_ino < b.st_ino ? a.st_ino : b.st_ino;
        vl_fd_set(fds[0], cls, id);
        vl_fd_set(fds[1], cls, id);
    }
    errno = e;
}

int pipe(int fds[2])
{
    RESOLVE(pipe);
    int rc = real_pipe(fds);
    if (rc == 0 && recording())
        channel_made(fds, VPF_FD_PIPE);
    return rc;
}

int pipe2(int fds[2], int flags)
{
    RESOLVE(pipe2);
    int rc = real_pipe2(fds, flags);
    if (rc == 0 && recording())
        channel_made(fds, VPF_FD_PIPE);
    return rc;
}

int socketpair(int dom, int type, int proto, int fds[2])
{
    RESOLVE(socketpair);
    int rc = real_socketpair(dom, type, proto, fds);
    if (rc == 0 && recording())
        channel_made(fds, VPF_FD_SOCKPAIR);
    return rc;
}

int close(int fd)
{
    RESOLVE(close);
    vl_fd_forget(fd);               /* one store; also when not recording */
    return real_close(fd);
}

int dup2(int old, int fd)
{
    RESOLVE(dup2);
    vl_fd_forget(fd);
    return real_dup2(old, fd);
}

int dup3(int old, int fd, int flags)
{
    RESOLVE(dup3);
    vl_fd_forget(fd);
    return real_dup3(old, fd, flags);
}

/* Every real function of this file, at start-up (lat_rt.h says why). */
void vl_sys_bind(void)
{
    RESOLVE(nanosleep);
    RESOLVE(clock_nanosleep);
    RESOLVE(sleep);
    RESOLVE(usleep);
    RESOLVE(poll);
    RESOLVE(select);
    RESOLVE(epoll_wait);
    RESOLVE(read);
    RESOLVE(write);
    RESOLVE(pread);
    RESOLVE(pread64);
    RESOLVE(pwrite);
    RESOLVE(pwrite64);
    RESOLVE(accept);
    RESOLVE(accept4);
    RESOLVE(connect);
    RESOLVE(recv);
    RESOLVE(recvfrom);
    RESOLVE(fsync);
    RESOLVE(fdatasync);
    RESOLVE(pipe);
    RESOLVE(pipe2);
    RESOLVE(socketpair);
    RESOLVE(close);
    RESOLVE(dup2);
    RESOLVE(dup3);
}
