/* contexts_runs.c - see contexts_runs.h. */
#include "contexts_runs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vprof_format.h"
#include "vprof_xalloc.h"

struct vpr_csym_file {
    char *path;
    struct vpr_symtab t;
    int ok;
    char err[512];
    struct vpr_lines *lines;    /* sy->inline_frames: its inlined code */
};

void vpr_csyms_free(struct vpr_csyms *sy)
{
    for (size_t i = 0; i < sy->n; i++) {
        free(sy->files[i].path);
        if (sy->files[i].ok) vpr_symtab_free(&sy->files[i].t);
        vpr_lines_free(sy->files[i].lines);
    }
    free(sy->files);
    sy->files = NULL;
    sy->n = sy->cap = 0;
}

/* The symbols of the ELF file at path, read once; NULL (and why, in
 * *why) when it cannot be read. */
static const struct vpr_symtab *symtab_of(struct vpr_csyms *sy, const char *path,
                                          const char **why)
{
    for (size_t i = 0; i < sy->n; i++)
        if (!strcmp(sy->files[i].path, path)) {
            *why = sy->files[i].err;
            return sy->files[i].ok ? &sy->files[i].t : NULL;
        }
    sy->files = vpf_grow(sy->files, &sy->cap, sy->n + 1, sizeof *sy->files);
    struct vpr_csym_file *f = &sy->files[sy->n++];
    memset(f, 0, sizeof *f);
    f->path = vpf_xstrdup(path);
    f->ok = vpr_symtab_load(path, &f->t, f->err, sizeof f->err) == 0;
    if (f->ok && sy->inline_frames) f->lines = vpr_lines_load(path);
    *why = f->err;
    return f->ok ? &f->t : NULL;
}

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* The profiler's own frames: the mcount trampoline and its recorder (in
 * libvprof.so, or linked into the program from libvprof.a). Their time is
 * charged to the function that called them. */
static int is_profiler(const char *name)
{
    return !strcmp(name, "mcount") || !strcmp(name, "_mcount") || !strcmp(name, "__fentry__") ||
           !strcmp(name, "vprof_mcount_internal");
}

#define SKIP UINT32_MAX
enum { CACHE = 4096 };

/* One process's naming context: its layout, its program's symbols, and a
 * cache of the PCs already named. */
#define INL_MAX 16
struct proc_names {
    const struct vpf_layout *lay;
    const struct vpr_symtab *exe;
    const struct vpr_lines *lines;      /* the program's inlined code, or NULL */
    struct vpr_csyms *sy;
    struct vpr_cnames *nm;
    uint64_t key[CACHE];
    uint32_t val[CACHE];
    uint64_t ikey[CACHE];               /* inlined chains, by (PC, return address) */
    uint8_t in[CACHE];
    uint32_t ival[CACHE][INL_MAX];
};

/* The functions inlined at the program's PC pc (outermost first) as
 * frames of their own below the physical one, as the ranking counts them
 * (--inline-functions): at -O2 a static function lives in its callers'
 * symbols. A caller's PC is a return address: its call lies before it. */
static unsigned inlined_frames(struct proc_names *pn, uint64_t pc, int ret, uint32_t *out)
{
    if (!pn->lines) return 0;
    uint64_t a = pc - pn->lay->load_bias - (ret ? 1 : 0);
    size_t k = (size_t)((a * 0x9e3779b97f4a7c15ull) >> 52) & (CACHE - 1);
    if (pn->ikey[k] != a + 1) {
        uint32_t ids[INL_MAX];
        size_t n = vpr_lines_inline_chain(pn->lines, a, ids, INL_MAX);
        pn->ikey[k] = a + 1;
        pn->in[k] = (uint8_t)n;
        for (size_t i = 0; i < n; i++)
            pn->ival[k][i] = vpr_cname(pn->nm, vpr_lines_string(pn->lines, ids[i]));
    }
    memcpy(out, pn->ival[k], pn->in[k] * sizeof *out);
    return pn->in[k];
}

static uint32_t name_pc(struct proc_names *pn, uint64_t pc)
{
    size_t k = (size_t)((pc * 0x9e3779b97f4a7c15ull) >> 52) & (CACHE - 1);
    if (pn->key[k] == pc + 1) return pn->val[k];
    uint32_t id = SKIP;
    const struct vpf_layout *lay = pn->lay;
    long s = vpr_sym_find(pn->exe, pc - lay->load_bias);
    if (s >= 0) {
        const char *name = pn->exe->syms[s].name;
        if (!is_profiler(name)) id = vpr_cname(pn->nm, name);
    } else {
        const struct vpf_layout_map *mp = NULL;
        for (size_t i = 0; i < lay->n_maps && !mp; i++)
            if (pc >= lay->maps[i].lo && pc < lay->maps[i].hi) mp = &lay->maps[i];
        if (!mp || !mp->path || !mp->path[0]) {
            id = vpr_cname(pn->nm, "[unknown]");
        } else if (strncmp(base_name(mp->path), "libvprof", 8)) {
            /* a library's text segment has p_vaddr == p_offset (as ld lays
             * out shared objects), so file offset = link-time address */
            const char *why;
            const struct vpr_symtab *lt = mp->path[0] == '/' ? symtab_of(pn->sy, mp->path, &why)
                                                             : NULL;
            long ls = lt ? vpr_sym_find(lt, pc - mp->lo + mp->off) : -1;
            if (ls >= 0) {
                if (!is_profiler(lt->syms[ls].name)) id = vpr_cname(pn->nm, lt->syms[ls].name);
            } else {
                char nm[300];
                snprintf(nm, sizeof nm, "[%s]", base_name(mp->path));
                id = vpr_cname(pn->nm, nm);
            }
        }
    }
    pn->key[k] = pc + 1;
    pn->val[k] = id;
    return id;
}

