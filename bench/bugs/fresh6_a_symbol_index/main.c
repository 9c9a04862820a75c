/* Written for the vprof bug corpus by a helper that had not seen the
 * profiler (2026-11-29); not modelled on a real issue. The fix is the
 * VPROF_CASE_FIX variant; the line marked FIX is the bug.
 *
 * xrefidx - the indexer of a cscope-like code search service. Per repository
 * (generated C, in memory) it tokenizes every file, finds definitions as ctags
 * does (macros, structs, globals, functions), records every other identifier
 * as a reference (file, line, enclosing function) in a symbol table of hash
 * chains plus a first-appearance list of all symbols, and answers the
 * cross-reference queries: callers of every function, definitions looked up.
 *
 * The bug: symtab_find() starts at the right bucket but follows the
 * first-appearance link instead of the chain link: the same answers, but a
 * lookup compares the name with every symbol since the bucket's oldest one.
 * Small repositories (normal: --repos 30 --files 5) keep that short; one of
 * the same 150 files (buggy: --repos 1 --files 150) makes indexing quadratic.
 */
#include "../common/corpus.h"
#include <ctype.h>

enum sym_kind { SK_NONE, SK_KEYWORD, SK_MACRO, SK_STRUCT, SK_VAR, SK_FUNC };
enum ref_kind { RK_DEF, RK_DECL, RK_CALL, RK_USE, RK_TYPE };
struct ref { uint32_t file, line; uint8_t kind; struct symbol *scope; };

struct symbol {
    struct symbol *next_in_bucket, *next_in_order;
    char *name;                     /* NUL-terminated copy of the identifier */
    uint32_t len, hash, def_file, def_line, ndefs;
    uint8_t kind;                   /* enum sym_kind: a keyword, or its first definition */
    struct ref *refs;
    uint32_t nrefs, cap, mark;      /* mark: query epoch, to count distinct callers */
};

struct symtab {
    struct symbol **bucket;
    uint32_t mask, count;
    struct symbol *first, *last;    /* every symbol, in order of first appearance */
};

static struct { unsigned long long files, bytes, tokens, idents, lookups, compares, refs, symbols; } g_stats;

static void *xmalloc(size_t n)
{
    void *p = calloc(1, n);
    if (!p)
        perror("calloc"), exit(1);
    return p;
}

/* ------------------------------------------------------- symbol table */
static uint32_t hash_name(const char *p, uint32_t len)
{
    uint32_t h = 2166136261u;       /* FNV-1a */
    for (uint32_t i = 0; i < len; i++)
        h = (h ^ (uint8_t)p[i]) * 16777619u;
    return h;
}

/* The token is not NUL-terminated; the stored name is. */
static int name_matches(const struct symbol *s, const char *name, uint32_t len)
{
    g_stats.compares++;
    for (uint32_t i = 0; i < len; i++)
        if (s->name[i] != name[i])
            return 0;
    return s->name[len] == '\0';
}

/* Appends S to the chain at HEAD, so chains keep first-appearance order. */
static void chain_append(struct symbol **head, struct symbol *s)
{
    while (*head)
        head = &(*head)->next_in_bucket;
    *head = s, s->next_in_bucket = NULL;
}

/* Doubles the buckets once there is a symbol per bucket, so chains stay short. */
static void symtab_grow(struct symtab *st)
{
    uint32_t mask = st->mask * 2 + 1;
    struct symbol **bucket = xmalloc((mask + 1) * sizeof *bucket);
    for (struct symbol *s = st->first; s; s = s->next_in_order)
        chain_append(&bucket[s->hash & mask], s);
    free(st->bucket);
    st->bucket = bucket, st->mask = mask;
}

/* The symbol called NAME, or NULL: only its hash's bucket can hold it. */
static struct symbol *symtab_find(const struct symtab *st, const char *name, uint32_t len, uint32_t hash)
{
    g_stats.lookups++;
#ifdef VPROF_CASE_FIX
    for (struct symbol *s = st->bucket[hash & st->mask]; s; s = s->next_in_bucket)
#else
    for (struct symbol *s = st->bucket[hash & st->mask]; s; s = s->next_in_order) /* FIX: follow next_in_bucket, not next_in_order */
#endif
        if (name_matches(s, name, len))
            return s;
    return NULL;
}

