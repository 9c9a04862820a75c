/* component_filter.h - VPROF_COMPONENT: restricts the schema to the source
 * files of one component of a large program (vProf paper §3.1).
 *
 * The value is a list of shell globs separated by ':' or ','. A source path
 * is selected when a glob matches the whole path, or the part of it after any
 * '/', or the absolute path (compilation directory + path). '*' also matches
 * '/'. Example in docs/vprof-cc.md (a glob ending in slash-star cannot be
 * written inside a C comment).
 * An unset or empty value selects every file. */
#ifndef VPROF_COMPONENT_FILTER_H
#define VPROF_COMPONENT_FILTER_H

#ifdef __cplusplus
extern "C" {
#endif

/* `globs` may be NULL (= select all). `dir` may be NULL or empty. */
int vsg_component_selected(const char *globs, const char *path,
                           const char *dir);

#ifdef __cplusplus
}
#endif
#endif
