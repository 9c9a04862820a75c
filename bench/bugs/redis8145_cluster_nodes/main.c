/* A Redis-like server answering a command mix in cluster mode, modelled on
 * Redis issue 8145 ("CLUSTER NODES is costly in a large cluster").
 *
 * Most commands are GET/SET on a hash table. A monitoring client also sends
 * CLUSTER NODES every so often; its reply has one line per node, and each
 * line lists the slot ranges the node serves.
 *
 * The bug: clusterGenNodeDescription() finds a node's slot ranges by testing
 * all 16384 slot bits for every node, so one CLUSTER NODES costs
 * nodes x 16384 bit tests. With a handful of nodes (normal) that is noise;
 * with hundreds (buggy) it dominates. gprof ranks the tiny per-slot bit test
 * first; the loop that calls it once per slot per node is the root cause
 * (the fix computes all nodes' slot ranges in one pass over the slots). */
#include "../common/corpus.h"

#define CLUSTER_SLOTS 16384
#define NODE_ID_LEN   40
#define DICT_BUCKETS  (1 << 15)

/* ------------------------------------------------------------ sds strings */
typedef struct { char *buf; size_t len, cap; } sds;

static void sdsMakeRoomFor(sds *s, size_t add)
{
    if (s->len + add + 1 <= s->cap)
        return;
    size_t cap = (s->len + add + 1) * 2;
    char *nb = realloc(s->buf, cap);
    if (!nb) { perror("realloc"); exit(1); }
    s->buf = nb;
    s->cap = cap;
}

static void sdscatlen(sds *s, const char *p, size_t n)
{
    sdsMakeRoomFor(s, n);
    memcpy(s->buf + s->len, p, n);
    s->len += n;
    s->buf[s->len] = 0;
}

static void sdscatfmt_ll(sds *s, const char *prefix, long long v)
{
    char tmp[48];
    int n = snprintf(tmp, sizeof tmp, "%s%lld", prefix, v);
    sdscatlen(s, tmp, (size_t)n);
}

/* ---------------------------------------------------------- cluster state */
typedef struct {
    char     name[NODE_ID_LEN + 1];
    char     ip[24];
    int      port, flags;
    long long ping_sent, pong_received, config_epoch;
    unsigned char slots[CLUSTER_SLOTS / 8];
    int      numslots;
#ifdef VPROF_CASE_FIX
    int     *slot_info_pairs;         /* start, end, start, end, ... */
    int      slot_info_len;
#endif
} clusterNode;

static clusterNode *nodes;
static int n_nodes;
#ifdef VPROF_CASE_FIX
static clusterNode *slot_owner[CLUSTER_SLOTS];   /* Redis's cluster->slots[] */
#endif

static int clusterNodeGetSlotBit(const clusterNode *n, int slot)
{
    return (n->slots[slot >> 3] >> (slot & 7)) & 1;
}

static void clusterNodeSetSlotBit(clusterNode *n, int slot)
{
    n->slots[slot >> 3] |= (unsigned char)(1 << (slot & 7));
    n->numslots++;
#ifdef VPROF_CASE_FIX
    slot_owner[slot] = n;
#endif
}

static void clusterInit(int count, rng_t *r)
{
    n_nodes = count;
    nodes = calloc((size_t)count, sizeof *nodes);
    if (!nodes) { perror("calloc"); exit(1); }
    for (int i = 0; i < count; i++) {
        clusterNode *n = &nodes[i];
        for (int k = 0; k < NODE_ID_LEN; k++)
            n->name[k] = "0123456789abcdef"[rng_below(r, 16)];
        snprintf(n->ip, sizeof n->ip, "10.0.%d.%d", i / 250, i % 250 + 1);
        n->port = 7000 + i;
        n->flags = i == 0 ? 1 : 0;
        n->config_epoch = i + 1;
    }
    /* Slots are spread over all nodes in contiguous ranges. */
    for (int s = 0; s < CLUSTER_SLOTS; s++)
        clusterNodeSetSlotBit(&nodes[(long)s * count / CLUSTER_SLOTS], s);
}

