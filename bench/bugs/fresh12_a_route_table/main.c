/* Written for the vprof bug corpus by a helper that had not seen the
 * profiler (2026-11-29); not modelled on a real issue. The fix is the
 * VPROF_CASE_FIX variant; the line marked FIX is the bug.
 *
 * fwdd - the IPv4 forwarding plane of a software router. The routing daemon
 * streams route updates (announce / withdraw of a prefix and its next-hop
 * group); the data path forwards raw IPv4 frames; one dispatcher loop drains
 * the shared ring and hands each message to its handler. The FIB has one
 * chained hash zone per prefix length; a lookup probes the non-empty zones
 * longest first, so the first hit is the longest match. A zone doubles its
 * bucket array when it holds more routes than buckets, up to the largest
 * array the allocator can hand out.
 *
 * The bug: fz_next_divisor() caps the bucket array at one page (512
 * pointers) instead of the allocator's largest block. A lab-sized table
 * (normal: --routes 800) never reaches the cap; a partial Internet feed
 * (buggy: --routes 32000) leaves the /24 zone with chains of 30+ nodes,
 * and every frame and every update walks them.
 */
#define _POSIX_C_SOURCE 200809L  /* clock_gettime under -std=c11 */
#include "../common/corpus.h"
#include <time.h>

#define PAGE_SIZE      4096u
#define MAX_ORDER      10       /* the page allocator's largest block: 4 MiB */
#define FZ_MIN_DIVISOR 16u
#define FZ_MAX_DIVISOR ((PAGE_SIZE << MAX_ORDER) / sizeof(struct fib_node *))
#define N_IFACES       16
#define N_GROUPS       64
#define ECMP_MAX       4
#define FRAME_LEN      24       /* IPv4 header (20) + L4 ports (4) */
#define RING_SLOTS     256

/* A next-hop group: the flow hash picks one of n (ECMP). */
struct nh_group { uint8_t n, ifindex[ECMP_MAX]; uint32_t gw[ECMP_MAX]; };

struct fib_node {
    struct fib_node *next;      /* hash chain */
    uint32_t key;               /* network address, host bits zero */
    uint16_t group;
    uint8_t metric;
    uint64_t last_use_ns, hits; /* for "show ip route" idle times */
};

struct fn_zone {
    struct fn_zone *next_zone;  /* zones longest prefix first */
    struct fib_node **hash;
    uint32_t divisor, nent, mask;
    int plen;
};

struct fib_table { struct fn_zone *zones[33], *zone_list; };

enum { MSG_FRAME, MSG_ANNOUNCE, MSG_WITHDRAW };
struct route_update { uint32_t prefix; uint8_t plen, metric; uint16_t group; };
struct msg { int kind; union { uint8_t frame[FRAME_LEN]; struct route_update upd; } u; };

/* ---------------------------------------------- router-wide state
 * Read and bumped all over the data path: the clock (sampled once per
 * frame for route idle times and interface last-tx), the FIB statistics
 * behind "show ip fib summary", and per-interface counters. */
static uint64_t g_now_ns;
static struct {
    unsigned long long lookups, zone_probes, chain_steps, adds, replaced, dels, del_missing,
                       grows, grow_refused;
} g_fib_stats;
static uint32_t g_fib_routes, g_fib_longest_chain;
static struct { uint64_t tx_pkts, tx_bytes, last_tx_ns; } g_ifstats[N_IFACES];
static struct { unsigned long long rx, bad_csum, ttl_expired, no_route, forwarded, digest; } g_fwd;
static struct nh_group g_groups[N_GROUPS];

static void *xcalloc(size_t n, size_t sz)
{
    void *p = calloc(n, sz);
    if (!p)
        perror("calloc"), exit(1);
    return p;
}

static uint64_t clock_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ----------------------------------------------------------- FIB */
static uint32_t plen_mask(int plen)
{
    return plen ? ~0u << (32 - plen) : 0;
}

