/* Written for the vprof bug corpus by a helper that had not seen the
 * profiler (2026-11-29); not modelled on a real issue. The fix is the
 * VPROF_CASE_FIX variant; the line marked FIX is the bug.
 *
 * treesync - the scanner of a file-synchronisation client. Each scan walks a
 * workspace (a monorepo; struct vnode stands in for readdir() and lstat()),
 * drops what .syncignore excludes (gitignore-like rules), rehashes files whose
 * stat changed and queues those the remote lacks in the upload manifest.
 * The bug: walk_dir() counts an excluded directory but descends anyway. The
 * manifest stays right (path_ignored() checks every leading directory), but
 * each entry below costs a rule scan per leading directory: little in a fresh
 * checkout (normal: --deps 0), most of the scan once node_modules/ is
 * installed (buggy: --deps 80).
 */
#include "../common/corpus.h"

#define MAX_RULES   64
#define PAT_LEN     64
#define PATH_LEN    512
#define BLOCK       4096        /* the unit of the content digest */
#define INDEX_SLOTS (1u << 14)  /* tracked files, open addressing */
#define FNV_PRIME   0x100000001b3ull

/* ------------------------------------------------------ the workspace */
struct vnode {
    char *name;
    struct vnode **kids;        /* a directory's entries, in readdir() order */
    int nkids, cap, is_dir;
    uint32_t size, mtime, version;
    uint64_t seed;              /* the content is a function of seed and version */
};

struct filelist { struct vnode **v; int n, cap; };

static void *xmalloc(size_t n)
{
    void *p = calloc(1, n);
    if (!p)
        perror("calloc"), exit(1);
    return p;
}

/* ARR (N used of *CAP elements of ELEM bytes) with room for one more. */
static void *grow(void *arr, int n, int *cap, size_t elem)
{
    if (n < *cap)
        return arr;
    *cap = *cap ? *cap * 2 : 16;
    if (!(arr = realloc(arr, (size_t)*cap * elem)))
        perror("realloc"), exit(1);
    return arr;
}

static struct vnode *vn_add(struct vnode *dir, const char *name, int is_dir)
{
    struct vnode *v = xmalloc(sizeof *v);
    size_t len = strlen(name);
    v->name = memcpy(xmalloc(len + 1), name, len);
    v->is_dir = is_dir;
    if (dir) {
        dir->kids = grow(dir->kids, dir->nkids, &dir->cap, sizeof *dir->kids);
        dir->kids[dir->nkids++] = v;
    }
    return v;
}

static struct vnode *add_file(struct vnode *dir, const char *name, uint32_t size, rng_t *r)
{
    struct vnode *f = vn_add(dir, name, 0);
    f->size = size, f->mtime = 1000, f->seed = rng_next(r);
    return f;
}

/* ------------------------------------------------------- ignore rules */
struct rule { char pat[PAT_LEN]; uint8_t neg, dir_only, anchored; };
struct ruleset { struct rule r[MAX_RULES]; int n; };

/* The workspace's .syncignore. */
static const char kSyncIgnore[] =
    "# dependencies and build outputs\nnode_modules/\nbower_components/\nbuild/\ndist/\n"
    "/out/\ncoverage/\n.cache/\n__pycache__/\ntarget/\n# editors and operating systems\n"
    "*.swp\n*.swo\n*~\n.DS_Store\nThumbs.db\n.idea/\n.vscode/\n# generated and local files\n"
    "*.o\n*.a\n*.so\n*.pyc\n*.class\n*.min.js\n*.map\n*.log\n!release.log\n*.tmp\n"
    "*.sw[a-p]\ndocs/**/*.bak\n/tmp/\npackages/*/local.env\n";

/* One rule per line, git's syntax: '#' comments, a leading '!' re-includes,
 * a trailing '/' matches directories only, any other '/' anchors the rule
 * to the root (else it matches the last component at any depth). */
