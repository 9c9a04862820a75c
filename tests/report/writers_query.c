/* writers_query - test helper: loads a schema text (e.g. the .vprof_schema
 * section of a program built by vprof-cc) into a vprof-report model and
 * prints, for each variable given as FILE|FUNCTION|NAME, the writers
 * vpr_writers_of finds (for @STATE, a state as a `@guardstate` line names
 * it, those vpr_writers_of_state finds), one per line:
 *   NAME <- direct|type FUNCTION FILE:LINE TARGET
 * or "NAME <- none". Exit 1 when the schema does not parse. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "writers.h"

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: writers_query SCHEMA FILE|FUNCTION|NAME...\n");
        return 2;
    }
    struct vpr_model m;
    memset(&m, 0, sizeof m);
    vpf_err e;
    if (vpf_schema_load(argv[1], &m.schema, &e) < 0) {
        fprintf(stderr, "%s\n", e.msg);
        return 1;
    }
    m.has_schema = 1;
    for (int i = 2; i < argc; i++) {
        if (argv[i][0] == '@') {
            struct vpr_writer *w;
            long n = vpr_writers_of_state(&m, argv[i] + 1, &w);
            if (n == 0)
                printf("%s <- none\n", argv[i] + 1);
            for (long k = 0; k < n; k++)
                printf("%s <- %s %s %s:%u %s\n", argv[i] + 1, w[k].by_type ? "type" : "direct",
                       w[k].function, w[k].file, w[k].line, w[k].target);
            free(w);
            continue;
        }
        char *q = strdup(argv[i]);
        char *fn = strchr(q, '|'), *name = fn ? strchr(fn + 1, '|') : NULL;
        if (!name) {
            fprintf(stderr, "writers_query: '%s' is not FILE|FUNCTION|NAME\n", argv[i]);
            return 2;
        }
        *fn++ = 0;
        *name++ = 0;
        struct vpr_var v = {0};
        v.file = q;
        v.function = fn;
        v.name = name;
        v.tags = !strcmp(fn, "#global") ? VPF_TAG_GLOBAL : 0;
        struct vpr_writer *w;
        long n = vpr_writers_of(&m, &v, &w);
        if (n < 0) {
            fprintf(stderr, "writers_query: out of memory\n");
            return 1;
        }
        if (n == 0)
            printf("%s <- none\n", name);
        for (long k = 0; k < n; k++)
            printf("%s <- %s %s %s:%u %s\n", name, w[k].by_type ? "type" : "direct",
                   w[k].function, w[k].file, w[k].line, w[k].target);
        free(w);
        free(q);
    }
    vpf_schema_free(&m.schema);
    return 0;
}
