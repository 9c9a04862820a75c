/* meta.c - reader and writer of variable metadata (FORMATS.md §2).
 *
 * The reader runs inside the profiled process at start-up, so it uses no
 * stdio: the file is mapped and validated in place. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vprof_format.h"

_Static_assert(sizeof(struct vpf_meta_header) == 64, "meta header layout");
_Static_assert(sizeof(struct vpf_var_desc) == 32, "var desc layout");
_Static_assert(sizeof(struct vpf_loc_entry) == 48, "loc entry layout");

static int check_str(const struct vpf_meta_header *h, uint32_t off)
{
    return off < h->strtab_size;
}

int vpf_meta_parse(const void *buf, size_t len, const char *name,
                   struct vpf_meta *m, vpf_err *e)
{
    const unsigned char *b = buf;
    memset(m, 0, sizeof *m);
    if ((uintptr_t)buf % 8) {   /* records are read in place */
        vpf_set_err(e, "%s: metadata buffer is not 8-byte aligned", name);
        return -1;
    }
    if (len < sizeof(struct vpf_meta_header)) {
        vpf_set_err(e, "%s: offset 0: file too short for a metadata header (%zu bytes)", name, len);
        return -1;
    }
    memcpy(&m->hdr, b, sizeof m->hdr);
    const struct vpf_meta_header *h = &m->hdr;
    if (memcmp(h->magic, VPF_META_MAGIC, 8)) {
        vpf_set_err(e, "%s: offset 0: not a vprof metadata file (bad magic)", name);
        return -1;
    }
    if (h->version != VPF_META_VERSION) {
        vpf_set_err(e, "%s: offset 8: unsupported metadata version %u", name, h->version);
        return -1;
    }
    if (h->header_size < sizeof *h || h->header_size > len || h->header_size % 8) {
        vpf_set_err(e, "%s: offset 10: bad header size %u", name, h->header_size);
        return -1;
    }
    if (h->build_id_len > sizeof h->build_id) {
        vpf_set_err(e, "%s: offset 28: bad build-id length %u", name, h->build_id_len);
        return -1;
    }
    uint64_t vars_off = h->header_size;
    uint64_t ents_off = vars_off + (uint64_t)h->n_vars * sizeof(struct vpf_var_desc);
    uint64_t str_off = ents_off + (uint64_t)h->n_entries * sizeof(struct vpf_loc_entry);
    uint64_t end = str_off + h->strtab_size;
    if (end > len) {
        vpf_set_err(e, "%s: offset %zu: file truncated (header announces %llu bytes)", name,
                    len, (unsigned long long)end);
        return -1;
    }
    if (h->strtab_size == 0 || b[str_off] != 0 || b[end - 1] != 0) {
        vpf_set_err(e, "%s: offset %llu: string table must start and end with NUL", name,
                    (unsigned long long)str_off);
        return -1;
    }
    m->vars = (const struct vpf_var_desc *)(b + vars_off);
    m->entries = (const struct vpf_loc_entry *)(b + ents_off);
    m->strtab = (const char *)(b + str_off);
    for (uint32_t i = 0; i < h->n_vars; i++) {
        const struct vpf_var_desc *v = &m->vars[i];
        uint64_t off = vars_off + (uint64_t)i * sizeof *v;
        if (!check_str(h, v->file) || !check_str(h, v->function) ||
            !check_str(h, v->name) || !check_str(h, v->type)) {
            vpf_set_err(e, "%s: offset %llu: variable %u: string offset out of range", name,
                        (unsigned long long)off, i);
            return -1;
        }
        if (v->kind > VPF_KIND_BOOL || !(v->size == 1 || v->size == 2 || v->size == 4 ||
                                         v->size == 8)) {
            vpf_set_err(e, "%s: offset %llu: variable %u: bad kind %u or size %u", name,
                        (unsigned long long)off, i, v->kind, v->size);
            return -1;
        }
    }
    for (uint32_t i = 0; i < h->n_entries; i++) {
        const struct vpf_loc_entry *en = &m->entries[i];
        unsigned long long off = ents_off + (uint64_t)i * sizeof *en;
        const char *why = NULL;
        if (en->var >= h->n_vars)
            why = "variable index out of range";
        else if (en->pc_end <= en->pc_start)
            why = "empty or inverted PC range";
        else if (en->loc > VPF_LOC_EXPR)
            why = "unknown location kind";
        else if ((en->loc == VPF_LOC_REG || en->loc == VPF_LOC_BREG || en->loc == VPF_LOC_FBREG) &&
                 en->reg > VPF_XMM15)
            why = "register number out of range";
        else if (en->loc == VPF_LOC_EXPR && en->reg > VPF_RIP)
            why = "frame base register out of range";
        else if (en->loc == VPF_LOC_EXPR &&
                 (en->offset <= 0 || (uint64_t)en->offset >= h->strtab_size))
            why = "expression program offset out of range";
        else if (!(en->size == 1 || en->size == 2 || en->size == 4 || en->size == 8))
            why = "bad value size";
        if (why) {
            vpf_set_err(e, "%s: offset %llu: location entry %u: %s", name, off, i, why);
            return -1;
        }
    }
    return 0;
}