static void rules_parse(struct ruleset *rs, const char *text)
{
    for (const char *next; *text && rs->n < MAX_RULES; text = next) {
        const char *eol = strchr(text, '\n');
        size_t len = eol ? (size_t)(eol - text) : strlen(text);
        next = text + len + (eol != NULL);
        if (len && *text != '#' && len < PAT_LEN) {
            struct rule *r = &rs->r[rs->n++];   /* zeroed: the set is static */
            if (*text == '!')
                r->neg = 1, text++, len--;
            if (text[len - 1] == '/')
                r->dir_only = 1, len--;
            r->anchored = memchr(text, '/', len) != NULL;
            if (*text == '/')
                text++, len--;
            memcpy(r->pat, text, len);
        }
    }
}

/* "[...]" at P against C; *NEXT is set past the class. "[!...]" negates, a-z is a range. */
static int class_match(const char *p, char c, const char **next)
{
    int neg = p[1] == '!' || p[1] == '^', hit = 0;
    const char *q = p + 1 + neg;
    do {                        /* a ']' right after '[' is a member */
        if (q[1] == '-' && q[2] && q[2] != ']')
            hit |= c >= q[0] && c <= q[2], q += 3;
        else
            hit |= c == *q++;
    } while (*q && *q != ']');
    *next = q + (*q != 0);      /* an unterminated class matches nothing */
    return *q && hit != neg && c != '/';
}

/* Matches S..END against a shell glob: '?' and '*' never cross a '/', "**"
 * does ("**" + "/" also matches no directory at all). Iterative: '*' and "**"
 * each keep one retry point, as wildmatch-style matchers do. */
static int glob_match(const char *p, const char *s, const char *end)
{
    const char *star_p = NULL, *star_s = NULL, *gs_p = NULL, *gs_s = NULL;
    while (s < end || *p) {
        if (p[0] == '*' && p[1] == '*') {
            p += 2 + (p[2] == '/');
            gs_p = p, gs_s = s, star_p = NULL;
            continue;
        }
        if (*p == '*') {
            star_p = ++p, star_s = s;
            continue;
        }
        if (s < end && *p) {
            const char *next = p + 1;
            int ok = *p == '?' ? *s != '/' : *p == '[' ? class_match(p, *s, &next) : *p == *s;
            if (ok) {
                p = next, s++;
                continue;
            }
        }
        if (star_p && star_s < end && *star_s != '/') {     /* let the '*' eat one more */
            p = star_p, s = ++star_s;
            continue;
        }
        if (gs_p && gs_s < end) {                           /* let "**" eat one more directory */
            while (gs_s < end && *gs_s++ != '/')
                ;
            p = gs_p, s = gs_s, star_p = NULL;
            continue;
        }
        return 0;
    }
    return 1;
}

/* Whether PATH (N bytes, from the root) is excluded. As in git, nothing below
 * an excluded directory can be re-included, so each leading directory is tested
 * first: the answer stands alone (the change watcher asks about single paths
 * too). The last matching rule decides: the rules are scanned from the end. */
static int path_ignored(const struct ruleset *rs, const char *path, size_t n, int is_dir)
{
    size_t base = 0;            /* start of the component under test */
    for (;;) {
        size_t stop = base;
        while (stop < n && path[stop] != '/')
            stop++;
        int dir = stop < n || is_dir;
        for (int i = rs->n - 1; i >= 0; i--) {
            const struct rule *r = &rs->r[i];
            if (r->dir_only && !dir)
                continue;
            if (glob_match(r->pat, path + (r->anchored ? 0 : base), path + stop)) {
                if (!r->neg)
                    return 1;
                break;          /* re-included: go on with the next component */
            }
        }
        if (stop == n)
            return 0;
        base = stop + 1;
    }
}

/* ------------------------------------------------ index and digests */
/* A tracked file: its stat and digest at the last scan, the digest the remote holds. */
struct ientry { uint64_t key, digest, remote; uint32_t size, mtime; uint8_t used; };

static uint64_t path_hash(const char *path, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (uint8_t)path[i]) * FNV_PRIME;
    return h;
}

