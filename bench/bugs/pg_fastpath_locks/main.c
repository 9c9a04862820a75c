/* A PostgreSQL-like server: a postmaster forks backends that run queries
 * on a partitioned table and take a lock on every partition they touch,
 * modelled on PostgreSQL's 16 fast-path lock slots per backend
 * (FP_LOCK_SLOTS_PER_BACKEND, 9.2 to 17), raised in PostgreSQL 18 by
 * "Increase the number of fast-path lock slots" (Tomas Vondra), which
 * sizes them from max_locks_per_transaction.
 *
 * A weak relation lock (AccessShareLock) goes into one of the backend's
 * own fast-path slots when one is free: no shared state is touched. Past
 * the slots, LockAcquire falls back to the shared lock table: hash the
 * lock tag, take the partition's LWLock (a process-shared mutex here),
 * find or create the LOCK and this backend's PROCLOCK, and undo it all at
 * commit. Every transaction also takes one lock that always lives in the
 * shared table (its own transaction-ID lock).
 *
 * The bug: 16 slots, whatever max_locks_per_transaction says. Queries that
 * touch 8 partitions (normal: 80,000 queries per backend) never leave the
 * fast path; queries that touch 64 (buggy: 10,000 queries, the same
 * partition scans) put 48 locks per transaction through the shared table,
 * in 4 processes contending for its partition locks. gprof blames the shared
 * hash table and the PROCLOCK bookkeeping (and sees no time in the forked
 * backends at all); the slot limit checked in LockAcquireExtended is the
 * root cause. */
#define _GNU_SOURCE
#include "../common/corpus.h"
#include <pthread.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define FP_LOCK_SLOTS_PER_BACKEND 16
#define FP_LOCK_GROUPS            4      /* the fix: 4 groups of 16 */
#define NUM_LOCK_PARTITIONS       16
#define LOCK_HASH_BUCKETS         1024
#define MAX_LOCKS                 8192
#define MAX_PROCLOCKS             32768
#define MAX_BACKENDS              16
#define AccessShareLock           1

typedef struct { uint32_t dbid, relid, kind; } LOCKTAG;

typedef struct LOCK {
    LOCKTAG tag;
    int nGranted, requested;
    int next;                          /* hash chain (index), -1 = end */
    int in_use;
} LOCK;

typedef struct PROCLOCK {
    int lock, backend, holdCount, next, in_use;
} PROCLOCK;

typedef struct {
    pthread_mutex_t partition_lock[NUM_LOCK_PARTITIONS];
    int hash[LOCK_HASH_BUCKETS];
    LOCK locks[MAX_LOCKS];
    PROCLOCK proclocks[MAX_PROCLOCKS];
    /* Each partition allocates from its own slice of the arrays (what its
     * LWLock protects), as PostgreSQL's partitioned free lists do. */
    int free_lock_hint[NUM_LOCK_PARTITIONS], free_proclock_hint[NUM_LOCK_PARTITIONS];
    uint64_t checksum[MAX_BACKENDS];
} LockShmem;

typedef struct {
    uint32_t fpRelId[FP_LOCK_GROUPS * FP_LOCK_SLOTS_PER_BACKEND];
    int fpUsed[FP_LOCK_GROUPS * FP_LOCK_SLOTS_PER_BACKEND];
    int FastPathLocalUseCount;
} PGPROC_fastpath;

/* Locks this backend took in the shared table (its LOCALLOCK list). */
typedef struct { int lock, proclock, partition; } LocalLock;

static LockShmem *LockShm;
static PGPROC_fastpath MyProcFp;
static int MyBackendId;
static LocalLock locallocks[1024];
static int n_locallocks;
static uint64_t n_shared_acquires;

/* ----------------------------------------------------- the lock table */
static uint32_t LockTagHashCode(const LOCKTAG *tag)
{
    uint32_t h = 2166136261u;
    const uint32_t w[3] = { tag->dbid, tag->relid, tag->kind };
    for (int i = 0; i < 3; i++) {
        h = (h ^ w[i]) * 16777619u;
        h ^= h >> 15;
    }
    return h;
}

static int LockHashPartition(uint32_t hashcode)
{
    return (int)(hashcode % NUM_LOCK_PARTITIONS);
}

static int locktag_equal(const LOCKTAG *a, const LOCKTAG *b)
{
    return a->dbid == b->dbid && a->relid == b->relid && a->kind == b->kind;
}

/* dynahash's hash_search(HASH_ENTER) on the shared LOCK table. */
#define LOCKS_PER_PART     (MAX_LOCKS / NUM_LOCK_PARTITIONS)
#define PROCLOCKS_PER_PART (MAX_PROCLOCKS / NUM_LOCK_PARTITIONS)

