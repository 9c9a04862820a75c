/* recfile.c - the record files values.<id>, latency.<id> and stacks.<id>
 * (FORMATS.md §3, §5, §7): a 64-byte header and fixed-size records in a file-backed shared
 * mapping, so that whatever was committed survives the death of the
 * writer. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vprof_format.h"

_Static_assert(sizeof(struct vpf_rec_header) == 64, "rec header layout");
_Static_assert(sizeof(struct vpf_values_header) == 64, "values header layout");
_Static_assert(sizeof(struct vpf_latency_header) == 64, "latency header layout");
_Static_assert(sizeof(struct vpf_value_rec) == 40, "value record layout");
_Static_assert(sizeof(struct vpf_latency_rec) == 48, "latency record layout");
_Static_assert(sizeof(struct vpf_stacks_header) == 64, "stacks header layout");
_Static_assert(sizeof(struct vpf_stack_rec) == 16, "stack record layout");

int vpf_recfile_create(int fd, const char *magic, uint16_t version,
                       uint32_t record_size, uint64_t capacity,
                       struct vpf_recfile_w *w, vpf_err *e)
{
    memset(w, 0, sizeof *w);
    w->fd = -1;
    if (record_size == 0 || capacity == 0 || capacity > (UINT64_MAX - VPF_HEADER_SIZE) / record_size) {
        vpf_set_err(e, "bad record file geometry");
        return -1;
    }
    size_t len = VPF_HEADER_SIZE + capacity * record_size;
    /* Sparse: the blocks are allocated only as records are written. */
    if (ftruncate(fd, (off_t)len) < 0) {
        vpf_set_err(e, "ftruncate: %s", strerror(errno));
        return -1;
    }
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        vpf_set_err(e, "mmap: %s", strerror(errno));
        return -1;
    }
    struct vpf_rec_header *h = p;
    memset(h, 0, VPF_HEADER_SIZE);
    memcpy(h->magic, magic, 8);
    h->version = version;
    h->header_size = VPF_HEADER_SIZE;
    h->record_size = record_size;
    h->capacity = capacity;
    w->base = p;
    w->map_len = len;
    w->capacity = capacity;
    w->record_size = record_size;
    w->fd = fd;
    w->populated = 4096;        /* the header's page: written (see vpf_recfile_populate) */
    return 0;
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

