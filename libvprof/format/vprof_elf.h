/* vprof_elf.h - what the offline tools read from an ELF file besides its
 * symbols and DWARF: the GNU build-id, the `.vprof_schema` section and the
 * span of its executable code (to check profiles against it).
 * One reader for vprof-meta (dwarf-meta/elf_info.c) and vprof-report
 * (vprof-report/symbols.c), so that they agree on both (FORMATS.md §1, §2).
 *
 * Offline only (libvprof/format/offline/, needs libelf: link -lelf); the
 * runtime reads its own build-id from memory (libvprof/exeinfo.c). */
#ifndef VPROF_ELF_H
#define VPROF_ELF_H
#include <libelf.h>
#include <stddef.h>
#include <stdint.h>

#include "vprof_format.h"

#define VPF_BUILD_ID_MAX 32

struct vpf_elf_ident {
    uint8_t build_id[VPF_BUILD_ID_MAX];  /* the first GNU build-id note */
    size_t build_id_len;                 /* 0: none (or longer than 32 bytes) */
    char *schema;               /* every .vprof_schema section in section order,
                                   concatenated as ld concatenates them (a
                                   relinked or -r object may hold several);
                                   NUL-terminated; NULL if there is none */
    size_t schema_len;
    uint64_t text_lo, text_hi;  /* link-time span of the executable sections
                                   (both 0 if there are none) */
};

/* Reads both from an open ELF handle; path is for messages. Returns 0, or
 * -1 with a message naming the file and section when section data cannot
 * be read. Runs out of memory as the tools do (vprof_xalloc.h). */
int vpf_elf_ident_read(Elf *elf, const char *path, struct vpf_elf_ident *id, vpf_err *e);
void vpf_elf_ident_free(struct vpf_elf_ident *id);

/* The build-id as the layout log records it: lower-case hex, "" for none.
 * out has room for 2 * VPF_BUILD_ID_MAX + 1 bytes. */
void vpf_build_id_hex(const uint8_t *id, size_t len, char *out);

#endif
