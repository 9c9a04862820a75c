/* elf_info.c - ELF checks, build-id, embedded schema, text span (libelf).
 * The build-id and schema come from the offline tools' one reader of them,
 * vpf_elf_ident_read (libvprof/format/vprof_elf.h).
 *
 * Everything libdwarf would trip over later is checked here first, so a bad
 * input gets a message that names the problem: not an ELF, wrong machine,
 * a relocatable object, sections past the end of a truncated file. */
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "elf_info.h"
#include "vprof_elf.h"

/* .debug_rnglists / .debug_loclists are sequences of units (DWARF 5
 * 7.28/7.29). libdwarf 20210528 frees twice on some corrupt unit headers,
 * so they are checked here first: every unit must fit in the section and
 * declare version 5, 8-byte addresses, no segments and an offset table that
 * fits in the unit. Returns -1 with *bad set to the bad unit's offset. */
static int check_lists(const unsigned char *p, uint64_t size, uint64_t *bad)
{
    uint64_t off = 0;
    while (off < size) {
        uint64_t len, hdr = 4;
        *bad = off;
        if (size - off < 4)
            return -1;
        len = (uint64_t)p[off] | (uint64_t)p[off + 1] << 8 |
              (uint64_t)p[off + 2] << 16 | (uint64_t)p[off + 3] << 24;
        unsigned offsz = 4;
        if (len == 0xffffffffu) {
            if (size - off < 12)
                return -1;
            len = 0;
            for (int i = 7; i >= 0; i--)
                len = len << 8 | p[off + 4 + i];
            hdr = 12;
            offsz = 8;
        } else if (len >= 0xfffffff0u) {
            return -1;
        }
        if (len < 8 || len > size - off - hdr)
            return -1;
        const unsigned char *u = p + off + hdr;
        unsigned version = u[0] | u[1] << 8;
        uint64_t count = (uint64_t)u[4] | (uint64_t)u[5] << 8 |
                         (uint64_t)u[6] << 16 | (uint64_t)u[7] << 24;
        if (version != 5 || u[2] != 8 || u[3] != 0 ||
            count > (len - 8) / offsz)
            return -1;
        /* the offset table (DW_FORM_rnglistx / loclistx): every offset,
         * relative to the table, must land inside this unit */
        const unsigned char *tab = u + 8;
        uint64_t room = len - 8;
        for (uint64_t i = 0; i < count; i++) {
            uint64_t o = 0;
            for (int b = (int)offsz - 1; b >= 0; b--)
                o = o << 8 | tab[i * offsz + (unsigned)b];
            if (o >= room) {
                *bad = off + hdr + 8 + i * offsz;
                return -1;
            }
        }
        off += hdr + len;
    }
    return 0;
}

