/* schema_dump - test helper: parses schema text with the format module's
 * reader (the one vprof-meta uses) and prints one normalised line per entry:
 *   var FILE|FUNCTION|LINE|NAME|TYPE|TAGS
 *   block FILE|FUNCTION|ID|START|END|KIND
 *   field FILE|FUNCTION|VARIABLE|KEY|OFFSET
 *   writes FILE|FUNCTION|LINE|TARGET
 * so tests check what the reader sees, not the text layout. Exit 1 (with
 * the reader's message) when the text does not parse. */
#include <stdio.h>
#include <stdlib.h>

#include "vprof_format.h"

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: schema_dump FILE\n");
        return 2;
    }
    struct vpf_schema s;
    vpf_err e;
    if (vpf_schema_load(argv[1], &s, &e) < 0) {
        fprintf(stderr, "%s\n", e.msg);
        return 1;
    }
    for (size_t i = 0; i < s.n_vars; i++) {
        const struct vpf_schema_var *v = &s.vars[i];
        char t[64];
        vpf_tags_format(v->tags, t, sizeof t);
        printf("var %s|%s|%u|%s|%s|%s\n", v->file, v->function, v->line,
               v->name, v->type, t);
    }
    for (size_t i = 0; i < s.n_blocks; i++) {
        const struct vpf_schema_block *b = &s.blocks[i];
        printf("block %s|%s|%u|%u|%u|%s\n", b->file, b->function, b->id,
               b->line_start, b->line_end, b->kind);
    }
    for (size_t i = 0; i < s.n_fields; i++) {
        const struct vpf_schema_field *f = &s.fields[i];
        printf("field %s|%s|%s|%s|%u\n", f->file, f->function, f->variable, f->key,
               f->offset);
    }
    for (size_t i = 0; i < s.n_writes; i++) {
        const struct vpf_schema_write *w = &s.writes[i];
        printf("writes %s|%s|%u|%s\n", w->file, w->function, w->line, w->target);
    }
    for (size_t i = 0; i < s.n_froms; i++) {
        const struct vpf_schema_from *r = &s.froms[i];
        printf("%s %s|%s|%u|%s|%s\n", r->guard == 9 ? "stops" : r->guard == 8 ? "predicate" : r->guard == 7 ? "bounds" : r->guard == 6 ? "addguard" : r->guard == 5 ? "setfrom" : r->guard == 4 ? "items" : r->guard == 3 ? "sizes" : r->guard == 2 ? "guardstate" : r->guard ? "guard" : "from", r->file, r->function,
               r->line, r->variable, r->callee);
    }
    vpf_schema_free(&s);
    return 0;
}