static void representSlotInfo(sds *ci, int start, int end)
{
    if (start == end)
        sdscatfmt_ll(ci, " ", start);
    else {
        sdscatfmt_ll(ci, " ", start);
        sdscatfmt_ll(ci, "-", end);
    }
}

/* Appends the slot ranges of node N by testing every slot bit. */
static __attribute__((unused)) void clusterGenNodeSlotRanges(sds *ci, const clusterNode *n)
{
    int start = -1;
    for (int j = 0; j < CLUSTER_SLOTS; j++) {
        int bit = clusterNodeGetSlotBit(n, j);
        if (bit && start == -1)
            start = j;
        if (start != -1 && (!bit || j == CLUSTER_SLOTS - 1)) {
            representSlotInfo(ci, start, bit ? j : j - 1);
            start = -1;
        }
    }
}

#ifdef VPROF_CASE_FIX
static void clusterNodeAddSlotPair(clusterNode *n, int start, int end)
{
    if (n->slot_info_len % 64 == 0) {
        int *np = realloc(n->slot_info_pairs, (size_t)(n->slot_info_len + 64) * sizeof *np);
        if (!np) { perror("realloc"); exit(1); }
        n->slot_info_pairs = np;
    }
    n->slot_info_pairs[n->slot_info_len++] = start;
    n->slot_info_pairs[n->slot_info_len++] = end;
}

/* One pass over the slot table: every node's slot ranges (the fix). */
static void clusterGenNodesSlotsInfo(void)
{
    for (int i = 0; i < n_nodes; i++)
        nodes[i].slot_info_len = 0;
    int start = 0;
    for (int j = 1; j <= CLUSTER_SLOTS; j++)
        if (j == CLUSTER_SLOTS || slot_owner[j] != slot_owner[start]) {
            if (slot_owner[start])
                clusterNodeAddSlotPair(slot_owner[start], start, j - 1);
            start = j;
        }
}
#endif

/* One line of CLUSTER NODES for node N. */
static void clusterGenNodeDescription(sds *ci, const clusterNode *n, long long now)
{
    sdscatlen(ci, n->name, NODE_ID_LEN);
    sdscatlen(ci, " ", 1);
    sdscatlen(ci, n->ip, strlen(n->ip));
    sdscatfmt_ll(ci, ":", n->port);
    sdscatlen(ci, n->flags ? " myself,master - " : " master - ", n->flags ? 17 : 10);
    sdscatfmt_ll(ci, "", n->ping_sent);
    sdscatfmt_ll(ci, " ", n->pong_received ? n->pong_received : now);
    sdscatfmt_ll(ci, " ", n->config_epoch);
    sdscatlen(ci, " connected", 10);
#ifdef VPROF_CASE_FIX
    for (int k = 0; k < n->slot_info_len; k += 2)
        representSlotInfo(ci, n->slot_info_pairs[k], n->slot_info_pairs[k + 1]);
#else
    clusterGenNodeSlotRanges(ci, n);
#endif
    sdscatlen(ci, "\n", 1);
}

/* The whole CLUSTER NODES reply: one description per node, each of which
 * rescans all 16384 slots for its node. */
static void clusterGenNodesDescription(sds *ci, long long now)
{
#ifdef VPROF_CASE_FIX
    clusterGenNodesSlotsInfo();
    for (int i = 0; i < n_nodes; i++)
#else
    for (int i = 0; i < n_nodes; i++) /* FIX: compute every node's slot ranges in one pass over the slots before this loop */
#endif
        clusterGenNodeDescription(ci, &nodes[i], now);
}

/* -------------------------------------------------------------- keyspace */
typedef struct dictEntry {
    char *key;
    char  val[32];
    struct dictEntry *next;
} dictEntry;

static dictEntry *dict[DICT_BUCKETS];
static long dict_size;

static uint64_t dictGenHashFunction(const char *key, size_t len)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)key[i];
        h *= 0x100000001b3ULL;
        h ^= h >> 29;
    }
    return h;
}

