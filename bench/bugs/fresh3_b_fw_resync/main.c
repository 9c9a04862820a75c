/* Written for the vprof bug corpus by a helper that had not seen the
 * profiler (2026-11-28); not modelled on a real issue. The fix is the
 * VPROF_CASE_FIX variant; the line marked FIX is the bug.
 *
 * fwagent - the per-host agent of a distributed firewall. The controller owns
 * the policy (rules: id, action, protocol, source and destination prefix,
 * destination ports; the matching rule with the lowest id wins, no match
 * denies) and pushes it as text: at once when it changes, and as a periodic
 * full sync (anti-entropy) every --sync-every packets. The agent's event loop
 * drains its ring in batches (raw IPv4 frames from the data path, POLICY
 * syncs from the control channel) and dispatches each event to its handler.
 * A sync is parsed and compiled into a binary trie on the source prefix, then
 * installed; installing invalidates the flow cache (a verdict per 5-tuple),
 * so every flow is classified again against the trie on its next packet.
 *
 * The bug: on_policy_sync() never checks whether the pushed version is the
 * one installed. Rare syncs (normal: --sync-every 200000) cost a few
 * reinstalls; frequent ones (buggy: --sync-every 2000) make the agent parse,
 * compile and install the same policy 1,500 times, and reclassify every
 * flow after each time.
 */
#include "../common/corpus.h"

#define MAX_RULES  2048
#define FLOW_SLOTS 8192
#define FRAME_LEN  28           /* IPv4 header (20) + ports (4) + 4 bytes of L4 */
#define BATCH      512

enum { ACT_ALLOW, ACT_DENY, ACT_REJECT, N_ACT };
enum { P_ANY = 0, P_ICMP = 1, P_TCP = 6, P_UDP = 17 };
static const char *const kActs[N_ACT] = {"allow", "deny", "reject"};

struct rule { uint32_t id, src, dst; uint8_t action, proto, src_len, dst_len; uint16_t port_lo, port_hi; };

struct tnode {
    struct tnode *child[2];
    uint16_t *idx;              /* rules whose source prefix ends here */
    uint32_t n, cap;
};
struct policy { uint32_t version; int nrules; struct rule *rules; struct tnode *root; };

struct pkt { uint32_t src, dst; uint16_t sport, dport, len; uint8_t proto; };

/* A cached verdict, valid while gen is the agent's generation. */
struct flow_slot { struct pkt key; uint32_t gen, rule_id; uint8_t action, used; };

struct agent {
    struct policy *active;
    uint32_t gen;
    struct flow_slot *cache;
    uint64_t packets, verdict[N_ACT], bytes_allowed, digest, bad_frames, syncs, installs, misses;
};

enum { EV_FRAME, EV_POLICY };
/* EV_FRAME: a raw frame; EV_POLICY: a version and its policy text */
struct event { int type; uint8_t frame[FRAME_LEN]; uint32_t version; const char *text; };

/* -------------------------------------------------- policy text and trie */
static void *xmalloc(size_t n)
{
    void *p = calloc(1, n);
    if (!p)
        perror("calloc"), exit(1);
    return p;
}

static uint32_t parse_u32(const char **pp)
{
    const char *p = *pp;
    uint32_t v = 0;
    while (*p >= '0' && *p <= '9')
        v = v * 10 + (uint32_t)(*p++ - '0');
    *pp = p;
    return v;
}

static void parse_cidr(const char **pp, uint32_t *addr, uint8_t *len)
{
    uint32_t a = 0;
    while (**pp == ' ')
        (*pp)++;
    for (int k = 0; k < 4; k++) {
        a = a << 8 | (parse_u32(pp) & 0xff);
        if (**pp == '.')
            (*pp)++;
    }
    *len = 32;
    if (**pp == '/')
        (*pp)++, *len = (uint8_t)parse_u32(pp);
    *addr = *len ? a & (~0u << (32 - *len)) : 0;
}

/* The index of the next word in WORDS, or DFLT. */
static int parse_keyword(const char **pp, const char *const *words, int n, int dflt)
{
    const char *p = *pp, *w;
    while (*p == ' ')
        p++;
    for (w = p; *p && *p != ' ' && *p != '\n'; p++)
        ;
    *pp = p;
    for (int i = 0; i < n; i++)
        if (strlen(words[i]) == (size_t)(p - w) && memcmp(words[i], w, (size_t)(p - w)) == 0)
            return i;
    return dflt;
}