static uint32_t fz_hashfn(const struct fn_zone *fz, uint32_t key)
{
    uint32_t h = fz->plen ? key >> (32 - fz->plen) : 0;
    h = (h ^ h >> 16) * 0x45d9f3bu;
    h ^= h >> 16;
    return h & (fz->divisor - 1);
}

/* The next bucket-array size, or the current one when the zone may not
 * grow: the array comes from the page allocator, so it is capped by the
 * largest block that allocator hands out. */
static uint32_t fz_next_divisor(const struct fn_zone *fz)
{
    uint32_t next = fz->divisor ? fz->divisor << 1 : FZ_MIN_DIVISOR;
#ifdef VPROF_CASE_FIX
    if (next > FZ_MAX_DIVISOR)
        return fz->divisor;
#else
    if (next > PAGE_SIZE / sizeof(struct fib_node *))   /* FIX: cap at FZ_MAX_DIVISOR */
        return fz->divisor;
#endif
    return next;
}

static void fz_rehash(struct fn_zone *fz, uint32_t divisor)
{
    struct fib_node **old = fz->hash;
    uint32_t old_divisor = fz->divisor;
    fz->hash = xcalloc(divisor, sizeof *fz->hash);
    fz->divisor = divisor;
    for (uint32_t b = 0; b < old_divisor; b++)
        for (struct fib_node *fn = old[b], *nx; fn; fn = nx) {
            nx = fn->next;
            uint32_t h = fz_hashfn(fz, fn->key);
            fn->next = fz->hash[h];
            fz->hash[h] = fn;
        }
    free(old);
}

/* Called after an insert: keep the chains at about one node per bucket. */
static void fz_maybe_grow(struct fn_zone *fz)
{
    if (fz->nent <= fz->divisor)
        return;
    uint32_t divisor = fz_next_divisor(fz);
    if (divisor == fz->divisor)
        g_fib_stats.grow_refused++;
    else
        fz_rehash(fz, divisor), g_fib_stats.grows++;
}

static struct fn_zone *fz_create(struct fib_table *tb, int plen)
{
    struct fn_zone *fz = xcalloc(1, sizeof *fz);
    fz->plen = plen, fz->mask = plen_mask(plen);
    fz->divisor = FZ_MIN_DIVISOR;
    fz->hash = xcalloc(fz->divisor, sizeof *fz->hash);
    /* Link it in longest prefix first, so a lookup stops at its first hit. */
    struct fn_zone **pp = &tb->zone_list;
    while (*pp && (*pp)->plen > plen)
        pp = &(*pp)->next_zone;
    fz->next_zone = *pp;
    *pp = fz;
    tb->zones[plen] = fz;
    return fz;
}

static int fib_node_match(const struct fib_node *fn, uint32_t key)
{
    return fn->key == key;
}

/* The node of KEY in its chain, and where it hangs (for unlinking). */
static struct fib_node **fz_chain_find(const struct fn_zone *fz, uint32_t key)
{
    uint32_t steps = 0;
    struct fib_node **pp = &fz->hash[fz_hashfn(fz, key)];
    while (*pp && !fib_node_match(*pp, key))
        pp = &(*pp)->next, steps++;
    g_fib_stats.chain_steps += steps;
    if (steps > g_fib_longest_chain)
        g_fib_longest_chain = steps;
    return pp;
}

static struct fib_node *fib_lookup(const struct fib_table *tb, uint32_t daddr)
{
    g_fib_stats.lookups++;
    for (const struct fn_zone *fz = tb->zone_list; fz; fz = fz->next_zone) {
        if (!fz->nent)
            continue;
        g_fib_stats.zone_probes++;
        struct fib_node *fn = *fz_chain_find(fz, daddr & fz->mask);
        if (fn)
            return fn;
    }
    return NULL;
}