int vpf_meta_load(const char *path, struct vpf_meta *m, vpf_err *e)
{
    memset(m, 0, sizeof *m);
    size_t len;
    void *p = vpf_map_file(path, 1, &len, e);
    if (!p)
        return -1;
    if (vpf_meta_parse(p, len, path, m, e) < 0) {
        munmap(p, len);
        memset(m, 0, sizeof *m);
        return -1;
    }
    m->owned = p;
    m->owned_len = len;
    m->owned_is_map = 1;
    return 0;
}

void vpf_meta_free(struct vpf_meta *m)
{
    if (m->owned) {
        if (m->owned_is_map)
            munmap(m->owned, m->owned_len);
        else
            free(m->owned);
    }
    memset(m, 0, sizeof *m);
}

const char *vpf_meta_str(const struct vpf_meta *m, uint32_t off)
{
    return off < m->hdr.strtab_size ? m->strtab + off : "";
}

/* The program is not checked here: a program the runtime cannot run costs
 * only its own entry (vpf_expr_check where the entry is used), so a newer
 * vprof-meta's operation leaves the rest of the file readable. */
const char *vpf_meta_expr(const struct vpf_meta *m, const struct vpf_loc_entry *e)
{
    if (e->loc != VPF_LOC_EXPR || e->offset <= 0 || (uint64_t)e->offset >= m->hdr.strtab_size)
        return NULL;
    return m->strtab + e->offset;
}

const char *vpf_expr_check_entry(const struct vpf_meta *m, const struct vpf_loc_entry *e)
{
    const char *prog = vpf_meta_expr(m, e);
    if (!prog)
        return "expression program offset out of range";
    if (e->flags & VPF_LF_DEREF)
        return "expression entry with the deref flag";
    return vpf_expr_check(prog);
}

/* ---------------- builder ---------------- */

struct vpf_meta_builder {
    struct vpf_meta_header hdr;
    struct vpf_var_desc *vars;
    size_t n_vars, cap_vars;
    struct vpf_loc_entry *ents;
    size_t n_ents, cap_ents;
    char *str;
    size_t str_len, str_cap;
    uint32_t *hslot;            /* string dedup: open addressing of offsets */
    size_t hcap, hcount;
    int oom;
};

struct vpf_meta_builder *vpf_mb_new(void)
{
    struct vpf_meta_builder *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    memcpy(b->hdr.magic, VPF_META_MAGIC, 8);
    b->hdr.version = VPF_META_VERSION;
    b->hdr.header_size = sizeof b->hdr;
    b->str = malloc(b->str_cap = 4096);
    if (!b->str) {
        free(b);
        return NULL;
    }
    b->str[0] = 0;
    b->str_len = 1;
    return b;
}

static int hgrow(struct vpf_meta_builder *b)
{
    size_t cap = b->hcap ? b->hcap * 2 : 1024;
    uint32_t *slot = calloc(cap, sizeof *slot);     /* 0 = empty */
    if (!slot)
        return -1;
    for (size_t i = 0; i < b->hcap; i++) {
        if (!b->hslot[i])
            continue;
        size_t h = vpf_hash_str(VPF_FNV_BASIS, b->str + b->hslot[i]) & (cap - 1);
        while (slot[h])
            h = (h + 1) & (cap - 1);
        slot[h] = b->hslot[i];
    }
    free(b->hslot);
    b->hslot = slot;
    b->hcap = cap;
    return 0;
}

