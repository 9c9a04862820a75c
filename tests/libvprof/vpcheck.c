/* vpcheck - test helper: reads vprof's run files through the format module
 * and prints them as text for the test scripts (tests/libvprof/t_*.sh).
 *
 *   vpcheck gmon-cmp A B     exit 0 iff the two gmon files have the same
 *                            arcs with the same counts (prints differences)
 *   vpcheck arcs GMON        "from self count" per arc (hex addresses)
 *   vpcheck hist GMON        "lowpc highpc bins rate total_ticks"
 *   vpcheck values FILE      header line, then one line per committed record:
 *                            "var depth pc value tid tick entry"
 *   vpcheck layout FILE      "status has_end n_vars n_maps pid ppid hz unwind
 *                             ticks faults has_budget cut overdue unwind_count
 *                             samples dropped"
 *   vpcheck var-id FILE NAME [FUNCTION]   variable id from a layout log
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vprof_format.h"

static int die(const vpf_err *e)
{
    fprintf(stderr, "vpcheck: %s\n", e->msg);
    return 2;
}

static int find_arc(const struct vpf_gmon *g, const struct vpf_gmon_arc *a)
{
    for (size_t i = 0; i < g->n_arcs; i++)
        if (g->arcs[i].from_pc == a->from_pc && g->arcs[i].self_pc == a->self_pc)
            return (int)i;
    return -1;
}

static int gmon_cmp(const char *pa, const char *pb)
{
    struct vpf_gmon a, b;
    vpf_err e;
    if (vpf_gmon_load(pa, &a, &e) < 0 || vpf_gmon_load(pb, &b, &e) < 0)
        return die(&e);
    int diff = 0;
    for (size_t i = 0; i < a.n_arcs; i++) {
        int j = find_arc(&b, &a.arcs[i]);
        if (j < 0 || b.arcs[j].count != a.arcs[i].count) {
            printf("arc %#" PRIx64 " -> %#" PRIx64 ": %u vs %u\n", a.arcs[i].from_pc,
                   a.arcs[i].self_pc, a.arcs[i].count, j < 0 ? 0 : b.arcs[j].count);
            diff++;
        }
    }
    for (size_t i = 0; i < b.n_arcs; i++)
        if (find_arc(&a, &b.arcs[i]) < 0) {
            printf("arc %#" PRIx64 " -> %#" PRIx64 ": missing vs %u\n", b.arcs[i].from_pc,
                   b.arcs[i].self_pc, b.arcs[i].count);
            diff++;
        }
    if (a.lowpc != b.lowpc || a.highpc != b.highpc || a.hist_size != b.hist_size) {
        printf("histogram range %#" PRIx64 "-%#" PRIx64 "/%u vs %#" PRIx64 "-%#" PRIx64 "/%u\n",
               a.lowpc, a.highpc, a.hist_size, b.lowpc, b.highpc, b.hist_size);
        diff++;
    }
    printf("%zu arcs vs %zu arcs, %d differences\n", a.n_arcs, b.n_arcs, diff);
    return diff ? 1 : 0;
}

static int arcs(const char *p)
{
    struct vpf_gmon g;
    vpf_err e;
    if (vpf_gmon_load(p, &g, &e) < 0)
        return die(&e);
    for (size_t i = 0; i < g.n_arcs; i++)
        printf("%#" PRIx64 " %#" PRIx64 " %u\n", g.arcs[i].from_pc, g.arcs[i].self_pc,
               g.arcs[i].count);
    return 0;
}

static int hist(const char *p)
{
    struct vpf_gmon g;
    vpf_err e;
    if (vpf_gmon_load(p, &g, &e) < 0)
        return die(&e);
    uint64_t total = 0;
    for (uint32_t i = 0; g.has_hist && i < g.hist_size; i++)
        total += g.hist[i];
    printf("%#" PRIx64 " %#" PRIx64 " %u %u %" PRIu64 "\n", g.lowpc, g.highpc, g.hist_size,
           g.prof_rate, total);
    return 0;
}

static int values(const char *p)
{
    struct vpf_recfile_r r;
    vpf_err e;
    if (vpf_values_open(p, &r, &e) < 0)
        return die(&e);
    const struct vpf_values_header *h = vpf_values_hdr(&r);
    printf("# n=%" PRIu64 " capacity=%" PRIu64 " dropped=%" PRIu64 " faults=%" PRIu64
           " hz=%u clean=%u\n", r.n, h->capacity, h->dropped, h->faults, h->hz, h->flags & 1);
    struct vpf_values_iter it;
    vpf_values_iter_init(&it, &r);
    for (const struct vpf_value_rec *v; (v = vpf_values_next(&it, NULL));)
        printf("%u %u %#" PRIx64 " %" PRId64 " %u %u %u\n", v->var, v->depth, v->pc,
               (int64_t)v->value, v->tid, v->tick, v->entry);
    vpf_values_iter_free(&it);
    vpf_recfile_close_r(&r);
    return 0;
}

/* "# n= ... frames= ...", then per committed record:
 * time tid weight flags depth pc0 pc1 ... (hex PCs, leaf first) */
