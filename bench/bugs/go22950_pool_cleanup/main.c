/* A Go-style server reusing response buffers through sync.Pool, modelled on
 * golang/go issue #22950 ("sync: avoid clearing the full Pool on every
 * GC"), fixed in Go 1.13 by the pools' victim cache.
 *
 * The runtime allocates from a heap (mallocgc) and starts a garbage
 * collection when the live heap reaches the GC goal (GOGC=100: twice the
 * heap marked by the last cycle). At the start of every cycle
 * poolCleanup() runs. Request handlers take an 8 KiB buffer from a
 * sync.Pool (per-P private slot and shared list), encode the response into
 * it, allocate their temporary objects, and put the buffer back.
 *
 * The bug: poolCleanup() drops every pooled object. With little garbage per
 * request (normal) cycles are rare and the buffers are reused; with
 * handlers that allocate 48 KiB of temporaries each (buggy) a cycle runs
 * every couple of batches, every cycle empties the pools, and each batch
 * allocates and zeroes its buffers again (which brings the next cycle
 * sooner). gprof blames the allocator and the zeroing; poolCleanup, which
 * runs once per cycle and costs nothing, is the root cause (Go 1.13 moves
 * the pooled objects to a victim cache that survives one cycle). */
#include "../common/corpus.h"

#define NPROCS      4                  /* GOMAXPROCS */
#define BUF_SIZE    8192
#define SHARED_MAX  64

typedef struct { uint8_t *private_; uint8_t *shared[SHARED_MAX]; int nshared; } poolLocal;

typedef struct {
    poolLocal local[NPROCS];
    poolLocal victim[NPROCS];          /* the fix's victim cache */
} Pool;

static struct {
    uint64_t heap_live, heap_marked, next_gc, numgc, total_alloc;
} memstats = { 0, 0, 4 << 20, 0, 0 };

static Pool bufPool;
static uint64_t n_new;
static uint8_t *live_objects[4096];    /* long-lived data the mark phase walks */
static int n_live_objects;

/* ------------------------------------------------------------ runtime */
/* Swept 8 KiB objects, reused by mallocgc (the mcentral's free spans). */
static uint8_t **span_free;
static long n_span_free, cap_span_free;

static void sweep_free(uint8_t *p)
{
    if (!p) return;
    if (n_span_free == cap_span_free) {
        cap_span_free = cap_span_free ? cap_span_free * 2 : 1024;
        span_free = realloc(span_free, (size_t)cap_span_free * sizeof *span_free);
        if (!span_free) { perror("realloc"); exit(1); }
    }
    span_free[n_span_free++] = p;
}

static void memclrNoHeapPointers(uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i += 8)
        *(uint64_t *)(p + i) = 0;
}

static void poolCleanup(void)
{
#ifdef VPROF_CASE_FIX
    for (int p = 0; p < NPROCS; p++) {
        poolLocal *v = &bufPool.victim[p];
        sweep_free(v->private_);
        for (int i = 0; i < v->nshared; i++)
            sweep_free(v->shared[i]);
        *v = bufPool.local[p];         /* primary -> victim */
        memset(&bufPool.local[p], 0, sizeof bufPool.local[p]);
    }
#else
    for (int p = 0; p < NPROCS; p++) { /* FIX: move the pooled objects to a victim cache instead of dropping them (Go 1.13) */
        poolLocal *l = &bufPool.local[p];
        sweep_free(l->private_);
        for (int i = 0; i < l->nshared; i++)
            sweep_free(l->shared[i]);
        memset(l, 0, sizeof *l);
    }
#endif
}

static uint64_t gcMark(void)
{
    uint64_t marked = 0, h = 0;
    for (int i = 0; i < n_live_objects; i++) {
        h ^= live_objects[i][0];
        marked += 512;
    }
    return marked + (h & 1);
}

static void gcStart(void)
{
    poolCleanup();                     /* clearpools() */
    memstats.heap_marked = gcMark();
    memstats.heap_live = memstats.heap_marked;
    memstats.next_gc = memstats.heap_marked * 2 > (4 << 20) ? memstats.heap_marked * 2 : (4 << 20);
    memstats.numgc++;
}