/* One process's stacks.<id> into the open build b. */
static int load_proc(const struct vpr_proc *p, struct vpr_cbuild *b, struct vpr_csyms *sy,
                     int clock, char *err, size_t errlen)
{
    const struct vpf_layout *lay = &p->layout;
    const char *exe_path = sy->exe_override ? sy->exe_override : lay->exe;
    const struct vpr_symtab *exe = NULL;
    const char *why = "";
    if (sy->exe && sy->exe_path && !strcmp(sy->exe_path, exe_path)) exe = sy->exe;
    else exe = symtab_of(sy, exe_path, &why);
    if (!exe) {
        snprintf(err, errlen, "%s (the program that wrote %s; give --exe)", why, p->layout_path);
        return -1;
    }
    if (!sy->force && lay->build_id && lay->build_id[0] && exe->build_id[0] &&
        strcmp(lay->build_id, exe->build_id)) {
        snprintf(err, errlen, "%s: build-id %s, but %s has %s: another build of the program",
                 p->layout_path, lay->build_id, exe_path, exe->build_id);
        return -1;
    }
    struct vpf_recfile_r rf;
    vpf_err e;
    if (vpf_stacks_open(p->stacks_path, &rf, &e) < 0) {
        snprintf(err, errlen, "%s", e.msg);
        return -1;
    }
    const struct vpf_stacks_header *h = vpf_stacks_hdr(&rf);
    struct proc_names *pn = vpf_xcalloc(1, sizeof *pn);
    pn->lay = lay;
    pn->exe = exe;
    pn->lines = NULL;
    if (exe == sy->exe) pn->lines = sy->exe_lines;
    else
        for (size_t i = 0; i < sy->n; i++)
            if (sy->files[i].ok && &sy->files[i].t == exe) pn->lines = sy->files[i].lines;
    pn->sy = sy;
    pn->nm = b->names;
    uint32_t frames[VPF_STACKS_FRAMES_MAX * (1 + INL_MAX)];
    uint64_t period = h->hz ? 1000000000ull / h->hz : 1000000;
    struct vpr_tclock tc = {0};
    for (uint64_t i = 0; i < rf.n; i++) {
        const struct vpf_stack_rec *r = vpf_stacks_rec(&rf, i);
        if (!(r->flags & VPF_REC_COMMITTED)) continue;
        uint64_t t = clock == VPR_CLOCK_WALL ? r->time_ns
                   : vpr_tclock_add(&tc, r->tid, (uint64_t)(r->weight ? r->weight : 1) * period);
        unsigned d = r->depth < h->frames ? r->depth : h->frames, k = 0;
        const uint64_t *pc = vpf_stack_pcs_c(r);
        for (unsigned j = d; j-- > 0;) {            /* bottom first */
            uint32_t id = name_pc(pn, pc[j]);
            if (id == SKIP) continue;
            frames[k++] = id;
            /* the chain's own names; a function inlined into itself is one frame */
            uint32_t inl[INL_MAX];
            unsigned n = inlined_frames(pn, pc[j], j > 0, inl);
            for (unsigned i = 0; i < n; i++)
                if (inl[i] != frames[k - 1]) frames[k++] = inl[i];
        }
        if (!k) continue;
        if (r->flags & VPF_STK_TRUNCATED) b->t->truncated++;
        vpr_cbuild_sample(b, r->tid, t, frames, k);
    }
    vpr_tclock_free(&tc);
    free(pn);
    vpf_recfile_close_r(&rf);
    return 0;
}

int vpr_ctx_load_run(const struct vpr_run *r, struct vpr_ctree *t, struct vpr_cnames *nm,
                     struct vpr_csyms *sy, int clock, size_t *n_files, char *err,
                     size_t errlen)
{
    *n_files = 0;
    size_t runs = t->runs;
    for (size_t i = 0; i < r->n; i++) {
        const struct vpr_proc *p = &r->procs[i];
        if (!p->stacks_path) continue;
        /* one build per process: thread ids are only unique inside it */
        struct vpr_cbuild b;
        vpr_cbuild_begin(&b, t, nm);
        int rc = load_proc(p, &b, sy, clock, err, errlen);
        vpr_cbuild_end(&b);
        if (rc < 0) return -1;
        ++*n_files;
    }
    t->runs = runs + 1;                 /* the directory is one run */
    if (!*n_files) {
        snprintf(err, errlen, "%s: no stack samples (no stacks.<id> files: the runtime writes "
                 "them unless VPROF_STACKS=0)", r->dir);
        return -1;
    }
    return 0;
}