static struct symbol *symtab_intern(struct symtab *st, const char *name, uint32_t len)
{
    uint32_t hash = hash_name(name, len);
    struct symbol *s = symtab_find(st, name, len, hash);
    if (s)
        return s;
    s = xmalloc(sizeof *s);
    s->name = xmalloc(len + 1);
    memcpy(s->name, name, len);
    s->len = len, s->hash = hash;
    chain_append(&st->bucket[hash & st->mask], s);
    *(st->last ? &st->last->next_in_order : &st->first) = s;
    st->last = s;
    g_stats.symbols++;
    if (++st->count > st->mask + 1)
        symtab_grow(st);
    return s;
}

static void symbol_add_ref(struct symbol *s, uint32_t file, uint32_t line, int kind, struct symbol *scope)
{
    if (s->nrefs == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 4;
        if (!(s->refs = realloc(s->refs, s->cap * sizeof *s->refs)))
            perror("realloc"), exit(1);
    }
    s->refs[s->nrefs++] = (struct ref){file, line, (uint8_t)kind, scope};
    g_stats.refs++;
}

static void symbol_define(struct symbol *s, int kind, uint32_t file, uint32_t line)
{
    if (!s->ndefs++)                /* the first definition is the one listed */
        s->kind = (uint8_t)kind, s->def_file = file, s->def_line = line;
    symbol_add_ref(s, file, line, RK_DEF, NULL);
}

/* ------------------------------------------------------------ tokenizer */
enum tok_kind { T_EOF, T_IDENT, T_NUMBER, T_STRING, T_PUNCT, T_DEFINE };
struct token { int kind; const char *p; uint32_t len, line; };
struct lexer { const char *p; uint32_t line; int line_start; };

/* Skips blanks, comments, and preprocessor lines other than #define. */
static void lex_skip(struct lexer *lx)
{
    for (;;) {
        char c = *lx->p;
        if (c == '\n')
            lx->line++, lx->line_start = 1, lx->p++;
        else if (isspace((unsigned char)c))
            lx->p++;
        else if (c == '/' && lx->p[1] == '*') {
            for (lx->p += 2; *lx->p && !(lx->p[0] == '*' && lx->p[1] == '/'); lx->p++)
                lx->line += *lx->p == '\n';
            lx->p += *lx->p ? 2 : 0;
        } else if ((c == '/' && lx->p[1] == '/')
                   || (c == '#' && lx->line_start && strncmp(lx->p, "#define", 7) != 0)) {
            while (*lx->p && *lx->p != '\n')
                lx->p++;
        } else
            return;
    }
}

static void lex_next(struct lexer *lx, struct token *t)
{
    lex_skip(lx);
    const char *s = lx->p;
    t->p = s, t->line = lx->line;
    lx->line_start = 0;
    if (!*s) {
        t->kind = T_EOF;
    } else if (isalnum((unsigned char)*s) || *s == '_') {
        while (isalnum((unsigned char)*lx->p) || *lx->p == '_')
            lx->p++;
        t->kind = isdigit((unsigned char)*s) ? T_NUMBER : T_IDENT;
    } else if (*s == '"' || *s == '\'') {
        for (lx->p++; *lx->p && *lx->p != *s; lx->p++)
            lx->p += lx->p[0] == '\\' && lx->p[1];
        lx->p += *lx->p != 0;
        t->kind = T_STRING;
    } else if (*s == '#') {         /* only #define gets here */
        lx->p += 7, t->kind = T_DEFINE;
    } else {
        lx->p += (s[0] == '-' && s[1] == '>') ? 2 : 1;
        t->kind = T_PUNCT;
    }
    t->len = (uint32_t)(lx->p - s);
    g_stats.tokens++;
}

/* --------------------------------------------------------------- parser */
struct parser {
    struct symtab *st;
    struct lexer lx;
    struct token cur, next;         /* one token of lookahead */
    uint32_t file, pending_line;
    int depth, parens, after_struct;
    struct symbol *func, *pending;  /* the body we are in; a file-scope name before '(' */
};

static int is_punct(const struct token *t, char c)
{
    return t->kind == T_PUNCT && t->p[0] == c;
}