static struct ientry *index_slot(struct ientry *ix, uint64_t key)
{
    for (uint32_t i = (uint32_t)(key >> 40) % INDEX_SLOTS;; i = (i + 1) % INDEX_SLOTS)
        if (!ix[i].used || ix[i].key == key)
            return &ix[i];
}

/* Reads block NO of the file: its bytes are a function of seed and version. */
static uint32_t read_block(const struct vnode *f, uint32_t no, uint8_t *buf)
{
    uint32_t off = no * BLOCK, len = f->size - off < BLOCK ? f->size - off : BLOCK;
    rng_t r;
    rng_seed(&r, f->seed ^ (uint64_t)f->version << 32 ^ no);
    for (uint32_t i = 0; i < len; i += 8) {
        uint64_t w = rng_next(&r);
        memcpy(buf + i, &w, len - i < 8 ? len - i : 8);
    }
    return len;
}

/* The strong checksum of one block (FNV-1a over its bytes, with the
 * rsync-style weak sum folded in). */
static uint64_t block_digest(const uint8_t *buf, uint32_t len)
{
    uint64_t h = 0xcbf29ce484222325ull;
    uint32_t a = 1, b = 0;
    for (uint32_t i = 0; i < len; i++) {
        h = (h ^ buf[i]) * FNV_PRIME;
        a += buf[i], b += a;
    }
    return h ^ ((uint64_t)b << 16 | (a & 0xffff));
}

static uint64_t file_digest(const struct vnode *f)
{
    static uint8_t buf[BLOCK];
    uint64_t d = f->size;
    for (uint32_t no = 0; no * BLOCK < f->size; no++) {
        uint32_t len = read_block(f, no, buf);
        d = (d ^ block_digest(buf, len)) * FNV_PRIME;
    }
    return d;
}

/* ---------------------------------------------------------- the scan */
struct scan {
    const struct ruleset *rules;
    struct ientry *index;
    char path[PATH_LEN];
    struct ientry **queue; int nqueue, qcap;    /* the upload manifest of this scan */
    unsigned long long dirs, entries, dirs_ignored, files_ignored, hashed;
    unsigned long long manifest_files, uploads, upload_bytes, digest;
};

static size_t path_append(char *path, size_t len, const char *name)
{
    size_t n = strlen(name);
    if (len + n + 2 > PATH_LEN)
        fprintf(stderr, "path too long: %s/%s\n", path, name), exit(1);
    if (len)
        path[len++] = '/';
    memcpy(path + len, name, n + 1);
    return len + n;
}

/* A tracked file: rehash it if its stat changed, queue it if the remote's
 * copy differs, and fold it into the manifest digest. */
static void manifest_visit(struct scan *sc, const struct vnode *f, size_t n)
{
    uint64_t key = path_hash(sc->path, n);
    struct ientry *e = index_slot(sc->index, key);
    if (!e->used || e->size != f->size || e->mtime != f->mtime) {
        e->digest = file_digest(f);
        e->key = key, e->used = 1, e->size = f->size, e->mtime = f->mtime;
        sc->hashed++;
    }
    if (e->digest != e->remote) {
        sc->queue = grow(sc->queue, sc->nqueue, &sc->qcap, sizeof *sc->queue);
        sc->queue[sc->nqueue++] = e;
    }
    sc->manifest_files++;
    sc->digest = (sc->digest ^ key ^ e->digest) * FNV_PRIME;
}

/* Walks DIR, whose path is the first LEN bytes of sc->path. */
static void walk_dir(struct scan *sc, const struct vnode *dir, size_t len)
{
    sc->dirs++;
    for (int i = 0; i < dir->nkids; i++) {
        const struct vnode *e = dir->kids[i];
        size_t n = path_append(sc->path, len, e->name);
        int ignored = path_ignored(sc->rules, sc->path, n, e->is_dir);
        sc->entries++;
        if (e->is_dir) {
#ifdef VPROF_CASE_FIX
            if (ignored) {      /* nothing below an excluded directory can be re-included */
                sc->dirs_ignored++;
                continue;
            }
#else
            sc->dirs_ignored += (unsigned)ignored;  /* FIX: continue here: prune an excluded dir */
#endif
            walk_dir(sc, e, n);
        } else if (ignored)
            sc->files_ignored++;
        else
            manifest_visit(sc, e, n);
    }
}

