/* cxxstd.c - see cxxstd.h.
 *
 * Asking g++ starts its preprocessor: some 20-50 ms, paid by every compile
 * of a large build. The answer only changes when g++ does, so it is kept in
 * a one-line cache file keyed by the g++ executable's resolved path, size
 * and modification time:
 *
 *   vprof-cxx-std 1 <TAB> size <TAB> mtime_sec.mtime_nsec <TAB> std <TAB>
 *   version <TAB> path <NEWLINE>
 *
 * written to a temporary file and renamed into place, so parallel compiles
 * (make -j) only ever read a whole line. A cache that is missing, foreign or
 * stale is simply rewritten. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cxxstd.h"
#include "spawn.h"

#define CACHE_MAGIC "vprof-cxx-std 1"

static int valid_std(const char *s)
{
    if (!*s || strlen(s) >= sizeof ((struct cxx_std *)0)->std)
        return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '+'))
            return 0;
    return 1;
}

/* name as execvp would find it: the first executable PATH entry. */
static int find_in_path(const char *name, char *out, size_t len)
{
    if (len < PATH_MAX)     /* realpath writes up to PATH_MAX bytes */
        return -1;
    if (strchr(name, '/'))
        return realpath(name, out) && access(out, X_OK) == 0 ? 0 : -1;
    const char *path = getenv("PATH");
    if (!path)
        path = "/usr/local/bin:/usr/bin:/bin";
    while (*path) {
        const char *colon = strchr(path, ':');
        size_t n = colon ? (size_t)(colon - path) : strlen(path);
        char cand[PATH_MAX];
        if (snprintf(cand, sizeof cand, "%.*s/%s", (int)n, n ? path : ".", name) <
                (int)sizeof cand &&
            access(cand, X_OK) == 0 && realpath(cand, out))
            return 0;
        path += n + (colon != NULL);
    }
    return -1;
}

void cxx_std_cache_path(char *buf, size_t len)
{
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (xdg && *xdg == '/')
        snprintf(buf, len, "%s/vprof/cxx-std", xdg);
    else if (home && *home)
        snprintf(buf, len, "%s/.cache/vprof/cxx-std", home);
    else
        buf[0] = 0;
}

static int cache_read(const char *cache, const struct stat *st, struct cxx_std *s)
{
    FILE *f = fopen(cache, "r");
    if (!f)
        return -1;
    char line[PATH_MAX + 256];
    int ok = fgets(line, sizeof line, f) != NULL;
    fclose(f);
    if (!ok)
        return -1;
    line[strcspn(line, "\n")] = 0;
    char *field[6];
    char *p = line;
    for (int i = 0; i < 6; i++) {
        field[i] = p;
        char *tab = i < 5 ? strchr(p, '\t') : NULL;
        if (i < 5 && !tab)
            return -1;
        if (tab) {
            *tab = 0;
            p = tab + 1;
        }
    }
    char want_size[32], want_time[48];
    snprintf(want_size, sizeof want_size, "%lld", (long long)st->st_size);
    snprintf(want_time, sizeof want_time, "%lld.%09ld", (long long)st->st_mtim.tv_sec,
             st->st_mtim.tv_nsec);
    if (strcmp(field[0], CACHE_MAGIC) || strcmp(field[1], want_size) ||
        strcmp(field[2], want_time) || strcmp(field[5], s->gxx) || !valid_std(field[3]) ||
        strlen(field[4]) >= sizeof s->version)
        return -1;
    snprintf(s->std, sizeof s->std, "%s", field[3]);
    snprintf(s->version, sizeof s->version, "%s", field[4]);
    return 0;
}

static void cache_write(const char *cache, const struct stat *st, const struct cxx_std *s)
{
    char dir[PATH_MAX], tmp[PATH_MAX + 32];
    snprintf(dir, sizeof dir, "%s", cache);
    /* create the directories up to the file: .cache, then .cache/vprof */
    for (char *sl = strchr(dir + 1, '/'); sl; sl = strchr(sl + 1, '/')) {
        *sl = 0;
        if (mkdir(dir, 0755) < 0 && errno != EEXIST)
            return;
        *sl = '/';
    }
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", cache, (long)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f)
        return;
    fprintf(f, "%s\t%lld\t%lld.%09ld\t%s\t%s\t%s\n", CACHE_MAGIC, (long long)st->st_size,
            (long long)st->st_mtim.tv_sec, st->st_mtim.tv_nsec, s->std, s->version, s->gxx);
    if (fclose(f) != 0 || rename(tmp, cache) != 0)
        unlink(tmp);
}

static long macro(const char *defs, const char *name)
{
    char key[64];
    snprintf(key, sizeof key, "#define %s ", name);
    const char *p = strstr(defs, key);
    return p ? strtol(p + strlen(key), NULL, 10) : -1;
}

/* __cplusplus -> the GNU dialect clang-14 spells for it. */
static const char *dialect(long cplusplus)
{
    if (cplusplus < 201103L) return "gnu++98";
    if (cplusplus < 201402L) return "gnu++11";
    if (cplusplus < 201703L) return "gnu++14";
    if (cplusplus < 202002L) return "gnu++17";
    if (cplusplus == 202002L) return "gnu++20";
    return "gnu++2b";
}

static int ask_gxx(struct cxx_std *s)
{
    char *argv[] = { s->gxx, "-dM", "-E", "-x", "c++", "/dev/null", NULL };
    char *defs = cc_capture(argv, 1 << 20);
    if (!defs)
        return -1;
    long cpp = macro(defs, "__cplusplus");
    long major = macro(defs, "__GNUC__"), minor = macro(defs, "__GNUC_MINOR__"),
         patch = macro(defs, "__GNUC_PATCHLEVEL__");
    free(defs);
    if (cpp <= 0)
        return -1;
    snprintf(s->std, sizeof s->std, "%s", dialect(cpp));
    if (major >= 0)
        snprintf(s->version, sizeof s->version, "%ld.%ld.%ld", major,
                 minor < 0 ? 0 : minor, patch < 0 ? 0 : patch);
    return 0;
}

int cxx_std_default(struct cxx_std *s)
{
    memset(s, 0, sizeof *s);
    s->source = "none";
    const char *env = getenv("VPROF_CC_CXX_STD");
    if (env && *env) {
        s->source = "VPROF_CC_CXX_STD";
        if (!strcmp(env, "none"))
            return 0;
        if (!valid_std(env))
            return -1;
        snprintf(s->std, sizeof s->std, "%s", env);
        return 0;
    }
    const char *name = getenv("VPROF_CC_GXX");
    struct stat st;
    if (find_in_path(name && *name ? name : "g++", s->gxx, sizeof s->gxx) < 0 ||
        stat(s->gxx, &st) < 0) {
        s->gxx[0] = 0;
        return 0;
    }
    char cache[PATH_MAX];
    cxx_std_cache_path(cache, sizeof cache);
    if (cache[0] && cache_read(cache, &st, s) == 0) {
        s->source = "cache";
        return 0;
    }
    if (ask_gxx(s) < 0) {
        s->std[0] = 0;
        return 0;
    }
    s->source = "g++";
    if (cache[0])
        cache_write(cache, &st, s);
    return 0;
}