/* A file-scope identifier: a definition, or a use in a declaration. */
static void on_file_scope_ident(struct parser *ps, struct symbol *s)
{
    const struct token *n = &ps->next;
    if (ps->after_struct)
        is_punct(n, '{') ? symbol_define(s, SK_STRUCT, ps->file, ps->cur.line)
                         : symbol_add_ref(s, ps->file, ps->cur.line, RK_TYPE, NULL);
    else if (ps->parens == 0 && is_punct(n, '('))
        ps->pending = s, ps->pending_line = ps->cur.line;
    else if (ps->parens == 0 && (is_punct(n, '=') || is_punct(n, ';') || is_punct(n, '[')))
        symbol_define(s, SK_VAR, ps->file, ps->cur.line);
    else
        symbol_add_ref(s, ps->file, ps->cur.line, RK_USE, NULL);
}

static void on_ident(struct parser *ps)
{
    const struct token *t = &ps->cur;
    struct symbol *s = symtab_intern(ps->st, t->p, t->len);
    if (s->kind == SK_KEYWORD) {
        ps->after_struct = s->len == 6 && memcmp(s->name, "struct", 6) == 0;
        return;
    }
    g_stats.idents++;
    if (ps->depth == 0)
        on_file_scope_ident(ps, s);
    else if (ps->after_struct)
        symbol_add_ref(s, ps->file, t->line, RK_TYPE, ps->func);
    else
        symbol_add_ref(s, ps->file, t->line, is_punct(&ps->next, '(') ? RK_CALL : RK_USE, ps->func);
    ps->after_struct = 0;
}

static void on_punct(struct parser *ps)
{
    char c = ps->cur.p[0];
    ps->after_struct = 0;
    if (c == '(')
        ps->parens++;
    else if (c == ')' && --ps->parens == 0 && ps->depth == 0 && ps->pending) {
        /* the end of a file-scope parameter list: a body follows, or it was a prototype */
        if (is_punct(&ps->next, '{')) {
            symbol_define(ps->pending, SK_FUNC, ps->file, ps->pending_line);
            ps->func = ps->pending;
        } else
            symbol_add_ref(ps->pending, ps->file, ps->pending_line, RK_DECL, NULL);
        ps->pending = NULL;
    } else if (c == '{')
        ps->depth++;
    else if (c == '}' && ps->depth > 0 && --ps->depth == 0)
        ps->func = NULL;
}

static void advance(struct parser *ps)
{
    ps->cur = ps->next;
    lex_next(&ps->lx, &ps->next);
}

static void index_file(struct symtab *st, uint32_t file, const char *text)
{
    struct parser ps = {.st = st, .file = file, .lx = {text, 1, 1}};
    lex_next(&ps.lx, &ps.next);
    for (advance(&ps); ps.cur.kind != T_EOF; advance(&ps)) {
        if (ps.cur.kind == T_IDENT)
            on_ident(&ps);
        else if (ps.cur.kind == T_PUNCT)
            on_punct(&ps);
        else if (ps.cur.kind == T_DEFINE && ps.next.kind == T_IDENT) {
            advance(&ps);
            symbol_define(symtab_intern(st, ps.cur.p, ps.cur.len), SK_MACRO, file, ps.cur.line);
        }
    }
    g_stats.files++, g_stats.bytes += (uint64_t)(ps.lx.p - text);
}

/* ------------------------------------------------- cross-reference queries */
static uint64_t mix(uint64_t d, uint64_t v)
{
    return (d ^ v) * 0x100000001b3ull;
}

/* cscope's "functions calling this function", for every function. */
static uint64_t query_callers(struct symtab *st, uint64_t d)
{
    uint32_t epoch = 0;
    for (struct symbol *f = st->first; f; f = f->next_in_order) {
        if (f->kind != SK_FUNC)
            continue;
        uint32_t ncallers = 0, ncalls = 0, this_query = ++epoch;
        for (uint32_t i = 0; i < f->nrefs; i++) {
            struct symbol *caller = f->refs[i].scope;
            if (f->refs[i].kind != RK_CALL || !caller)
                continue;
            ncalls++;
            if (caller->mark != this_query)
                caller->mark = this_query, ncallers++, d = mix(d, caller->hash);
        }
        d = mix(d, (uint64_t)ncalls << 32 | ncallers);
    }
    return d;                       /* the marks die with the table */
}

/* --------------------------------------------- the generated repositories */
static const char *const kPrefixes[] = {"apx_core_runtime", "ngq_http_upstream", "uvk_loop_watch",
                                        "pgs_exec_planner", "lzt_wire_codec", "sqr_btree_cursor",
                                        "rdx_cluster_gossip", "mcd_slab_rebalance"};   /* project_subsystem */
