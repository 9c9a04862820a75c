/* Written for the vprof bug corpus by a helper that had not seen the
 * profiler (2026-11-29); not modelled on a real issue. The fix is the
 * VPROF_CASE_FIX variant; the line marked FIX is the bug.
 *
 * mkr - a small ninja-style build executor in the edit-build loop: each run
 * parses the manifest and the build log, finds the dirty outputs (an input
 * dirty or newer, the output missing, its command not the logged one: every
 * clean edge has its command expanded and hashed), runs them, saves the log.
 *
 * The bug: DependencyScan::recompute_dirty() tests an edge's mark for
 * VISIT_IN_STACK (a cycle) but not for VISIT_DONE, so a shared archive is
 * decided again, all its compile commands expanded and hashed again, for
 * every tool that links it: free while tools link no shared library
 * (normal), 16 archives rescanned per tool when they link 16 (buggy).
 */
#include "../common/corpus.h"
#include <cstdarg>

enum { VISIT_NONE, VISIT_IN_STACK, VISIT_DONE, MAX_RULES = 8 };

static void *xrealloc(void *p, size_t n)
{
    if (!(p = realloc(p, n ? n : 1)))
        perror("realloc"), exit(1);
    return p;
}

static char *xstrndup(const char *s, size_t n)
{
    char *d = strndup(s, n);
    return d ? d : (perror("strndup"), exit(1), nullptr);
}

/* Appends V to an array kept as pointer, count and capacity. */
template <typename T> static void push(T *&items, int32_t &n, int32_t &cap, T v)
{
    if (n == cap)
        items = (T *)xrealloc(items, (size_t)(cap = cap ? cap * 2 : 256) * sizeof(T));
    items[n++] = v;
}