int elf_info_read(const char *path, struct elf_info *ei, char *err,
                  size_t errlen)
{
    memset(ei, 0, sizeof *ei);
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        snprintf(err, errlen, "%s: cannot open: %m", path);
        return -1;
    }
    struct stat sb;
    unsigned char magic[4] = { 0 };
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        snprintf(err, errlen, "%s: not a regular file", path);
        close(fd);
        return -1;
    }
    if (pread(fd, magic, 4, 0) != 4 || memcmp(magic, ELFMAG, SELFMAG) != 0) {
        snprintf(err, errlen, "%s: offset 0: not an ELF file", path);
        close(fd);
        return -1;
    }
    elf_version(EV_CURRENT);
    Elf *e = elf_begin(fd, ELF_C_READ, NULL);
    GElf_Ehdr eh;
    int rc = -1;
    if (!e || elf_kind(e) != ELF_K_ELF || !gelf_getehdr(e, &eh)) {
        snprintf(err, errlen, "%s: offset 0: truncated or corrupt ELF header",
                 path);
        goto out;
    }
    if (eh.e_shoff > (uint64_t)sb.st_size ||
        (uint64_t)eh.e_shnum * eh.e_shentsize >
            (uint64_t)sb.st_size - eh.e_shoff) {
        snprintf(err, errlen, "%s: offset %llu: section header table lies "
                 "past the end of the file (%lld bytes): truncated?", path,
                 (unsigned long long)eh.e_shoff, (long long)sb.st_size);
        goto out;
    }
    if (gelf_getclass(e) != ELFCLASS64 || eh.e_machine != EM_X86_64) {
        snprintf(err, errlen, "%s: not an x86-64 ELF file (class %d, "
                 "machine %u)", path, gelf_getclass(e), eh.e_machine);
        goto out;
    }
    if (eh.e_type == ET_REL) {
        snprintf(err, errlen, "%s: a relocatable object (.o): vprof-meta "
                 "needs the linked executable or shared object", path);
        goto out;
    }
    if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) {
        snprintf(err, errlen, "%s: ELF type %u is neither an executable nor"
                 " a shared object", path, eh.e_type);
        goto out;
    }
    ei->is_dyn = eh.e_type == ET_DYN;
    size_t shstrndx;
    if (elf_getshdrstrndx(e, &shstrndx) != 0) {
        snprintf(err, errlen, "%s: offset %llu: bad section header table "
                 "(%s)", path, (unsigned long long)eh.e_shoff,
                 elf_errmsg(-1));
        goto out;
    }
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(e, scn)) != NULL) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh)) {
            snprintf(err, errlen, "%s: corrupt section header (%s)", path,
                     elf_errmsg(-1));
            goto out;
        }
        const char *name = elf_strptr(e, shstrndx, sh.sh_name);
        if (!name)
            name = "";
        if (sh.sh_type != SHT_NOBITS &&
            (sh.sh_offset > (uint64_t)sb.st_size ||
             sh.sh_size > (uint64_t)sb.st_size - sh.sh_offset)) {
            snprintf(err, errlen, "%s: offset %llu: section %s extends past "
                     "the end of the file (%lld bytes): truncated?", path,
                     (unsigned long long)sh.sh_offset, name,
                     (long long)sb.st_size);
            goto out;
        }
        if (!strcmp(name, ".debug_info") || !strcmp(name, ".zdebug_info")) {
            ei->has_debug_info = 1;
            ei->info_size = sh.sh_size;
        } else if ((!strcmp(name, ".debug_rnglists") ||
                    !strcmp(name, ".debug_loclists")) &&
                   !(sh.sh_flags & SHF_COMPRESSED)) {
            Elf_Data *d = elf_getdata(scn, NULL);
            uint64_t bad = 0;
            if (d && d->d_buf && check_lists(d->d_buf, d->d_size, &bad)) {
                snprintf(err, errlen, "%s: offset %llu: corrupt %s unit "
                         "header or offset table", path,
                         (unsigned long long)(sh.sh_offset + bad), name);
                goto out;
            }
        } else if (!strcmp(name, ".symtab")) {
            ei->has_symtab = 1;
        } else if (!strcmp(name, ".gnu_debuglink")) {
            ei->has_debuglink = 1;
        }
    }
    /* build-id, schema and text span: the reader vprof-report uses too */
    struct vpf_elf_ident id;
    vpf_err ve;
    if (vpf_elf_ident_read(e, path, &id, &ve) < 0) {
        snprintf(err, errlen, "%s", ve.msg);
        goto out;
    }
    memcpy(ei->build_id, id.build_id, sizeof ei->build_id);
    ei->build_id_len = id.build_id_len;
    ei->schema = id.schema;
    ei->schema_len = id.schema_len;
    ei->text_lo = id.text_lo;
    ei->text_hi = id.text_hi;
    rc = 0;
out:
    if (e)
        elf_end(e);
    close(fd);
    if (rc)
        elf_info_free(ei);
    return rc;
}

void elf_info_free(struct elf_info *ei)
{
    free(ei->schema);
    ei->schema = NULL;
}