static int hash_search_lock(const LOCKTAG *tag, uint32_t hashcode, int part)
{
    int b = (int)(hashcode % LOCK_HASH_BUCKETS);
    for (int i = LockShm->hash[b]; i >= 0; i = LockShm->locks[i].next)
        if (locktag_equal(&LockShm->locks[i].tag, tag))
            return i;
    int k = LockShm->free_lock_hint[part], i;
    for (int tries = 0; LockShm->locks[i = part * LOCKS_PER_PART + k].in_use; k = (k + 1) % LOCKS_PER_PART)
        if (++tries > LOCKS_PER_PART) { fprintf(stderr, "out of shared lock memory\n"); exit(1); }
    LockShm->free_lock_hint[part] = (k + 1) % LOCKS_PER_PART;
    LOCK *l = &LockShm->locks[i];
    memset(l, 0, sizeof *l);
    l->tag = *tag;
    l->in_use = 1;
    l->next = LockShm->hash[b];
    LockShm->hash[b] = i;
    return i;
}

static void hash_remove_lock(int li, uint32_t hashcode)
{
    int b = (int)(hashcode % LOCK_HASH_BUCKETS);
    for (int *p = &LockShm->hash[b]; *p >= 0; p = &LockShm->locks[*p].next)
        if (*p == li) {
            *p = LockShm->locks[li].next;
            break;
        }
    LockShm->locks[li].in_use = 0;
}

/* Finds or creates the LOCK and this backend's PROCLOCK (partition lock held). */
static int SetupLockInTable(const LOCKTAG *tag, uint32_t hashcode, int part, int *proclock_out)
{
    int li = hash_search_lock(tag, hashcode, part);
    int k = LockShm->free_proclock_hint[part], pi;
    for (int tries = 0; LockShm->proclocks[pi = part * PROCLOCKS_PER_PART + k].in_use;
         k = (k + 1) % PROCLOCKS_PER_PART)
        if (++tries > PROCLOCKS_PER_PART) { fprintf(stderr, "out of shared lock memory\n"); exit(1); }
    LockShm->free_proclock_hint[part] = (k + 1) % PROCLOCKS_PER_PART;
    LockShm->proclocks[pi] = (PROCLOCK){ li, MyBackendId, 1, -1, 1 };
    LockShm->locks[li].nGranted++;
    LockShm->locks[li].requested++;
    *proclock_out = pi;
    n_shared_acquires++;
    return li;
}

static void LWLockAcquire(int partition)
{
    pthread_mutex_lock(&LockShm->partition_lock[partition]);
}

static void LWLockRelease(int partition)
{
    pthread_mutex_unlock(&LockShm->partition_lock[partition]);
}

/* ------------------------------------------------------ the fast path */
static int FastPathGrantRelationLock(uint32_t relid)
{
#ifdef VPROF_CASE_FIX
    int group = (int)(relid * 2654435761u >> 28) % FP_LOCK_GROUPS;
    int base = group * FP_LOCK_SLOTS_PER_BACKEND;
#else
    int base = 0;
#endif
    for (int i = base; i < base + FP_LOCK_SLOTS_PER_BACKEND; i++)
        if (!MyProcFp.fpUsed[i]) {
            MyProcFp.fpUsed[i] = 1;
            MyProcFp.fpRelId[i] = relid;
            MyProcFp.FastPathLocalUseCount++;
            return 1;
        }
    return 0;
}

static void LockAcquireShared(const LOCKTAG *tag)
{
    uint32_t hashcode = LockTagHashCode(tag);
    int partition = LockHashPartition(hashcode);
    LWLockAcquire(partition);
    int proclock;
    int lock = SetupLockInTable(tag, hashcode, partition, &proclock);
    LWLockRelease(partition);
    locallocks[n_locallocks++] = (LocalLock){ lock, proclock, partition };
}

/* LockAcquireExtended: fast path for weak relation locks while a slot is
 * free, the shared lock table otherwise. */
static void LockAcquireExtended(const LOCKTAG *tag, int lockmode)
{
#ifdef VPROF_CASE_FIX
    if (tag->kind == 0 && lockmode == AccessShareLock &&
        MyProcFp.FastPathLocalUseCount < FP_LOCK_GROUPS * FP_LOCK_SLOTS_PER_BACKEND &&
        FastPathGrantRelationLock(tag->relid))
        return;
#else
    if (tag->kind == 0 && lockmode == AccessShareLock &&
        MyProcFp.FastPathLocalUseCount < FP_LOCK_SLOTS_PER_BACKEND && /* FIX: FP_LOCK_GROUPS * FP_LOCK_SLOTS_PER_BACKEND slots (sized from max_locks_per_transaction) */
        FastPathGrantRelationLock(tag->relid))
        return;
#endif
    LockAcquireShared(tag);
}

