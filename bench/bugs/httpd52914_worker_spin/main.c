/* Event-MPM listener threads that spin while idle, modelled on Apache httpd
 * bug 52914 ("workers eat 60-100% CPU even though no client sent
 * requests"), as a multi-threaded program.
 *
 * Each child process of the event MPM has a listener thread: it polls its
 * pollset (listening sockets and kept-alive connections) with a timeout
 * derived from the timer queues, and hands readable connections to the
 * request processing. Here several listener threads each run a simulated
 * clock over the same amount of traffic (requests arriving at fixed-seed
 * random times), so the run is deterministic per thread.
 *
 * The bug: listener_poll_timeout() clamps the poll timeout to the
 * configured KeepAliveTimeout without checking that keep-alive is enabled.
 * With "KeepAlive Off" the timeout is 0: the listener busy-polls between
 * requests. gprof blames the pollset scan and request processing; the
 * wrong condition in listener_poll_timeout() is the root cause. */
#include "../common/corpus.h"
#include <pthread.h>

#define TIMEOUT_FUDGE_US   100000L    /* default poll timeout: 100 ms */
#define POLL_OVERHEAD_US   20L        /* simulated time one poll round takes */
#define MAX_FDS            256

typedef struct {
    int      fd;
    int      keepalive;       /* 1 = idle kept-alive connection */
    long     expiry_us;
} pollfd_t;

typedef struct {
    int       id, n_listen;
    long      keepalive_timeout_us;   /* 0 = KeepAlive Off */
    long      sim_us, end_us;
    rng_t     rng;
    long      next_arrival_us;
    pollfd_t  fds[MAX_FDS];
    int       n_fds;
    int       ka_count;
    uint64_t  polls, requests, response_hash, expired;
} listener_t;

static pthread_mutex_t stats_mutex = PTHREAD_MUTEX_INITIALIZER;
static uint64_t total_polls, total_requests, total_hash;

/* ------------------------------------------------------------- pollset */
static void pollset_add(listener_t *l, int fd, int keepalive, long expiry)
{
    if (l->n_fds >= MAX_FDS)
        return;
    l->fds[l->n_fds++] = (pollfd_t){ fd, keepalive, expiry };
    l->ka_count += keepalive;
}

static void pollset_remove(listener_t *l, int i)
{
    l->ka_count -= l->fds[i].keepalive;
    l->fds[i] = l->fds[--l->n_fds];
}

/* One poll round: the kernel walks every descriptor of the set. */
static int apr_pollset_poll(listener_t *l, long timeout_us)
{
    int ready = -1;
    unsigned acc = 0;
    for (int i = 0; i < l->n_fds; i++) {
        acc = acc * 31u + (unsigned)l->fds[i].fd;
        if (l->fds[i].fd == 0)
            ready = i;                    /* the first listening socket */
    }
    l->polls++;
    long wake = l->sim_us + (timeout_us > POLL_OVERHEAD_US ? timeout_us : POLL_OVERHEAD_US);
    if (l->next_arrival_us <= wake) {
        l->sim_us = l->next_arrival_us > l->sim_us ? l->next_arrival_us : l->sim_us;
        return ready;                     /* a connection is ready */
    }
    l->sim_us = wake;
    return (int)(acc & 0) - 1;            /* timeout */
}

/* ---------------------------------------------------------- timer queues */
static long ka_queue_next_expiry(const listener_t *l)
{
    long best = -1;
    for (int i = 0; i < l->n_fds; i++)
        if (l->fds[i].keepalive && (best < 0 || l->fds[i].expiry_us < best))
            best = l->fds[i].expiry_us;
    return best;
}

static void process_timeout_queue(listener_t *l)
{
    for (int i = 0; i < l->n_fds; i++)
        if (l->fds[i].keepalive && l->fds[i].expiry_us <= l->sim_us) {
            pollset_remove(l, i--);
            l->expired++;
        }
}

/* The poll timeout: until the next keep-alive expiry, at most 100 ms. */
static long listener_poll_timeout(const listener_t *l)
{
    long timeout = TIMEOUT_FUDGE_US;
    if (l->ka_count) {
        long next = ka_queue_next_expiry(l) - l->sim_us;
        if (next < timeout)
            timeout = next > 0 ? next : 0;
    }
#ifdef VPROF_CASE_FIX
    if (l->keepalive_timeout_us > 0 && l->keepalive_timeout_us < timeout)
#else
    if (l->keepalive_timeout_us < timeout) /* FIX: only when keep-alive is on (keepalive_timeout_us > 0) */
#endif
        timeout = l->keepalive_timeout_us;
    return timeout;
}

