/* verdict.h - what a person reads first about a ranked function: the
 * evidence that decided its discount in one line each (the variable, its
 * values in the normal and the buggy runs), the pattern and why, and how
 * much that evidence is worth. Shared by the text and HTML reports. */
#ifndef VPR_VERDICT_H
#define VPR_VERDICT_H
#include <stddef.h>
#include <stdint.h>

#include "model.h"

/* How far the deciding evidence can be trusted: thin when a side has
 * fewer than --min-evidence observations of it (or, for the
 * hist-discounter, fewer than 3 runs a side). */
enum vpr_evidence { VPR_EV_NONE, VPR_EV_THIN, VPR_EV_MODERATE, VPR_EV_STRONG };

struct vpr_verdict {
    int evidence;               /* enum vpr_evidence */
    uint64_t n[2];              /* observations of the deciding evidence per side */
    double p;                   /* its test's p-value, NaN if none */
    char what[192];             /* "budget (long; cond), value" */
    char values[1024];          /* "normal always 49152 (13); buggy always 0 (240, ...)",
                                   or the calls line when calls decide */
    char why[256];              /* the pattern rule in words */
    char calls[1024];           /* its changed call frequency, if any, the states
                                   and predicate that decide it */
    char writers[256];          /* "written by resize (ht.c:88), ..." for a global
                                   or member: where its value comes from */
    char returned[256];         /* "returned by level_for (z.c:7)" for a local
                                   that takes a function's return value */
    char after[512];            /* why it ranks right after another function: its
                                   changed calls wait for this one's answer
                                   (--guards), or its deciding local takes it
                                   (--producers) */
    char var_also[640];         /* when calls, latency or locks decided: its most
                                   anomalous variable and its values, if any */
    const char *decl_file;      /* where the deciding variable is declared */
    unsigned decl_line;         /* (the schema's line), 0 if unknown */
    const char *def_file;       /* the function's own definition, when it was placed
                                   for another's evidence and its variable yielded
                                   (vpr_pattern_link): the code to show instead of
                                   the variable's declaration (a clock's) */
    unsigned def_line;          /* 0: none */
};

void vpr_verdict(const struct vpr_model *m, const struct vpr_func *f, struct vpr_verdict *v);
/* Fills v->writers (a scan of the schema's @writes per call: ask it for the
 * functions a person reads about, not for every function). */
#define VPR_WRITERS_SHOWN 20     /* JSON and HTML: for the top 20 functions */
void vpr_verdict_writers(const struct vpr_model *m, const struct vpr_func *f,
                         struct vpr_verdict *v);
/* "returned by F (file:line), ..." for a local that takes a function's
 * return value (the schema's @from lines), "" otherwise. */
void vpr_returned_line(const struct vpr_model *m, const struct vpr_var *v, char *buf,
                       size_t len);
const char *vpr_evidence_name(int e);
/* One line for a dimension of a variable: "normal 0-6160 (median 1207, 52
 * samples); buggy 0-40 (median 12, 736, 0 outside the normal range)". */
void vpr_values_line(const struct vpr_var *v, int d, char *buf, size_t len);

#endif
