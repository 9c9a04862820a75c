/* vartable.c - builds PCToVarTable and VariableArray from the metadata
 * (runs once at start-up, outside any signal handler). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "vartable.h"

_Static_assert(sizeof(struct vprof_hot) == 64, "one cache line per entry");

/* Large zeroed tables come from mmap so they cost nothing until touched
 * and never go through the program's malloc (which may be interposed). */
static void *zalloc(size_t n)
{
    if (n == 0)
        n = 1;
    void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static void zfree(void *p, size_t n)
{
    if (p)
        munmap(p, n ? n : 1);
}


/* The EXPR programs, decoded once for all ticks: pass 1 counts the
 * instructions of the valid ones, then one mapping holds them all. */
static int expr_code(struct vprof_vartable *t, const struct vpf_meta *m, uint64_t bias)
{
    struct vpf_xins tmp[VPF_EXPR_MAX_OPS];
    size_t total = 0;
    for (uint32_t i = 0; i < m->hdr.n_entries; i++) {
        const struct vpf_loc_entry *e = &m->entries[i];
        int k;
        if (e->loc == VPF_LOC_EXPR && !vpf_expr_check_entry(m, e) &&
            (k = vprof_expr_compile(vpf_meta_expr(m, e), bias, tmp)) > 0)
            total += (size_t)k;
    }
    t->code_cap = total;
    if (total && !(t->code = zalloc(total * sizeof *t->code)))
        return -1;
    return 0;
}

/* e's plan runs its program, decoded into the next instructions of
 * t->code (GENERAL, read by vprof_read_value, if they do not fit: they
 * always do, pass 1 counted them). */
static void expr_plan(struct vprof_vartable *t, const struct vpf_meta *m,
                      const struct vpf_loc_entry *e, uint64_t bias, struct vprof_plan *p)
{
    struct vpf_xins tmp[VPF_EXPR_MAX_OPS];
    int k = vprof_expr_compile(vpf_meta_expr(m, e), bias, tmp);
    if (k <= 0 || t->code_n + (size_t)k > t->code_cap)
        return;
    struct vpf_xins *at = t->code + t->code_n;
    memcpy(at, tmp, (size_t)k * sizeof *tmp);
    t->code_n += (size_t)k;
    vprof_plan_make_expr(e, &m->vars[e->var], at, (unsigned)k, p);
}

int vprof_vartable_build(struct vprof_vartable *t, const struct vpf_meta *m,
                         uint64_t bias, uint64_t text_lo, uint64_t text_hi,
                         uint64_t div, uint64_t max_elems,
                         char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    uint32_t n = m->hdr.n_entries;
    uint64_t add = (m->hdr.flags & VPF_META_F_RELATIVE) ? bias : 0;
    if (div < 1)
        div = 1;
    if (text_hi <= text_lo) {
        snprintf(err, errlen, "empty text range");
        return -1;
    }
    t->text_lo = text_lo;
    t->text_hi = text_hi;
    t->n_entries = n;
    t->hot = zalloc((size_t)n * sizeof(struct vprof_hot));
    t->always = zalloc((size_t)n * sizeof(uint32_t));
    if (!t->hot || !t->always || expr_code(t, m, add) < 0)
        goto oom;

    /* Run-time ranges, clipped to the text; count elements per granularity. */
    for (uint32_t i = 0; i < n; i++) {
        const struct vpf_loc_entry *e = &m->entries[i];
        uint64_t s = e->pc_start + add, x = e->pc_end + add;
        if (x < s)              /* wrapped: treat as "to the end" */
            x = UINT64_MAX;
        if (e->loc == VPF_LOC_EXPR && vpf_expr_check_entry(m, e)) {
            s = x = 0;          /* refused: never live (counted) */
            t->n_refused++;
        }
        t->hot[i].pc_start = s;
        t->hot[i].pc_end = x;
        vprof_plan_make(e, &m->vars[e->var], add, &t->hot[i].plan);
        if (e->loc == VPF_LOC_EXPR && s < x)
            expr_plan(t, m, e, add, &t->hot[i].plan);
        t->hot[i].var = e->var;
        t->hot[i].index = i;
        t->hot[i].kind = m->vars[e->var].kind;
    }
    uint64_t text = text_hi - text_lo;
    for (;;) {
        uint64_t need = 0;
        for (uint32_t i = 0; i < n; i++) {
            uint64_t s = t->hot[i].pc_start < text_lo ? text_lo : t->hot[i].pc_start;
            uint64_t x = t->hot[i].pc_end > text_hi ? text_hi : t->hot[i].pc_end;
            if (s >= x || (s == text_lo && x == text_hi))
                continue;
            need += (x - 1 - text_lo) / div - (s - text_lo) / div + 1;
        }
        if (need <= max_elems || div >= text) {
            t->n_elems = need;
            break;
        }
        div *= 2;
    }
    t->div = div;
    t->div_shift = 0;
    if ((div & (div - 1)) == 0)
        t->div_shift = (unsigned)__builtin_ctzll(div) + 1;
    t->n_slots = (text + div - 1) / div;
    if (t->n_elems >= UINT32_MAX) {
        snprintf(err, errlen, "variable table too large (%llu elements)",
                 (unsigned long long)t->n_elems);
        vprof_vartable_free(t);
        return -1;
    }
    t->slots = zalloc(t->n_slots * sizeof(uint32_t));
    t->elems = zalloc(t->n_elems * sizeof(struct vprof_varelem));
    if (!t->slots || !t->elems)
        goto oom;

    /* Insert in metadata order; the newest element becomes the chain head
     * and links to the previous head, as in the paper. */
    uint64_t k = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t s = t->hot[i].pc_start < text_lo ? text_lo : t->hot[i].pc_start;
        uint64_t x = t->hot[i].pc_end > text_hi ? text_hi : t->hot[i].pc_end;
        if (s >= x) {
            t->n_outside += t->hot[i].pc_start < t->hot[i].pc_end;
            continue;
        }
        if (s == text_lo && x == text_hi) {
            t->always[t->n_always++] = i;
            continue;
        }
        for (uint64_t b = (s - text_lo) / div; b <= (x - 1 - text_lo) / div; b++) {
            t->elems[k].entry = i;
            t->elems[k].link = t->slots[b];
            t->slots[b] = (uint32_t)(k + 1);
            k++;
        }
    }
    return 0;
oom:
    snprintf(err, errlen, "out of memory building the variable table");
    vprof_vartable_free(t);
    return -1;
}

void vprof_vartable_free(struct vprof_vartable *t)
{
    zfree(t->slots, t->n_slots * sizeof(uint32_t));
    zfree(t->elems, t->n_elems * sizeof(struct vprof_varelem));
    zfree(t->always, (size_t)t->n_entries * sizeof(uint32_t));
    zfree(t->hot, (size_t)t->n_entries * sizeof(struct vprof_hot));
    zfree(t->code, t->code_cap * sizeof *t->code);
    memset(t, 0, sizeof *t);
}
