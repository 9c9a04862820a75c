/* prog_soak - the program the hostile-metadata soak profiles (bench/soak).
 *
 * Its output and exit status depend only on its arguments, never on timing,
 * so a run under vprof must print exactly what a run without it prints. It
 * has what the runtime must survive: threads (a mutex, joins), fork
 * (children report through a pipe, the parent waits for them), system calls
 * that a signal may interrupt (pipe reads and writes, wait, nanosleep), and
 * variables of every kind vprof-meta describes (globals, statics, locals in
 * registers and on the stack, floats, pointers, a linked list).
 *
 * It does not retry a read, write or wait that fails with EINTR, as many
 * programs do not: the ticks are thread-directed, arrive only while the
 * thread runs, and their handler is installed with SA_RESTART, so no system
 * call of the program may ever fail because of vprof (it exits 1 if one
 * does).
 *
 *   prog_soak work N          N rounds in the main thread
 *   prog_soak threads T N     T threads of N rounds each
 *   prog_soak fork C N        C children of N rounds each
 *   prog_soak mix T C N       T threads and C children, N rounds each
 *   prog_soak spin T C        T threads and the main thread compute until
 *                             SIGTERM, after C children ran a short job each
 *                             (the soak's SIGTERM subset)
 *
 * Prints one checksum per part; exits with 3 + (total % 50). */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct node {
    struct node *next;
    long key;
    double weight;
    unsigned char tag;
};

#define NODES 64
#define TABLE 1024

volatile int g_phase;
long g_rounds_done;
double g_scale = 1.5;
float g_ratio = 0.25f;
unsigned char g_flag = 1;
short g_small = -7;
struct node *g_list;
long *g_table;
const char *g_name = "soak";
static struct node nodes[NODES];
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static long g_shared_sum;

static void build_list(void)
{
    for (int i = 0; i < NODES; i++) {
        nodes[i].key = (long)i * 7919;
        nodes[i].weight = 1.0 / (i + 1);
        nodes[i].tag = (unsigned char)(i * 13);
        nodes[i].next = i + 1 < NODES ? &nodes[i + 1] : NULL;
    }
    g_list = &nodes[0];
    g_table = malloc(TABLE * sizeof *g_table);
    for (int i = 0; i < TABLE; i++)
        g_table[i] = (long)i * 2654435761u;
}

/* One round: integer mixing over the table, a walk of the list, float
 * arithmetic. Pure function of (seed, round). */
__attribute__((noinline)) long mix_round(long seed, int round)
{
    uint64_t h = (uint64_t)seed * 0x9e3779b97f4a7c15ull + (uint64_t)round;
    for (int i = 0; i < 4096; i++) {
        long v = g_table[(h >> 7) & (TABLE - 1)];
        h ^= (uint64_t)v + (h << 6) + (h >> 2);
        h *= 0xff51afd7ed558ccdull;
    }
    double w = 0;
    for (const struct node *n = g_list; n; n = n->next)
        w += n->weight * (double)(n->key & 0xff) * g_scale + n->tag * g_ratio;
    return (long)(h >> 17) ^ (long)w ^ g_small;
}

__attribute__((noinline)) long run_rounds(long seed, int rounds)
{
    long acc = 0;
    for (int r = 0; r < rounds; r++) {
        acc = acc * 31 + mix_round(seed, r);
        if (r % 64 == 63) {     /* a short sleep: an interruptible syscall */
            struct timespec ts = {0, 1000};
            nanosleep(&ts, NULL);
        }
    }
    g_rounds_done += rounds;
    return acc;
}

struct job {
    long seed;
    int rounds;
    long result;
};

static void *thread_main(void *arg)
{
    struct job *j = arg;
    j->result = run_rounds(j->seed, j->rounds);
    pthread_mutex_lock(&g_lock);
    g_shared_sum += j->result & 0xffff;
    pthread_mutex_unlock(&g_lock);
    return NULL;
}

