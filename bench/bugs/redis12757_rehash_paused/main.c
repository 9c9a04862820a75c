/* A Redis-like server in cluster mode whose slot dictionaries stop
 * rehashing after a KEYS command, modelled on Redis PR #12757 ("Fix DB
 * iterator not resetting pauserehash causing dict being unable to rehash").
 *
 * The keyspace is split into per-slot dictionaries (Redis 7.2's kvstore).
 * Each dictionary grows with Redis's incremental rehashing: when it is full
 * it allocates a table twice as large and moves one bucket to it on every
 * lookup or insert (_dictRehashStep), unless rehashing is paused; a safe
 * iterator pauses it while it iterates, and must resume it when done.
 *
 * The bug: KEYS walks every slot dictionary with one DB iterator;
 * dbIteratorNext() moves to the next dictionary without resetting the
 * iterator of the one it finished, so every dictionary but the last keeps
 * pauserehash > 0 for ever. A dictionary that then grows starts a rehash
 * that never progresses, and no further expansion can start while it is
 * rehashing: new keys pile into a table sized for the keyspace of the time
 * of the KEYS, and every lookup walks long chains in both tables. A KEYS at
 * the end of the load (normal) is harmless; the same KEYS early in the load
 * (buggy) makes every later command slow. gprof blames dictFind and the
 * key comparison; the one-off iterator step that forgot to resume
 * rehashing is the root cause. */
#include "../common/corpus.h"
#include <time.h>

#define N_SLOT_DICTS  16
#define DICT_HT_INITIAL_SIZE 4
#define KEY_MAX 32

/* ------------------------------------------------------------------ dict */
typedef struct dictEntry {
    char key[KEY_MAX];
    uint64_t val;
    long long expire;                  /* ms, 0 = none */
    struct dictEntry *next;
} dictEntry;

typedef struct {
    dictEntry **table[2];
    unsigned long size[2], used[2];
    long rehashidx;                    /* -1: not rehashing */
    int pauserehash;                   /* > 0: rehashing paused */
} dict;

typedef struct {
    dict *d;
    long index;
    int table, safe;
    dictEntry *entry, *next_entry;
} dictIterator;

/* The server's clock and counters, read all over the command path. */
static struct {
    long long mstime, unixtime;
    unsigned long long stat_numcommands, stat_keyspace_hits, stat_keyspace_misses;
    unsigned long long stat_expiredkeys, dirty;
} server;

static dict slot_dicts[N_SLOT_DICTS];
static uint64_t dict_compares;        /* informative, on stderr */

static uint64_t dictGenHashFunction(const char *key)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (const char *p = key; *p; p++) {
        h ^= (unsigned char)*p;
        h *= 0x100000001b3ULL;
    }
    return h ^ (h >> 31);
}

static int dictSdsKeyCompare(const char *a, const char *b)
{
    dict_compares++;
    return strcmp(a, b) == 0;
}

static int dictIsRehashing(const dict *d)
{
    return d->rehashidx != -1;
}

static void dictPauseRehashing(dict *d) { d->pauserehash++; }
static void dictResumeRehashing(dict *d) { d->pauserehash--; }

/* Moves up to N buckets from table 0 to table 1. */
static void dictRehash(dict *d, int n)
{
    int empty_visits = n * 10;
    while (n-- && d->used[0] != 0) {
        while (d->table[0][d->rehashidx] == NULL) {
            d->rehashidx++;
            if (--empty_visits == 0)
                return;
        }
        dictEntry *de = d->table[0][d->rehashidx];
        while (de) {
            dictEntry *nextde = de->next;
            uint64_t h = dictGenHashFunction(de->key) & (d->size[1] - 1);
            de->next = d->table[1][h];
            d->table[1][h] = de;
            d->used[0]--;
            d->used[1]++;
            de = nextde;
        }
        d->table[0][d->rehashidx] = NULL;
        d->rehashidx++;
    }
    if (d->used[0] == 0) {
        free(d->table[0]);
        d->table[0] = d->table[1];
        d->size[0] = d->size[1];
        d->used[0] = d->used[1];
        d->table[1] = NULL;
        d->size[1] = d->used[1] = 0;
        d->rehashidx = -1;
    }
}

static void _dictRehashStep(dict *d)
{
    if (d->pauserehash == 0)
        dictRehash(d, 1);
}