void vpf_recfile_populate(struct vpf_recfile_w *w)
{
    uint64_t done = __atomic_load_n(&w->populated, __ATOMIC_RELAXED);
    if (!done || done >= w->map_len) {
        __atomic_store_n(&w->populate_at, UINT64_MAX, __ATOMIC_RELAXED);
        return;
    }
    const struct vpf_rec_header *h = (const void *)w->base;
    uint64_t n = __atomic_load_n(&h->n_reserved, __ATOMIC_RELAXED);
    if (n > w->capacity)
        n = w->capacity;
    if (VPF_HEADER_SIZE + n * w->record_size + VPF_POPULATE_CHUNK / 2 <= done) {
        __atomic_store_n(&w->populate_at, (done - VPF_POPULATE_CHUNK / 2 - VPF_HEADER_SIZE) /
                                          w->record_size, __ATOMIC_RELAXED);
        return;
    }
    uint64_t len = w->map_len - done < VPF_POPULATE_CHUNK ? w->map_len - done
                                                          : VPF_POPULATE_CHUNK;
    if (!__atomic_compare_exchange_n(&w->populated, &done, done + len, 0,
                                     __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        return;                 /* another thread's tick does it */
    int saved = errno;
    if (madvise(w->base + done, len, MADV_POPULATE_WRITE) < 0 &&
        (errno == EINVAL || errno == ENOSYS || errno == EPERM)) {
        /* not here: the pages fault in as they are written */
        __atomic_store_n(&w->populated, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&w->populate_at, UINT64_MAX, __ATOMIC_RELAXED);
    }
    errno = saved;
}

void vpf_recfile_close(struct vpf_recfile_w *w, int clean)
{
    if (!w->base)
        return;
    struct vpf_rec_header *h = (struct vpf_rec_header *)w->base;
    uint64_t n = __atomic_load_n(&h->n_reserved, __ATOMIC_ACQUIRE);
    if (n > w->capacity)
        n = w->capacity;
    if (clean) {
        /* values, stacks: flags at 60, latency: flags at 52 — all "clean" bit 0. */
        uint32_t *flags = (uint32_t *)(w->base + (memcmp(h->magic, VPF_LATENCY_MAGIC, 8) ? 60 : 52));
        __atomic_or_fetch(flags, 1u, __ATOMIC_RELEASE);
    }
    msync(w->base, w->map_len, MS_ASYNC);
    munmap(w->base, w->map_len);
    if (clean && w->fd >= 0) {
        /* Claims past capacity never wrote; trimming keeps the file honest. */
        if (ftruncate(w->fd, (off_t)(VPF_HEADER_SIZE + n * w->record_size)) < 0) {
            /* the file keeps its full sparse size; readers use the header */
        }
    }
    if (w->fd >= 0)
        close(w->fd);
    w->base = NULL;
    w->fd = -1;
}

/* Versions 1 .. max_version are read. */
static int recfile_open(const char *path, const char *magic, uint16_t max_version,
                        uint32_t record_size, struct vpf_recfile_r *r, vpf_err *e)
{
    memset(r, 0, sizeof *r);
    size_t len;
    void *p = vpf_map_file(path, VPF_HEADER_SIZE, &len, e);
    if (!p)
        return -1;
    const struct vpf_rec_header *h = p;
    const char *why = NULL;
    size_t where = 0;
    if (memcmp(h->magic, magic, 8))
        why = "bad magic (wrong file type)";
    else if (h->version < 1 || h->version > max_version)
        where = 8, why = "unsupported version";
    else if (h->header_size != VPF_HEADER_SIZE)
        where = 10, why = "bad header size";
    else if (h->record_size != record_size)
        where = 12, why = "unexpected record size";
    if (why) {
        vpf_set_err(e, "%s: offset %zu: %s", path, where, why);
        munmap(p, len);
        return -1;
    }
    uint64_t n = h->n_reserved < h->capacity ? h->n_reserved : h->capacity;
    uint64_t need = VPF_HEADER_SIZE + n * (uint64_t)record_size;
    if (h->capacity > (UINT64_MAX - VPF_HEADER_SIZE) / record_size || need > len) {
        vpf_set_err(e, "%s: offset %zu: file truncated: header announces %llu records "
                    "(%llu bytes)", path, len, (unsigned long long)n,
                    (unsigned long long)need);
        munmap(p, len);
        return -1;
    }
    r->base = p;
    r->map_len = len;
    r->n = n;
    r->record_size = record_size;
    r->header = p;
    r->recs = (const unsigned char *)p + VPF_HEADER_SIZE;
    /* Streaming readers go front to back once. */
    madvise(p, len, MADV_SEQUENTIAL);
    return 0;
}

int vpf_recfile_open(const char *path, const char *magic,
                     uint32_t record_size, struct vpf_recfile_r *r,
                     vpf_err *e)
{
    return recfile_open(path, magic, 1, record_size, r, e);
}

void vpf_recfile_close_r(struct vpf_recfile_r *r)
{
    if (r->base)
        munmap((void *)r->base, r->map_len);
    memset(r, 0, sizeof *r);
}

int vpf_values_open(const char *path, struct vpf_recfile_r *r, vpf_err *e)
{
    return recfile_open(path, VPF_VALUES_MAGIC, VPF_VALUES_VERSION, sizeof(struct vpf_value_rec),
                        r, e);
}

int vpf_latency_open(const char *path, struct vpf_recfile_r *r, vpf_err *e)
{
    return vpf_recfile_open(path, VPF_LATENCY_MAGIC, sizeof(struct vpf_latency_rec), r, e);
}

int vpf_stacks_open(const char *path, struct vpf_recfile_r *r, vpf_err *e)
{
    /* The record size depends on the header: read the header first. */
    size_t len;
    const struct vpf_stacks_header *h = vpf_map_file(path, VPF_HEADER_SIZE, &len, e);
    if (!h)
        return -1;
    uint32_t frames = h->frames;
    int magic_ok = !memcmp(h->magic, VPF_STACKS_MAGIC, 8);
    munmap((void *)h, len);
    if (magic_ok && (frames == 0 || frames > VPF_STACKS_FRAMES_MAX)) {
        vpf_set_err(e, "%s: offset 48: frames %u is not in 1..%u", path, frames,
                    VPF_STACKS_FRAMES_MAX);
        return -1;
    }
    return vpf_recfile_open(path, VPF_STACKS_MAGIC, VPF_STACK_REC_SIZE(frames ? frames : 1), r, e);
}
