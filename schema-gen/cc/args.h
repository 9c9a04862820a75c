/* args.h - what a compiler command line asks for.
 *
 * vprof-cc passes every argument through unchanged; it only needs to know
 * whether the command compiles, links, or does neither, what it links, and
 * where the output goes. Response files (@file) are read for this analysis
 * (GCC quoting rules, nested up to 16 deep) but passed through as written. */
#ifndef VPROF_CC_ARGS_H
#define VPROF_CC_ARGS_H

#include <stddef.h>

struct cc_info {
    int preprocess;     /* -E, -M, -MM: no compile, no link */
    int compile_only;   /* -c or -S: no link */
    int syntax_only;    /* -fsyntax-only, -### (dry run) */
    int shared;         /* -shared */
    int relocatable;    /* -r / -Wl,-r: partial link, not a program */
    int nostdlib;       /* -nostdlib / -nodefaultlibs / -nostartfiles */
    int is_static;      /* -static / -static-pie */
    int n_sources;      /* C/C++/ObjC sources (the pass runs on these) */
    int n_cxx;          /* C++ inputs (sources, preprocessed, headers, ObjC++) */
    int n_c;            /* C inputs (likewise, ObjC included) */
    int has_std;        /* -std=, --std=, --std X given */
    int n_asm;          /* .s/.S inputs */
    int n_inputs;       /* every input, objects and libraries included */
    const char *output; /* -o value (points into the arguments), or NULL */
};

/* Fills *ci from argv[1..argc-1]. cxx_mode: the driver runs as clang++,
 * which compiles C-family inputs without -x (.c, .h, .m) as C++. Returns 0,
 * or -1 with a message in err when a response file cannot be read. Strings
 * from response files are leaked on purpose: the process is short-lived and
 * ci->output may point into them. */
int cc_classify(int argc, char **argv, int cxx_mode, struct cc_info *ci,
                char *err, size_t errlen);

#endif
