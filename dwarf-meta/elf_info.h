/* elf_info.h - what vprof-meta needs from the ELF file itself. */
#ifndef VPROF_ELF_INFO_H
#define VPROF_ELF_INFO_H
#include <stddef.h>
#include <stdint.h>

#include "vprof_elf.h"

struct elf_info {
    int is_dyn;                 /* ET_DYN: PIE or shared object */
    uint8_t build_id[VPF_BUILD_ID_MAX];
    size_t build_id_len;
    char *schema;               /* copy of .vprof_schema, or NULL */
    size_t schema_len;
    int has_debug_info, has_symtab, has_debuglink;
    uint64_t info_size;         /* .debug_info bytes (progress) */
    uint64_t text_lo, text_hi;  /* span of executable sections */
};

/* Checks that path is a sane x86-64 ELF executable or shared object and
 * reads the above. Returns 0, or -1 with a message in err. */
int elf_info_read(const char *path, struct elf_info *ei, char *err,
                  size_t errlen);
void elf_info_free(struct elf_info *ei);
#endif
