/* Transactions updating one hot row, with InnoDB's deadlock detector run on
 * every lock wait under the lock-system mutex, modelled on MariaDB
 * MDEV-24731 ("Excessive mutex contention in
 * DeadlockChecker::check_and_resolve()", fixed in 10.6 by a cycle search
 * along each transaction's single wait_trx) and MySQL Bug #49047 ("InnoDB
 * deadlock detection is CPU intensive with many locks on a single row").
 *
 * Worker threads run the same transaction: take an exclusive record lock
 * on the hot row, update it, commit. A transaction that must wait enqueues
 * a waiting lock, runs the deadlock check while holding lock_sys.mutex,
 * then sleeps on its condition variable until the lock is granted.
 *
 * The bug: DeadlockChecker::check_and_resolve() runs a depth-first search
 * of the waits-for graph in which every visited waiter scans every lock
 * ahead of it in the record's queue (lock_has_to_wait), O(waiters^2) per
 * wait, all under lock_sys.mutex, which the committing holder also needs:
 * with 2 threads (normal) the queue holds one waiter; with 24 (buggy) it
 * holds up to 23, the searches take the mutex most of the time and every
 * thread queues for it. gprof blames the search and lock_has_to_wait; the
 * check_and_resolve entry, whose way of searching is what 10.6 replaced
 * (Deadlock::find_cycle follows one wait_trx pointer per transaction), is
 * the root cause. C++17, built with inlining (the STL disappears into the
 * callers; root cause and cost function are noinline); vprof runs it with
 * latency events. */
extern "C" {
#include "../common/corpus.h"
}
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#define REC_HEAP_MAX 256               /* records on the page */

struct trx_t;

struct lock_t {
    trx_t *trx;
    bool granted;
    uint32_t rec_bitmap[REC_HEAP_MAX / 32];   /* heap numbers the lock covers */
};

struct trx_t {
    uint64_t id = 0;
    lock_t *wait_lock = nullptr;
    trx_t *wait_trx = nullptr;         /* 10.6: the one transaction we wait for */
    uint64_t mark = 0;                 /* visited in the current search */
    std::condition_variable cond;
    uint64_t n_waits = 0;
};

/* lock_sys: one mutex over the lock queues (InnoDB's lock_sys.mutex). */
static struct {
    std::mutex mutex;
    std::vector<lock_t *> rec_queue;   /* the hot record's queue, oldest first */
    uint64_t mark_counter = 0;
    uint64_t n_searches = 0, n_steps = 0;
} lock_sys;

static int64_t hot_row_value;          /* the row itself */

/* --------------------------------------------------------------- locks */
static bool lock_get_nth_bit(const lock_t *l, int heap_no)
{
    return (l->rec_bitmap[heap_no / 32] >> (heap_no % 32)) & 1;
}

/* Does lock A have to wait for lock B? (Both X locks on the record.) */
__attribute__((noinline)) static bool lock_has_to_wait(const lock_t *a, const lock_t *b)
{
    if (a->trx == b->trx)
        return false;
    for (int heap_no = 0; heap_no < REC_HEAP_MAX; heap_no++)
        if (lock_get_nth_bit(a, heap_no) && lock_get_nth_bit(b, heap_no))
            return true;
    return false;
}

class DeadlockChecker {
public:
    /* Searches the waits-for graph from TRX; true if it finds a cycle. */
    static bool check_and_resolve(trx_t *trx);

private:
    explicit DeadlockChecker(trx_t *start) : m_start(start), m_mark(++lock_sys.mark_counter) {}
    bool search();
    bool is_visited(const trx_t *t) const { return t->mark == m_mark; }

    trx_t *m_start;
    uint64_t m_mark;
    std::vector<const lock_t *> m_stack;
};

/* Depth-first: for each waiting lock reached, every lock ahead of it in
 * the queue that it has to wait for leads to that lock's transaction. */
bool DeadlockChecker::search()
{
    m_stack.push_back(m_start->wait_lock);
    while (!m_stack.empty()) {
        const lock_t *wait_lock = m_stack.back();
        m_stack.pop_back();
        for (const lock_t *ahead : lock_sys.rec_queue) {
            if (ahead == wait_lock)
                break;                     /* only locks ahead of it */
            lock_sys.n_steps++;
            if (!lock_has_to_wait(wait_lock, ahead))
                continue;
            trx_t *blocker = ahead->trx;
            if (blocker == m_start)
                return true;               /* a cycle: we wait for ourselves */
            if (blocker->wait_lock && !is_visited(blocker)) {
                blocker->mark = m_mark;
                m_stack.push_back(blocker->wait_lock);
            }
        }
    }
    return false;
}

#ifdef VPROF_CASE_FIX
/* 10.6: follow the single wait_trx chain (Brent's cycle detection). */
static bool find_cycle(trx_t *trx)
{
    trx_t *tortoise = trx, *hare = trx;
    for (unsigned power = 1, l = 1; (hare = hare->wait_trx) != nullptr; l++) {
        lock_sys.n_steps++;
        if (tortoise == hare)
            return true;
        if (l == power) {
            power <<= 1;
            l = 0;
            tortoise = hare;
        }
    }
    return false;
}
#endif