/* Commit: clear the fast-path slots, release the shared-table locks. */
static void LockReleaseAll(void)
{
    for (int i = 0; i < FP_LOCK_GROUPS * FP_LOCK_SLOTS_PER_BACKEND; i++)
        MyProcFp.fpUsed[i] = 0;
    MyProcFp.FastPathLocalUseCount = 0;
    for (int k = n_locallocks - 1; k >= 0; k--) {
        LocalLock *ll = &locallocks[k];
        LWLockAcquire(ll->partition);
        LockShm->proclocks[ll->proclock].in_use = 0;
        LOCK *l = &LockShm->locks[ll->lock];
        l->nGranted--;
        l->requested--;
        if (l->requested == 0)
            hash_remove_lock(ll->lock, LockTagHashCode(&l->tag));
        LWLockRelease(ll->partition);
    }
    n_locallocks = 0;
}

/* ---------------------------------------------------------- executor */
static uint64_t scan_partition(uint32_t relid, uint64_t q)
{
    uint64_t h = relid * 0x9e3779b97f4a7c15ULL ^ q;
    for (int i = 0; i < 6; i++)
        h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
    return h >> 40;
}

/* SELECT ... FROM measurements WHERE ts BETWEEN ... (PARTITIONS partitions). */
static uint64_t exec_query(uint64_t q, int partitions, int n_parts_total, uint32_t xid)
{
    LOCKTAG xidtag = { 1, xid, 1 };
    LockAcquireExtended(&xidtag, 7);                 /* our transaction-ID lock */
    uint64_t sum = 0;
    int first = (int)(q % (uint64_t)n_parts_total);
    for (int p = 0; p < partitions; p++) {
        uint32_t relid = 16384 + (uint32_t)((first + p) % n_parts_total);
        LOCKTAG tag = { 1, relid, 0 };
        LockAcquireExtended(&tag, AccessShareLock);
        sum += scan_partition(relid, q);
    }
    LockReleaseAll();
    CASE_PROGRESS("queries");
    return sum;
}

static void PostgresMain(int backend, long queries, int partitions, int n_parts_total)
{
    MyBackendId = backend;
    uint64_t sum = 0;
    for (long q = 0; q < queries; q++)
        sum += exec_query((uint64_t)q * 131 + (uint64_t)backend, partitions, n_parts_total,
                          (uint32_t)(backend * 1000000 + q));
    LockShm->checksum[backend] = sum;
    fprintf(stderr, "backend %d: %llu shared-table locks\n", backend,
            (unsigned long long)n_shared_acquires);
}

static void CreateSharedMemoryAndSemaphores(void)
{
    LockShm = mmap(NULL, sizeof *LockShm, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (LockShm == MAP_FAILED) { perror("mmap"); exit(1); }
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
    for (int i = 0; i < NUM_LOCK_PARTITIONS; i++)
        pthread_mutex_init(&LockShm->partition_lock[i], &a);
    for (int i = 0; i < LOCK_HASH_BUCKETS; i++)
        LockShm->hash[i] = -1;
}

int main(int argc, char **argv)
{
    opt_t opts[] = {
        { "backends",   "backend processes",                    4, 1, MAX_BACKENDS, 0 },
        { "queries",    "queries per backend",               3000, 1, 100000000, 0 },
        { "partitions", "partitions each query touches",        8, 1, 512, 0 },
        { "table-partitions", "partitions of the table",      256, 1, 4096, 0 },
    };
    opts_parse(argc, argv, opts, NOPTS(opts));
    int backends = (int)opt_get(opts, NOPTS(opts), "backends");
    long queries = opt_get(opts, NOPTS(opts), "queries");
    int partitions = (int)opt_get(opts, NOPTS(opts), "partitions");
    int total = (int)opt_get(opts, NOPTS(opts), "table-partitions");
    if (partitions > total) { fprintf(stderr, "--partitions > --table-partitions\n"); return 2; }
    CreateSharedMemoryAndSemaphores();

    fflush(stdout);
    pid_t pids[MAX_BACKENDS];
    for (int b = 0; b < backends; b++) {            /* the postmaster forks backends */
        pids[b] = fork();
        if (pids[b] < 0) { perror("fork"); return 1; }
        if (pids[b] == 0) {
            PostgresMain(b, queries, partitions, total);
            exit(0);
        }
    }
    uint64_t sum = 0;
    for (int b = 0; b < backends; b++) {
        int st;
        if (waitpid(pids[b], &st, 0) != pids[b] || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            fprintf(stderr, "backend %d failed\n", b);
            return 1;
        }
        sum += LockShm->checksum[b];
    }
    printf("%d backends x %ld queries on %d partitions each: checksum %016llx\n",
           backends, queries, partitions, (unsigned long long)sum);
    return 0;
}