static int stacks(const char *p)
{
    struct vpf_recfile_r r;
    vpf_err e;
    if (vpf_stacks_open(p, &r, &e) < 0)
        return die(&e);
    const struct vpf_stacks_header *h = vpf_stacks_hdr(&r);
    printf("# n=%" PRIu64 " capacity=%" PRIu64 " dropped=%" PRIu64 " frames=%u hz=%u clean=%u\n",
           r.n, h->capacity, h->dropped, h->frames, h->hz, h->flags & 1);
    for (uint64_t i = 0; i < r.n; i++) {
        const struct vpf_stack_rec *s = vpf_stacks_rec(&r, i);
        if (!(s->flags & VPF_REC_COMMITTED))
            continue;
        printf("%" PRIu64 " %u %u %u %u", s->time_ns, s->tid, s->weight, s->flags & 0x7f, s->depth);
        const uint64_t *pc = vpf_stack_pcs_c(s);
        for (unsigned k = 0; k < s->depth && k < h->frames; k++)
            printf(" %#" PRIx64, pc[k]);
        putchar('\n');
    }
    vpf_recfile_close_r(&r);
    return 0;
}

static int layout(const char *p)
{
    struct vpf_layout l;
    vpf_err e;
    if (vpf_layout_load(p, &l, &e) < 0)
        return die(&e);
    const char *st = l.meta_status ? l.meta_status : "";
    char word[32];
    snprintf(word, sizeof word, "%s", st);
    word[strcspn(word, " ")] = 0;
    printf("%s %d %zu %zu %d %d %u %u %" PRIu64 " %" PRIu64 " %d %" PRIu64 " %" PRIu64 " %s"
           " %" PRIu64 " %" PRIu64 "\n",
           word[0] ? word : "-", l.has_end, l.n_vars, l.n_maps, l.pid, l.ppid, l.hz, l.unwind,
           l.ticks, l.faults, l.has_budget, l.ticks_cut, l.ticks_overdue,
           !l.has_unwind_count ? "-" : l.unwind_all ? "all" : "program", l.samples, l.dropped);
    return 0;
}

static int var_id(const char *p, const char *name, const char *fn)
{
    struct vpf_layout l;
    vpf_err e;
    if (vpf_layout_load(p, &l, &e) < 0)
        return die(&e);
    for (size_t i = 0; i < l.n_vars; i++)
        if (!strcmp(l.vars[i].name, name) && (!fn || !strcmp(l.vars[i].function, fn))) {
            printf("%u\n", l.vars[i].id);
            return 0;
        }
    fprintf(stderr, "vpcheck: %s: no variable %s\n", p, name);
    return 1;
}

int main(int argc, char **argv)
{
    if (argc == 4 && !strcmp(argv[1], "gmon-cmp"))
        return gmon_cmp(argv[2], argv[3]);
    if (argc == 3 && !strcmp(argv[1], "arcs"))
        return arcs(argv[2]);
    if (argc == 3 && !strcmp(argv[1], "hist"))
        return hist(argv[2]);
    if (argc == 3 && !strcmp(argv[1], "values"))
        return values(argv[2]);
    if (argc == 3 && !strcmp(argv[1], "layout"))
        return layout(argv[2]);
    if (argc == 3 && !strcmp(argv[1], "stacks"))
        return stacks(argv[2]);
    if ((argc == 4 || argc == 5) && !strcmp(argv[1], "var-id"))
        return var_id(argv[2], argv[3], argc == 5 ? argv[4] : NULL);
    fprintf(stderr, "usage: vpcheck gmon-cmp A B | arcs GMON | hist GMON | values FILE |"
                    " layout FILE | stacks FILE | var-id LAYOUT NAME [FUNCTION]\n");
    return 2;
}