/* A growing NUL-terminated string: the manifest, the build log, a command. */
struct TextBuf {
    char *p = nullptr;
    size_t len = 0, cap = 0;
    ~TextBuf() { free(p); }
    void append(const char *s, size_t n)
    {
        while (len + n + 1 > cap)
            p = (char *)xrealloc(p, cap = cap ? cap * 2 : 512);
        memcpy(p + len, s, n);
        p[len += n] = '\0';
    }
    void appendf(const char *fmt, ...) __attribute__((format(printf, 2, 3)))
    {
        char buf[512];
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(buf, sizeof buf, fmt, ap);  /* the generator's lines are short */
        va_end(ap);
        append(buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
    }
};

static uint32_t path_hash(const char *s, uint32_t n)
{
    uint32_t h = 2166136261u;                   /* FNV-1a */
    for (uint32_t i = 0; i < n; i++)
        h = (h ^ (uint8_t)s[i]) * 16777619u;
    return h;
}

struct PathEntry { char *key; uint32_t len, hash; int32_t next; int64_t v0; uint64_t v1; };

/* Path -> two values, entries in insertion order (node ids, log order). The
 * disk: v0 an mtime (absent: missing); the log: v0 mtime, v1 command hash. */
struct PathMap {
    PathEntry *ents = nullptr;
    int32_t count = 0, cap = 0, *buckets = nullptr;   /* cap buckets: load <= 1 */
    ~PathMap()
    {
        for (int32_t i = 0; i < count; i++)
            free(ents[i].key);
        free(ents), free(buckets);
    }
    int32_t find(const char *key, uint32_t len) const
    {
        uint32_t h = path_hash(key, len);
        for (int32_t i = cap ? buckets[h & (uint32_t)(cap - 1)] : -1; i >= 0; i = ents[i].next)
            if (ents[i].hash == h && ents[i].len == len && memcmp(ents[i].key, key, len) == 0)
                return i;
        return -1;
    }
    int32_t intern(const char *key, uint32_t len);
    void set(const char *key, uint32_t len, int64_t v0, uint64_t v1)
    {
        int32_t i = intern(key, len);
        ents[i].v0 = v0, ents[i].v1 = v1;
    }
};

/* The entry of KEY, added (values 0) when absent. */
int32_t PathMap::intern(const char *key, uint32_t len)
{
    int32_t i = find(key, len);
    if (i >= 0)
        return i;
    if (count == cap) {                         /* double, then rechain */
        ents = (PathEntry *)xrealloc(ents, (size_t)(cap = cap ? cap * 2 : 1024) * sizeof *ents);
        buckets = (int32_t *)xrealloc(buckets, (size_t)cap * sizeof *buckets);
        memset(buckets, 0xff, (size_t)cap * sizeof *buckets);
        for (int32_t j = 0; j < count; j++) {
            ents[j].next = buckets[ents[j].hash & (uint32_t)(cap - 1)];
            buckets[ents[j].hash & (uint32_t)(cap - 1)] = j;
        }
    }
    uint32_t h = path_hash(key, len);
    ents[count] = PathEntry{xstrndup(key, len), len, h, buckets[h & (uint32_t)(cap - 1)], 0, 0};
    buckets[h & (uint32_t)(cap - 1)] = count;
    return count++;
}

/* The build log text: a line "<mtime>\t<command hash>\t<path>" per output. */
static void log_load(PathMap *log, const char *p)
{
    for (char *end; p && *p; p = strchr(p, '\n') + 1) {
        int64_t mtime = strtoll(p, &end, 10);
        uint64_t hash = strtoull(end + 1, &end, 16);
        log->set(end + 1, (uint32_t)(strchr(end + 1, '\n') - end - 1), mtime, hash);
    }
}

struct Stats { uint64_t visits, evaluations, stats, ran, digest; int64_t clock; };   /* of all builds */

struct Node { const char *path; uint32_t len; int32_t in_edge; int64_t mtime; bool status_known, dirty, is_input; };
struct Edge { int32_t rule, out, in_off, n_explicit, n_implicit; uint8_t mark; bool ran; };

struct Graph {
    PathMap paths;                              /* node i is paths.ents[i] */
    Node *nodes = nullptr;
    Edge *edges = nullptr;
    int32_t *inputs = nullptr;
    int32_t n_nodes = 0, cap_nodes = 0, n_edges = 0, cap_edges = 0;
    int32_t n_inputs = 0, cap_inputs = 0;
    char *rule_name[MAX_RULES] = {}, *rule_command[MAX_RULES] = {};
    int32_t n_rules = 0;
    ~Graph()
    {
        for (int32_t r = 0; r < n_rules; r++)
            free(rule_name[r]), free(rule_command[r]);
        free(nodes), free(edges), free(inputs);
    }
    int32_t node_for(const char *path, uint32_t len)
    {
        int32_t id = paths.intern(path, len);
        if (id == n_nodes)                      /* a path not seen before */
            push(nodes, n_nodes, cap_nodes, Node{paths.ents[id].key, len, -1, 0, false, false, false});
        return id;
    }
};

/* The next space-separated token of [*p, eol); length 0 at the end. */
static uint32_t next_token(const char **p, const char *eol, const char **tok)
{
    while (*p < eol && **p == ' ')
        (*p)++;
    for (*tok = *p; *p < eol && **p != ' '; (*p)++)
        ;
    return (uint32_t)(*p - *tok);
}

/* "build OUT: RULE IN... | IMPLICIT..." */
static void parse_build(Graph *g, const char *p, const char *eol)
{
    const char *tok;
    uint32_t n = next_token(&p, eol, &tok);
    int32_t out = g->node_for(tok, n - 1), rule = 0;     /* without the ':' */
    n = next_token(&p, eol, &tok);
    while (rule < g->n_rules - 1 && !(strlen(g->rule_name[rule]) == n && !memcmp(g->rule_name[rule], tok, n)))
        rule++;
    Edge e = {rule, out, g->n_inputs, 0, 0, VISIT_NONE, false};
    for (bool implicit = false; (n = next_token(&p, eol, &tok)) != 0;) {
        if (n == 1 && *tok == '|') {
            implicit = true;
            continue;
        }
        int32_t in = g->node_for(tok, n);
        g->nodes[in].is_input = true;
        push(g->inputs, g->n_inputs, g->cap_inputs, in);
        (implicit ? e.n_implicit : e.n_explicit)++;
    }
    g->nodes[out].in_edge = g->n_edges;
    push(g->edges, g->n_edges, g->cap_edges, e);
}

/* Lines of the manifest: "rule NAME", its "  command = ...", "build ...". */
static void parse_manifest(Graph *g, const char *text)
{
    for (const char *p = text, *eol, *name; *p; p = eol + 1) {
        eol = strchr(p, '\n');
        if (!strncmp(p, "build ", 6)) {
            parse_build(g, p + 6, eol);
        } else if (!strncmp(p, "rule ", 5) && g->n_rules < MAX_RULES) {
            p += 5;
            uint32_t n = next_token(&p, eol, &name);
            g->rule_name[g->n_rules++] = xstrndup(name, n);
        } else if (!strncmp(p, "  command = ", 12) && g->n_rules > 0) {
            g->rule_command[g->n_rules - 1] = xstrndup(p + 12, (size_t)(eol - p - 12));
        }
    }
}

/* A path goes to the shell as it is when every byte is safe, else in '...'. */
static void append_shell_escaped(TextBuf *out, const char *s, uint32_t n)
{
    uint32_t i = 0;
    for (char c; i < n && (((c = s[i]) >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || strchr("/._-+=", c)); i++)
        ;
    if (i < n)                                  /* a byte the shell would interpret */
        out->append("'", 1);
    out->append(s, n);
    if (i < n)
        out->append("'", 1);
}

/* The rule's command with $in (the explicit inputs) and $out expanded. */
static void evaluate_command(const Graph *g, const Edge *e, TextBuf *out)
{
    out->len = 0;
    for (const char *p = g->rule_command[e->rule], *lit, *name; *p;) {
        for (lit = p; *p && *p != '$'; p++)
            ;
        out->append(lit, (size_t)(p - lit));
        if (!*p)
            break;
        for (name = ++p; (*p >= 'a' && *p <= 'z') || *p == '_'; p++)
            ;
        size_t n = (size_t)(p - name);
        if (n == 2 && !memcmp(name, "in", 2)) {
            for (int32_t k = 0; k < e->n_explicit; k++) {
                const Node *in = &g->nodes[g->inputs[e->in_off + k]];
                if (k)
                    out->append(" ", 1);
                append_shell_escaped(out, in->path, in->len);
            }
        } else if (n == 3 && !memcmp(name, "out", 3)) {
            append_shell_escaped(out, g->nodes[e->out].path, g->nodes[e->out].len);
        }
    }
}

/* The command hash the build log keeps: multiply-xorshift, a word at a time. */
static uint64_t hash_command(const char *s, size_t n)
{
    const uint64_t m = 0xc6a4a7935bd1e995ULL;
    uint64_t h = 0xdecafbaddecafbadULL ^ (n * m), k;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        memcpy(&k, s + i, 8);
        k *= m, k ^= k >> 47, k *= m;
        h = (h ^ k) * m;
    }
    for (; i < n; i++)
        h = (h ^ (uint8_t)s[i]) * m;
    return h ^ (h >> 47);
}

/* The dirty scan over one build's graph, disk and log. */
struct DependencyScan {
    Graph *g;
    const PathMap *disk, *log;
    Stats *st;
    TextBuf cmd;
    bool recompute_dirty(int32_t id);
    bool outputs_dirty(const Edge *e, int64_t newest_input);
};

/* Missing, older than an input, never logged or made by another command. */
bool DependencyScan::outputs_dirty(const Edge *e, int64_t newest_input)
{
    const Node *out = &g->nodes[e->out];
    if (out->mtime == 0 || out->mtime < newest_input)
        return true;
    int32_t logged = log->find(out->path, out->len);
    if (logged < 0)
        return true;
    evaluate_command(g, e, &cmd);
    st->evaluations++;
    return hash_command(cmd.p, cmd.len) != log->ents[logged].v1;
}

/* Decides whether node ID is dirty, its inputs first; false on a cycle. */
bool DependencyScan::recompute_dirty(int32_t id)
{
    Node *n = &g->nodes[id];
    if (!n->status_known) {                     /* stat each file once per build */
        int32_t f = disk->find(n->path, n->len);
        n->mtime = f < 0 ? 0 : disk->ents[f].v0;
        n->status_known = true;
        st->stats++;
    }
    if (n->in_edge < 0) {                       /* a source: dirty when missing */
        n->dirty = n->mtime == 0;
        return true;
    }
    Edge *e = &g->edges[n->in_edge];
#ifdef VPROF_CASE_FIX
    if (e->mark == VISIT_DONE)                  /* decided for an earlier target */
        return true;
    if (e->mark == VISIT_IN_STACK)
        return fprintf(stderr, "mkr: dependency cycle at %s\n", n->path), false;
#else
    if (e->mark == VISIT_IN_STACK)              /* FIX: return true first when e->mark == VISIT_DONE */
        return fprintf(stderr, "mkr: dependency cycle at %s\n", n->path), false;
#endif
    e->mark = VISIT_IN_STACK;
    st->visits++;
    bool dirty = false;
    int64_t newest = 0;
    for (int32_t k = 0; k < e->n_explicit + e->n_implicit; k++) {
        int32_t in = g->inputs[e->in_off + k];
        if (!recompute_dirty(in))
            return false;
        if (g->nodes[in].dirty)
            dirty = true;
        else if (g->nodes[in].mtime > newest)
            newest = g->nodes[in].mtime;
    }
    if (!dirty)
        dirty = outputs_dirty(e, newest);
    n->dirty = dirty;
    e->mark = VISIT_DONE;
    return true;
}

/* Runs the dirty edges under NODE, inputs first, each once: its output gets
 * the next mtime, the log its command's hash, the digest both. */
static void run_dirty(Graph *g, int32_t node, PathMap *disk, PathMap *log, TextBuf *cmd, Stats *st)
{
    const Node *n = &g->nodes[node];
    if (n->in_edge < 0 || !n->dirty || g->edges[n->in_edge].ran)
        return;
    Edge *e = &g->edges[n->in_edge];
    e->ran = true;
    for (int32_t k = 0; k < e->n_explicit + e->n_implicit; k++)
        run_dirty(g, g->inputs[e->in_off + k], disk, log, cmd, st);
    evaluate_command(g, e, cmd);
    uint64_t h = hash_command(cmd->p, cmd->len);
    disk->set(n->path, n->len, ++st->clock, 0);
    log->set(n->path, n->len, st->clock, h);
    st->digest = (st->digest ^ h ^ path_hash(n->path, n->len)) * 0x100000001b3ULL;
    st->ran++;
}

/* One invocation of mkr: parse, scan every target, run what is dirty, save the log. */
static void run_one_build(const TextBuf *manifest, PathMap *disk, TextBuf *log_text, Stats *st)
{
    Graph g;
    PathMap log;
    TextBuf cmd;
    parse_manifest(&g, manifest->p);
    log_load(&log, log_text->p);
    DependencyScan scan = {&g, disk, &log, st, {}};
    for (int32_t i = 0; i < g.n_nodes; i++) {  /* no defaults: every output nothing uses */
        if (g.nodes[i].in_edge < 0 || g.nodes[i].is_input)
            continue;
        if (!scan.recompute_dirty(i))
            exit(1);
        run_dirty(&g, i, disk, &log, &cmd, st);
    }
    log_text->len = 0;
    for (int32_t i = 0; i < log.count; i++)
        log_text->appendf("%lld\t%016llx\t%s\n", (long long)log.ents[i].v0,
                          (unsigned long long)log.ents[i].v1, log.ents[i].key);
}

/* What the meta-build generator writes: a compile edge per source (implicit
 * deps: its library's headers and the base library's), an archive per library
 * (shared ones first), per tool a link of its library (main is s0) and the
 * shared archives it uses. It checks the sources out at time 1, lists the .cc. */
static void generate_project(const opt_t *o, TextBuf *out, PathMap *disk, int32_t **cc, int32_t *n_cc)
{
    const long tools = o[0].value, common = o[1].value, sources = o[2].value, headers = o[3].value;
    char dir[64], path[256];
    int32_t cap_cc = 0;
    out->appendf("rule cxx\n  command = c++ -O2 -g -fPIC -DNDEBUG -D_FILE_OFFSET_BITS=64 -DMKR_WITH_SSL=1 -Wall"
                 " -Wextra -Wshadow -std=c++17 -fvisibility=hidden -fno-exceptions -Iinclude -Iout/gen");
    for (long c = 0; c < 16; c++)               /* the base libraries' include dirs */
        out->appendf(" -Isrc/common/c%ld/include", c);
    out->appendf(" -MMD -MF $out.d -c $in -o $out\nrule ar\n  command = rm -f $out && ar crsD $out $in\n"
                 "rule link\n  command = c++ -o $out $in -Wl,--gc-sections -pthread -lz\n");
    for (long lib = 0; lib < common + tools; lib++) {
        snprintf(dir, sizeof dir, lib < common ? "common/c%ld" : "tools/t%ld/lib", lib < common ? lib : lib - common);
        for (long s = 0; s < sources; s++) {
            out->appendf("build out/obj/%s/s%ld.o: cxx src/%s/s%ld.cc |", dir, s, dir, s);
            for (long h = 0; h < headers; h++)
                out->appendf(" src/%s/include/h%ld.h src/common/c0/include/h%ld.h", dir, h, h);
            out->appendf("\n");
            disk->set(path, (uint32_t)snprintf(path, sizeof path, "src/%s/s%ld.cc", dir, s), 1, 0);
            push(*cc, *n_cc, cap_cc, disk->count - 1);
        }
        for (long h = 0; h < headers; h++)
            disk->set(path, (uint32_t)snprintf(path, sizeof path, "src/%s/include/h%ld.h", dir, h), 1, 0);
        out->appendf("build out/lib/l%ld.a: ar", lib);
        for (long s = 0; s < sources; s++)
            out->appendf(" out/obj/%s/s%ld.o", dir, s);
        out->appendf("\n");
    }
    for (long t = 0; t < tools; t++) {
        out->appendf("build out/bin/t%ld: link out/lib/l%ld.a", t, common + t);
        for (long c = 0; c < o[4].value && c < common; c++)   /* --link-common */
            out->appendf(" out/lib/l%ld.a", c);
        out->appendf("\n");
    }
}

int main(int argc, char **argv)
{
    opt_t o[] = {   /* the first five are the project's shape, in generate_project's order */
        {"tools", "tools, each with a library of its own", 64, 1, 4096, 0},
        {"common", "shared libraries", 32, 1, 4096, 0},
        {"sources", "source files per library", 12, 1, 1000, 0},
        {"headers", "public headers per library", 8, 0, 40, 0},
        {"link-common", "shared archives each tool links", 0, 0, 4096, 0},
        {"builds", "edit-build cycles", 60, 1, 100000, 0},
        {"edits", "source files saved between builds", 3, 0, 1000, 0},
        {"seed", "PRNG seed", 9, 0, 1L << 30, 0},
    };
    opts_parse(argc, argv, o, NOPTS(o));
    TextBuf manifest, log_text;
    PathMap disk;
    int32_t *cc = nullptr, n_cc = 0;
    generate_project(o, &manifest, &disk, &cc, &n_cc);
    rng_t rng;
    rng_seed(&rng, (uint64_t)o[7].value);
    Stats st = {0, 0, 0, 0, 0, 1};
    for (long r = 0; r < o[5].value; r++) {
        for (long i = 0; r && i < o[6].value; i++)     /* the developer saves a few files */
            disk.ents[cc[rng_below(&rng, (uint64_t)n_cc)]].v0 = ++st.clock;
        run_one_build(&manifest, &disk, &log_text, &st);
    }
    printf("builds=%ld edges_run=%llu log_bytes=%zu digest=%016llx\n", o[5].value,
           (unsigned long long)st.ran, log_text.len, (unsigned long long)st.digest);
    fprintf(stderr, "manifest_bytes=%zu edges_scanned=%llu commands_hashed=%llu stats=%llu\n", manifest.len,
            (unsigned long long)st.visits, (unsigned long long)st.evaluations, (unsigned long long)st.stats);
    free(cc);
    return 0;
}
