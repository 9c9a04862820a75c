/* exeinfo.c - load bias, text range, segments and build-id of the main
 * program, and its executable mappings for the layout log. */
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exeinfo.h"
#include "vprof_format.h"

static int first_object(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct vprof_exeinfo *x = data;
    long pg = sysconf(_SC_PAGESIZE);
    x->bias = info->dlpi_addr;
    x->text_lo = UINT64_MAX;
    x->text_hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD) {
            uint64_t lo = x->bias + ph->p_vaddr, hi = lo + ph->p_memsz;
            if (ph->p_flags & PF_X) {
                if (lo < x->text_lo) x->text_lo = lo;
                if (hi > x->text_hi) x->text_hi = hi;
            }
            if (x->n_segs < VPROF_MAX_SEGS) {
                x->seg_lo[x->n_segs] = lo & ~(uint64_t)(pg - 1);
                x->seg_hi[x->n_segs] = (hi + (uint64_t)pg - 1) & ~(uint64_t)(pg - 1);
                x->n_segs++;
            }
        } else if (ph->p_type == PT_NOTE && !x->build_id_len) {
            const unsigned char *p = (const unsigned char *)(x->bias + ph->p_vaddr);
            const unsigned char *end = p + ph->p_memsz;
            while (p + sizeof(ElfW(Nhdr)) <= end) {
                const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)p;
                size_t nsz = (n->n_namesz + 3) & ~3u, dsz = (n->n_descsz + 3) & ~3u;
                const unsigned char *name = p + sizeof *n, *desc = name + nsz;
                if (desc + dsz > end)
                    break;
                if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 &&
                    !memcmp(name, "GNU", 4) && n->n_descsz <= 32) {
                    memcpy(x->build_id, desc, n->n_descsz);
                    x->build_id_len = n->n_descsz;
                    break;
                }
                p = desc + dsz;
            }
        }
    }
    if (x->text_hi == 0)
        x->text_lo = 0;
    return 1;                   /* only the first object: the executable */
}

int vprof_exeinfo_get(struct vprof_exeinfo *x)
{
    memset(x, 0, sizeof *x);
    ssize_t n = readlink("/proc/self/exe", x->path, sizeof x->path - 1);
    x->path[n > 0 ? n : 0] = 0;
    dl_iterate_phdr(first_object, x);
    static const char d[] = "0123456789abcdef";
    for (unsigned i = 0; i < x->build_id_len; i++) {
        x->build_id_hex[2 * i] = d[x->build_id[i] >> 4];
        x->build_id_hex[2 * i + 1] = d[x->build_id[i] & 15];
    }
    return x->text_hi > x->text_lo ? 0 : -1;
}

void vprof_exeinfo_write_maps(int fd)
{
    FILE *f = fopen("/proc/self/maps", "re");
    if (!f)
        return;
    char line[PATH_MAX + 128];
    while (fgets(line, sizeof line, f)) {
        unsigned long long lo, hi, off;
        char perms[8];
        int pos = 0;
        if (sscanf(line, "%llx-%llx %7s %llx %*s %*s%n", &lo, &hi, perms, &off, &pos) < 4)
            continue;
        if (perms[2] != 'x')
            continue;
        char *path = line + pos;
        while (*path == ' ')
            path++;
        path[strcspn(path, "\n")] = 0;
        vpf_layout_write_map(fd, lo, hi, off, path);
    }
    fclose(f);
}
