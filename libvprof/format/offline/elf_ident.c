/* elf_ident.c - GNU build-id and .vprof_schema of an ELF file (vprof_elf.h). */
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vprof_elf.h"
#include "vprof_xalloc.h"

#ifndef NT_GNU_BUILD_ID
#define NT_GNU_BUILD_ID 3
#endif

/* The GNU build-id note in one SHT_NOTE section, if there is one. */
static void note_build_id(Elf_Data *d, struct vpf_elf_ident *id)
{
    GElf_Nhdr nh;
    size_t off = 0, noff, doff;
    while (d->d_buf && d->d_size && (off = gelf_getnote(d, off, &nh, &noff, &doff)) > 0) {
        if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
            memcmp((const char *)d->d_buf + noff, "GNU", 4) == 0 &&
            nh.n_descsz > 0 && nh.n_descsz <= VPF_BUILD_ID_MAX) {
            memcpy(id->build_id, (const char *)d->d_buf + doff, nh.n_descsz);
            id->build_id_len = nh.n_descsz;
            return;
        }
    }
}

static void append_schema(Elf_Data *d, struct vpf_elf_ident *id)
{
    if (!d->d_buf || !d->d_size) return;
    id->schema = vpf_xrealloc(id->schema, id->schema_len + d->d_size + 1, 1);
    memcpy(id->schema + id->schema_len, d->d_buf, d->d_size);
    id->schema_len += d->d_size;
    id->schema[id->schema_len] = 0;
}

int vpf_elf_ident_read(Elf *elf, const char *path, struct vpf_elf_ident *id, vpf_err *e)
{
    memset(id, 0, sizeof *id);
    size_t shstrndx;
    if (elf_getshdrstrndx(elf, &shstrndx) != 0) {
        vpf_set_err(e, "%s: bad section header table (%s)", path, elf_errmsg(-1));
        return -1;
    }
    Elf_Scn *scn = NULL;
    id->text_lo = UINT64_MAX;
    while ((scn = elf_nextscn(elf, scn))) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh)) continue;
        if ((sh.sh_flags & SHF_ALLOC) && (sh.sh_flags & SHF_EXECINSTR) && sh.sh_size) {
            if (sh.sh_addr < id->text_lo) id->text_lo = sh.sh_addr;
            if (sh.sh_addr + sh.sh_size > id->text_hi) id->text_hi = sh.sh_addr + sh.sh_size;
        }
        const char *name = elf_strptr(elf, shstrndx, sh.sh_name);
        int note = sh.sh_type == SHT_NOTE && !id->build_id_len;
        int schema = name && !strcmp(name, ".vprof_schema") && sh.sh_type != SHT_NOBITS;
        if (!note && !schema) continue;
        Elf_Data *d = elf_getdata(scn, NULL);
        if (!d) {
            vpf_set_err(e, "%s: offset %llu: cannot read section %s (%s)", path,
                        (unsigned long long)sh.sh_offset, name ? name : "?", elf_errmsg(-1));
            vpf_elf_ident_free(id);
            return -1;
        }
        if (note) note_build_id(d, id);
        else append_schema(d, id);
    }
    if (id->text_lo > id->text_hi) id->text_lo = id->text_hi = 0;
    return 0;
}

void vpf_elf_ident_free(struct vpf_elf_ident *id)
{
    free(id->schema);
    id->schema = NULL;
    id->schema_len = 0;
}

void vpf_build_id_hex(const uint8_t *id, size_t len, char *out)
{
    static const char hex[] = "0123456789abcdef";
    if (len > VPF_BUILD_ID_MAX) len = VPF_BUILD_ID_MAX;
    for (size_t i = 0; i < len; i++) {
        out[2 * i] = hex[id[i] >> 4];
        out[2 * i + 1] = hex[id[i] & 15];
    }
    out[2 * len] = 0;
}
