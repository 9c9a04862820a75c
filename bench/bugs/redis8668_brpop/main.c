/* Blocking list pops with many waiting clients, modelled on Redis issue
 * 8668 ("BRPOP becomes slow when a large number of clients exist").
 *
 * Clients block with BRPOP on list keys; producers LPUSH elements. After a
 * push, serveClientsBlockedOnKey() hands elements to the clients blocked on
 * that key, rotating the waiting list so that clients are served fairly.
 * Every client looked at is checked through its own blocking-keys dict.
 *
 * The bug: the loop visits every blocked client even after the list has run
 * empty, rotating each one to the tail for nothing (it lacks the "list is
 * empty: stop" check). With a few waiting clients (normal) that is free;
 * with thousands (buggy) each push costs thousands of dict lookups and
 * rotations. gprof blames the dict lookup, the key comparison and the
 * allocator wrappers; the loop missing a constraint is the root cause. */
#include "../common/corpus.h"

#define N_KEYS     16
#define BPOP_KEYS  4

/* ------------------------------------------------------------- allocator */
static uint64_t zmalloc_used;

static void *zmalloc(size_t n)
{
    void *p = malloc(n + sizeof(size_t));
    if (!p) { perror("malloc"); exit(1); }
    *(size_t *)p = n;
    zmalloc_used += n;
    return (char *)p + sizeof(size_t);
}

static void zfree(void *p)
{
    if (!p) return;
    char *real = (char *)p - sizeof(size_t);
    zmalloc_used -= *(size_t *)real;
    free(real);
}

/* ------------------------------------------------------------ lists */
typedef struct listNode { struct listNode *prev, *next; void *value; } listNode;
typedef struct { listNode *head, *tail; long len; } list;

static void listAddNodeTail(list *l, void *value)
{
    listNode *n = zmalloc(sizeof *n);
    n->value = value;
    n->next = NULL;
    n->prev = l->tail;
    if (l->tail) l->tail->next = n; else l->head = n;
    l->tail = n;
    l->len++;
}

static void listAddNodeHead(list *l, void *value)
{
    listNode *n = zmalloc(sizeof *n);
    n->value = value;
    n->prev = NULL;
    n->next = l->head;
    if (l->head) l->head->prev = n; else l->tail = n;
    l->head = n;
    l->len++;
}

static void listDelNode(list *l, listNode *n)
{
    if (n->prev) n->prev->next = n->next; else l->head = n->next;
    if (n->next) n->next->prev = n->prev; else l->tail = n->prev;
    zfree(n);
    l->len--;
}

static void listRotateHeadToTail(list *l)
{
    if (l->len <= 1) return;
    listNode *h = l->head;
    l->head = h->next;
    l->head->prev = NULL;
    h->next = NULL;
    h->prev = l->tail;
    l->tail->next = h;
    l->tail = h;
}

/* ------------------------------------------------------- objects & dicts */
typedef struct { char ptr[24]; } robj;

static int dictEncObjKeyCompare(const robj *a, const robj *b)
{
    return strcmp(a->ptr, b->ptr) == 0;
}

static unsigned dictEncObjHash(const robj *o)
{
    unsigned h = 5381;
    for (const char *p = o->ptr; *p; p++)
        h = h * 33 + (unsigned char)*p;
    return h;
}

typedef struct { const robj *keys[BPOP_KEYS]; int n; } bpop_dict;

/* A client's "which keys am I blocked on" lookup. */
static int dictFind(const bpop_dict *d, const robj *key)
{
    unsigned want = dictEncObjHash(key);
    for (int i = 0; i < d->n; i++)
        if (dictEncObjHash(d->keys[i]) == want && dictEncObjKeyCompare(d->keys[i], key))
            return 1;
    return 0;
}

typedef struct client {
    long      id;
    bpop_dict bpop;
    int       blocked;
    uint64_t  reply_hash;
    long      served;
} client;

typedef struct {
    robj  key;
    list  values;       /* the list value */
    list  clients;      /* clients blocked on this key */
} keyspace_entry;

static keyspace_entry db[N_KEYS];
static robj other_keys[N_KEYS];
static uint64_t n_rotations, n_served;

