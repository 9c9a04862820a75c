/* vartable.h - the paper's PCToVarTable and VariableArray (vProf §3.3).
 *
 * PCToVarTable has one slot per `div` bytes of the executable's text (the
 * paper's default, half the text size, is div = 2); a slot holds the index
 * (+1) of the head of a chain in VariableArray. Each VariableArray element
 * names one metadata location entry and links to the next element of the
 * same chain (separate chaining via `link`). An entry whose PC range covers
 * several slots gets one element per slot, so every chain is exact: a chain
 * lists only entries whose range meets the slot's PCs, and the tick still
 * checks each entry's exact range. Entries whose range covers the whole
 * text (globals) are kept in a separate always-live list instead of one
 * element per slot. */
#ifndef VPROF_VARTABLE_H
#define VPROF_VARTABLE_H

#include <stddef.h>
#include <stdint.h>
#include "vprof_format.h"

#include "value_read.h"

/* Everything a tick needs about one location entry, in one cache line: its
 * PC range made run-time, how to read it (the plan; GENERAL: read the
 * metadata entry with vprof_read_value), its variable and index. */
struct vprof_hot {
    uint64_t pc_start, pc_end;  /* run-time addresses */
    struct vprof_plan plan;
    uint32_t var;               /* metadata variable index */
    uint32_t index;             /* metadata location entry index */
    uint8_t kind;               /* the variable's vpf_kind */
    uint8_t pad[15];
};

struct vprof_varelem {
    uint32_t entry;             /* metadata location entry index */
    uint32_t link;              /* next element + 1, 0 = end of chain */
};

struct vprof_vartable {
    uint64_t text_lo, text_hi;  /* run-time range covered by the table */
    uint64_t div;               /* text bytes per PCToVarTable slot */
    unsigned div_shift;         /* log2(div) + 1 when div is a power of two, else 0 */
    uint64_t n_slots;
    uint32_t *slots;            /* PCToVarTable: head element + 1, 0 = empty */
    struct vprof_varelem *elems;/* VariableArray */
    uint64_t n_elems;
    uint32_t *always;           /* entries live at every PC of the text */
    uint32_t n_always;
    struct vprof_hot *hot;      /* per location entry */
    uint32_t n_outside;         /* entries entirely outside the text */
    uint32_t n_refused;         /* EXPR entries whose program is invalid:
                                   never read (vpf_expr_check) */
    struct vpf_xins *code;      /* the EXPR plans' decoded programs */
    size_t code_n, code_cap;
    uint32_t n_entries;
};

/* Builds the table; bias is added to entry PCs (and to static addresses
 * in the plans) when the metadata is relative. Elements are capped at max_elems (div is doubled until the
 * table fits). Returns 0, or -1 with a message in err (out of memory). */
int vprof_vartable_build(struct vprof_vartable *t, const struct vpf_meta *m,
                         uint64_t bias, uint64_t text_lo, uint64_t text_hi,
                         uint64_t div, uint64_t max_elems,
                         char *err, size_t errlen);
void vprof_vartable_free(struct vprof_vartable *t);

/* Head of the chain for pc, which lies in [text_lo, text_hi). */
static inline uint32_t vprof_vartable_head_in(const struct vprof_vartable *t, uint64_t pc)
{
    uint64_t x = pc - t->text_lo;
    return t->slots[t->div_shift ? x >> (t->div_shift - 1) : x / t->div];
}

/* Head of the chain for pc (element index + 1, 0 = none). */
static inline uint32_t vprof_vartable_head(const struct vprof_vartable *t, uint64_t pc)
{
    if (pc < t->text_lo || pc >= t->text_hi)
        return 0;
    return vprof_vartable_head_in(t, pc);
}

/* The walk of a tick: calls fn(arg, h) for every entry live at pc — the
 * always-live list, then the PCToVarTable chain — checking each entry's own
 * range (a chain slot spans `div` bytes). As in the paper, only PCs of the
 * executable's text are looked up: the metadata describes that text. A
 * non-zero return from fn ends the walk (the tick's budget is spent); the
 * walk then returns it. _from skips the first `skip` always-live entries
 * (a caller that handles those itself). */
static inline int vprof_vartable_live_from(const struct vprof_vartable *t, uint64_t pc,
                                           uint32_t skip,
                                           int (*fn)(void *, const struct vprof_hot *),
                                           void *arg)
{
    int stop;
    if (pc < t->text_lo || pc >= t->text_hi)
        return 0;
    /* always-live entries cover the whole text: no range to check */
    for (uint32_t k = skip; k < t->n_always; k++)
        if ((stop = fn(arg, &t->hot[t->always[k]])))
            return stop;
    for (uint32_t i = vprof_vartable_head_in(t, pc); i; i = t->elems[i - 1].link) {
        const struct vprof_hot *h = &t->hot[t->elems[i - 1].entry];
        if (pc >= h->pc_start && pc < h->pc_end && (stop = fn(arg, h)))
            return stop;
    }
    return 0;
}

static inline int vprof_vartable_live(const struct vprof_vartable *t, uint64_t pc,
                                      int (*fn)(void *, const struct vprof_hot *),
                                      void *arg)
{
    return vprof_vartable_live_from(t, pc, 0, fn, arg);
}

#endif
