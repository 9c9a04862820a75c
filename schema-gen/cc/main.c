/* vprof-cc / vprof-c++ - drop-in for cc / c++ that builds a program for
 * value profiling (docs/vprof-cc.md).
 *
 * Every argument passes through to clang-14 (clang++-14 when invoked under a
 * name containing "++"; VPROF_CC_COMPILER overrides). On top of them:
 *   compile steps with C/C++ sources: -pg -g -fstandalone-debug
 *                      -fpass-plugin=vprof-schema.so
 *   link steps:        -pg, and libvprof linked first with an rpath,
 *                      then `vprof-meta -o OUT.vmeta OUT` on the output.
 * --latency (vprof's own flag, removed before the compiler sees it) also
 * loads the stack-scanner's instrumentation pass (docs/LATENCY.md); the
 * scanner runtime itself is part of libvprof and starts with VPROF_LATENCY=1.
 * --keep-vars / --no-keep-vars (also removed) set VPROF_KEEP_VARS for the
 * schema pass, which then keeps the schema's locals live (KeepVars.h).
 * C++ commands without -std= get the system g++'s default standard
 * (cxxstd.h), also when they only preprocess. Otherwise preprocessing (-E,
 * -M, -MM), -fsyntax-only, dry runs (-###), assembler-only compiles and
 * commands without inputs (--version, -print-*) are passed through
 * untouched, so their output is exactly clang's. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "args.h"
#include "cxxstd.h"
#include "locate.h"
#include "spawn.h"

static int env_on(const char *name)
{
    const char *v = getenv(name);
    return v && *v && strcmp(v, "0") != 0;
}

/* VPROF_CC_CALLS and --calls=MODE: which calls get counters. The default
 * counts the guarded ones (docs/vprof-cc.md: what they cost and give). */
enum { CALLS_OFF, CALLS_ALL, CALLS_GUARDED };
static const char *const calls_env[] = {"0", "1", "guarded"};

static int calls_mode(const char *v)
{
    if (!v || !*v)
        return CALLS_GUARDED;
    if (!strcmp(v, "0") || !strcmp(v, "off"))
        return CALLS_OFF;
    if (!strcmp(v, "guarded"))
        return CALLS_GUARDED;
    if (!strcmp(v, "1") || !strcmp(v, "all"))
        return CALLS_ALL;
    return -1;
}

static int is_cxx_name(const char *path)
{
    const char *base = strrchr(path, '/');
    return strstr(base ? base + 1 : path, "++") != NULL;
}

static const char *default_compiler(const char *argv0)
{
    const char *env = getenv("VPROF_CC_COMPILER");
    if (env && *env)
        return env;
    return is_cxx_name(argv0) ? "clang++-14" : "clang-14";
}

/* --help: the compiler's own help, then vprof's part (last, so that it is
 * what a terminal shows). */
