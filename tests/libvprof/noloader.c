/* noloader - counts the calls libunwind makes to dl_iterate_phdr
 * (tests/libvprof/t_dlopen.sh), preloaded after libvprof.
 *
 * libunwind runs only inside libvprof's ticks, so a call whose return
 * address lies in libunwind's code is a tick calling into the dynamic
 * loader, which takes the loader's lock: the hazard t_dlopen's "held" case
 * turns into a hang. This counts such calls without needing the hang, and
 * prints "noloader: N calls from libunwind" at exit. The real function and
 * libunwind's code range are looked up at start-up, never inside a tick
 * (dlsym would take the loader's lock too). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef int (*iterate_fn)(int (*)(struct dl_phdr_info *, size_t, void *), void *);
static iterate_fn real_iterate;
static uintptr_t unw_lo, unw_hi;
static unsigned long from_unwind;       /* atomic */

/* Notes libunwind's executable segment. */
static int find_libunwind(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    (void)data;
    if (!strstr(info->dlpi_name, "libunwind"))
        return 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *p = &info->dlpi_phdr[i];
        if (p->p_type == PT_LOAD && (p->p_flags & PF_X)) {
            unw_lo = info->dlpi_addr + p->p_vaddr;
            unw_hi = unw_lo + p->p_memsz;
            return 1;
        }
    }
    return 0;
}

/* In the constructor, or at the first call if libvprof's constructor
 * runs first (it registers the unwind tables at start-up, no tick yet). */
__attribute__((constructor)) static void setup(void)
{
    if (real_iterate)
        return;
    real_iterate = (iterate_fn)dlsym(RTLD_NEXT, "dl_iterate_phdr");
    if (real_iterate)
        real_iterate(find_libunwind, NULL);
}

__attribute__((destructor)) static void report(void)
{
    fprintf(stderr, "noloader: %lu calls from libunwind%s\n",
            __atomic_load_n(&from_unwind, __ATOMIC_RELAXED), unw_hi ? "" : " (libunwind not found)");
}

int dl_iterate_phdr(int (*cb)(struct dl_phdr_info *, size_t, void *), void *data)
{
    uintptr_t ra = (uintptr_t)__builtin_return_address(0);
    if (!real_iterate)
        setup();
    if (ra >= unw_lo && ra < unw_hi)
        __atomic_fetch_add(&from_unwind, 1, __ATOMIC_RELAXED);
    return real_iterate ? real_iterate(cb, data) : -1;
}
