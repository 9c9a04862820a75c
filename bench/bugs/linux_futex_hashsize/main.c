/* A simulated kernel scheduling tasks that sleep and wake on futexes,
 * modelled on the Linux futex hash table that was sized once at boot, for
 * any machine, until "futexes: Increase hash table size for better
 * performance" (Davidlohr Bueso, Linux 3.13) sized it by the number of
 * possible CPUs.
 *
 * Every task waits on its own futex word. A wake-up hashes the futex key
 * to a bucket of the global futex hash, takes the bucket's lock, walks the
 * bucket's waiter list comparing keys (match_futex) and dequeues the
 * waiter; the woken task runs a little and waits again. A global jiffies
 * clock, read from the monotonic clock at every scheduler tick, is read
 * all over the wait/wake path for timeouts and accounting.
 *
 * The bug: futex_init() sets futex_hashsize to 256 at boot whatever the
 * machine. On a 4-CPU machine running 512 tasks (normal) a bucket holds two
 * waiters; on a 64-CPU machine running 16,384 (buggy) it holds 64 and every
 * wake-up walks half of them. gprof blames match_futex and futex_wake; futex_init,
 * which ran once at boot, is the root cause (the fix sizes the table as
 * 256 * num_possible_cpus()). Built at -O0 (opt key). */
#include "../common/corpus.h"
#include <time.h>

struct mm_struct { int id; };

union futex_key {
    struct { uintptr_t address; struct mm_struct *mm; } private;
};

struct task_struct;

struct futex_q {
    struct futex_q *next, *prev;
    union futex_key key;
    struct task_struct *task;
    unsigned long timeout;             /* jiffies, 0 = none */
};

struct futex_hash_bucket {
    int lock;                          /* a spinlock, uncontended here */
    unsigned long waiters;
    struct futex_q head;               /* list head */
};

enum { TASK_RUNNING, TASK_INTERRUPTIBLE };

struct task_struct {
    int pid, cpu, state;
    uint32_t futex_word;
    struct futex_q q;
    unsigned long long sum_exec, nvcsw;
    unsigned long last_ran;
};

static struct futex_hash_bucket *futex_queues;
static unsigned long futex_hashsize;
static int nr_cpu_ids;
static volatile unsigned long jiffies;          /* ms since boot, from the clock */
static struct timespec boot_ts;
static struct mm_struct init_mm = { 1 };
static unsigned long long nr_context_switches, nr_wakeups;

/* ------------------------------------------------------------- helpers */
static __attribute__((unused)) unsigned long roundup_pow_of_two(unsigned long n)
{
    unsigned long r = 1;
    while (r < n)
        r <<= 1;
    return r;
}

static int num_possible_cpus(void)
{
    return nr_cpu_ids;
}

static void update_jiffies(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    jiffies = (unsigned long)((ts.tv_sec - boot_ts.tv_sec) * 1000 +
                              (ts.tv_nsec - boot_ts.tv_nsec) / 1000000);
}

static uint32_t jhash2(const uint32_t *k, int n, uint32_t initval)
{
    uint32_t a = 0xdeadbeef + ((uint32_t)n << 2) + initval, b = a, c = a;
    for (int i = 0; i < n; i++) {
        a += k[i];
        a -= c; a ^= (c << 4) | (c >> 28); c += b;
        b -= a; b ^= (a << 6) | (a >> 26); a += c;
        c -= b; c ^= (b << 8) | (b >> 24); b += a;
    }
    return c ^ (a >> 3) ^ (b << 7);
}

/* ---------------------------------------------------------------- boot */
static void futex_init(void)
{
#ifdef VPROF_CASE_FIX
    futex_hashsize = roundup_pow_of_two(256 * (unsigned long)num_possible_cpus());
#else
    futex_hashsize = 256; /* FIX: roundup_pow_of_two(256 * num_possible_cpus()) */
#endif
    futex_queues = calloc(futex_hashsize, sizeof *futex_queues);
    if (!futex_queues) { perror("calloc"); exit(1); }
    for (unsigned long i = 0; i < futex_hashsize; i++) {
        futex_queues[i].head.next = futex_queues[i].head.prev = &futex_queues[i].head;
    }
}

/* --------------------------------------------------------------- futex */
static struct futex_hash_bucket *hash_futex(const union futex_key *key)
{
    uint32_t k[3] = { (uint32_t)key->private.address, (uint32_t)(key->private.address >> 32),
                      (uint32_t)key->private.mm->id };
    uint32_t hash = jhash2(k, 3, 0);
    return &futex_queues[hash & (futex_hashsize - 1)];
}

static int match_futex(const union futex_key *a, const union futex_key *b)
{
    return a->private.address == b->private.address && a->private.mm == b->private.mm;
}

static void get_futex_key(uint32_t *uaddr, union futex_key *key)
{
    key->private.address = (uintptr_t)uaddr;
    key->private.mm = &init_mm;
}