/* "<id> <action> <proto> <src>/<len> <dst>/<len> <lo>-<hi>\n" */
static const char *parse_rule(const char *p, struct rule *r)
{
    static const char *const protos[] = {"any", "icmp", "tcp", "udp"};
    static const uint8_t proto_num[] = {P_ANY, P_ICMP, P_TCP, P_UDP};
    r->id = parse_u32(&p);
    r->action = (uint8_t)parse_keyword(&p, kActs, N_ACT, ACT_DENY);
    r->proto = proto_num[parse_keyword(&p, protos, 4, 0)];
    parse_cidr(&p, &r->src, &r->src_len);
    parse_cidr(&p, &r->dst, &r->dst_len);
    while (*p == ' ')
        p++;
    r->port_lo = (uint16_t)parse_u32(&p);
    p += *p == '-';
    r->port_hi = (uint16_t)parse_u32(&p);
    while (*p && *p != '\n')
        p++;
    return *p ? p + 1 : p;
}

static void trie_insert(struct tnode *root, const struct rule *r, uint16_t i)
{
    struct tnode *n = root;
    for (int d = 0; d < r->src_len; d++) {
        int bit = (r->src >> (31 - d)) & 1;
        if (!n->child[bit])
            n->child[bit] = xmalloc(sizeof *n);
        n = n->child[bit];
    }
    if (n->n == n->cap) {
        n->cap = n->cap ? n->cap * 2 : 4;
        n->idx = realloc(n->idx, n->cap * sizeof *n->idx);
    }
    n->idx[n->n++] = i;
}

static void trie_free(struct tnode *n)
{
    if (n) {
        trie_free(n->child[0]);
        trie_free(n->child[1]);
        free(n->idx), free(n);
    }
}

static struct policy *policy_build(uint32_t version, const char *text)
{
    struct policy *pol = xmalloc(sizeof *pol);
    pol->version = version;
    pol->rules = xmalloc(MAX_RULES * sizeof *pol->rules);
    pol->root = xmalloc(sizeof *pol->root);
    while (*text && pol->nrules < MAX_RULES) {
        text = parse_rule(text, &pol->rules[pol->nrules]);
        trie_insert(pol->root, &pol->rules[pol->nrules], (uint16_t)pol->nrules);
        pol->nrules++;
    }
    return pol;
}

static void policy_free(struct policy *pol)
{
    if (pol) {
        trie_free(pol->root);
        free(pol->rules), free(pol);
    }
}

/* ------------------------------------------------------- the data path */
/* The rest of a match once protocol and port passed: the destination. */
static int rule_matches(const struct rule *r, const struct pkt *p)
{
    return !r->dst_len || ((p->dst ^ r->dst) >> (32 - r->dst_len)) == 0;
}

/* Walks the source-prefix trie; the matching rule with the lowest id wins. */
static const struct rule *classify(const struct policy *pol, const struct pkt *p)
{
    const struct rule *best = NULL;
    const struct tnode *n = pol->root;
    for (int d = 0; n; d++) {
        for (uint32_t i = 0; i < n->n; i++) {
            const struct rule *r = &pol->rules[n->idx[i]];
            if ((best && r->id > best->id) || (r->proto != P_ANY && r->proto != p->proto)
                || p->dport < r->port_lo || p->dport > r->port_hi)
                continue;
            if (rule_matches(r, p))
                best = r;
        }
        if (d == 32)
            break;
        n = n->child[(p->src >> (31 - d)) & 1];
    }
    return best;
}

static uint16_t ip_checksum(const uint8_t *h, int len)
{
    uint32_t s = 0;
    for (int i = 0; i < len; i += 2)
        s += (uint32_t)h[i] << 8 | h[i + 1];
    while (s >> 16)
        s = (s & 0xffff) + (s >> 16);
    return (uint16_t)~s;
}

static int decode_frame(const uint8_t *f, struct pkt *p)
{
    if ((f[0] >> 4) != 4 || ip_checksum(f, 20) != 0)
        return 0;
    p->len = (uint16_t)(f[2] << 8 | f[3]);
    p->proto = f[9];
    p->src = (uint32_t)f[12] << 24 | (uint32_t)f[13] << 16 | (uint32_t)f[14] << 8 | f[15];
    p->dst = (uint32_t)f[16] << 24 | (uint32_t)f[17] << 16 | (uint32_t)f[18] << 8 | f[19];
    p->sport = (uint16_t)(f[20] << 8 | f[21]), p->dport = (uint16_t)(f[22] << 8 | f[23]);
    return 1;
}