static dictEntry *dictFind(const char *key)
{
    uint64_t h = dictGenHashFunction(key, strlen(key)) & (DICT_BUCKETS - 1);
    for (dictEntry *e = dict[h]; e; e = e->next)
        if (strcmp(e->key, key) == 0)
            return e;
    return NULL;
}

static void setKey(const char *key, const char *val)
{
    dictEntry *e = dictFind(key);
    if (!e) {
        uint64_t h = dictGenHashFunction(key, strlen(key)) & (DICT_BUCKETS - 1);
        e = calloc(1, sizeof *e);
        if (!e || !(e->key = strdup(key))) { perror("alloc"); exit(1); }
        e->next = dict[h];
        dict[h] = e;
        dict_size++;
    }
    snprintf(e->val, sizeof e->val, "%s", val);
}

static unsigned keyHashSlot(const char *key)
{
    unsigned crc = 0;
    for (const char *p = key; *p; p++) {
        crc ^= (unsigned)(unsigned char)*p << 8;
        for (int k = 0; k < 8; k++)
            crc = crc & 0x8000 ? (crc << 1) ^ 0x1021 : crc << 1;
    }
    return crc & (CLUSTER_SLOTS - 1);
}

/* ------------------------------------------------------------- commands */
typedef struct { uint64_t bytes_out, hits, misses, redirects; } server_stats;

static void getCommand(const char *key, server_stats *st, sds *reply)
{
    dictEntry *e = dictFind(key);
    if (e) {
        st->hits++;
        sdscatlen(reply, e->val, strlen(e->val));
    } else {
        st->misses++;
        sdscatlen(reply, "$-1", 3);
    }
}

static void processCommand(rng_t *r, long i, server_stats *st, sds *reply)
{
    char key[32], val[24];
    snprintf(key, sizeof key, "user:%llu", (unsigned long long)rng_below(r, 50000));
    unsigned slot = keyHashSlot(key);
    if (!clusterNodeGetSlotBit(&nodes[0], (int)slot) && n_nodes > 1 && rng_below(r, 64) == 0) {
        st->redirects++;                 /* -MOVED for a few clients */
        return;
    }
    if (i % 3 == 0) {
        snprintf(val, sizeof val, "v%llu", (unsigned long long)rng_next(r) % 1000000);
        setKey(key, val);
    } else {
        getCommand(key, st, reply);
    }
}

static void clusterCommandNodes(server_stats *st, long long now)
{
    sds ci = {0};
    clusterGenNodesDescription(&ci, now);
    st->bytes_out += ci.len;
    free(ci.buf);
}

int main(int argc, char **argv)
{
    opt_t opts[] = {
        { "nodes",        "cluster nodes",                      4, 1, 2000, 0 },
        { "commands",     "commands served",               400000, 1, 100000000, 0 },
        { "nodes-every",  "one CLUSTER NODES per this many commands", 4000, 1, 100000000, 0 },
    };
    opts_parse(argc, argv, opts, NOPTS(opts));
    rng_t r;
    rng_seed(&r, 8145);
    clusterInit((int)opt_get(opts, NOPTS(opts), "nodes"), &r);
    long n_cmds = opt_get(opts, NOPTS(opts), "commands");
    long every = opt_get(opts, NOPTS(opts), "nodes-every");

    server_stats st = {0};
    sds reply = {0};
    for (long i = 0; i < n_cmds; i++) {
        reply.len = 0;
        processCommand(&r, i, &st, &reply);
        st.bytes_out += reply.len;
        if (i % every == 0)
            clusterCommandNodes(&st, 1600000000LL + i);
    }
    printf("%ld commands, %d nodes: keys %ld hits %llu misses %llu moved %llu, %llu bytes out\n",
           n_cmds, n_nodes, dict_size, (unsigned long long)st.hits,
           (unsigned long long)st.misses, (unsigned long long)st.redirects,
           (unsigned long long)st.bytes_out);
    free(reply.buf);
    return 0;
}