/* -------------------------------------------------------------- commands */
static void addReplyBulk(client *c, const robj *key, long value)
{
    uint64_t h = c->reply_hash ^ (uint64_t)value;
    for (const char *p = key->ptr; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ULL;
    c->reply_hash = h;
}

static void blockForKeys(client *c, keyspace_entry *e)
{
    c->bpop.n = 0;
    c->bpop.keys[c->bpop.n++] = &e->key;
    /* Clients usually pass several keys; the others are never pushed to. */
    for (int k = 0; k < BPOP_KEYS - 1; k++)
        c->bpop.keys[c->bpop.n++] = &other_keys[(c->id + k) % N_KEYS];
    c->blocked = 1;
    listAddNodeTail(&e->clients, c);
}

static void unblockClient(client *c, keyspace_entry *e, listNode *ln)
{
    listDelNode(&e->clients, ln);
    c->blocked = 0;
}

static long listTypePop(list *values)
{
    listNode *n = values->tail;
    long v = (long)(intptr_t)n->value;
    listDelNode(values, n);
    return v;
}

/* Serves the clients blocked on E's key with the elements of its list. */
static void serveClientsBlockedOnKey(keyspace_entry *e)
{
    long numclients = e->clients.len;
#ifdef VPROF_CASE_FIX
    while (numclients-- && e->values.len > 0) {
#else
    while (numclients--) { /* FIX: stop when e->values.len == 0 */
#endif
        listNode *clientnode = e->clients.head;
        client *receiver = clientnode->value;
        if (!dictFind(&receiver->bpop, &e->key)) {
            listRotateHeadToTail(&e->clients);
            continue;
        }
        if (e->values.len > 0) {
            long v = listTypePop(&e->values);
            unblockClient(receiver, e, clientnode);
            addReplyBulk(receiver, &e->key, v);
            receiver->served++;
            n_served++;
            blockForKeys(receiver, e);          /* the client loops: BRPOP again */
        } else {
            listRotateHeadToTail(&e->clients);
            n_rotations++;
        }
    }
}

static void lpushCommand(keyspace_entry *e, long value)
{
    listAddNodeHead(&e->values, (void *)(intptr_t)value);
    if (e->clients.len)
        serveClientsBlockedOnKey(e);
}

/* Non-blocking traffic: LRANGE-style reads that walk a list. */
static uint64_t lrangeCommand(const keyspace_entry *e, long count)
{
    uint64_t h = 0;
    long i = 0;
    for (listNode *n = e->values.head; n && i < count; n = n->next, i++)
        h = h * 31 + (uint64_t)(intptr_t)n->value;
    return h;
}

int main(int argc, char **argv)
{
    opt_t opts[] = {
        { "clients", "clients blocked in BRPOP",        8, 1, 1000000, 0 },
        { "pushes",  "LPUSH commands",             450000, 1, 100000000, 0 },
        { "backlog", "elements preloaded per list",   200, 0, 1000000, 0 },
    };
    opts_parse(argc, argv, opts, NOPTS(opts));
    long n_clients = opt_get(opts, NOPTS(opts), "clients");
    long n_pushes = opt_get(opts, NOPTS(opts), "pushes");

    for (int k = 0; k < N_KEYS; k++) {
        snprintf(db[k].key.ptr, sizeof db[k].key.ptr, "queue:%d", k);
        snprintf(other_keys[k].ptr, sizeof other_keys[k].ptr, "idle:%d", k);
        for (long i = 0; i < opt_get(opts, NOPTS(opts), "backlog"); i++)
            listAddNodeHead(&db[k].values, (void *)(intptr_t)i);
    }
    /* Consumers are blocked on the single hot queue (a job queue). */
    client *clients = calloc((size_t)n_clients, sizeof *clients);
    if (!clients) { perror("calloc"); return 1; }
    for (long i = 0; i < n_clients; i++) {
        clients[i].id = i;
        /* The preloaded backlog of the hot queue is drained first. */
        blockForKeys(&clients[i], &db[0]);
    }
    serveClientsBlockedOnKey(&db[0]);
    while (db[0].values.len)
        serveClientsBlockedOnKey(&db[0]);

    rng_t r;
    rng_seed(&r, 8668);
    uint64_t h = 0;
    for (long i = 0; i < n_pushes; i++) {
        int k = rng_below(&r, 4) ? 0 : 1 + (int)rng_below(&r, N_KEYS - 1);
        lpushCommand(&db[k], (long)rng_below(&r, 1000000));
        h ^= lrangeCommand(&db[1 + (int)(i % (N_KEYS - 1))], 40);
    }
    uint64_t replies = 0;
    for (long i = 0; i < n_clients; i++)
        replies ^= clients[i].reply_hash;
    /* Which client gets which element depends on the order of the blocked
     * clients, which the fix changes (it no longer rotates the clients it
     * cannot serve): the per-client replies go to stderr. */
    printf("%ld clients, %ld pushes: served %llu, lrange %016llx, zmalloc_used %llu\n",
           n_clients, n_pushes, (unsigned long long)n_served, (unsigned long long)h,
           (unsigned long long)zmalloc_used);
    fprintf(stderr, "rotations %llu, replies %016llx\n", (unsigned long long)n_rotations,
            (unsigned long long)replies);
    free(clients);
    return 0;
}