uint32_t vpf_mb_str(struct vpf_meta_builder *b, const char *s)
{
    if (!s || !*s)
        return 0;
    if ((b->hcount + 1) * 2 > b->hcap && hgrow(b) < 0) {
        b->oom = 1;
        return 0;
    }
    size_t h = vpf_hash_str(VPF_FNV_BASIS, s) & (b->hcap - 1);
    while (b->hslot[h]) {
        if (!strcmp(b->str + b->hslot[h], s))
            return b->hslot[h];
        h = (h + 1) & (b->hcap - 1);
    }
    size_t n = strlen(s) + 1;
    if (b->str_len + n > UINT32_MAX) {
        b->oom = 1;
        return 0;
    }
    if (b->str_len + n > b->str_cap) {
        size_t cap = b->str_cap;
        while (b->str_len + n > cap)
            cap *= 2;
        char *p = realloc(b->str, cap);
        if (!p) {
            b->oom = 1;
            return 0;
        }
        b->str = p;
        b->str_cap = cap;
    }
    uint32_t off = (uint32_t)b->str_len;
    memcpy(b->str + off, s, n);
    b->str_len += n;
    b->hslot[h] = off;
    b->hcount++;
    return off;
}

uint32_t vpf_mb_add_var(struct vpf_meta_builder *b, const struct vpf_var_desc *v)
{
    if (vpf_grow_try((void **)&b->vars, &b->cap_vars, b->n_vars + 1, sizeof *v) < 0) {
        b->oom = 1;
        return UINT32_MAX;
    }
    b->vars[b->n_vars] = *v;
    return (uint32_t)b->n_vars++;
}

void vpf_mb_add_entry(struct vpf_meta_builder *b, const struct vpf_loc_entry *en)
{
    if (vpf_grow_try((void **)&b->ents, &b->cap_ents, b->n_ents + 1, sizeof *en) < 0) {
        b->oom = 1;
        return;
    }
    b->ents[b->n_ents++] = *en;
}

void vpf_mb_set_build_id(struct vpf_meta_builder *b, const uint8_t *id, size_t len)
{
    if (len > sizeof b->hdr.build_id)
        len = sizeof b->hdr.build_id;
    memset(b->hdr.build_id, 0, sizeof b->hdr.build_id);
    if (len)
        memcpy(b->hdr.build_id, id, len);
    b->hdr.build_id_len = (uint32_t)len;
}

void vpf_mb_set_flags(struct vpf_meta_builder *b, uint32_t flags) { b->hdr.flags = flags; }
size_t vpf_mb_n_vars(const struct vpf_meta_builder *b) { return b->n_vars; }
size_t vpf_mb_n_entries(const struct vpf_meta_builder *b) { return b->n_ents; }

static int cmp_entry(const void *a, const void *b)
{
    const struct vpf_loc_entry *x = a, *y = b;
    if (x->pc_start != y->pc_start)
        return x->pc_start < y->pc_start ? -1 : 1;
    if (x->var != y->var)
        return x->var < y->var ? -1 : 1;
    return x->pc_end < y->pc_end ? -1 : x->pc_end > y->pc_end;
}

int vpf_mb_write(struct vpf_meta_builder *b, const char *path, vpf_err *e)
{
    if (b->oom) {
        vpf_set_err(e, "%s: out of memory while building metadata", path);
        return -1;
    }
    if (b->n_ents)  /* qsort(NULL, 0) is undefined */
        qsort(b->ents, b->n_ents, sizeof *b->ents, cmp_entry);
    b->hdr.n_vars = (uint32_t)b->n_vars;
    b->hdr.n_entries = (uint32_t)b->n_ents;
    b->hdr.strtab_size = (uint32_t)b->str_len;
    int to_stdout = !strcmp(path, "-");
    FILE *f = to_stdout ? stdout : fopen(path, "wb");
    if (!f) {
        vpf_set_err(e, "%s: %s", path, strerror(errno));
        return -1;
    }
    int ok = fwrite(&b->hdr, sizeof b->hdr, 1, f) == 1 &&
             (!b->n_vars || fwrite(b->vars, sizeof *b->vars, b->n_vars, f) == b->n_vars) &&
             (!b->n_ents || fwrite(b->ents, sizeof *b->ents, b->n_ents, f) == b->n_ents) &&
             fwrite(b->str, 1, b->str_len, f) == b->str_len;
    ok = (to_stdout ? fflush(f) : fclose(f)) == 0 && ok;
    if (!ok) {
        vpf_set_err(e, "%s: write error: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

void vpf_mb_free(struct vpf_meta_builder *b)
{
    if (!b)
        return;
    free(b->vars);
    free(b->ents);
    free(b->str);
    free(b->hslot);
    free(b);
}