static const char *const kModules[] = {"net", "buf", "vfs", "sched", "mem", "irq", "tty", "blk",
                                       "crypto", "usb", "log", "conf", "cache", "proto", "timer", "pool"};
static const char *const kVerbs[] = {"alloc", "free", "init", "reset", "lookup", "insert", "remove",
                                     "flush", "open", "close", "read", "write", "attach", "detach"};
static const char *const kNouns[] = {"entry", "slot", "page", "node", "queue", "state", "handle",
                                     "range", "block", "frame", "table", "chain", "event"};
#define N_VERBS NOPTS(kVerbs)

/* "<prefix>_<module><generation>", e.g. uvk_loop_watch_sched2: one per file. */
static void module_name(char *out, int repo, int file)
{
    int nmod = NOPTS(kModules);
    sprintf(out, "%s_%s%.0d", kPrefixes[repo % NOPTS(kPrefixes)], kModules[file % nmod], file / nmod);
}

/* The J-th function of FILE; distinct for J below N_VERBS. */
static void func_name(char *out, int repo, int file, int j)
{
    char mod[32];
    module_name(mod, repo, file);
    sprintf(out, "%s_%s_%s", mod, kVerbs[j % N_VERBS], kNouns[(j * 5 + file) % NOPTS(kNouns)]);
}

/* A callee's file: half from anywhere in the repository, half from its core. */
static int pick_file(rng_t *r, int nfiles)
{
    return (int)rng_below(r, rng_below(r, 2) ? (uint64_t)nfiles : 1 + (uint64_t)nfiles / 8);
}

/* Appends a random statement at O, returns its end. */
static char *emit_statement(char *o, rng_t *r, int repo, int nfiles, const char *mod)
{
    char callee[64], other[32];
    func_name(callee, repo, pick_file(r, nfiles), (int)rng_below(r, N_VERBS));
    module_name(other, repo, pick_file(r, nfiles));
    switch (rng_below(r, 6)) {
    case 0: o += sprintf(o, "    i = %s(ctx, i + %d);\n", callee, (int)rng_below(r, 100)); break;
    case 1: o += sprintf(o, "    if (ctx->count > %s_max)\n        %s_total += %s(ctx->peer, n);\n",
                 other, mod, callee); break;
    case 2: o += sprintf(o, "    n += %s_total - %s_count;\n", other, mod); break;
    case 3: o += sprintf(o, "    /* %s: keep in sync with %s_total */\n    ctx->flags |= %s_max;\n",
                 callee, other, mod); break;
    case 4: o += sprintf(o, "    if (%s(ctx, n) < 0)\n        log_msg(\"%s failed\", i);\n", callee, callee); break;
    default: o += sprintf(o, "    for (i = 0; i < n; i++)\n        ctx->state[i] = %s(ctx, i);\n", callee); break;
    }
    return o;
}

static char *render_file(int repo, int file, int nfiles, int nfuncs, int nstmts, uint64_t seed)
{
    /* sized for the longest statements: names are below 64 bytes */
    char *text = xmalloc(1024 + (size_t)nfuncs * (size_t)(nstmts + 2) * 256), *o = text;
    char mod[32], fn[64];
    rng_t r;
    rng_seed(&r, seed ^ ((uint64_t)repo << 32 | (uint64_t)file) * 0x9e3779b97f4a7c15ull);
    module_name(mod, repo, file);
    o += sprintf(o, "/* %s.c - generated */\n#include \"%s.h\"\n#include <stdio.h>\n\n", mod, mod);
    o += sprintf(o, "#define %s_max %d\n\nstruct %s_ctx {\n    int count;\n    long flags;\n"
             "    int state[%s_max];\n    struct %s_ctx *peer;\n};\n\n",
         mod, 16 + (int)rng_below(&r, 240), mod, mod, mod);
    o += sprintf(o, "static int %s_count;\nlong %s_total = 0;\n\n", mod, mod);
    func_name(fn, repo, pick_file(&r, nfiles), 0);
    o += sprintf(o, "int %s(struct %s_ctx *ctx, int n);\n\n", fn, mod);
    for (int j = 0; j < nfuncs; j++) {
        func_name(fn, repo, file, j);
        o += sprintf(o, "int %s(struct %s_ctx *ctx, int n)\n{\n    int i = n + %s_count;\n", fn, mod, mod);
        for (int k = 0; k < nstmts; k++)
            o = emit_statement(o, &r, repo, nfiles, mod);
        o += sprintf(o, "    return i;\n}\n\n");
    }
    return text;
}