static void spin_lock(int *l) { *l = 1; }
static void spin_unlock(int *l) { *l = 0; }

static void queue_me(struct futex_q *q, struct futex_hash_bucket *hb)
{
    q->prev = hb->head.prev;           /* plist_add: at the tail */
    q->next = &hb->head;
    hb->head.prev->next = q;
    hb->head.prev = q;
    hb->waiters++;
}

static void __unqueue_futex(struct futex_q *q, struct futex_hash_bucket *hb)
{
    q->prev->next = q->next;
    q->next->prev = q->prev;
    q->next = q->prev = NULL;
    hb->waiters--;
}

static void futex_wait(struct task_struct *t, unsigned long timeout_ms)
{
    get_futex_key(&t->futex_word, &t->q.key);
    struct futex_hash_bucket *hb = hash_futex(&t->q.key);
    spin_lock(&hb->lock);
    t->q.task = t;
    t->q.timeout = timeout_ms ? jiffies + timeout_ms : 0;
    queue_me(&t->q, hb);
    t->state = TASK_INTERRUPTIBLE;
    spin_unlock(&hb->lock);
}

static void wake_up_state(struct task_struct *t)
{
    t->state = TASK_RUNNING;
    nr_wakeups++;
}

static int futex_wake(uint32_t *uaddr, int nr_wake)
{
    union futex_key key;
    get_futex_key(uaddr, &key);
    struct futex_hash_bucket *hb = hash_futex(&key);
    int ret = 0;
    spin_lock(&hb->lock);
    for (struct futex_q *q = hb->head.next, *next; q != &hb->head && ret < nr_wake; q = next) {
        next = q->next;
        if (match_futex(&q->key, &key)) {
            __unqueue_futex(q, hb);
            wake_up_state(q->task);
            ret++;
        }
    }
    spin_unlock(&hb->lock);
    return ret;
}

/* ------------------------------------------------------------ scheduler */
static uint64_t task_work(struct task_struct *t)
{
    uint64_t h = (uint64_t)t->pid * 0x9e3779b97f4a7c15ULL + jiffies;
    for (int i = 0; i < 8; i++)
        h = (h ^ (h >> 29)) * 0xbf58476d1ce4e5b9ULL;
    t->sum_exec += 8;
    return h;
}

static void context_switch(struct task_struct *t)
{
    nr_context_switches++;
    t->nvcsw++;
    t->last_ran = jiffies;
}

/* One scheduling decision: a running task wakes another (as a producer
 * would signal a consumer's condition variable), which then runs and goes
 * back to sleep on its futex. */
static uint64_t schedule_one(struct task_struct *tasks, int n, rng_t *r)
{
    struct task_struct *target = &tasks[rng_below(r, (uint64_t)n)];
    target->futex_word++;
    if (futex_wake(&target->futex_word, 1) != 1)
        return 0;
    context_switch(target);
    uint64_t h = task_work(target);
    futex_wait(target, 10000);
    return h;
}

int main(int argc, char **argv)
{
    opt_t opts[] = {
        { "cpus",   "possible CPUs",                       4, 1, 4096, 0 },
        { "tasks",  "tasks, each sleeping on its own futex", 512, 1, 10000000, 0 },
        { "wakeups", "wake-ups simulated",                600000, 1, 1000000000, 0 },
    };
    opts_parse(argc, argv, opts, NOPTS(opts));
    nr_cpu_ids = (int)opt_get(opts, NOPTS(opts), "cpus");
    int n = (int)opt_get(opts, NOPTS(opts), "tasks");
    long wakeups = opt_get(opts, NOPTS(opts), "wakeups");
    clock_gettime(CLOCK_MONOTONIC, &boot_ts);
    futex_init();

    struct task_struct *tasks = calloc((size_t)n, sizeof *tasks);
    if (!tasks) { perror("calloc"); return 1; }
    for (int i = 0; i < n; i++) {
        tasks[i].pid = 1000 + i;
        tasks[i].cpu = i % nr_cpu_ids;
        futex_wait(&tasks[i], 0);
    }
    rng_t r;
    rng_seed(&r, 313);
    uint64_t h = 0;
    for (long i = 0; i < wakeups; i++) {
        if ((i & 1023) == 0)
            update_jiffies();              /* the timer tick */
        h ^= schedule_one(tasks, n, &r) >> 7 << 7;
    }
    unsigned long long exec = 0;
    for (int i = 0; i < n; i++)
        exec += tasks[i].sum_exec;
    printf("%d cpus, %d tasks: %llu wake-ups, %llu context switches, work %llu\n",
           num_possible_cpus(), n, nr_wakeups, nr_context_switches, exec);
    fprintf(stderr, "futex hash buckets %lu, jiffies %lu, h %016llx\n", futex_hashsize,
            jiffies, (unsigned long long)h);
    free(tasks);
    free(futex_queues);
    return 0;
}