static void fib_route_add(struct fib_table *tb, const struct route_update *u)
{
    struct fn_zone *fz = tb->zones[u->plen] ? tb->zones[u->plen] : fz_create(tb, u->plen);
    uint32_t key = u->prefix & fz->mask;
    struct fib_node **pp = fz_chain_find(fz, key), *fn = *pp;
    if (fn) {                   /* an implicit withdraw: the new path replaces the old */
        fn->group = u->group, fn->metric = u->metric, g_fib_stats.replaced++;
        return;
    }
    fn = xcalloc(1, sizeof *fn);
    fn->key = key, fn->group = u->group, fn->metric = u->metric, fn->last_use_ns = g_now_ns;
    *pp = fn;                   /* the chain's tail: pp is where the walk ended */
    fz->nent++, g_fib_routes++, g_fib_stats.adds++;
    fz_maybe_grow(fz);
}

static void fib_route_del(struct fib_table *tb, const struct route_update *u)
{
    struct fn_zone *fz = tb->zones[u->plen];
    struct fib_node **pp = fz ? fz_chain_find(fz, u->prefix & fz->mask) : NULL;
    if (!pp || !*pp) {          /* a withdraw of a route we never installed */
        g_fib_stats.del_missing++;
        return;
    }
    struct fib_node *fn = *pp;
    *pp = fn->next, free(fn);
    fz->nent--, g_fib_routes--, g_fib_stats.dels++;
}

static void fib_free(struct fib_table *tb)
{
    for (struct fn_zone *fz = tb->zone_list, *nz; fz; fz = nz) {
        nz = fz->next_zone;
        for (uint32_t b = 0; b < fz->divisor; b++)
            for (struct fib_node *fn = fz->hash[b], *nx; fn; fn = nx)
                nx = fn->next, free(fn);
        free(fz->hash), free(fz);
    }
}

/* ------------------------------------------------------- data path */
static uint16_t ip_checksum(const uint8_t *h, int len)
{
    uint32_t s = 0;
    for (int i = 0; i < len; i += 2)
        s += (uint32_t)h[i] << 8 | h[i + 1];
    while (s >> 16)
        s = (s & 0xffff) + (s >> 16);
    return (uint16_t)~s;
}

static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* ECMP: the same flow always leaves through the same member of the group. */
static int nh_select(const struct nh_group *g, const uint8_t *f)
{
    uint64_t h = ((uint64_t)rd32(f + 12) << 32 | rd32(f + 16)) * 0x9e3779b97f4a7c15ull;
    h ^= (uint64_t)(rd32(f + 20) ^ f[9]) * 0xc2b2ae3d27d4eb4full;
    return (int)((h >> 32) % g->n);
}

/* TTL decrement with the incremental checksum update of RFC 1624. */
static void ip_decrease_ttl(uint8_t *f)
{
    uint32_t c = (uint32_t)(f[10] << 8 | f[11]) + 0x0100;
    c += c >> 16;
    f[8]--;
    f[10] = (uint8_t)(c >> 8), f[11] = (uint8_t)c;
}

static void fwd_account(int ifindex, uint32_t gw, uint32_t verdict)
{
    g_fwd.digest = (g_fwd.digest ^ ((uint64_t)gw << 8 | (uint32_t)ifindex << 2 | verdict))
                   * 0x100000001b3ull;
}

static void on_frame(struct fib_table *tb, uint8_t *f)
{
    struct fib_node *fn = NULL;
    g_now_ns = clock_ns(), g_fwd.rx++;
    if ((f[0] >> 4) != 4 || ip_checksum(f, 20) != 0)
        g_fwd.bad_csum++, fwd_account(0, 0, 1);
    else if (f[8] <= 1)         /* would send ICMP time exceeded */
        g_fwd.ttl_expired++, fwd_account(0, 0, 2);
    else if (!(fn = fib_lookup(tb, rd32(f + 16))))  /* would send ICMP net unreachable */
        g_fwd.no_route++, fwd_account(0, 0, 3);
    if (!fn)
        return;
    fn->last_use_ns = g_now_ns, fn->hits++;
    const struct nh_group *g = &g_groups[fn->group];
    int k = nh_select(g, f), ifx = g->ifindex[k];
    ip_decrease_ttl(f);
    g_ifstats[ifx].tx_pkts++, g_ifstats[ifx].tx_bytes += (uint32_t)(f[2] << 8 | f[3]);
    g_ifstats[ifx].last_tx_ns = g_now_ns;
    g_fwd.forwarded++;
    fwd_account(ifx, g->gw[k], 0);
}