/* Indexes one repository and answers its queries; returns their digest. */
static uint64_t serve_repo(int repo, int nfiles, int nfuncs, int nstmts, int queries, uint64_t seed,
                           unsigned long long *found, unsigned long long *undefined)
{
    static const char *const keywords[] = {
        "break", "case", "char", "const", "continue", "default", "do", "else", "enum", "extern", "for",
        "if", "int", "long", "return", "short", "sizeof", "static", "struct", "switch", "typedef",
        "union", "unsigned", "void", "while"};
    struct symtab st = {.mask = 255};
    st.bucket = xmalloc((st.mask + 1) * sizeof *st.bucket);
    for (int k = 0; k < NOPTS(keywords); k++)    /* one lookup tells keywords from names */
        symtab_intern(&st, keywords[k], (uint32_t)strlen(keywords[k]))->kind = SK_KEYWORD;
    for (int f = 0; f < nfiles; f++) {
        char *text = render_file(repo, f, nfiles, nfuncs, nstmts, seed);
        index_file(&st, (uint32_t)f, text);
        free(text);
    }
    uint64_t d = query_callers(&st, 14695981039346656037ull);
    rng_t r;
    rng_seed(&r, seed + (uint64_t)repo);
    for (int q = 0; q < queries; q++) {   /* cscope's "find this global definition" */
        char name[64];              /* a function name a user typed; it may not exist */
        func_name(name, repo, (int)rng_below(&r, (uint64_t)nfiles + 2), (int)rng_below(&r, N_VERBS));
        uint32_t len = (uint32_t)strlen(name);
        const struct symbol *s = symtab_find(&st, name, len, hash_name(name, len));
        *found += s && s->ndefs;
        d = s && s->ndefs ? mix(mix(d, s->def_file), (uint64_t)s->def_line << 8 | s->kind) : mix(d, 0);
    }
    for (const struct symbol *s = st.first; s; s = s->next_in_order) {
        *undefined += !s->ndefs && s->kind != SK_KEYWORD;   /* parameters, members, libc */
        d = mix(mix(d, s->hash), (uint64_t)s->nrefs << 32 | (uint64_t)s->def_file << 8 | s->kind);
    }
    for (struct symbol *s = st.first, *n; s; s = n)
        n = s->next_in_order, free(s->refs), free(s->name), free(s);
    free(st.bucket);
    return d;
}

int main(int argc, char **argv)
{
    opt_t opts[] = {
        {"repos", "repositories to index", 30, 1, 100000, 0},
        {"files", "source files per repository", 5, 1, 100000, 0},
        {"funcs", "functions per file", 12, 1, (long)N_VERBS, 0},
        {"stmts", "statements per function", 80, 1, 1000, 0},
        {"queries", "definition look-ups per file", 8, 0, 100000, 0},
        {"seed", "workload seed", 4242, 0, 1000000000, 0},
    };
    opts_parse(argc, argv, opts, NOPTS(opts));
    int repos = (int)opts[0].value, files = (int)opts[1].value, funcs = (int)opts[2].value;
    int stmts = (int)opts[3].value, queries = (int)opts[4].value * files;
    unsigned long long seed = (unsigned long long)opts[5].value, digest = 0, found = 0, undefined = 0;
    for (int r = 0; r < repos; r++) {
        digest = mix(digest, serve_repo(r, files, funcs, stmts, queries, seed, &found, &undefined));
        CASE_PROGRESS("repo");
    }
    printf("%d repos, %llu files: %llu symbols (%llu never defined), %llu refs, %llu of %lld "
           "looked-up definitions found, digest %016llx\n", repos, g_stats.files, g_stats.symbols,
           undefined, g_stats.refs, found, (long long)queries * repos, digest);
    fprintf(stderr, "bytes=%llu tokens=%llu idents=%llu lookups=%llu name_compares=%llu\n",
            g_stats.bytes, g_stats.tokens, g_stats.idents, g_stats.lookups, g_stats.compares);
    return 0;
}