/* Sends the manifest: the remote now holds every queued digest. */
static void upload_manifest(struct scan *sc)
{
    for (int i = 0; i < sc->nqueue; i++) {
        sc->queue[i]->remote = sc->queue[i]->digest;
        sc->upload_bytes += sc->queue[i]->size;
    }
    sc->uploads += (unsigned)sc->nqueue;
    sc->nqueue = 0;
}

/* ------------------------------------------------ workspace generator */
/* N files named FMT % i in DIR, of SIZE + [0, SPREAD) bytes; EDIT gets them if set. */
static void add_files(struct vnode *dir, const char *fmt, int n, uint32_t size, uint32_t spread,
                      rng_t *r, struct filelist *edit)
{
    char name[64];
    for (int i = 0; i < n; i++) {
        snprintf(name, sizeof name, fmt, i);
        struct vnode *f = add_file(dir, name, size + (uint32_t)rng_below(r, spread), r);
        if (edit) {
            edit->v = grow(edit->v, edit->n, &edit->cap, sizeof *edit->v);
            edit->v[edit->n++] = f;
        }
    }
}

/* A package as it is checked out, plus what a build leaves behind. */
static void gen_package(struct vnode *pkgs, int k, rng_t *r, struct filelist *edit)
{
    static const char *const kSrc[] = {"mod%02d.js", "mod%02d.ts", "mod%02d.c", "mod%02d.h"};
    char name[64];
    snprintf(name, sizeof name, "pkg-%02d", k);
    struct vnode *pkg = vn_add(pkgs, name, 1);
    add_file(pkg, "package.json", 600, r), add_file(pkg, "README.md", 5000, r);
    if (rng_below(r, 3) == 0)
        add_file(pkg, "local.env", 120, r);
    struct vnode *src = vn_add(pkg, "src", 1), *util = vn_add(src, "util", 1);
    struct vnode *test = vn_add(pkg, "test", 1), *fixtures = vn_add(test, "fixtures", 1);
    add_files(src, kSrc[k % 4], 12 + (int)rng_below(r, 8), 200, 24000, r, edit);
    add_files(util, "helper%d.js", 4 + (int)rng_below(r, 4), 200, 24000, r, edit);
    add_files(test, "t%02d.test.js", 5 + (int)rng_below(r, 5), 200, 24000, r, edit);
    add_files(fixtures, "case%d.json", 2 + (int)rng_below(r, 4), 200, 9000, r, NULL);
    add_file(src, ".mod00.js.swp", 4096, r), add_file(test, "run.log", 9000, r);
    struct vnode *build = vn_add(pkg, "build", 1);
    add_files(vn_add(build, "obj", 1), "mod%02d.o", 8, 30000, 0, r, NULL);
    add_file(build, "compile.log", 2000, r);
    struct vnode *dist = vn_add(pkg, "dist", 1);
    add_file(dist, "bundle.min.js", 200000, r), add_file(dist, "bundle.min.js.map", 300000, r);
}

/* What the package manager installs for one dependency. */
static void gen_dependency(struct vnode *nm, int k, rng_t *r)
{
    static const char *const kNames[] = {"lodash", "chalk", "debug", "semver", "yargs", "glob",
                                         "minimist", "uuid", "ws", "acorn", "rimraf", "mime"};
    char name[64];
    snprintf(name, sizeof name, "%s-%d", kNames[k % 12], k / 12);
    struct vnode *dep = vn_add(nm, name, 1);
    add_file(dep, "package.json", 900, r), add_file(dep, "index.js", 3000, r);
    add_file(dep, "README.md", 6000, r), add_file(dep, "LICENSE", 1100, r);
    struct vnode *lib = vn_add(dep, "lib", 1), *internal = vn_add(lib, "internal", 1);
    add_files(lib, "part%d.js", 5, 5000, 0, r, NULL);
    add_file(internal, "util.js", 4000, r), add_file(internal, "errors.js", 2500, r);
}

