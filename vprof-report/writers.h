/* writers.h - the functions that write a variable: off-stack culprits.
 *
 * An anomalous global or struct field often gets its value elsewhere: a
 * bucket count that resize() stopped growing, a budget init_budget()
 * computed at start-up. The schema pass records every store into a global
 * or a struct member (`@writes`) and which struct member each member
 * variable is (`@field`); this joins them for one model variable
 * (FORMATS.md §1, "Joining readers and writers"). */
#ifndef VPR_WRITERS_H
#define VPR_WRITERS_H

#include "model.h"

struct vpr_writer {
    const char *function;       /* as the schema names it (C++: mangled) */
    const char *file;           /* source file of the store */
    unsigned line;              /* 0: unknown */
    const char *target;         /* the `@writes` target matched */
    int by_type;                /* 0: writes this very variable (`g`, `g.f`,
                                   `g+N`); 1: writes this member of some
                                   object of the variable's struct type,
                                   which may be another object */
};

/* The writer sites of variable v: for a global `g` the stores into g; for
 * `g.f` those into g.f or all of g, then (by_type) those into member f of
 * any object of g's struct type; for a member variable `p->f` / `s.f`
 * (by_type) those into f (or all) of any object of its struct type,
 * including global instances. Locals and variables the schema has nothing on have
 * none. Deduplicated (several objects may carry the same inline function),
 * ordered: by_type 0 first, then file, line, function, target.
 *
 * Returns the number of writers and sets *out to a malloc'd array the
 * caller frees (NULL when there are none); the strings point into the
 * model's schema. Out of memory ends the tool (vprof_xalloc.h): a verdict
 * without its writers would read as "no writer known". */
long vpr_writers_of(const struct vpr_model *m, const struct vpr_var *v,
                    struct vpr_writer **out);

/* Does variable v hold the state a `@guardstate` or `@sizes` line names:
 * the global (`g`, `g.f`) itself, or a member access whose `@field` key is
 * the state's (`struct T.f`)? */
int vpr_var_is_state(const struct vpr_model *m, const struct vpr_var *v, const char *state);

/* The writer sites of a state as a `@guardstate` line names it: a member
 * key (`struct T.f`: stores into f, or all, of any object of the type) or
 * a global (`g`, `g.f`, `g+N`: as for a variable of that name). Same order
 * and ownership as vpr_writers_of. */
long vpr_writers_of_state(const struct vpr_model *m, const char *state,
                          struct vpr_writer **out);

/* The schema's first `@guardstate` line saying f calls callee only when a
 * branch on a loaded global or member (its `callee` field) goes that way,
 * or NULL; vpr_call_states gives the first line of each such state (an
 * `||` chain, or a comparison of two loaded values, names several; so do
 * several call sites), at most max of them, in schema order. */
const struct vpf_schema_from *vpr_call_state_guard(const struct vpr_model *m,
                                                   const struct vpr_func *f, const char *callee);
size_t vpr_call_states(const struct vpr_model *m, const struct vpr_func *f, const char *callee,
                       const struct vpf_schema_from **out, size_t max);

/* The next `@guard` line of f after `after` (NULL: the first) with the
 * same predicate as g (f's call of one callee) and a different callee:
 * another call on the predicate's say - the other way it chooses (`if
 * (plan(...) == HEAP) eval_heap(...); else eval_linear(...);`), or one
 * made on the same answer (the schema does not say which); NULL if none. */
const struct vpf_schema_from *vpr_call_alternative(const struct vpr_model *m,
                                                   const struct vpr_func *f,
                                                   const struct vpf_schema_from *g,
                                                   const struct vpf_schema_from *after);

/* The schema's `@guard` line saying f calls callee only when a branch on
 * another function's answer goes that way, or NULL. */
const struct vpf_schema_from *vpr_call_guard(const struct vpr_model *m, const struct vpr_func *f,
                                             const char *callee);

/* The schema's `@addguard` line saying f adds to the container (a
 * `@writes` target) only when a branch on a predicate's answer goes that
 * way (its `callee` field), or NULL. */
const struct vpf_schema_from *vpr_add_guard(const struct vpr_model *m, const struct vpr_func *f,
                                            const char *container);

#endif