static int help(const char *compiler, const char *argv0)
{
    char *argv[] = { (char *)compiler, "--help", NULL };
    int rc = cc_run(argv);
    struct cxx_std cs;
    char cache[4200];
    int bad = cxx_std_default(&cs);
    cxx_std_cache_path(cache, sizeof cache);
    const char *me = is_cxx_name(argv0) ? "vprof-c++" : "vprof-cc";
    printf("\n%s: %s with value profiling (docs/vprof-cc.md, vprof-cc(1)).\n"
           "Every option above passes through to %s; %s adds -pg -g and the\n"
           "schema pass to compiles, libvprof to links, and writes OUT.vmeta "
           "after a link.\n"
           "  --latency       also instrument for the latency stack scanner\n"
           "  --calls=guarded the default: count, before inlining, the calls a\n"
           "                  predicate's answer or a global's or member's value\n"
           "                  decides and the calls of the functions holding them\n"
           "                  (calls.<id>; what --guards and --state-writers rate)\n"
           "  --calls         count every call of a function of the same unit\n"
           "  --no-calls      count none (gmon's arcs only)\n"
           "  --keep-vars     keep the schema's local variables live at -O1 and up,\n"
           "                  so their values can be read where -O2 optimizes them\n"
           "                  out (a little slower code; VPROF_KEEP_VARS=1)\n"
           "  --no-keep-vars  the default: the code is exactly clang's\n\n",
           me, compiler, compiler, me);
    const char *gxx = getenv("VPROF_CC_GXX");
    gxx = gxx && *gxx ? gxx : "g++";
    printf("C++ standard when a C++ command gives no -std=: ");
    if (bad)
        printf("error: VPROF_CC_CXX_STD='%s' is not a standard's name\n",
               getenv("VPROF_CC_CXX_STD"));
    else if (!strcmp(cs.source, "VPROF_CC_CXX_STD"))
        printf("%s (VPROF_CC_CXX_STD)\n", cs.std[0] ? cs.std : "the compiler's own default");
    else if (cs.std[0])
        printf("%s,\n  the default of %s (%s%s%s);\n  %s %s\n", cs.std, gxx, cs.gxx,
               cs.version[0] ? ", GCC " : "", cs.version,
               !strcmp(cs.source, "cache") ? "cached in" : "asked now, cached in",
               cache[0] ? cache : "(nowhere: HOME is not set)");
    else if (cs.gxx[0])
        printf("the compiler's own default\n  (%s (%s) did not say its __cplusplus)\n", gxx,
               cs.gxx);
    else
        printf("the compiler's own default (no %s found in PATH)\n", gxx);
    printf("\nEnvironment: VPROF_CC_COMPILER, VPROF_CC_CXX_STD (a standard, or none),\n"
           "VPROF_CC_GXX (the g++ asked), VPROF_COMPONENT, VPROF_CC_NO_META,\n"
           "VPROF_CC_VERBOSE, VPROF_CC_LATENCY, VPROF_KEEP_VARS (1 or 0),\n"
           "VPROF_CC_CALLS (guarded, 1 or 0).\n");
    return rc;
}

/* A link whose output is not a regular file (-o /dev/null in a configure
 * check) has nothing to describe. */
