/* schema_table.h - the C side of the schema pass: collects the variables and
 * basic blocks the LLVM pass finds in one translation unit, merges repeated
 * uses of a variable, and renders the result as schema text (docs/FORMATS.md
 * §1) and as the module-level assembly that carries it in the ELF section
 * `.vprof_schema`.
 *
 * The LLVM pass (the C++ files in pass/) only walks the IR and calls these functions, so
 * everything that is not LLVM API lives here, in C. */
#ifndef VPROF_SCHEMA_TABLE_H
#define VPROF_SCHEMA_TABLE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct vsg_table;

struct vsg_table *vsg_table_new(void);
void vsg_table_free(struct vsg_table *t);

/* Adds a variable, or ORs `tags` (VPF_TAG_* bits) into the entry with the
 * same (file, function, name); the first line and type seen win, as in the
 * schema reader. `function` is "#global" for file-scope variables. Returns 0,
 * or -1 when out of memory. */
int vsg_table_add_var(struct vsg_table *t, const char *file,
                      const char *function, unsigned line, const char *name,
                      const char *type, unsigned tags);

/* Adds one `@block` line (kept in the order added). */
int vsg_table_add_block(struct vsg_table *t, const char *file,
                        const char *function, unsigned id, unsigned line_start,
                        unsigned line_end, const char *kind);

/* Adds one `@uses` line: `function` reads, writes or takes the address of
 * the global `variable` (deduplicated per function). */
int vsg_table_add_use(struct vsg_table *t, const char *file,
                      const char *function, const char *variable);

/* Adds one `@field` line: member variable `variable` of (file, function) is
 * struct member `key` ("struct T.f") at byte `offset` (one line per
 * (file, function, variable); the first one wins). */
int vsg_table_add_field(struct vsg_table *t, const char *file,
                        const char *function, const char *variable,
                        const char *key, unsigned offset);

/* Adds one `@writes` line: `function` stores into `target` at file:line
 * (deduplicated). */
int vsg_table_add_write(struct vsg_table *t, const char *file,
                        const char *function, unsigned line,
                        const char *target);

/* Adds one `@from` line: local `variable` of `function` takes the return
 * value of `callee` at file:line; with guard 1, a `@guard` line: `function`
 * calls `variable` (a function) at file:line only when a branch on the
 * return value of `callee` goes that way; with guard 2, a `@guardstate`
 * line: only when a branch on the state `callee` (a `@writes` target) goes
 * that way; with guard 3, a `@sizes` line: `function` indexes memory at
 * file:line by a value reduced by the size `callee` (a `@writes` target),
 * `variable` its use, `slot` or `index`; with guard 4, an `@items` line:
 * `function` adds to (`variable` `add`) or walks (`walk`) the container
 * held in `callee` (a `@writes` target) at file:line; with guard 5, a
 * `@setfrom` line: `function` stores the return value of `callee` into the
 * state `variable` (a `@writes` target) at file:line; with guard 6, an
 * `@addguard` line: `function` adds to the container `variable` (a
 * `@writes` target) at file:line only when a branch on the return value of
 * `callee` goes that way; with guard 7, a `@bounds` line: a loop of
 * `function` walks a range whose end `variable` (`lo` or `hi`) is held in
 * the state `callee` (deduplicated). */
int vsg_table_add_from(struct vsg_table *t, const char *file, const char *function,
                       unsigned line, const char *variable, const char *callee,
                       int guard);

size_t vsg_table_n_vars(const struct vsg_table *t);
size_t vsg_table_n_blocks(const struct vsg_table *t);

/* Renders the schema text (magic line, then variables, blocks, uses,
 * fields, writes and froms) into a
 * malloc'd NUL-terminated buffer; *len gets its length. NULL on failure. */
char *vsg_table_text(const struct vsg_table *t, size_t *len);

#ifdef __cplusplus
}
#endif
#endif