static void dictExpand(dict *d, unsigned long size)
{
    unsigned long realsize = DICT_HT_INITIAL_SIZE;
    while (realsize < size)
        realsize *= 2;
    dictEntry **t = calloc(realsize, sizeof *t);
    if (!t) { perror("calloc"); exit(1); }
    if (d->table[0] == NULL) {
        d->table[0] = t;
        d->size[0] = realsize;
        return;
    }
    d->table[1] = t;
    d->size[1] = realsize;
    d->rehashidx = 0;
}

static void _dictExpandIfNeeded(dict *d)
{
    if (dictIsRehashing(d))
        return;                        /* one rehash at a time */
    if (d->size[0] == 0)
        dictExpand(d, DICT_HT_INITIAL_SIZE);
    else if (d->used[0] >= d->size[0])
        dictExpand(d, d->used[0] + 1);
}

static dictEntry *dictFind(dict *d, const char *key)
{
    if (d->used[0] + d->used[1] == 0)
        return NULL;
    if (dictIsRehashing(d))
        _dictRehashStep(d);
    uint64_t h = dictGenHashFunction(key);
    for (int table = 0; table <= 1; table++) {
        if (!d->table[table])
            break;
        for (dictEntry *he = d->table[table][h & (d->size[table] - 1)]; he; he = he->next)
            if (dictSdsKeyCompare(key, he->key))
                return he;
        if (!dictIsRehashing(d))
            break;
    }
    return NULL;
}

static dictEntry *dictAddRaw(dict *d, const char *key)
{
    if (dictIsRehashing(d))
        _dictRehashStep(d);
    _dictExpandIfNeeded(d);
    int table = dictIsRehashing(d) ? 1 : 0;
    uint64_t h = dictGenHashFunction(key) & (d->size[table] - 1);
    dictEntry *de = calloc(1, sizeof *de);
    if (!de) { perror("calloc"); exit(1); }
    snprintf(de->key, sizeof de->key, "%s", key);
    de->next = d->table[table][h];
    d->table[table][h] = de;
    d->used[table]++;
    return de;
}

static void dictInitSafeIterator(dictIterator *it, dict *d)
{
    memset(it, 0, sizeof *it);
    it->d = d;
    it->index = -1;
    it->safe = 1;
}

static dictEntry *dictNext(dictIterator *it)
{
    for (;;) {
        if (it->entry == NULL) {
            if (it->index == -1 && it->table == 0 && it->safe)
                dictPauseRehashing(it->d);   /* first call: no rehash under us */
            it->index++;
            if (it->index >= (long)it->d->size[it->table]) {
                if (dictIsRehashing(it->d) && it->table == 0) {
                    it->table++;
                    it->index = 0;
                } else {
                    return NULL;
                }
            }
            if (!it->d->table[it->table])
                return NULL;
            it->entry = it->d->table[it->table][it->index];
        } else {
            it->entry = it->next_entry;
        }
        if (it->entry) {
            it->next_entry = it->entry->next;
            return it->entry;
        }
    }
}

static void dictResetIterator(dictIterator *it)
{
    if (!(it->index == -1 && it->table == 0) && it->safe)
        dictResumeRehashing(it->d);
}

/* ------------------------------------------------------------ kvstore */
typedef struct {
    int slot;
    dictIterator di;
} dbIterator;

static unsigned keyHashSlot(const char *key)
{
    unsigned h = 0;
    for (const char *p = key; *p; p++)
        h = h * 33 + (unsigned char)*p;
    return h % N_SLOT_DICTS;
}

static void dbIteratorInit(dbIterator *it)
{
    it->slot = 0;
    dictInitSafeIterator(&it->di, &slot_dicts[0]);
}

/* The next key of the keyspace, moving on to the next slot dictionary
 * when one is done. */
static dictEntry *dbIteratorNext(dbIterator *it)
{
    dictEntry *de = dictNext(&it->di);
    while (!de && it->slot + 1 < N_SLOT_DICTS) {
#ifdef VPROF_CASE_FIX
        dictResetIterator(&it->di);     /* resumes the finished dict's rehashing */
#endif
        it->slot++;
        dictInitSafeIterator(&it->di, &slot_dicts[it->slot]); /* FIX: reset the finished dict's iterator (dictResetIterator) before moving on */
        de = dictNext(&it->di);
    }
    return de;
}

static void dbReleaseIterator(dbIterator *it)
{
    dictResetIterator(&it->di);
}