static int is_regular(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The link succeeded; without metadata the program would profile silently
 * without values, so a failure here fails the build and removes the output
 * (a rerun of make then links again instead of keeping a half-built result). */
static int write_meta(const struct cc_paths *p, const char *out)
{
    if (!is_regular(out))
        return 0;
    size_t n = strlen(out) + sizeof ".vmeta";
    char *vmeta = malloc(n);
    if (!vmeta) {
        fprintf(stderr, "vprof-cc: out of memory\n");
        return 1;
    }
    snprintf(vmeta, n, "%s.vmeta", out);
    if (env_on("VPROF_CC_NO_META")) {
        if (access(p->meta, X_OK) != 0)
            fprintf(stderr, "vprof-cc: warning: %s not found; %s has no variable "
                    "metadata (VPROF_CC_NO_META=1)\n", p->meta, out);
        free(vmeta);
        return 0;
    }
    int rc;
    if (access(p->meta, X_OK) != 0) {
        fprintf(stderr, "vprof-cc: %s not found: cannot write %s "
                "(build vprof-meta, or set VPROF_CC_NO_META=1 to link without "
                "metadata)\n", p->meta, vmeta);
        rc = 1;
    } else {
        char *argv[] = { (char *)p->meta, "-o", vmeta, (char *)out, NULL };
        rc = cc_run(argv);
        if (rc != 0)
            fprintf(stderr, "vprof-cc: vprof-meta failed on %s (exit %d)\n", out, rc);
    }
    if (rc != 0) {
        unlink(vmeta);
        if (unlink(out) == 0)
            fprintf(stderr, "vprof-cc: removed %s\n", out);
    }
    free(vmeta);
    return rc;
}

/* Removes vprof-cc's own flags from argv; returns the new argc, or -1
 * when the environment cannot be set. --keep-vars / --no-keep-vars reach
 * the schema pass inside clang as VPROF_KEEP_VARS (a pass plugin loaded
 * with -fpass-plugin has no command-line options of its own); the last one
 * given wins, and without either the environment's value (or the pass's
 * default) holds. --calls[=all|guarded] / --no-calls likewise, as
 * VPROF_CC_CALLS (set by main). */
static int take_own_flags(int argc, char **argv, int *latency, int *calls)
{
    int k = 1;
    const char *keep = NULL;
    *latency = env_on("VPROF_CC_LATENCY");
    *calls = calls_mode(getenv("VPROF_CC_CALLS"));
    if (*calls < 0) {
        fprintf(stderr, "vprof-cc: VPROF_CC_CALLS='%s': expected guarded, 1 (all) or 0\n",
                getenv("VPROF_CC_CALLS"));
        return -1;
    }
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--latency"))
            *latency = 1;
        else if (!strcmp(argv[i], "--calls"))
            *calls = CALLS_ALL;
        else if (!strncmp(argv[i], "--calls=", 8)) {
            if ((*calls = calls_mode(argv[i] + 8)) < 0) {
                fprintf(stderr, "vprof-cc: %s: expected --calls=all or --calls=guarded\n",
                        argv[i]);
                return -1;
            }
        } else if (!strcmp(argv[i], "--no-calls"))
            *calls = CALLS_OFF;
        else if (!strcmp(argv[i], "--keep-vars"))
            keep = "1";
        else if (!strcmp(argv[i], "--no-keep-vars"))
            keep = "0";
        else
            argv[k++] = argv[i];
    }
    argv[k] = NULL;
    if (keep && setenv("VPROF_KEEP_VARS", keep, 1) != 0) {
        fprintf(stderr, "vprof-cc: cannot set VPROF_KEEP_VARS: %s\n", strerror(errno));
        return -1;
    }
    return k;
}

