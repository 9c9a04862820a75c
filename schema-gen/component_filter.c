/* component_filter.c - VPROF_COMPONENT glob matching (see the header). */
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "component_filter.h"

/* A glob matches the path itself or any of its '/'-separated suffixes. */
static int match_path(const char *glob, const char *path)
{
    for (const char *p = path; p; ) {
        if (fnmatch(glob, p, 0) == 0)
            return 1;
        p = strchr(p, '/');
        if (p)
            p++;
    }
    return 0;
}

int vsg_component_selected(const char *globs, const char *path,
                           const char *dir)
{
    if (!globs || !*globs)
        return 1;
    char *abs = NULL;
    if (dir && *dir && path[0] != '/' && asprintf(&abs, "%s/%s", dir, path) < 0)
        abs = NULL;
    int hit = 0;
    const char *g = globs;
    while (*g && !hit) {
        size_t n = strcspn(g, ":,");
        if (n > 0) {
            char *one = strndup(g, n);
            if (one) {
                hit = match_path(one, path) || (abs && match_path(one, abs));
                free(one);
            }
        }
        g += n;
        if (*g)
            g++;
    }
    free(abs);
    return hit;
}
