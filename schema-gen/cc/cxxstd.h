/* cxxstd.h - the C++ standard vprof-c++ compiles with when a command names
 * none.
 *
 * clang++-14 compiles C++ as gnu++14 by default; Debian bookworm's g++ 12 as
 * gnu++17. vprof-c++ stands in for the g++ a build was written for, so a C++
 * compile without -std= gets the default of the system's g++ (see
 * docs/vprof-cc.md, "The C++ standard"). */
#ifndef VPROF_CC_CXXSTD_H
#define VPROF_CC_CXXSTD_H

#include <limits.h>

struct cxx_std {
    char std[24];           /* "gnu++17", or "" when vprof-c++ adds none */
    char gxx[PATH_MAX];     /* the g++ asked (resolved path), or "" */
    char version[64];       /* its GCC version ("12.2.0"), or "" */
    const char *source;     /* "VPROF_CC_CXX_STD", "g++", "cache", "none" */
};

/* Fills *s. Order: VPROF_CC_CXX_STD (a standard, or "none"); the cache
 * entry for the g++ in PATH (VPROF_CC_GXX overrides the name) when its
 * path, size and modification time still match; else asks that g++
 * (`g++ -dM -E -x c++ /dev/null`, __cplusplus) and rewrites the cache.
 * Without a usable g++, s->std is "" (clang's own default). Returns 0, or
 * -1 when VPROF_CC_CXX_STD is not a standard's name. Errors on the cache
 * are ignored: it is only an optimisation. */
int cxx_std_default(struct cxx_std *s);

/* Where the cache lives ($XDG_CACHE_HOME/vprof/cxx-std, else
 * $HOME/.cache/vprof/cxx-std); "" when neither variable is set. */
void cxx_std_cache_path(char *buf, size_t len);

#endif
