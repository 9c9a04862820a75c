/* args.c - command-line analysis for vprof-cc (see args.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"

enum lang { L_AUTO, L_SOURCE, L_HEADER, L_ASM, L_OTHER };
/* Which -std= family an input belongs to: a C++ standard given to a C
 * compile (or the reverse) is an error, so vprof-c++ adds its default only
 * when every input is C++. */
enum family { F_NONE, F_C, F_CXX };

struct ltype { enum lang l; enum family f; };

/* Options whose value is the next argument: it must not be taken for an
 * input file. */
static const char *const takes_value[] = {
    "-o", "-x", "-MF", "-MT", "-MQ", "-MJ", "-I", "-L", "-D", "-U", "-l",
    "-include", "-imacros", "-isystem", "-iquote", "-idirafter", "-iprefix",
    "-iwithprefix", "-iwithprefixbefore", "-isysroot", "--sysroot", "-target",
    "-arch", "-T", "-u", "-z", "-e", "-B", "-Xlinker", "-Xassembler",
    "-Xpreprocessor", "-Xclang", "-Xanalyzer", "-mllvm", "-aux-info",
    "-dumpdir", "-dumpbase", "-include-pch", "-ivfsoverlay", "--param",
    "-serialize-diagnostics", "-working-directory", "-Xopenmp-target",
    "-gcc-toolchain", "-F", "-G", "-Xcuda-fatbinary", "-Xcuda-ptxas",
    "-Xarch_host", "-Xarch_device", "-install_name", "-current_version",
    "-compatibility_version", "-dylib_file", "--std", NULL,
};

static int needs_value(const char *a)
{
    for (int i = 0; takes_value[i]; i++)
        if (!strcmp(a, takes_value[i]))
            return 1;
    return 0;
}

static int in_list(const char *s, const char *const *list)
{
    for (int i = 0; list[i]; i++)
        if (!strcmp(s, list[i]))
            return 1;
    return 0;
}

/* clang++ turns the C family into C++ (c -> c++, objective-c ->
 * objective-c++), as g++ does; an explicit -x c stays C. */
static struct ltype in_mode(struct ltype t, int cxx_mode)
{
    if (cxx_mode && t.f == F_C)
        t.f = F_CXX;
    return t;
}

static struct ltype lang_of_x(const char *x)
{
    static const char *const c_src[] = {
        "c", "cpp-output", "objective-c", "objective-c-cpp-output", NULL };
    static const char *const cxx_src[] = {
        "c++", "c++-cpp-output", "objective-c++", "objective-c++-cpp-output", NULL };
    static const char *const c_hdr[] = {
        "c-header", "cpp-output-header", "objective-c-header", NULL };
    static const char *const cxx_hdr[] = {
        "c++-header", "c++-system-header", "c++-user-header", "c++-header-unit-header",
        "objective-c++-header", NULL };
    if (!strcmp(x, "none"))
        return (struct ltype){ L_AUTO, F_NONE };
    if (!strcmp(x, "assembler") || !strcmp(x, "assembler-with-cpp"))
        return (struct ltype){ L_ASM, F_NONE };
    if (in_list(x, c_src))
        return (struct ltype){ L_SOURCE, F_C };
    if (in_list(x, cxx_src))
        return (struct ltype){ L_SOURCE, F_CXX };
    if (in_list(x, c_hdr))
        return (struct ltype){ L_HEADER, F_C };
    if (in_list(x, cxx_hdr))
        return (struct ltype){ L_HEADER, F_CXX };
    if (!strcmp(x, "ir"))
        return (struct ltype){ L_SOURCE, F_NONE };
    return (struct ltype){ L_OTHER, F_NONE };
}

static struct ltype lang_of_file(const char *f)
{
    static const char *const c_src[] = { "c", "i", "m", "mi", NULL };
    static const char *const cxx_src[] = {
        "cc", "cp", "cxx", "cpp", "CPP", "c++", "C", "ii", "mm", "M", "mii", NULL };
    static const char *const cxx_hdr[] = {
        "hh", "H", "hp", "hxx", "hpp", "HPP", "h++", "tcc", NULL };
    const char *dot = strrchr(f, '.');
    if (!dot || strchr(dot, '/'))
        return (struct ltype){ L_OTHER, F_NONE };
    dot++;
    if (in_list(dot, c_src))
        return (struct ltype){ L_SOURCE, F_C };
    if (in_list(dot, cxx_src))
        return (struct ltype){ L_SOURCE, F_CXX };
    if (!strcmp(dot, "h"))
        return (struct ltype){ L_HEADER, F_C };
    if (in_list(dot, cxx_hdr))
        return (struct ltype){ L_HEADER, F_CXX };
    if (!strcmp(dot, "s") || !strcmp(dot, "S") || !strcmp(dot, "sx"))
        return (struct ltype){ L_ASM, F_NONE };
    return (struct ltype){ L_OTHER, F_NONE };
}

/* ---- response files ---- */

struct argv_buf { char **v; int n, cap; };

static int push(struct argv_buf *b, char *s)
{
    if (b->n == b->cap) {
        int nc = b->cap ? b->cap * 2 : 64;
        char **p = realloc(b->v, (size_t)nc * sizeof *p);
        if (!p)
            return -1;
        b->v = p;
        b->cap = nc;
    }
    b->v[b->n++] = s;
    return 0;
}