int main(int argc, char **argv)
{
    const char *compiler = default_compiler(argv[0]);
    int latency, calls;
    argc = take_own_flags(argc, argv, &latency, &calls);
    if (argc < 0)
        return 1;
    /* the schema plugin reads it (Plugin.cpp): the counters go in before
     * the optimiser inlines the calls away */
    if (setenv("VPROF_CC_CALLS", calls_env[calls], 1) != 0) {
        fprintf(stderr, "vprof-cc: setenv: %s\n", strerror(errno));
        return 1;
    }
    if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-help")))
        return help(compiler, argv[0]);
    struct cc_info ci;
    char err[1024];
    int cxx_mode = is_cxx_name(argv[0]) || is_cxx_name(compiler);
    if (cc_classify(argc, argv, cxx_mode, &ci, err, sizeof err) < 0) {
        fprintf(stderr, "vprof-cc: %s\n", err);
        return 1;
    }
    int untouched = ci.preprocess || ci.syntax_only || ci.n_inputs == 0 ||
                    (ci.compile_only && ci.n_sources == 0);
    int link = !untouched && !ci.compile_only;
    int instrument = !untouched && ci.n_sources > 0;
    int runtime = link && !ci.shared && !ci.relocatable && !ci.nostdlib;

    if (runtime && ci.is_static) {
        /* libc.a's own gmon.o would collide with libvprof's definitions;
         * static programs are served by the glibc patch instead. */
        fprintf(stderr, "vprof-cc: -static executables cannot use libvprof "
                "(glibc's static gmon is linked in); link dynamically, or "
                "use a glibc built with glibc-patch/\n");
        return 1;
    }
    /* A C++ standard cannot be given to a C input in the same command, so
     * only commands whose inputs are all C++ get one. */
    struct cxx_std cs = { .std = "" };
    char std_opt[40];
    if (!ci.has_std && ci.n_cxx > 0 && ci.n_c == 0 && cxx_std_default(&cs) < 0) {
        fprintf(stderr, "vprof-cc: VPROF_CC_CXX_STD='%s' is not a standard's name "
                "(gnu++17, c++20, ..., or none)\n", getenv("VPROF_CC_CXX_STD"));
        return 1;
    }
    snprintf(std_opt, sizeof std_opt, "-std=%s", cs.std);
    struct cc_paths p;
    if (!untouched && cc_locate(&p) < 0)
        return 1;
    if (instrument && access(p.plugin, R_OK) != 0) {
        fprintf(stderr, "vprof-cc: schema pass plugin %s: %s\n", p.plugin,
                strerror(errno));
        return 1;
    }
    if (instrument && latency && access(p.latency_plugin, R_OK) != 0) {
        fprintf(stderr, "vprof-cc: latency pass plugin %s: %s\n", p.latency_plugin,
                strerror(errno));
        return 1;
    }
    if (runtime && access(p.runtime, R_OK) != 0) {
        fprintf(stderr, "vprof-cc: runtime library %s: %s\n", p.runtime,
                strerror(errno));
        return 1;
    }

    /* Our options go first: the user's own later options (-g0, -O3, -x)
     * keep their meaning, and a `--` ending the options cannot swallow
     * ours. libvprof comes before every user library and libc, so its
     * mcount/__monstartup/_mcleanup/profil interpose glibc's. */
    char plugin_opt[4200], lat_opt[4200], libdir_opt[4200], rpath_opt[4200];
    char **nargv = calloc((size_t)argc + 16, sizeof *nargv);
    if (!nargv) {
        fprintf(stderr, "vprof-cc: out of memory\n");
        return 1;
    }
    int k = 0;
    nargv[k++] = (char *)compiler;
    if (cs.std[0])
        nargv[k++] = std_opt;
    /* -pg compiles the mcount calls in, and on an executable's link picks
     * gcrt1.o, whose start-up calls __monstartup (ours, via libvprof). A
     * link of objects into a library does not use it (clang would warn). */
    if (instrument || runtime)
        nargv[k++] = "-pg";
    if (instrument) {
        snprintf(plugin_opt, sizeof plugin_opt, "-fpass-plugin=%s", p.plugin);
        nargv[k++] = "-g";
        /* clang describes a C++ class completely only in the units that
         * emit its constructor (or vtable); elsewhere a method's
         * `this->member` would have no member to name, for the schema pass
         * and for vprof-meta. Debug info only: the code is the same. */
        nargv[k++] = "-fstandalone-debug";
        nargv[k++] = plugin_opt;
        if (latency) {
            snprintf(lat_opt, sizeof lat_opt, "-fpass-plugin=%s", p.latency_plugin);
            nargv[k++] = lat_opt;
        }
    }
    if (runtime) {
        snprintf(libdir_opt, sizeof libdir_opt, "-L%s", p.libdir);
        snprintf(rpath_opt, sizeof rpath_opt, "-Wl,-rpath,%s", p.libdir);
        nargv[k++] = libdir_opt;
        nargv[k++] = rpath_opt;
        nargv[k++] = "-Wl,--push-state,--no-as-needed";
        nargv[k++] = "-lvprof";
        nargv[k++] = "-Wl,--pop-state";
    }
    for (int i = 1; i < argc; i++)
        nargv[k++] = argv[i];
    nargv[k] = NULL;

    if (!link) {
        /* Nothing to do afterwards: become the compiler, so its exit status,
         * signals and diagnostics are exactly clang's. */
        cc_trace(nargv);
        execvp(compiler, nargv);
        fprintf(stderr, "vprof-cc: cannot run compiler %s: %s\n", compiler,
                strerror(errno));
        return 127;
    }
    int rc = cc_run(nargv);
    if (rc != 0 || ci.relocatable)
        return rc;
    return write_meta(&p, ci.output ? ci.output : "a.out");
}