/* The dispatcher: drains one ring's worth of messages, in order. */
static void router_dispatch(struct fib_table *tb, struct msg *ring, int n)
{
    for (int i = 0; i < n; i++) {
        switch (ring[i].kind) {
        case MSG_FRAME:    on_frame(tb, ring[i].u.frame); break;
        case MSG_ANNOUNCE: g_now_ns = clock_ns(); fib_route_add(tb, &ring[i].u.upd); break;
        case MSG_WITHDRAW: fib_route_del(tb, &ring[i].u.upd); break;
        }
        CASE_PROGRESS("message");
    }
}

/* --------------------------------- routing daemon and traffic source */
/* Every prefix the peers know, and which of them the FIB has been sent. */
struct feed { struct route_update *rib; uint8_t *installed; int n; };

static void make_prefix(rng_t *r, struct route_update *u)
{
    /* A feed's shape: mostly /24s, some aggregates, a few host routes. */
    static const uint8_t plens[20] = {24, 24, 24, 24, 24, 24, 24, 24, 24, 24, 24,
                                      23, 22, 22, 21, 20, 19, 16, 32, 32};
    u->plen = plens[rng_below(r, 20)];
    if (rng_below(r, 100) == 0)
        u->plen = (uint8_t)(8 + 4 * rng_below(r, 2));
    u->prefix = (uint32_t)(16 + rng_below(r, 208)) << 24 | (uint32_t)rng_below(r, 1u << 24);
    u->prefix &= plen_mask(u->plen);
    u->group = (uint16_t)rng_below(r, N_GROUPS);
    u->metric = (uint8_t)(1 + rng_below(r, 20));
}

/* The peers know an eighth more prefixes than the initial dump carries. */
static struct feed feed_make(int routes, rng_t *r)
{
    struct feed fd = {.n = routes + routes / 8};
    fd.rib = xcalloc((size_t)fd.n, sizeof *fd.rib);
    fd.installed = xcalloc((size_t)fd.n, 1);
    for (int i = 0; i < fd.n; i++)
        make_prefix(r, &fd.rib[i]);
    return fd;
}

/* One update of the churn: a withdraw, a re-announce with a new path, or an
 * announce of a prefix that was not installed (the table keeps its size:
 * about 8 of 9 known prefixes installed). */
static void feed_next_update(struct feed *fd, rng_t *r, struct msg *m)
{
    int i = (int)rng_below(r, (uint64_t)fd->n);
    struct route_update *u = &fd->rib[i];
    if (fd->installed[i] && rng_below(r, 8) == 0) {
        m->kind = MSG_WITHDRAW;
        fd->installed[i] = 0;
    } else {
        m->kind = MSG_ANNOUNCE;
        u->group = (uint16_t)rng_below(r, N_GROUPS);
        fd->installed[i] = 1;
    }
    m->u.upd = *u;
}

static void make_frame(uint8_t *f, uint32_t src, uint32_t dst, uint8_t proto, uint32_t ports,
                       uint16_t len, uint8_t ttl)
{
    memset(f, 0, FRAME_LEN);
    f[0] = 0x45, f[2] = (uint8_t)(len >> 8), f[3] = (uint8_t)len, f[8] = ttl, f[9] = proto;
    for (int k = 0; k < 4; k++) {
        f[12 + k] = (uint8_t)(src >> (24 - 8 * k));
        f[16 + k] = (uint8_t)(dst >> (24 - 8 * k));
        f[20 + k] = (uint8_t)(ports >> (24 - 8 * k));
    }
    uint16_t c = ip_checksum(f, 20);
    f[10] = (uint8_t)(c >> 8), f[11] = (uint8_t)c;
}