static struct vnode *gen_workspace(int packages, int deps, uint64_t seed, struct filelist *edit)
{
    rng_t r, dr;                /* dependencies draw from their own stream */
    rng_seed(&r, seed), rng_seed(&dr, seed ^ 0x5eed);
    struct vnode *root = vn_add(NULL, "", 1);
    add_file(root, ".syncignore", sizeof kSyncIgnore - 1, &r);
    add_file(root, "README.md", 8000, &r), add_file(root, "Makefile", 3000, &r);
    struct vnode *tools = vn_add(root, "tools", 1), *docs = vn_add(root, "docs", 1);
    add_file(tools, "release.sh", 2000, &r), add_file(tools, "release.log", 40000, &r);
    add_file(tools, "build.log", 70000, &r);
    struct vnode *media = vn_add(docs, "media", 1);
    add_files(media, "figure%02d.png", 24, 100000, 1400000, &r, edit);    /* the big files */
    add_files(media, "figure%02d.png.bak", 24, 50000, 0, &r, NULL);
    struct vnode *pkgs = vn_add(root, "packages", 1);
    for (int k = 0; k < packages; k++) {
        gen_package(pkgs, k, &r, edit);
        if (deps) {
            struct vnode *nm = vn_add(pkgs->kids[k], "node_modules", 1);
            for (int d = 0; d < deps; d++)
                gen_dependency(nm, d * 7 + k, &dr);   /* a distinct name each */
        }
    }
    vn_add(root, "out", 1), vn_add(root, "tmp", 1);
    return root;
}

/* A developer's edits: most add to the content, some only touch the file. */
static void apply_edits(struct filelist *edit, int edits, rng_t *r, uint32_t now)
{
    for (int i = 0; i < edits; i++) {
        struct vnode *f = edit->v[rng_below(r, (uint64_t)edit->n)];
        f->mtime = now;
        if (rng_below(r, 4) != 0)
            f->version++, f->size += (uint32_t)rng_below(r, 128);
    }
}

int main(int argc, char **argv)
{
    opt_t opts[] = {
        {"packages", "packages in the monorepo", 24, 1, 99, 0},
        {"deps", "installed dependencies per package (0: a fresh checkout)", 0, 0, 2000, 0},
        {"scans", "scans of the workspace", 10, 1, 100000, 0},
        {"edits", "files edited between two scans", 200, 0, 100000, 0},
        {"seed", "workspace seed", 2026, 0, 1000000000, 0},
    };
    opts_parse(argc, argv, opts, NOPTS(opts));
    int packages = (int)opts[0].value, deps = (int)opts[1].value, edits = (int)opts[3].value;
    long scans = opts[2].value;
    uint64_t seed = (uint64_t)opts[4].value;
    static struct ruleset rules;
    rules_parse(&rules, kSyncIgnore);
    struct filelist edit = {0};
    struct vnode *root = gen_workspace(packages, deps, seed, &edit);
    struct scan sc = {.rules = &rules, .index = xmalloc(INDEX_SLOTS * sizeof(struct ientry))};
    rng_t er;
    rng_seed(&er, seed * 31 + 7);
    for (long s = 0; s < scans; s++) {
        if (s)
            apply_edits(&edit, edits, &er, 1000 + (uint32_t)s);
        walk_dir(&sc, root, 0);
        upload_manifest(&sc);
        CASE_PROGRESS("scan");
    }
    printf("%ld scans: %llu files in the manifest, %llu uploads (%llu bytes), digest %016llx\n",
           scans, sc.manifest_files, sc.uploads, sc.upload_bytes, sc.digest);
    fprintf(stderr, "dirs_walked=%llu entries_tested=%llu dirs_ignored=%llu files_ignored=%llu "
            "files_hashed=%llu\n",
            sc.dirs, sc.entries, sc.dirs_ignored, sc.files_ignored, sc.hashed);
    return 0;                   /* the tree and the index go with the process */
}
