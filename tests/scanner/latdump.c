/* latdump.c - prints a latency.<id> file as text for the scanner tests,
 * through the format module's reader:
 *   header: "# n=N capacity=C dropped=D scan_ns=S flags=F"
 *   one line per committed record:
 *     kind tid other_tid start_ns duration_ns func site generation flags
 *   with kind as a word (call, mutex_wait, mutex_hold, cond_wait,
 *   req_start, req_block, req_end, syscall) and func/site in hex.
 * Exit 1 with the reader's message on a bad file. */
#include <inttypes.h>
#include <stdio.h>

#include "vprof_format.h"

static const char *kinds[] = { "?", "call", "mutex_wait", "mutex_hold", "cond_wait",
                               "req_start", "req_block", "req_end", "syscall" };

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: latdump FILE\n");
        return 2;
    }
    struct vpf_recfile_r r;
    vpf_err e;
    if (vpf_latency_open(argv[1], &r, &e) < 0) {
        fprintf(stderr, "latdump: %s\n", e.msg);
        return 1;
    }
    const struct vpf_latency_header *h = r.header;
    printf("# n=%" PRIu64 " capacity=%" PRIu64 " dropped=%" PRIu64 " scan_ns=%u flags=%u\n",
           r.n, h->capacity, h->dropped, h->scan_ns, h->flags);
    const struct vpf_latency_rec *v = r.recs;
    for (uint64_t i = 0; i < r.n; i++) {
        if (!(v[i].flags & VPF_REC_COMMITTED))
            continue;
        unsigned k = v[i].kind < 9 ? v[i].kind : 0;
        printf("%s %u %u %" PRIu64 " %" PRIu64 " %" PRIx64 " %" PRIx64 " %u %u\n", kinds[k],
               v[i].tid, v[i].other_tid, v[i].start_ns, v[i].duration_ns, v[i].func,
               v[i].site, v[i].generation, v[i].flags & 0x7fu);
    }
    vpf_recfile_close_r(&r);
    return 0;
}
