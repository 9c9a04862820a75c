/* fuzz_file.h - the readers take paths: hand them the fuzz input as an
 * anonymous memory file (/proc/self/fd/N), no disk I/O. */
#ifndef VPR_FUZZ_FILE_H
#define VPR_FUZZ_FILE_H
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

static inline int fuzz_path(const uint8_t *data, size_t size, char *path, size_t len)
{
    int fd = memfd_create("fuzz", 0);
    if (fd < 0) return -1;
    size_t off = 0;
    while (off < size) {
        ssize_t w = write(fd, data + off, size - off);
        if (w <= 0) { close(fd); return -1; }
        off += (size_t)w;
    }
    snprintf(path, len, "/proc/self/fd/%d", fd);
    return fd;
}
#endif