__attribute__((noinline)) bool DeadlockChecker::check_and_resolve(trx_t *trx)
{
    lock_sys.n_searches++;
#ifdef VPROF_CASE_FIX
    return find_cycle(trx);
#else
    DeadlockChecker checker(trx);
    return checker.search(); /* FIX: follow trx->wait_trx (find_cycle) instead of searching every lock ahead */
#endif
}

static lock_t *lock_rec_create(trx_t *trx, bool granted)
{
    lock_t *l = new lock_t();
    l->trx = trx;
    l->granted = granted;
    /* The hot row is the page's last record; the transaction also locked
     * a row of its own earlier on the page (a gap lock of its range scan). */
    int own = 2 + (int)(trx->id % (REC_HEAP_MAX - 3));
    l->rec_bitmap[own / 32] |= 1u << (own % 32);
    l->rec_bitmap[(REC_HEAP_MAX - 1) / 32] |= 1u << ((REC_HEAP_MAX - 1) % 32);
    lock_sys.rec_queue.push_back(l);
    return l;
}

/* Takes an X lock on the hot record, waiting if another holds it. */
static void lock_rec_lock(trx_t *trx)
{
    std::unique_lock<std::mutex> guard(lock_sys.mutex);
    bool must_wait = !lock_sys.rec_queue.empty();
    trx_t *ahead = must_wait ? lock_sys.rec_queue.back()->trx : nullptr;
    lock_t *l = lock_rec_create(trx, !must_wait);
    if (!must_wait)
        return;
    trx->wait_lock = l;
    trx->wait_trx = ahead;
    trx->n_waits++;
    if (DeadlockChecker::check_and_resolve(trx)) {
        fprintf(stderr, "deadlock\n");   /* never on one row */
        exit(3);
    }
    trx->cond.wait(guard, [l] { return l->granted; });
    trx->wait_lock = nullptr;
    trx->wait_trx = nullptr;
}

/* Commit: releases the lock and grants the next waiter. */
static void lock_release(trx_t *trx)
{
    std::scoped_lock guard(lock_sys.mutex);          /* C++17 */
    auto &q = lock_sys.rec_queue;
    for (size_t i = 0; i < q.size(); i++)
        if (q[i]->trx == trx) {
            delete q[i];
            q.erase(q.begin() + (long)i);
            break;
        }
    if (!q.empty() && !q.front()->granted) {
        lock_t *next = q.front();
        next->granted = true;
        next->trx->wait_trx = nullptr;
        if (q.size() > 1)
            q[1]->trx->wait_trx = next->trx;
        next->trx->cond.notify_one();
    }
}

/* ----------------------------------------------------------- the work */
static int64_t row_upd_compute(uint64_t trx_id)
{
    uint64_t h = trx_id;
    for (int i = 0; i < 1500; i++)
        h = (h ^ (h >> 31)) * 0x7fb5d329728ea185ULL + (uint64_t)i;
    return (int64_t)(h % 1000);
}

static uint64_t parse_query(uint64_t trx_id)
{
    uint64_t h = trx_id * 2654435761u;
    for (int i = 0; i < 3000; i++)
        h = h * 6364136223846793005ULL + 1442695040888963407ULL;
    return h;
}

static void trx_run(trx_t *trx)
{
    parse_query(trx->id);
    lock_rec_lock(trx);
    int64_t delta = row_upd_compute(trx->id);   /* under the row lock */
    hot_row_value += delta;
    lock_release(trx);
    CASE_PROGRESS("transactions");
}

static void worker(int id, long n_trx, int n_threads)
{
    trx_t trx;
    for (long i = 0; i < n_trx; i++) {
        trx.id = (uint64_t)i * (uint64_t)n_threads + (uint64_t)id + 1;
        trx_run(&trx);
    }
}

int main(int argc, char **argv)
{
    opt_t opts[] = {
        { "threads",      "client threads updating the hot row",  2, 1, 256, 0 },
        { "transactions", "transactions in total",            40000, 1, 100000000, 0 },
    };
    opts_parse(argc, argv, opts, NOPTS(opts));
    int n_threads = (int)opt_get(opts, NOPTS(opts), "threads");
    long total = opt_get(opts, NOPTS(opts), "transactions");
    std::vector<std::thread> threads;
    for (int t = 0; t < n_threads; t++)
        threads.emplace_back(worker, t, total / n_threads, n_threads);
    for (auto &t : threads)
        t.join();
    printf("%d threads, %ld transactions: row value %lld\n", n_threads,
           total / n_threads * n_threads, (long long)hot_row_value);
    fprintf(stderr, "deadlock searches %llu, steps %llu\n",
            (unsigned long long)lock_sys.n_searches, (unsigned long long)lock_sys.n_steps);
    return 0;
}