/* Traffic: mostly to hosts inside announced prefixes, some to nowhere. */
static void next_frame(const struct feed *fd, rng_t *r, struct msg *m)
{
    uint64_t x = rng_next(r);
    uint32_t dst;
    if (x % 16 == 0) {          /* scans and backscatter */
        dst = (uint32_t)(rng_next(r) >> 32);
    } else {
        const struct route_update *u = &fd->rib[(x >> 8) % (uint64_t)fd->n];
        dst = u->prefix | ((uint32_t)(x >> 32) & ~plen_mask(u->plen));
    }
    m->kind = MSG_FRAME;
    make_frame(m->u.frame, 0x0a000000u | (uint32_t)(x >> 40 & 0xffff), dst,
               (x >> 4 & 3) ? 6 : 17, (uint32_t)(x >> 12), (uint16_t)(40 + (x >> 20 & 0x3ff)),
               (x >> 30 & 63) ? 64 : 1);
}

static void groups_init(rng_t *r)
{
    for (int g = 0; g < N_GROUPS; g++) {
        g_groups[g].n = (uint8_t)(1 + rng_below(r, ECMP_MAX));
        for (int k = 0; k < g_groups[g].n; k++) {
            g_groups[g].ifindex[k] = (uint8_t)(1 + rng_below(r, N_IFACES - 1));
            g_groups[g].gw[k] = 0xc0a80000u | (uint32_t)rng_below(r, 1u << 16);
        }
    }
}

int main(int argc, char **argv)
{
    opt_t opts[] = {
        {"routes", "prefixes in the initial feed", 800, 1, 1000000, 0},
        {"churn", "route updates per 10,000 frames", 20, 0, 10000, 0},
        {"frames", "frames on the data path", 800000, 1, 100000000, 0},
        {"seed", "workload seed", 4242, 0, 1000000000, 0},
    };
    opts_parse(argc, argv, opts, NOPTS(opts));
    int routes = (int)opt_get(opts, NOPTS(opts), "routes");
    long churn = opt_get(opts, NOPTS(opts), "churn"), frames = opt_get(opts, NOPTS(opts), "frames");
    rng_t r, traffic;
    rng_seed(&r, (uint64_t)opt_get(opts, NOPTS(opts), "seed"));
    rng_seed(&traffic, rng_next(&r));
    groups_init(&r);
    struct feed fd = feed_make(routes, &r);
    struct fib_table tb = {0};
    struct msg *ring = xcalloc(RING_SLOTS, sizeof *ring);

    /* The initial table dump, then the data path with the churn mixed in. */
    for (int i = 0, n = 0; i < routes; i += n) {
        for (n = 0; n < RING_SLOTS && i + n < routes; n++) {
            ring[n].kind = MSG_ANNOUNCE, ring[n].u.upd = fd.rib[i + n];
            fd.installed[i + n] = 1;
        }
        router_dispatch(&tb, ring, n);
    }
    long churn_due = 0;
    for (long sent = 0; sent < frames;) {
        int n = 0;
        while (n < RING_SLOTS && sent < frames) {
            churn_due += churn;
            if (churn_due >= 10000 && n < RING_SLOTS - 1) {
                churn_due -= 10000;
                feed_next_update(&fd, &r, &ring[n++]);
            }
            next_frame(&fd, &traffic, &ring[n++]);
            sent++;
        }
        router_dispatch(&tb, ring, n);
    }

    printf("%llu frames: %llu forwarded, %llu no route, %llu ttl expired, %llu bad; "
           "%u routes; digest %016llx\n", g_fwd.rx, g_fwd.forwarded, g_fwd.no_route,
           g_fwd.ttl_expired, g_fwd.bad_csum, g_fib_routes, g_fwd.digest);
    fprintf(stderr, "lookups=%llu zone_probes=%llu chain_steps=%llu longest_chain=%u adds=%llu "
            "replaced=%llu dels=%llu del_missing=%llu grows=%llu grow_refused=%llu\n",
            g_fib_stats.lookups, g_fib_stats.zone_probes, g_fib_stats.chain_steps,
            g_fib_longest_chain, g_fib_stats.adds, g_fib_stats.replaced, g_fib_stats.dels,
            g_fib_stats.del_missing, g_fib_stats.grows, g_fib_stats.grow_refused);
    fib_free(&tb);
    free(ring), free(fd.rib), free(fd.installed);
    return 0;
}