static struct flow_slot *flow_lookup(struct agent *ag, const struct pkt *p)
{
    uint64_t h = ((uint64_t)p->src << 32 | p->dst) * 0x9e3779b97f4a7c15ull;
    h ^= ((uint64_t)p->sport << 24 | (uint64_t)p->dport << 8 | p->proto) * 0xc2b2ae3d27d4eb4full;
    for (uint32_t i = (uint32_t)(h >> 40) % FLOW_SLOTS;; i = (i + 1) % FLOW_SLOTS) {
        struct flow_slot *s = &ag->cache[i];
        if (!s->used || (s->key.src == p->src && s->key.dst == p->dst && s->key.sport == p->sport
                         && s->key.dport == p->dport && s->key.proto == p->proto))
            return s;
    }
}

/* ----------------------------------------------------------- handlers */
static void on_frame(struct agent *ag, const struct event *ev)
{
    struct pkt p;
    if (!decode_frame(ev->frame, &p))
        return (void)ag->bad_frames++;
    struct flow_slot *s = flow_lookup(ag, &p);
    if (!s->used || s->gen != ag->gen) {
        const struct rule *r = classify(ag->active, &p);
        s->key = p, s->used = 1, s->gen = ag->gen;
        s->rule_id = r ? r->id : 0;
        s->action = r ? r->action : ACT_DENY;
        ag->misses++;
    }
    ag->packets++, ag->verdict[s->action]++;
    if (s->action == ACT_ALLOW)
        ag->bytes_allowed += p.len;
    ag->digest = (ag->digest ^ (s->rule_id << 2 | s->action)) * 0x100000001b3ull;
}

static void on_policy_sync(struct agent *ag, const struct event *ev)
{
    ag->syncs++;
#ifdef VPROF_CASE_FIX
    if (ag->active && ag->active->version == ev->version)
        return;
#else
    /* FIX: return here when ev->version is the installed policy's version */
#endif
    struct policy *pol = policy_build(ev->version, ev->text);
    policy_free(ag->active);
    ag->active = pol;
    ag->gen++, ag->installs++;  /* every cached verdict is stale now */
}

static void (*const kHandlers[])(struct agent *, const struct event *) = {on_frame, on_policy_sync};

/* The event loop: drains one batch from the ring. */
static void agent_run(struct agent *ag, const struct event *evs, int n)
{
    for (int i = 0; i < n; i++) {
        kHandlers[evs[i].type](ag, &evs[i]);
        CASE_PROGRESS("event");
    }
}

/* --------------------------------------------- controller and traffic */
static const uint32_t kNets[] = {0x0a000000, 0x0a140000, 0xac100000, 0xc0a80000, 0x64400000};
static const uint16_t kPorts[] = {22, 25, 53, 80, 123, 443, 3306, 5432, 6379, 8080, 9092};

static uint32_t pick_addr(rng_t *r)
{
    return kNets[rng_below(r, 5)] | (uint32_t)rng_below(r, 1u << 16);
}

static void render_rule(char **o, uint32_t id, rng_t *r)
{
    static const uint8_t slen[] = {0, 8, 8, 12, 16, 16, 20, 24, 24, 32};
    static const uint8_t dlen[] = {0, 0, 16, 24, 24, 32, 32, 32};
    static const char *const protos[] = {"tcp", "tcp", "udp", "icmp", "any"};
    uint8_t sl = slen[rng_below(r, 10)], dl = dlen[rng_below(r, 8)];
    uint32_t s = pick_addr(r), d = pick_addr(r);
    uint64_t a = rng_below(r, 10);
    int k = (int)rng_below(r, 4);   /* a range of high ports, a service, or any */
    int lo = k == 0 ? 1024 + (int)rng_below(r, 30000) : k < 3 ? kPorts[rng_below(r, 11)] : 0;
    int hi = k == 0 ? lo + (int)rng_below(r, 20000) : k < 3 ? lo : 65535;
    *o += sprintf(*o, "%u %s %s %u.%u.%u.%u/%u %u.%u.%u.%u/%u %d-%d\n", id,
                  kActs[a < 5 ? ACT_ALLOW : a < 8 ? ACT_DENY : ACT_REJECT], protos[rng_below(r, 5)],
                  s >> 24, s >> 16 & 255, s >> 8 & 255, s & 255, sl,
                  d >> 24, d >> 16 & 255, d >> 8 & 255, d & 255, dl, lo, hi);
}

/* Version v of the policy: the same base rules, a tenth of them redrawn. */
static char *render_policy(uint32_t version, int nrules, uint64_t seed)
{
    char *text = xmalloc((size_t)nrules * 96 + 1), *o = text;
    rng_t base, var, rr;
    rng_seed(&base, seed);
    rng_seed(&var, seed * 7919 + version);
    for (int i = 0; i < nrules; i++) {
        uint64_t s = rng_next(&base), v = rng_next(&var);
        rng_seed(&rr, v % 10 == 0 ? v : s);
        render_rule(&o, 10u * (uint32_t)(i + 1), &rr);
    }
    return text;
}