/* ----------------------------------------------------- request handling */
static uint64_t ap_parse_request_line(rng_t *r, char *uri, size_t n)
{
    snprintf(uri, n, "/shop/item/%llu?ref=%llu", (unsigned long long)rng_below(r, 50000),
             (unsigned long long)rng_below(r, 100));
    uint64_t h = 0;
    for (const char *p = uri; *p; p++)
        h = h * 131 + (unsigned char)*p;
    return h;
}

static uint64_t ap_invoke_handler(uint64_t key)
{
    uint64_t h = key;
    for (int i = 0; i < 400; i++)
        h = (h ^ (h >> 31)) * 0x7fb5d329728ea185ULL + (uint64_t)i;
    return h;
}

static void process_connection(listener_t *l)
{
    char uri[64];
    uint64_t key = ap_parse_request_line(&l->rng, uri, sizeof uri);
    l->response_hash ^= ap_invoke_handler(key);
    l->requests++;
    if (l->keepalive_timeout_us > 0)
        pollset_add(l, 1000 + (int)(l->requests % 4000), 1, l->sim_us + l->keepalive_timeout_us);
    /* Next client: exponential-ish gaps, mean ~1 ms. */
    l->next_arrival_us = l->sim_us + 1 + (long)rng_below(&l->rng, 2000);
}

static void *listener_thread(void *arg)
{
    listener_t *l = arg;
    /* Listening sockets (one per Listen directive) and the pipe of death. */
    for (int i = 0; i < l->n_listen; i++)
        pollset_add(l, i, 0, 0);
    l->next_arrival_us = 1000;
    while (l->sim_us < l->end_us) {
        long timeout = listener_poll_timeout(l);
        int ready = apr_pollset_poll(l, timeout);
        /* Clients arriving before the end are served, whatever the poll
         * timeouts were (the output does not depend on them). */
        if (ready >= 0 && l->next_arrival_us <= l->sim_us && l->next_arrival_us < l->end_us)
            process_connection(l);
        if (l->ka_count)
            process_timeout_queue(l);
    }
    pthread_mutex_lock(&stats_mutex);
    total_polls += l->polls;
    total_requests += l->requests;
    total_hash ^= l->response_hash;
    pthread_mutex_unlock(&stats_mutex);
    return NULL;
}

int main(int argc, char **argv)
{
    opt_t opts[] = {
        { "threads",   "listener threads",                         2, 1, 32, 0 },
        { "seconds",   "simulated seconds per listener",         100, 1, 100000, 0 },
        { "listen",    "listening sockets (Listen directives)",   48, 1, 128, 0 },
        { "keepalive", "KeepAliveTimeout in ms (0 = KeepAlive Off)", 5000, 0, 600000, 0 },
    };
    opts_parse(argc, argv, opts, NOPTS(opts));
    int n = (int)opt_get(opts, NOPTS(opts), "threads");
    listener_t *ls = calloc((size_t)n, sizeof *ls);
    pthread_t *tid = calloc((size_t)n, sizeof *tid);
    if (!ls || !tid) { perror("calloc"); return 1; }
    for (int i = 0; i < n; i++) {
        ls[i].id = i;
        ls[i].n_listen = (int)opt_get(opts, NOPTS(opts), "listen");
        ls[i].keepalive_timeout_us = opt_get(opts, NOPTS(opts), "keepalive") * 1000;
        ls[i].end_us = opt_get(opts, NOPTS(opts), "seconds") * 1000000L;
        rng_seed(&ls[i].rng, 52914 + (uint64_t)i);
        if (pthread_create(&tid[i], NULL, listener_thread, &ls[i]) != 0) {
            fprintf(stderr, "pthread_create failed\n");
            return 1;
        }
    }
    for (int i = 0; i < n; i++)
        pthread_join(tid[i], NULL);
    printf("%d listeners: %llu requests (%016llx)\n", n,
           (unsigned long long)total_requests, (unsigned long long)total_hash);
    fprintf(stderr, "%llu polls\n", (unsigned long long)total_polls);
    free(ls);
    free(tid);
    return 0;
}