/* ------------------------------------------------------------ commands */
static void updateCachedTime(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    server.mstime = (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    server.unixtime = ts.tv_sec;
}

static int keyIsExpired(const dictEntry *de)
{
    return de->expire && de->expire < server.mstime;
}

static dictEntry *lookupKey(const char *key)
{
    dictEntry *de = dictFind(&slot_dicts[keyHashSlot(key)], key);
    if (de && keyIsExpired(de)) {
        server.stat_expiredkeys++;
        return NULL;
    }
    if (de) server.stat_keyspace_hits++; else server.stat_keyspace_misses++;
    return de;
}

static uint64_t getCommand(const char *key)
{
    dictEntry *de = lookupKey(key);
    return de ? de->val : 0;
}

static void setCommand(const char *key, uint64_t val)
{
    dict *d = &slot_dicts[keyHashSlot(key)];
    dictEntry *de = dictFind(d, key);
    if (!de)
        de = dictAddRaw(d, key);
    de->val = val;
    /* Long TTLs: nothing expires during the run, but every lookup checks. */
    de->expire = server.mstime + 86400000LL;
    server.dirty++;
}

static int stringmatch(const char *pattern, const char *s)
{
    for (; *pattern; pattern++, s++) {
        if (*pattern == '*')
            return 1;
        if (*pattern != *s)
            return 0;
    }
    return *s == 0;
}

static long keysCommand(const char *pattern)
{
    dbIterator it;
    long matched = 0;
    dbIteratorInit(&it);
    for (dictEntry *de; (de = dbIteratorNext(&it)) != NULL;)
        if (stringmatch(pattern, de->key) && !keyIsExpired(de))
            matched++;
    dbReleaseIterator(&it);
    return matched;
}

typedef enum { CMD_GET, CMD_SET, CMD_KEYS } cmd_t;

static uint64_t processCommand(cmd_t cmd, const char *arg, uint64_t val)
{
    server.stat_numcommands++;
    uint64_t r = 0;
    switch (cmd) {
    case CMD_GET:  r = getCommand(arg); break;
    case CMD_SET:  setCommand(arg, val); break;
    case CMD_KEYS: r = (uint64_t)keysCommand(arg); break;
    }
    CASE_PROGRESS("commands");
    return r;
}

int main(int argc, char **argv)
{
    opt_t opts[] = {
        { "keys",     "keys SET during the load",                  240000, 1, 50000000, 0 },
        { "gets",     "GETs after the load",                      1200000, 0, 500000000, 0 },
        { "keys-at",  "KEYS command after this many SETs (-1: none)", 240000, -1, 50000000, 0 },
    };
    opts_parse(argc, argv, opts, NOPTS(opts));
    long n_keys = opt_get(opts, NOPTS(opts), "keys");
    long n_gets = opt_get(opts, NOPTS(opts), "gets");
    long keys_at = opt_get(opts, NOPTS(opts), "keys-at");
    for (int i = 0; i < N_SLOT_DICTS; i++)
        slot_dicts[i].rehashidx = -1;

    rng_t r;
    rng_seed(&r, 12757);
    char key[KEY_MAX];
    long matched = -1;
    uint64_t h = 0;
    for (long i = 0; i <= n_keys; i++) {
        updateCachedTime();
        if (i == keys_at)
            matched = (long)processCommand(CMD_KEYS, "user:1*", 0);
        if (i == n_keys)
            break;
        snprintf(key, sizeof key, "user:%ld", i);
        processCommand(CMD_SET, key, rng_next(&r));
    }
    for (long i = 0; i < n_gets; i++) {
        updateCachedTime();
        /* One GET in eight misses (keys that were never set). */
        long k = (long)rng_below(&r, (uint64_t)n_keys + (uint64_t)n_keys / 7);
        snprintf(key, sizeof key, "user:%ld", k);
        h = h * 31 + processCommand(CMD_GET, key, 0);
    }
    printf("%ld keys, KEYS matched %ld, %ld GETs: hits %llu misses %llu, values %016llx\n",
           n_keys, matched, n_gets, server.stat_keyspace_hits, server.stat_keyspace_misses,
           (unsigned long long)h);
    unsigned long tables = 0, rehashing = 0;
    for (int i = 0; i < N_SLOT_DICTS; i++) {
        tables += slot_dicts[i].size[0] + slot_dicts[i].size[1];
        rehashing += dictIsRehashing(&slot_dicts[i]);
    }
    fprintf(stderr, "buckets %lu, dicts still rehashing %lu, key compares %llu\n",
            tables, rehashing, (unsigned long long)dict_compares);
    return 0;
}
