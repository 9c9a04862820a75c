/* spawn.h - running the real compiler and vprof-meta. */
#ifndef VPROF_CC_SPAWN_H
#define VPROF_CC_SPAWN_H

/* Runs argv (searched in PATH) and waits. Returns the exit status the
 * command's own caller would see: its exit code, 128+N for signal N, 127 if
 * it could not be started (message printed, naming the program). */
int cc_run(char *const argv[]);

/* Runs argv (searched in PATH) with stdin and stderr on /dev/null and
 * returns its standard output (at most max bytes, NUL-terminated, malloc'ed),
 * or NULL when it cannot be started or does not exit with status 0. */
char *cc_capture(char *const argv[], size_t max);

/* Prints argv to stderr as one line, prefixed "vprof-cc: ", when
 * VPROF_CC_VERBOSE is set to a non-empty value other than 0. */
void cc_trace(char *const argv[]);

#endif
