/* args.c - command-line analysis for vprof-cc (see args.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"

enum lang { L_AUTO, L_SOURCE, L_ASM, L_OTHER };

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
    "-compatibility_version", "-dylib_file", NULL,
};

static int needs_value(const char *a)
{
    for (int i = 0; takes_value[i]; i++)
        if (!strcmp(a, takes_value[i]))
            return 1;
    return 0;
}

static enum lang lang_of_x(const char *x)
{
    if (!strcmp(x, "none"))
        return L_AUTO;
    if (!strcmp(x, "assembler") || !strcmp(x, "assembler-with-cpp"))
        return L_ASM;
    if (strstr(x, "header"))
        return L_OTHER;
    if (!strcmp(x, "c") || !strcmp(x, "c++") || !strcmp(x, "objective-c") ||
        !strcmp(x, "objective-c++") || !strcmp(x, "cpp-output") ||
        !strcmp(x, "c++-cpp-output") || !strcmp(x, "ir"))
        return L_SOURCE;
    return L_OTHER;
}

static enum lang lang_of_file(const char *f)
{
    static const char *const src[] = {
        "c", "i", "cc", "cp", "cxx", "cpp", "CPP", "c++", "C", "ii", "m",
        "mi", "mm", "M", "mii", NULL,
    };
    const char *dot = strrchr(f, '.');
    if (!dot || strchr(dot, '/'))
        return L_OTHER;
    dot++;
    for (int i = 0; src[i]; i++)
        if (!strcmp(dot, src[i]))
            return L_SOURCE;
    if (!strcmp(dot, "s") || !strcmp(dot, "S") || !strcmp(dot, "sx"))
        return L_ASM;
    return L_OTHER;
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

int cc_classify(int argc, char **argv, struct cc_info *ci, char *err,
                size_t errlen)
{
    struct argv_buf a = {0};
    memset(ci, 0, sizeof *ci);
    for (int i = 1; i < argc; i++)
        if (expand(&a, argv[i], 0, err, errlen) < 0)
            return -1;
    enum lang x = L_AUTO;
    int only_inputs = 0;
    for (int i = 0; i < a.n; i++) {
        const char *s = a.v[i];
        if (only_inputs || s[0] != '-' || !strcmp(s, "-")) {
            enum lang l = x != L_AUTO ? x : lang_of_file(s);
            ci->n_inputs++;
            ci->n_sources += l == L_SOURCE;
            ci->n_asm += l == L_ASM;
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
            else if ((!strcmp(s, "-Xlinker") || !strcmp(s, "-z")) && !strcmp(v, "-r"))
                ci->relocatable = 1;
            i++;
            continue;
        }
        if (!strncmp(s, "-o", 2))
            ci->output = s + 2;
        else if (!strncmp(s, "-x", 2))
            x = lang_of_x(s + 2);
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
