/* spawn.h - running the real compiler and vprof-meta. */
#ifndef VPROF_CC_SPAWN_H
#define VPROF_CC_SPAWN_H

/* Runs argv (searched in PATH) and waits. Returns the exit status the
 * command's own caller would see: its exit code, 128+N for signal N, 127 if
 * it could not be started (message printed, naming the program). */
int cc_run(char *const argv[]);

/* Prints argv to stderr as one line, prefixed "vprof-cc: ", when
 * VPROF_CC_VERBOSE is set to a non-empty value other than 0. */
void cc_trace(char *const argv[]);

#endif
