/* A parallel checksum job whose bottleneck is the CPU, not waiting - the
 * control case of the --waits corpus (wPerf, paper 003 §3.1: a sink means
 * the execution of that thread is the bottleneck, "beyond the scope of
 * off-CPU analysis"). Modelled on key-derivation and checksum settings
 * raised far beyond need (PBKDF2-style iteration counts).
 *
 * main splits the input into one slice per hash_worker thread and joins
 * them. Each worker digests its slice chunk by chunk (digest_chunk), and
 * every chunk is strengthened --rounds times (mix_round). The threads never
 * wait for each other: the wait-for graph has only main -> hash_worker (the
 * joins) and the workers are sinks. With --rounds 2 (normal) the job is
 * quick; with --rounds 24 (buggy) digest_chunk makes mix_round run 12x as
 * often - gprof ranks mix_round, the function the setting multiplies. */
#include "../../../bugs/common/corpus.h"
#include <pthread.h>

#define MAX_WORKERS 16
#define CHUNK_WORDS 256

static long rounds, chunks_per_worker;
static uint64_t input_seed;

struct slice { int id; uint64_t digest; };

static void mix_round(uint64_t *c, uint64_t key)
{
    for (int i = 0; i < CHUNK_WORDS; i++) {
        uint64_t x = c[i] ^ key;
        x ^= x >> 31;
        x *= 0x7fb5d329728ea185ULL;
        x ^= x >> 27;
        c[i] = x + c[(i + 1) % CHUNK_WORDS];
    }
}

static uint64_t digest_chunk(uint64_t *c, uint64_t key)
{
    for (long r = 0; r < rounds; r++)   /* FIX: rounds of the setting, not a multiple of it */
        mix_round(c, key + (uint64_t)r);
    uint64_t h = 0;
    for (int i = 0; i < CHUNK_WORDS; i++) h = (h ^ c[i]) * 1099511628211ULL;
    return h;
}

static void fill_chunk(uint64_t *c, int worker, long n)
{
    rng_t r;
    rng_seed(&r, input_seed ^ ((uint64_t)worker << 32) ^ (uint64_t)n);
    for (int i = 0; i < CHUNK_WORDS; i++) c[i] = rng_next(&r);
}

static void *hash_worker(void *arg)
{
    struct slice *s = arg;
    uint64_t c[CHUNK_WORDS];
    for (long n = 0; n < chunks_per_worker; n++) {
        fill_chunk(c, s->id, n);
        s->digest ^= digest_chunk(c, (uint64_t)n);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    opt_t o[] = {
        {"workers", "worker threads", 2, 1, MAX_WORKERS, 0},
        {"chunks", "chunks per worker", 3000, 1, 100000000, 0},
        {"rounds", "strengthening rounds per chunk", 2, 1, 100000, 0},
        {"seed", "input seed", 7, 0, 1L << 40, 0},
    };
    opts_parse(argc, argv, o, NOPTS(o));
    int workers = (int)opt_get(o, NOPTS(o), "workers");
    chunks_per_worker = opt_get(o, NOPTS(o), "chunks");
    rounds = opt_get(o, NOPTS(o), "rounds");
    input_seed = (uint64_t)opt_get(o, NOPTS(o), "seed");
    pthread_t t[MAX_WORKERS];
    struct slice s[MAX_WORKERS];
    for (int i = 0; i < workers; i++) {
        s[i] = (struct slice){i, 0};
        if (pthread_create(&t[i], NULL, hash_worker, &s[i])) return 1;
    }
    uint64_t all = 0;
    for (int i = 0; i < workers; i++) {
        pthread_join(t[i], NULL);
        all ^= s[i].digest;
    }
    printf("digest %016llx\n", (unsigned long long)all);
    return 0;
}
