/* A web server that reads a configuration with many name-based virtual
 * hosts, reloads it a few times and serves requests, modelled on Apache
 * httpd bug 64066 ("slow startup/reload when many vhosts are configured").
 *
 * Startup parses the configuration text (lines, words, directives), builds
 * one server_rec per <VirtualHost>, and then registers every ServerName
 * and ServerAlias for name-based lookup, warning about duplicates. Requests
 * are routed by their Host header through a hash of the registered names.
 *
 * The bug: the duplicate check, vhost_name_registered(), compares the new
 * name against every name registered so far, so registering N vhosts costs
 * O(N^2) case-insensitive comparisons, on every startup and every reload.
 * With 200 vhosts (normal) that is noise; with 2,000 (buggy) it dominates.
 * gprof blames the string comparison; the linear registry walk is the root
 * cause (the fix looks the name up in the hash the request path already
 * uses). */
#include "../common/corpus.h"
#include <ctype.h>

#define MAX_NAMES_PER_VHOST 4
#define NAME_HASH_SIZE      (1 << 14)

typedef struct server_rec {
    char  names[MAX_NAMES_PER_VHOST][64];
    int   n_names;
    char  document_root[96];
    int   port, keepalive, timeout;
    long  hits;
} server_rec;

typedef struct name_chain {
    const char        *name;
    server_rec        *server;
    struct name_chain *next;
} name_chain;

static server_rec  *vhosts;
static int          n_vhosts, cap_vhosts;
static const char **registered;           /* names in registration order */
static int          n_registered;
static name_chain  *name_hash[NAME_HASH_SIZE];
static name_chain  *chain_pool;
static int          n_chain;
static long         n_duplicates;

/* ------------------------------------------------------ configuration text */
static char *generate_config(int n, size_t *len)
{
    size_t cap = (size_t)n * 320 + 1024;
    char *buf = malloc(cap);
    if (!buf) { perror("malloc"); exit(1); }
    size_t o = (size_t)snprintf(buf, cap, "ServerRoot /etc/httpd\nListen 80\nKeepAlive On\n");
    for (int i = 0; i < n; i++)
        o += (size_t)snprintf(buf + o, cap - o,
                              "<VirtualHost *:80>\n  ServerName site%d.example.com\n"
                              "  ServerAlias www.site%d.example.com site%d.example.net\n"
                              "  DocumentRoot /srv/www/site%d\n  Timeout %d\n</VirtualHost>\n",
                              i, i, i, i, 30 + i % 60);
    *len = o;
    return buf;
}

/* Reads one line; returns its length or -1 at the end. */
static int ap_cfg_getline(const char **p, char *line, int n)
{
    if (!**p) return -1;
    int k = 0;
    while (**p && **p != '\n') {
        if (k + 1 < n) line[k++] = **p;
        (*p)++;
    }
    if (**p) (*p)++;
    while (k && isspace((unsigned char)line[k - 1])) k--;
    line[k] = 0;
    return k;
}

/* Splits off the next whitespace-separated word. */
static const char *ap_getword_conf(const char *s, char *word, int n)
{
    while (*s && isspace((unsigned char)*s)) s++;
    int k = 0;
    while (*s && !isspace((unsigned char)*s)) {
        if (k + 1 < n) word[k++] = *s;
        s++;
    }
    word[k] = 0;
    return s;
}

static server_rec *new_vhost(void)
{
    if (n_vhosts == cap_vhosts) {
        cap_vhosts = cap_vhosts ? cap_vhosts * 2 : 64;
        vhosts = realloc(vhosts, (size_t)cap_vhosts * sizeof *vhosts);
        if (!vhosts) { perror("realloc"); exit(1); }
    }
    server_rec *s = &vhosts[n_vhosts++];
    memset(s, 0, sizeof *s);
    s->port = 80;
    return s;
}

static void add_server_name(server_rec *s, const char *name)
{
    if (s->n_names < MAX_NAMES_PER_VHOST)
        snprintf(s->names[s->n_names++], sizeof s->names[0], "%s", name);
}

static int ap_process_config_tree(const char *text)
{
    char line[256], word[128];
    server_rec *cur = NULL;
    int lineno = 0;
    while (ap_cfg_getline(&text, line, sizeof line) >= 0) {
        lineno++;
        const char *rest = ap_getword_conf(line, word, sizeof word);
        if (!word[0] || word[0] == '#') continue;
        if (strcmp(word, "<VirtualHost") == 0) cur = new_vhost();
        else if (strcmp(word, "</VirtualHost>") == 0) cur = NULL;
        else if (cur && strcmp(word, "ServerName") == 0) {
            ap_getword_conf(rest, word, sizeof word);
            add_server_name(cur, word);
        } else if (cur && strcmp(word, "ServerAlias") == 0) {
            for (rest = ap_getword_conf(rest, word, sizeof word); word[0];
                 rest = ap_getword_conf(rest, word, sizeof word))
                add_server_name(cur, word);
        } else if (cur && strcmp(word, "DocumentRoot") == 0) {
            ap_getword_conf(rest, cur->document_root, sizeof cur->document_root);
        } else if (cur && strcmp(word, "Timeout") == 0) {
            ap_getword_conf(rest, word, sizeof word);
            cur->timeout = atoi(word);
        }
    }
    return lineno;
}