static char *read_all(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = NULL;
    size_t len = 0, cap = 0, n;
    char chunk[4096];
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
        if (len + n + 1 > cap) {
            cap = (len + n + 1) * 2;
            char *p = realloc(buf, cap);
            if (!p) {
                free(buf);
                fclose(f);
                return NULL;
            }
            buf = p;
        }
        memcpy(buf + len, chunk, n);
        len += n;
    }
    fclose(f);
    if (!buf)
        buf = calloc(1, 1);
    else
        buf[len] = 0;
    return buf;
}

static int expand(struct argv_buf *out, char *arg, int depth, char *err,
                  size_t errlen);

/* GCC rules: whitespace separates; '...' and "..." quote; backslash escapes
 * the next character. */
static int expand_text(struct argv_buf *out, const char *text, int depth,
                       char *err, size_t errlen)
{
    const char *p = text;
    for (;;) {
        while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' ||
               *p == '\f' || *p == '\v')
            p++;
        if (!*p)
            return 0;
        char *word = malloc(strlen(p) + 1);
        if (!word)
            return -1;
        size_t w = 0;
        char quote = 0;
        for (; *p; p++) {
            if (*p == '\\' && p[1]) {
                word[w++] = *++p;
            } else if (quote) {
                if (*p == quote)
                    quote = 0;
                else
                    word[w++] = *p;
            } else if (*p == '\'' || *p == '"') {
                quote = *p;
            } else if (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' ||
                       *p == '\f' || *p == '\v') {
                break;
            } else {
                word[w++] = *p;
            }
        }
        word[w] = 0;
        if (expand(out, word, depth + 1, err, errlen) < 0)
            return -1;
    }
}

static int expand(struct argv_buf *out, char *arg, int depth, char *err,
                  size_t errlen)
{
    if (arg[0] != '@' || !arg[1])
        return push(out, arg);
    if (depth > 16) {
        snprintf(err, errlen, "response file %s: nested more than 16 deep", arg + 1);
        return -1;
    }
    char *text = read_all(arg + 1);
    if (!text) {
        if (errno == ENOENT)  /* like gcc and clang: then it is a plain argument */
            return push(out, arg);
        snprintf(err, errlen, "response file %s: %s", arg + 1, strerror(errno));
        return -1;
    }
    return expand_text(out, text, depth, err, errlen);
}

/* ---- classification ---- */

int cc_classify(int argc, char **argv, int cxx_mode, struct cc_info *ci,
                char *err, size_t errlen)
{
    struct argv_buf a = {0};
    memset(ci, 0, sizeof *ci);
    for (int i = 1; i < argc; i++)
        if (expand(&a, argv[i], 0, err, errlen) < 0)
            return -1;
    struct ltype x = { L_AUTO, F_NONE };
    int only_inputs = 0;
    for (int i = 0; i < a.n; i++) {
        const char *s = a.v[i];
        if (only_inputs || s[0] != '-' || !strcmp(s, "-")) {
            struct ltype t = x.l != L_AUTO ? x : in_mode(lang_of_file(s), cxx_mode);
            ci->n_inputs++;
            ci->n_sources += t.l == L_SOURCE;
            ci->n_asm += t.l == L_ASM;
            ci->n_cxx += t.f == F_CXX;
            ci->n_c += t.f == F_C;
            continue;
        }
        if (!strcmp(s, "--")) {
            only_inputs = 1;   /* everything after `--` is an input */
            continue;
        }
        if (needs_value(s)) {
            const char *v = i + 1 < a.n ? a.v[i + 1] : "";
            if (!strcmp(s, "-o"))
                ci->output = v;
            else if (!strcmp(s, "-x"))
                x = lang_of_x(v);
            else if (!strcmp(s, "--std"))
                ci->has_std = 1;
            else if ((!strcmp(s, "-Xlinker") || !strcmp(s, "-z")) && !strcmp(v, "-r"))
                ci->relocatable = 1;
            i++;
            continue;
        }
        if (!strncmp(s, "-o", 2))
            ci->output = s + 2;
        else if (!strncmp(s, "-x", 2))
            x = lang_of_x(s + 2);
        else if (!strncmp(s, "-std=", 5) || !strncmp(s, "--std=", 6))
            ci->has_std = 1;
        else if (!strcmp(s, "-c") || !strcmp(s, "-S"))
            ci->compile_only = 1;
        else if (!strcmp(s, "-E") || !strcmp(s, "-M") || !strcmp(s, "-MM"))
            ci->preprocess = 1;
        else if (!strcmp(s, "-fsyntax-only") || !strcmp(s, "-###"))
            ci->syntax_only = 1;
        else if (!strcmp(s, "-shared"))
            ci->shared = 1;
        else if (!strcmp(s, "-r") || !strcmp(s, "-Wl,-r") ||
                 !strcmp(s, "-Wl,--relocatable"))
            ci->relocatable = 1;
        else if (!strcmp(s, "-static") || !strcmp(s, "-static-pie"))
            ci->is_static = 1;
        else if (!strcmp(s, "-nostdlib") || !strcmp(s, "-nodefaultlibs") ||
                 !strcmp(s, "-nostartfiles"))
            ci->nostdlib = 1;
    }
    return 0;
}
