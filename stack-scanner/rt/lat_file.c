/* lat_file.c - latency.<id> (docs/FORMATS.md §5), written through the format
 * module's record-file writer: a file-backed MAP_SHARED mapping whose
 * committed records survive SIGKILL. Writers (the scanner, and application
 * threads whose buffer is full) claim slots lock-free; an in-flight counter
 * lets close wait until no writer is inside the mapping before unmapping. */
#include <stddef.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lat_rt.h"

static struct vpf_recfile_w w;
static int is_open;              /* atomic */
static int inflight;             /* atomic: writers inside the mapping */
static uint64_t lost_closed;     /* events after close / before open */

void vl_warn(const char *msg1, const char *msg2)
{
    /* the raw syscall: any context, and not through the write shim */
    const char *parts[5] = { "vprof latency: ", msg1, msg2 ? " (" : "",
                             msg2 ? msg2 : "", msg2 ? ")\n" : "\n" };
    for (int i = 0; i < 5; i++)
        if (syscall(SYS_write, 2, parts[i], strlen(parts[i])) < 0)
            return;
}

int vl_file_open(int (*create_file)(const char *name), const char *id, uint64_t start_ns)
{
    char name[256] = "latency.";
    size_t n = strlen(name), k = strlen(id);
    if (n + k >= sizeof name) {
        vl_warn("file id too long", id);
        return -1;
    }
    memcpy(name + n, id, k + 1);
    int fd = create_file(name);
    if (fd < 0) {
        vl_warn("cannot create output file", name);
        return -1;
    }
    vpf_err e;
    if (vpf_recfile_create(fd, VPF_LATENCY_MAGIC, VPF_LATENCY_VERSION,
                           sizeof(struct vpf_latency_rec), vl_cfg.capacity, &w, &e) < 0) {
        vl_warn(name, e.msg);
        close(fd);
        return -1;
    }
    struct vpf_latency_header *h = (struct vpf_latency_header *)w.base;
    h->start_ns = start_ns;
    h->scan_ns = vl_cfg.scan_ns;
    if (vl_funcs_limited)
        h->flags |= VPF_LAT_FLAG_FUNCS;
    __atomic_store_n(&is_open, 1, __ATOMIC_SEQ_CST);
    return 0;
}

void vl_file_put(const struct vpf_latency_rec *r)
{
    __atomic_add_fetch(&inflight, 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&is_open, __ATOMIC_SEQ_CST)) {
        struct vpf_latency_rec *p = vpf_recfile_claim(&w);
        if (p) {
            memcpy(p, r, offsetof(struct vpf_latency_rec, flags));
            p->uncertainty_us = r->uncertainty_us;
            p->flags = r->flags & (uint8_t)~VPF_REC_COMMITTED;
            vpf_commit_flag(&p->flags);  /* committed bit last (release) */
        }
    } else {
        __atomic_add_fetch(&lost_closed, 1, __ATOMIC_RELAXED);
    }
    __atomic_sub_fetch(&inflight, 1, __ATOMIC_SEQ_CST);
}

void vl_file_close(int clean)
{
    if (!__atomic_exchange_n(&is_open, 0, __ATOMIC_SEQ_CST))
        return;
    /* Bounded: close may run in a signal handler that interrupted a writer
     * of this very thread, which cannot finish until the handler returns.
     * Then the mapping stays (its records are on disk already). */
    struct vpf_latency_header *h = (struct vpf_latency_header *)w.base;
    for (long spins = 0; __atomic_load_n(&inflight, __ATOMIC_SEQ_CST); spins++) {
        if (spins > 50000000) {
            if (clean)
                __atomic_or_fetch(&h->flags, 1u, __ATOMIC_RELEASE);
            return;
        }
        __builtin_ia32_pause();
    }
    /* Events that found the file closed count as dropped. */
    __atomic_add_fetch(&h->dropped, __atomic_exchange_n(&lost_closed, 0, __ATOMIC_RELAXED),
                       __ATOMIC_RELAXED);
    vpf_recfile_close(&w, clean);
}

void vl_file_forget(void)
{
    /* Child after fork: the mapping is the parent's file; let go of it
     * without touching its contents. */
    if (__atomic_exchange_n(&is_open, 0, __ATOMIC_SEQ_CST))
        vpf_recfile_close(&w, 0);
    inflight = 0;
    lost_closed = 0;
}
