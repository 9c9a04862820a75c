/* A journal whose append holds the journal lock across the disk sync,
 * modelled on the group-commit bugs wPerf's analysis is built for (paper
 * 003, §2 and §3.1: "B needs to sync data to the disk", the lock makes it
 * worse) and on MySQL's binlog/redo-log commit before group commit: every
 * client thread formats its record, takes the journal lock, checksums and
 * writes the record and - when the sync policy asks - fdatasync()s the
 * journal before it unlocks.
 *
 * The bug: with --sync-every 1 (buggy) journal_append() syncs each record
 * while holding journal_lock, so the other clients wait for the lock while
 * the holder waits for the disk; with --sync-every 16 (normal) most appends
 * only write. gprof ranks the CPU loops (checksum_record, format_record);
 * the wait-for graph has a knot of the clients and the disk whose edges
 * name the lock's call site in journal_append and the holder's fdatasync
 * in journal_sync. */
#include "../../../bugs/common/corpus.h"
#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#define MAX_CLIENTS 32
#define REC_WORDS   512

static pthread_mutex_t journal_lock = PTHREAD_MUTEX_INITIALIZER;
static int journal_fd;
static long sync_every, records_per_client, work;
static long appended, synced;
static uint64_t journal_sum;

struct record { uint64_t w[REC_WORDS]; };

/* Client-side CPU: fill the record. */
static void format_record(struct record *r, long client, long i)
{
    uint64_t x = (uint64_t)(client * 1000003 + i) * 0x9e3779b97f4a7c15ULL + 1;
    for (long k = 0; k < work; k++) {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        r->w[k % REC_WORDS] += x;
    }
}

/* Under the lock: the journal's running checksum over the record. */
static uint64_t checksum_record(const struct record *r)
{
    uint64_t h = journal_sum;
    for (long pass = 0; pass < 2 * work / REC_WORDS + 1; pass++)
        for (int k = 0; k < REC_WORDS; k++)
            h = (h ^ r->w[k]) * 1099511628211ULL + (uint64_t)pass;
    return h;
}

static void journal_sync(void)
{
    if (fdatasync(journal_fd) != 0) {
        perror("fdatasync");
        exit(1);
    }
    synced++;
}

static void journal_append(const struct record *r)
{
    pthread_mutex_lock(&journal_lock);
    journal_sum = checksum_record(r);
    if (write(journal_fd, r, sizeof *r) != (ssize_t)sizeof *r) {
        perror("journal write");
        exit(1);
    }
    if (++appended % sync_every == 0)
        journal_sync();             /* FIX: sync after unlocking, one sync for all appended (group commit) */
    pthread_mutex_unlock(&journal_lock);
}

static void *client_main(void *arg)
{
    long client = (long)(intptr_t)arg;
    struct record r = {{0}};
    for (long i = 0; i < records_per_client; i++) {
        format_record(&r, client, i);
        journal_append(&r);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    opt_t o[] = {
        {"clients", "client threads", 4, 1, MAX_CLIENTS, 0},
        {"records", "records per client", 16, 1, 1000000, 0},
        {"sync-every", "fdatasync the journal every N records (1: each one)", 16, 1, 1000000, 0},
        {"work", "CPU work per record (PRNG steps)", 800000, 1, 1000000000, 0},
    };
    opts_parse(argc, argv, o, NOPTS(o));
    int clients = (int)opt_get(o, NOPTS(o), "clients");
    records_per_client = opt_get(o, NOPTS(o), "records");
    sync_every = opt_get(o, NOPTS(o), "sync-every");
    work = opt_get(o, NOPTS(o), "work");
    journal_fd = open("waits_lock_io.journal", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (journal_fd < 0) { perror("waits_lock_io.journal"); return 1; }
    pthread_t t[MAX_CLIENTS];
    for (int i = 0; i < clients; i++)
        if (pthread_create(&t[i], NULL, client_main, (void *)(intptr_t)i)) return 1;
    for (int i = 0; i < clients; i++) pthread_join(t[i], NULL);
    journal_sync();
    close(journal_fd);
    printf("appended %ld records\n", appended);
    return 0;
}
