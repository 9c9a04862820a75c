/* lat_fdclass.c - what a file descriptor waits on, for fd wait events
 * (FORMATS.md §5.1): a file's device (the disk), a socket's peer (the
 * network), a pipe or a socket pair (each its own channel). The answer is
 * cached per fd so that a blocking call pays fstat/getpeername once: the
 * shims of pipe(), pipe2() and socketpair() fill the cache (they know both
 * ends), close(), dup2() and dup3() clear the entries they replace. A
 * descriptor closed where the shims do not see it (inside libc, e.g. by
 * fclose) keeps a stale entry until the number is closed again through the
 * shims: the cost of not asking the kernel on every call. */
#include <errno.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "lat_wake.h"

#define VL_FDS 4096                 /* descriptors cached; higher ones: fstat each time */

struct fdc { uint64_t id; uint32_t cls; };
static struct fdc cache[VL_FDS];

void vl_fd_set(int fd, uint32_t cls, uint64_t id)
{
    if (fd < 0 || fd >= VL_FDS)
        return;
    __atomic_store_n(&cache[fd].cls, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&cache[fd].id, id, __ATOMIC_RELAXED);
    __atomic_store_n(&cache[fd].cls, cls, __ATOMIC_RELEASE);
}

void vl_fd_forget(int fd)
{
    if (fd >= 0 && fd < VL_FDS)
        __atomic_store_n(&cache[fd].cls, 0, __ATOMIC_RELEASE);
}

uint32_t vl_fd_cached(int fd, uint64_t *id)
{
    if (fd < 0 || fd >= VL_FDS)
        return 0;
    uint32_t c = __atomic_load_n(&cache[fd].cls, __ATOMIC_ACQUIRE);
    if (c)
        *id = __atomic_load_n(&cache[fd].id, __ATOMIC_RELAXED);
    return c;
}

/* 48-bit FNV-1a of a socket address (IPv6, Unix): an id, not an address. */
static uint64_t addr_hash(const unsigned char *p, socklen_t n)
{
    return vpf_hash_mem(VPF_FNV_BASIS, p, n) & 0xffffffffffffull;
}

static uint64_t peer_id(int fd)
{
    struct sockaddr_storage a;
    socklen_t n = sizeof a;
    if (getpeername(fd, (struct sockaddr *)&a, &n) < 0)
        return 0;                   /* listening or not connected */
    if (a.ss_family == AF_INET && n >= sizeof(struct sockaddr_in)) {
        const struct sockaddr_in *v4 = (const struct sockaddr_in *)&a;
        return (uint64_t)AF_INET << 48 | (uint64_t)ntohs(v4->sin_port) << 32 |
               ntohl(v4->sin_addr.s_addr);
    }
    return addr_hash((const unsigned char *)&a, n);
}

uint32_t vl_fd_class(int fd, uint64_t *id)
{
    uint32_t c = vl_fd_cached(fd, id);
    if (c)
        return c;
    int e = errno;
    struct stat st;
    if (fstat(fd, &st) < 0) {
        errno = e;
        return 0;
    }
    if (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)) {
        c = VPF_FD_FILE;
        *id = st.st_dev;
    } else if (S_ISBLK(st.st_mode)) {
        c = VPF_FD_FILE;
        *id = st.st_rdev;
    } else if (S_ISFIFO(st.st_mode)) {
        c = VPF_FD_PIPE;
        *id = st.st_ino;
    } else if (S_ISSOCK(st.st_mode)) {
        c = VPF_FD_SOCKET;
        *id = peer_id(fd);
    } else {
        c = VPF_FD_OTHER;
        *id = S_ISCHR(st.st_mode) ? st.st_rdev : st.st_ino;
    }
    vl_fd_set(fd, c, *id);
    errno = e;
    return c;
}