/* Accounts an allocation of SIZE bytes; starts a cycle at the goal. */
static void mallocgc_account(uint64_t size)
{
    memstats.heap_live += size;
    memstats.total_alloc += size;
    if (memstats.heap_live >= memstats.next_gc)
        gcStart();
}

static uint8_t *mallocgc(size_t size)
{
    mallocgc_account(size);
    uint8_t *p = size == BUF_SIZE && n_span_free ? span_free[--n_span_free] : malloc(size);
    if (!p) { perror("malloc"); exit(1); }
    memclrNoHeapPointers(p, size);
    return p;
}

/* ------------------------------------------------------------- sync.Pool */
static uint8_t *poolNew(void)
{
    n_new++;
    return mallocgc(BUF_SIZE);
}

static uint8_t *poolPop(poolLocal *l)
{
    if (l->private_) { uint8_t *x = l->private_; l->private_ = NULL; return x; }
    if (l->nshared) return l->shared[--l->nshared];
    return NULL;
}

static uint8_t *PoolGet(int pid)
{
    uint8_t *x = poolPop(&bufPool.local[pid]);
    for (int i = 1; !x && i < NPROCS; i++)      /* getSlow: steal */
        x = poolPop(&bufPool.local[(pid + i) % NPROCS]);
#ifdef VPROF_CASE_FIX
    for (int i = 0; !x && i < NPROCS; i++)
        x = poolPop(&bufPool.victim[(pid + i) % NPROCS]);
#endif
    return x ? x : poolNew();
}

static void PoolPut(int pid, uint8_t *x)
{
    poolLocal *l = &bufPool.local[pid];
    if (!l->private_) l->private_ = x;
    else if (l->nshared < SHARED_MAX) l->shared[l->nshared++] = x;
    else sweep_free(x);
}

/* ------------------------------------------------------------- handlers */
static uint64_t encodeResponse(uint8_t *buf, uint64_t req)
{
    uint64_t h = req * 0x9e3779b97f4a7c15ULL;
    for (int i = 0; i < 1536; i += 8) {
        h = (h ^ (h >> 29)) * 0xbf58476d1ce4e5b9ULL;
        *(uint64_t *)(buf + i) = h;
    }
    return h;
}

static uint64_t serveBatch(uint64_t first_req, int batch, uint64_t garbage)
{
    uint8_t *bufs[256];
    uint64_t h = 0;
    for (int k = 0; k < batch; k++)
        mallocgc_account(garbage);     /* decoding the requests: temporaries */
    for (int k = 0; k < batch; k++)
        bufs[k] = PoolGet(k % NPROCS);
    for (int k = 0; k < batch; k++)
        h += encodeResponse(bufs[k], first_req + (uint64_t)k);
    for (int k = 0; k < batch; k++)
        PoolPut(k % NPROCS, bufs[k]);
    return h;
}

int main(int argc, char **argv)
{
    opt_t opts[] = {
        { "requests", "requests served",                          400000, 1, 1000000000, 0 },
        { "batch",    "concurrent requests (goroutines)",            32, 1, 256, 0 },
        { "garbage",  "bytes of temporaries per request",           128, 0, 100000000, 0 },
    };
    opts_parse(argc, argv, opts, NOPTS(opts));
    long requests = opt_get(opts, NOPTS(opts), "requests");
    int batch = (int)opt_get(opts, NOPTS(opts), "batch");
    uint64_t garbage = (uint64_t)opt_get(opts, NOPTS(opts), "garbage");
    for (n_live_objects = 0; n_live_objects < 4096; n_live_objects++)
        live_objects[n_live_objects] = mallocgc(64);
    uint64_t h = 0;
    for (long r = 0; r < requests; r += batch)
        h += serveBatch((uint64_t)r, batch, garbage);
    printf("%ld requests in batches of %d: responses %016llx\n", requests, batch,
           (unsigned long long)h);
    fprintf(stderr, "GC cycles %llu, pool misses %llu\n", (unsigned long long)memstats.numgc,
            (unsigned long long)n_new);
    return 0;
}