static long do_threads(int t, int rounds)
{
    pthread_t tid[64];
    struct job job[64];
    long sum = 0;
    if (t > 64)
        t = 64;
    for (int i = 0; i < t; i++) {
        job[i] = (struct job){.seed = 100 + i, .rounds = rounds};
        if (pthread_create(&tid[i], NULL, thread_main, &job[i])) {
            fprintf(stderr, "prog_soak: pthread_create failed\n");
            exit(1);
        }
    }
    for (int i = 0; i < t; i++) {
        pthread_join(tid[i], NULL);
        sum = sum * 17 + job[i].result;
    }
    return sum;
}

/* Reads exactly n bytes (a pipe may return less at a time). */
static int read_all(int fd, void *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, (char *)buf + got, n - got);
        if (r <= 0) {
            fprintf(stderr, "prog_soak: read: %s\n", r ? strerror(errno) : "end of file");
            return -1;
        }
        got += (size_t)r;
    }
    return 0;
}

static long do_fork(int c, int rounds)
{
    int fd[2];
    long sum = 0;
    if (pipe(fd) < 0)
        exit(1);
    fflush(stdout);             /* nothing buffered is printed twice */
    for (int i = 0; i < c; i++) {
        pid_t p = fork();
        if (p < 0)
            exit(1);
        if (p == 0) {
            close(fd[0]);
            g_phase = 3;
            long r[2] = {i, run_rounds(1000 + i, rounds)};
            ssize_t w = write(fd[1], r, sizeof r);
            if (w != (ssize_t)sizeof r)
                fprintf(stderr, "prog_soak: write: %s\n", strerror(errno));
            exit(w == (ssize_t)sizeof r ? 10 + i % 5 : 1);   /* exit: vprof's exit path too */
        }
    }
    close(fd[1]);
    long res[64] = {0};
    for (int i = 0; i < c; i++) {
        long r[2];
        if (read_all(fd[0], r, sizeof r) < 0 || r[0] < 0 || r[0] >= c || r[0] >= 64)
            exit(1);
        res[r[0]] = r[1];
    }
    close(fd[0]);
    for (int i = 0; i < c; i++) {
        int st;
        pid_t p = wait(&st);
        if (p < 0 || !WIFEXITED(st)) {
            fprintf(stderr, "prog_soak: wait: %s\n", p < 0 ? strerror(errno) : "child killed");
            exit(1);
        }
        sum += WEXITSTATUS(st);   /* 10..14, whichever child ends first */
    }
    for (int i = 0; i < c && i < 64; i++)
        sum = sum * 13 + res[i];
    return sum;
}

static void *spin_main(void *arg)
{
    long s = (long)(intptr_t)arg;
    for (int r = 0;; r++)
        s += mix_round(s, r);
    return NULL;
}

int main(int argc, char **argv)
{
    build_list();
    g_phase = 1;
    long total = 0;
    const char *mode = argc > 1 ? argv[1] : "";
    int a = argc > 2 ? atoi(argv[2]) : 0, b = argc > 3 ? atoi(argv[3]) : 0;
    int c = argc > 4 ? atoi(argv[4]) : 0;
    if (!strcmp(mode, "work") && argc == 3) {
        total = run_rounds(1, a);
        printf("work %ld\n", total);
    } else if (!strcmp(mode, "threads") && argc == 4) {
        g_phase = 2;
        total = do_threads(a, b);
        printf("threads %ld shared %ld\n", total, g_shared_sum);
    } else if (!strcmp(mode, "fork") && argc == 4) {
        total = do_fork(a, b);
        printf("fork %ld\n", total);
    } else if (!strcmp(mode, "mix") && argc == 5) {
        long f = do_fork(b, c);
        long t = do_threads(a, c);
        long w = run_rounds(2, c);
        total = f ^ t ^ w;
        printf("mix fork %ld threads %ld work %ld\n", f, t, w);
    } else if (!strcmp(mode, "spin") && argc == 4) {
        /* the line tells the soak the program is up; SIGTERM follows */
        printf("spin fork %ld\n", do_fork(b, 8));
        fflush(stdout);
        pthread_t tid;
        for (int i = 0; i < a; i++)
            pthread_create(&tid, NULL, spin_main, (void *)(intptr_t)i);
        spin_main((void *)(intptr_t)a);
    } else {
        fprintf(stderr, "usage: prog_soak work N | threads T N | fork C N | mix T C N | spin T C\n");
        return 2;
    }
    return 3 + (int)((unsigned long)total % 50);
}