/* --------------------------------------------------- name registration */
static int ap_strcasecmp_match(const char *a, const char *b)
{
    while (*a && tolower((unsigned char)*a) == tolower((unsigned char)*b)) {
        a++;
        b++;
    }
    return tolower((unsigned char)*a) - tolower((unsigned char)*b);
}

static unsigned hash_name(const char *s)
{
    unsigned h = 0;
    for (; *s; s++)
        h = h * 31 + (unsigned)tolower((unsigned char)*s);
    return h & (NAME_HASH_SIZE - 1);
}

/* Was NAME registered before? */
static int vhost_name_registered(const char *name)
{
#ifdef VPROF_CASE_FIX
    for (const name_chain *c = name_hash[hash_name(name)]; c; c = c->next)
        if (ap_strcasecmp_match(c->name, name) == 0)
            return 1;
#else
    for (int i = 0; i < n_registered; i++) /* FIX: look NAME up in name_hash instead of walking all names */
        if (ap_strcasecmp_match(registered[i], name) == 0)
            return 1;
#endif
    return 0;
}

static void add_name_vhost_config(server_rec *s, const char *name)
{
    if (vhost_name_registered(name)) {
        n_duplicates++;
        return;
    }
    registered[n_registered++] = name;
    name_chain *c = &chain_pool[n_chain++];
    unsigned h = hash_name(name);
    *c = (name_chain){ name, s, name_hash[h] };
    name_hash[h] = c;
}

static void ap_fini_vhost_config(void)
{
    int total = 0;
    for (int i = 0; i < n_vhosts; i++)
        total += vhosts[i].n_names;
    registered = realloc(registered, (size_t)(total + 1) * sizeof *registered);
    chain_pool = realloc(chain_pool, (size_t)(total + 1) * sizeof *chain_pool);
    if (!registered || !chain_pool) { perror("realloc"); exit(1); }
    n_registered = n_chain = 0;
    memset(name_hash, 0, sizeof name_hash);
    for (int i = 0; i < n_vhosts; i++)
        for (int k = 0; k < vhosts[i].n_names; k++)
            add_name_vhost_config(&vhosts[i], vhosts[i].names[k]);
}

/* ------------------------------------------------------------- requests */
static server_rec *ap_update_vhost_from_headers(const char *host)
{
    for (name_chain *c = name_hash[hash_name(host)]; c; c = c->next)
        if (ap_strcasecmp_match(c->name, host) == 0)
            return c->server;
    return n_vhosts ? &vhosts[0] : NULL;
}

static uint64_t default_handler(const server_rec *s, const char *uri)
{
    uint64_t h = 1469598103934665603ULL;
    for (int pass = 0; pass < 48; pass++) {
        for (const char *p = s->document_root; *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211ULL;
        for (const char *p = uri; *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211ULL;
    }
    return h;
}

static uint64_t serve_requests(long n, int site_range, rng_t *r)
{
    char host[64], uri[64];
    uint64_t h = 0;
    for (long i = 0; i < n; i++) {
        int site = (int)rng_below(r, (uint64_t)site_range);
        snprintf(host, sizeof host, rng_below(r, 2) ? "www.site%d.example.com" : "site%d.example.com", site);
        snprintf(uri, sizeof uri, "/page/%llu.html", (unsigned long long)rng_below(r, 1000));
        server_rec *s = ap_update_vhost_from_headers(host);
        if (s) {
            s->hits++;
            h ^= default_handler(s, uri);
        }
    }
    return h;
}

int main(int argc, char **argv)
{
    opt_t opts[] = {
        { "vhosts",   "virtual hosts in the configuration",  200, 1, 1000000, 0 },
        { "reloads",  "graceful reloads after startup",        2, 0, 1000, 0 },
        { "requests", "requests served after each (re)load", 60000, 0, 100000000, 0 },
    };
    opts_parse(argc, argv, opts, NOPTS(opts));
    size_t len;
    char *conf = generate_config((int)opt_get(opts, NOPTS(opts), "vhosts"), &len);
    rng_t r;
    rng_seed(&r, 64066);
    uint64_t h = 0;
    int lines = 0;
    for (long round = 0; round <= opt_get(opts, NOPTS(opts), "reloads"); round++) {
        n_vhosts = 0;
        lines = ap_process_config_tree(conf);
        ap_fini_vhost_config();
        /* Traffic goes to the first 200 sites in both workloads. */
        h ^= serve_requests(opt_get(opts, NOPTS(opts), "requests"),
                            n_vhosts < 200 ? n_vhosts : 200, &r);
    }
    printf("%d config lines, %d vhosts, %d names, %ld duplicates, responses %016llx\n",
           lines, n_vhosts, n_registered, n_duplicates, (unsigned long long)h);
    free(conf); free(vhosts); free(registered); free(chain_pool);
    return 0;
}