/* An IPv4 header (version 4, IHL 5, TTL 64, checksum) and the L4 ports. */
static void make_frame(uint8_t *f, const struct pkt *p)
{
    const uint32_t w[FRAME_LEN / 4] = {0x45000000u | p->len, 0, 64u << 24 | (uint32_t)p->proto << 16,
                                       p->src, p->dst, (uint32_t)p->sport << 16 | p->dport, 0};
    for (int k = 0; k < FRAME_LEN; k++)
        f[k] = (uint8_t)(w[k / 4] >> (24 - 8 * (k % 4)));
    uint16_t c = ip_checksum(f, 20);
    f[10] = (uint8_t)(c >> 8), f[11] = (uint8_t)c;
}

int main(int argc, char **argv)
{
    opt_t opts[] = {
        {"packets", "frames on the data path", 3000000, 1, 100000000, 0},
        {"flows", "distinct 5-tuples", 1500, 1, FLOW_SLOTS / 2, 0},
        {"rules", "rules in the policy", 300, 1, MAX_RULES, 0},
        {"versions", "policy versions over the run", 4, 1, 1000, 0},
        {"sync-every", "packets between the controller's full syncs", 200000, 1, 1 << 30, 0},
        {"seed", "workload seed", 1777, 0, 1000000000, 0},
    };
    opts_parse(argc, argv, opts, NOPTS(opts));
    long packets = opt_get(opts, NOPTS(opts), "packets"), versions = opts[3].value;
    int nflows = (int)opts[1].value, nrules = (int)opts[2].value;
    long sync_every = opts[4].value;
    uint64_t seed = (uint64_t)opts[5].value;
    rng_t r;
    rng_seed(&r, seed);
    struct pkt *flows = xmalloc((size_t)nflows * sizeof *flows);
    for (int i = 0; i < nflows; i++) {
        uint64_t k = rng_below(&r, 10);
        flows[i].proto = k < 6 ? P_TCP : k < 9 ? P_UDP : P_ICMP;
        flows[i].src = pick_addr(&r), flows[i].dst = pick_addr(&r);
        flows[i].sport = (uint16_t)(1024 + rng_below(&r, 60000));
        flows[i].dport = rng_below(&r, 4) ? kPorts[rng_below(&r, 11)]
                                          : (uint16_t)(1024 + rng_below(&r, 60000));
    }
    struct agent ag = {0};
    ag.cache = xmalloc(FLOW_SLOTS * sizeof *ag.cache);
    struct event *evs = xmalloc((BATCH + 2) * sizeof *evs);
    char **texts = xmalloc((size_t)(versions + 1) * sizeof *texts);
    uint32_t version = 0;
    long change_every = (packets + versions - 1) / versions;
    for (long pk = 0; pk < packets;) {
        int n = 0;
        while (n < BATCH && pk < packets) {
            if (pk % change_every == 0) {       /* a policy change: pushed at once */
                version++;
                texts[version] = render_policy(version, nrules, seed);
                evs[n++] = (struct event){.type = EV_POLICY, .version = version, .text = texts[version]};
            } else if (pk % sync_every == 0) {  /* the periodic full sync */
                evs[n++] = (struct event){.type = EV_POLICY, .version = version, .text = texts[version]};
            }
            uint64_t x = rng_next(&r), hot = (x >> 40) % (uint64_t)nflows;
            struct pkt p = flows[(x >> 8 & 0xffffffff) % (hot + 1)];   /* low flows are busy */
            p.len = (uint16_t)(40 + (x & 0xff) * 1460 / 255);
            evs[n].type = EV_FRAME;
            make_frame(evs[n++].frame, &p);
            pk++;
        }
        agent_run(&ag, evs, n);
    }
    printf("%llu packets: %llu allowed (%llu bytes), %llu denied, %llu rejected, digest %016llx\n",
           (unsigned long long)ag.packets, (unsigned long long)ag.verdict[ACT_ALLOW],
           (unsigned long long)ag.bytes_allowed, (unsigned long long)ag.verdict[ACT_DENY],
           (unsigned long long)ag.verdict[ACT_REJECT], (unsigned long long)ag.digest);
    fprintf(stderr, "syncs=%llu installs=%llu flow_misses=%llu bad_frames=%llu\n",
            (unsigned long long)ag.syncs, (unsigned long long)ag.installs,
            (unsigned long long)ag.misses, (unsigned long long)ag.bad_frames);
    policy_free(ag.active);
    for (uint32_t v = 1; v <= version; v++)
        free(texts[v]);
    free(texts), free(evs), free(ag.cache), free(flows);
    return 0;
}
