/* memread.c - guarded self-memory reads for the signal handler.
 *
 * Fast paths read directly when the address is provably mapped: inside the
 * executable's own PT_LOAD segments, or on the interrupted thread's stack
 * between its stack pointer (minus the red zone) and the stack top. Anything
 * else goes through process_vm_readv(2) on our own pid, which reports EFAULT
 * instead of faulting. Where a seccomp filter denies that syscall, the
 * fallback is write(2) into a per-thread pipe (the kernel copies from our
 * buffer and fails with EFAULT on a bad address) and read(2) back. All of
 * this is async-signal-safe: syscalls and plain loads only. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "memread.h"

#define MAX_SAFE 16

static struct { uint64_t lo, hi; } safe[MAX_SAFE];
static int n_safe;
static pid_t self_pid;
static int vm_readv_denied;         /* set once process_vm_readv fails oddly */

__thread uint64_t vprof_stack_lo __attribute__((tls_model("initial-exec")));
__thread uint64_t vprof_stack_hi __attribute__((tls_model("initial-exec")));
static __thread int pipe_fd[2] __attribute__((tls_model("initial-exec")));
static __thread int pipe_made __attribute__((tls_model("initial-exec")));

void vprof_memread_add_safe(uint64_t lo, uint64_t hi)
{
    if (n_safe < MAX_SAFE && lo < hi) {
        safe[n_safe].lo = lo;
        safe[n_safe].hi = hi;
        n_safe++;
    }
    if (!self_pid)
        self_pid = (pid_t)syscall(SYS_getpid);
}

void vprof_memread_force_pipe(int on)
{
    vm_readv_denied = on;
}

void vprof_memread_clear_safe(void)
{
    n_safe = 0;
    self_pid = (pid_t)syscall(SYS_getpid);
}

void vprof_memread_set_stack(uint64_t lo, uint64_t hi)
{
    vprof_stack_lo = lo;
    vprof_stack_hi = hi;
}

void vprof_memread_reset_pid(void)
{
    self_pid = (pid_t)syscall(SYS_getpid);
    /* The child inherits the parent's pipe fds; keep using them is fine
     * (only this thread survives fork), nothing to do. */
}

static int direct_ok(const struct vprof_memread_ctx *c, uint64_t addr, size_t n)
{
    uint64_t end = addr + n;
    if (end < addr)
        return 0;
    /* the thread's own stack first: the unwinders' loads */
    if (c && vprof_memread_on_stack(c->rsp, addr, n))
        return 1;
    for (int i = 0; i < n_safe; i++)
        if (addr >= safe[i].lo && end <= safe[i].hi)
            return 1;
    return 0;
}

int vprof_memread_safe(uint64_t addr, size_t n)
{
    return direct_ok(NULL, addr, n);
}

static int pipe_read(uint64_t addr, void *dst, size_t n)
{
    if (!pipe_made) {
        if (pipe2(pipe_fd, O_CLOEXEC | O_NONBLOCK) < 0)
            return -1;
        pipe_made = 1;
    }
    ssize_t w = write(pipe_fd[1], (const void *)(uintptr_t)addr, n);
    if (w != (ssize_t)n) {
        if (w > 0) {                /* drain a partial write */
            char sink[16];
            while (read(pipe_fd[0], sink, sizeof sink) > 0) {}
        }
        return -1;
    }
    return read(pipe_fd[0], dst, n) == (ssize_t)n ? 0 : -1;
}

int vprof_memread_needs_call(uint64_t addr, size_t n)
{
    return addr >= 4096 && !direct_ok(NULL, addr, n);
}

/* After a system call: the budget's look at the clock. */
static void look_at_clock(struct vprof_memread_ctx *c)
{
    if (c->deadline) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        c->clock = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
        if (c->clock >= c->deadline)
            c->cut = 1;
    }
}

void vprof_memread_many(struct vprof_memread_ctx *c, const struct iovec *local,
                        const struct iovec *remote, unsigned n, uint8_t *ok)
{
    int saved = errno;
    unsigned i = 0;
    while (i < n && !vm_readv_denied) {
        ssize_t r = syscall(SYS_process_vm_readv, self_pid, local + i, (unsigned long)(n - i),
                            remote + i, (unsigned long)(n - i), 0UL);
        look_at_clock(c);
        if (r < 0 && errno != EFAULT) {
            if (errno == ENOSYS || errno == EPERM || errno == EACCES)
                __atomic_store_n(&vm_readv_denied, 1, __ATOMIC_RELAXED);
            else
                r = 0;          /* (nothing read: this one fails, the rest are tried) */
            if (vm_readv_denied)
                break;
        }
        /* whole elements were read (the call never splits one); the next
         * would have faulted */
        for (size_t got = r > 0 ? (size_t)r : 0; i < n && got >= remote[i].iov_len; i++) {
            got -= remote[i].iov_len;
            ok[i] = 1;
        }
        if (i < n) {
            ok[i++] = 0;
            c->faults++;
        }
    }
    for (; i < n; i++) {        /* the pipe, where process_vm_readv is denied */
        ok[i] = pipe_read((uint64_t)(uintptr_t)remote[i].iov_base, local[i].iov_base,
                          remote[i].iov_len) == 0;
        look_at_clock(c);
        if (!ok[i])
            c->faults++;
    }
    errno = saved;
}

int vprof_memread(void *ctx, uint64_t addr, void *dst, size_t n)
{
    struct vprof_memread_ctx *c = ctx;
    int saved, rc;
    if (direct_ok(c, addr, n)) {
        const void *src = (const void *)(uintptr_t)addr;
        switch (n) {            /* the value reader's sizes, inlined */
        case 1: __builtin_memcpy(dst, src, 1); break;
        case 2: __builtin_memcpy(dst, src, 2); break;
        case 4: __builtin_memcpy(dst, src, 4); break;
        case 8: __builtin_memcpy(dst, src, 8); break;
        case 16: __builtin_memcpy(dst, src, 16); break;     /* a frame pointer's pair */
        default: memcpy(dst, src, n); break;
        }
        return 0;
    }
    if (addr < 4096) {              /* NULL and near-NULL never map */
        if (c)
            c->faults++;
        return -1;
    }
    if (c && vprof_memread_take(c) < 0)
        return -1;                  /* the tick's budget, not a fault */
    saved = errno;
    if (!vm_readv_denied) {
        struct iovec local = {dst, n};
        struct iovec remote = {(void *)(uintptr_t)addr, n};
        ssize_t r = syscall(SYS_process_vm_readv, self_pid, &local, 1UL, &remote, 1UL, 0UL);
        if (r == (ssize_t)n) {
            rc = 0;
            goto out;
        }
        if (r >= 0 || errno == EFAULT) {
            rc = -1;
            goto out;
        }
        if (errno == ENOSYS || errno == EPERM || errno == EACCES)
            __atomic_store_n(&vm_readv_denied, 1, __ATOMIC_RELAXED);
        else {
            rc = -1;
            goto out;
        }
    }
    rc = pipe_read(addr, dst, n);
out:
    if (c) {
        if (rc < 0)
            c->faults++;
        look_at_clock(c);
    }
    errno = saved;
    return rc;
}

void vprof_memread_thread_exit(void)
{
    if (pipe_made) {
        close(pipe_fd[0]);
        close(pipe_fd[1]);
        pipe_made = 0;
    }
}
