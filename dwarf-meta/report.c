/* report.c - the summary of what could not be placed (stderr), and with
 * --explain one line per variable and reason. */
#include <stdio.h>
#include "select_int.h"

const char *why_name(enum why w)
{
    static const char *const names[WHY_N] = {
        "optimized out", "not found in DWARF", "entry value only",
        "thread-local storage (unsupported)",
        "unsupported location expression",
        "value computed by an expression", "type not basic or pointer",
        "no such member", "frame base not register+offset",
        "frame base not yet set up (prologue/epilogue)",
        "value split over pieces",
    };
    return (unsigned)w < WHY_N ? names[w] : "?";
}

static const char *op_name(unsigned op)
{
    const char *n = NULL;
    static char buf[16];
    if (dwarf_get_OP_name(op, &n) == DW_DLV_OK && n)
        return n;
    snprintf(buf, sizeof buf, "op 0x%02x", op);
    return buf;
}

static enum why main_reason(const struct ovar *o)
{
    if (!o->found)
        return WHY_NOT_FOUND;
    enum why best = WHY_OPTIMIZED_OUT;
    for (int w = 0; w < WHY_N; w++)
        if (o->skipped[w] > o->skipped[best])
            best = (enum why)w;
    return best;
}

void sel_report(struct sel *s, FILE *f, int explain)
{
    unsigned unplaced[WHY_N] = { 0 }, partial[WHY_N] = { 0 };
    size_t n_unplaced = 0, n_partial = 0;
    for (size_t i = 0; i < s->n_vars; i++) {
        const struct ovar *o = &s->vars[i];
        if (!o->n_entries) {
            enum why w = main_reason(o);
            unplaced[w]++;
            n_unplaced++;
            if (explain) {
                fprintf(f, "vprof-meta: %s: %s: %s: not placed: %s",
                        o->file, o->function, o->name, why_name(w));
                if ((w == WHY_UNSUPPORTED_OP || w == WHY_COMPUTED) &&
                    o->bad_op)
                    fprintf(f, " (%s)", op_name(o->bad_op));
                if (o->schema_line)
                    fprintf(f, " (schema line %u)", o->schema_line);
                fprintf(f, "\n");
            }
            continue;
        }
        int any = 0;
        for (int w = 0; w < WHY_N; w++) {
            if (!o->skipped[w])
                continue;
            partial[w] += o->skipped[w];
            any = 1;
            if (explain)
                fprintf(f, "vprof-meta: %s: %s: %s: %u range(s) skipped: "
                        "%s%s%s%s\n", o->file, o->function, o->name,
                        o->skipped[w], why_name((enum why)w),
                        (w == WHY_COMPUTED || w == WHY_UNSUPPORTED_OP) &&
                            o->bad_op ? " (" : "",
                        (w == WHY_COMPUTED || w == WHY_UNSUPPORTED_OP) &&
                            o->bad_op ? op_name(o->bad_op) : "",
                        (w == WHY_COMPUTED || w == WHY_UNSUPPORTED_OP) &&
                            o->bad_op ? ")" : "");
        }
        n_partial += any;
    }
    size_t n_entries = 0;
    for (size_t i = 0; i < s->n_vars; i++)
        n_entries += s->vars[i].n_entries;
    fprintf(f, "vprof-meta: %zu variables placed, %zu entries; %zu not "
            "placed", sel_n_placed(s), n_entries, n_unplaced);
    const char *sep = " (";
    for (int w = 0; w < WHY_N; w++) {
        if (unplaced[w]) {
            fprintf(f, "%s%u %s", sep, unplaced[w], why_name((enum why)w));
            sep = ", ";
        }
    }
    fprintf(f, "%s\n", n_unplaced ? ")" : "");
    if (n_partial) {
        fprintf(f, "vprof-meta: %zu placed variables have ranges left out",
                n_partial);
        sep = " (";
        for (int w = 0; w < WHY_N; w++) {
            if (partial[w]) {
                fprintf(f, "%s%u %s", sep, partial[w], why_name((enum why)w));
                sep = ", ";
            }
        }
        fprintf(f, ")\n");
    }
    if (!explain && (n_unplaced || n_partial))
        fprintf(f, "vprof-meta: run with --explain for the full list\n");
}
