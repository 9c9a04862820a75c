/* A prefork web server's graceful restart, modelled on Apache httpd bug
 * 54852 (the vProf paper's Figure 4), as a multi-process program.
 *
 * The parent forks worker children that each serve a fixed share of HTTP
 * requests (parse, route, render). Then the parent performs a graceful
 * restart: ap_mpm_mod_killpg() walks the scoreboard and, for every slot,
 * makes a dummy connection so that a child blocked in accept() wakes up
 * and notices the restart.
 *
 * The bug: the loop makes the dummy connection for every slot ever used,
 * also for children that have already exited. Nobody accepts those
 * connections, so each one polls until it times out. With children that
 * stay alive (normal: MaxConnectionsPerChild 0) the restart is instant; with
 * children that exit after their share (buggy: MaxConnectionsPerChild set)
 * every slot costs a full poll timeout. gprof blames the poll loop; the
 * missing "is this child still there?" check is in ap_mpm_mod_killpg(). */
#include "../common/corpus.h"
#include <unistd.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>

#define MAX_SLOTS      32
#define CONNECT_POLLS  16       /* polls a dummy connection takes when accepted */
#define N_ROUTES       24

typedef enum { SERVER_DEAD, SERVER_READY, SERVER_GRACEFUL } slot_status_t;

typedef struct {
    pid_t         pid;
    slot_status_t status;
    int           wake_fd;        /* parent's end of the child's "listener" */
    int           done_fd;        /* child reports "share served" here */
} scoreboard_slot_t;

static scoreboard_slot_t scoreboard[MAX_SLOTS];
static int ap_max_daemons_limit;          /* slots ever used */
static long poll_timeout_iters;           /* poll rounds before a connect times out */
static volatile uint64_t poll_state;
static uint64_t n_polls;

/* ------------------------------------------------------------------ child */
typedef struct {
    char method[8];
    char path[64];
    int  keepalive;
    int  content_length;
} request_rec;

static const char *routes[N_ROUTES] = {
    "/", "/index.html", "/about", "/api/users", "/api/orders", "/api/items",
    "/static/app.js", "/static/app.css", "/img/logo.png", "/login", "/logout",
    "/search", "/cart", "/checkout", "/api/stock", "/api/prices", "/help",
    "/faq", "/blog", "/blog/feed", "/admin", "/health", "/metrics", "/robots.txt",
};

static void make_request_line(rng_t *r, char *buf, size_t n)
{
    const char *m = rng_below(r, 5) ? "GET" : "POST";
    snprintf(buf, n, "%s %s?id=%llu HTTP/1.1\r\nConnection: %s\r\nContent-Length: %llu\r\n",
             m, routes[rng_below(r, N_ROUTES)], (unsigned long long)rng_below(r, 100000),
             rng_below(r, 2) ? "keep-alive" : "close",
             (unsigned long long)rng_below(r, 4096));
}

static int ap_read_request(const char *line, request_rec *req)
{
    memset(req, 0, sizeof *req);
    const char *sp = strchr(line, ' ');
    if (!sp || sp - line >= (long)sizeof req->method)
        return -1;
    memcpy(req->method, line, (size_t)(sp - line));
    const char *q = sp + 1;
    size_t i = 0;
    while (*q && *q != ' ' && *q != '?' && i + 1 < sizeof req->path)
        req->path[i++] = *q++;
    req->keepalive = strstr(line, "keep-alive") != NULL;
    const char *cl = strstr(line, "Content-Length: ");
    req->content_length = cl ? atoi(cl + 16) : 0;
    return 0;
}

static int ap_find_route(const request_rec *req)
{
    for (int i = 0; i < N_ROUTES; i++)
        if (strcmp(routes[i], req->path) == 0)
            return i;
    return -1;
}

/* Renders a response body; the bulk of a child's work. */
static uint32_t ap_render_response(const request_rec *req, int route)
{
    uint32_t h = 2166136261u ^ (uint32_t)route;
    int len = 256 + req->content_length / 4;
    for (int i = 0; i < len; i++) {
        h ^= (uint32_t)(req->path[i % 8] + i);
        h *= 16777619u;
    }
    return h;
}

static void ap_log_transaction(const request_rec *req, uint32_t body, uint64_t *log_hash)
{
    *log_hash = (*log_hash * 1099511628211ULL) ^ body ^ (uint64_t)req->keepalive;
}

static uint64_t child_serve(int slot, long n_requests)
{
    rng_t r;
    rng_seed(&r, 54852 + (uint64_t)slot);
    uint64_t log_hash = 0;
    char line[256];
    request_rec req;
    for (long i = 0; i < n_requests; i++) {
        make_request_line(&r, line, sizeof line);
        if (ap_read_request(line, &req) != 0)
            continue;
        int route = ap_find_route(&req);
        ap_log_transaction(&req, ap_render_response(&req, route), &log_hash);
    }
    return log_hash;
}

/* A child serves its share, reports, then (unless it reached
 * MaxConnectionsPerChild) waits in "accept" for the next connection. */
static void child_main(int slot, long n_requests, long max_per_child, int wake_rd, int done_wr)
{
    uint64_t h = child_serve(slot, n_requests);
    if (write(done_wr, &h, sizeof h) != (ssize_t)sizeof h)
        _exit(3);
    if (max_per_child > 0 && n_requests >= max_per_child)
        exit(0);                       /* reached its limit: the child exits */
    char c;
    if (read(wake_rd, &c, 1) < 0)      /* blocked in accept() */
        _exit(4);
    exit(0);                           /* graceful: finish and go */
}

/* ----------------------------------------------------------------- parent */
static void apr_poll_once(int fd)
{
    for (int i = 0; i < 64; i++)
        poll_state = poll_state * 6364136223846793005ULL + (uint64_t)fd + 1;
    n_polls++;
}

/* Connects to the listener to wake one child. An accepted connection takes
 * a few polls; one nobody accepts polls until the timeout. */
static int dummy_connection(scoreboard_slot_t *s)
{
    long polls = s->status == SERVER_DEAD ? poll_timeout_iters : CONNECT_POLLS;
    if (s->status != SERVER_DEAD && write(s->wake_fd, "!", 1) != 1)
        polls = poll_timeout_iters;
    for (long i = 0; i < polls; i++)
        apr_poll_once(s->wake_fd);
    return s->status != SERVER_DEAD;
}

static int ap_mpm_mod_killpg(void)
{
    int woken = 0;
    for (int i = 0; i < ap_max_daemons_limit; i++) {
        scoreboard_slot_t *s = &scoreboard[i];
#ifdef VPROF_CASE_FIX
        if (s->status != SERVER_DEAD)
            woken += dummy_connection(s);
#else
        woken += dummy_connection(s); /* FIX: skip slots whose child is gone (s->status == SERVER_DEAD) */
#endif
        if (s->status == SERVER_READY)
            s->status = SERVER_GRACEFUL;
    }
    return woken;
}

static int make_child(int slot, long n_requests, long max_per_child)
{
    int wake[2], done[2];
    if (pipe(wake) != 0 || pipe(done) != 0) { perror("pipe"); return -1; }
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) { perror("fork"); return -1; }
    if (pid == 0) {
        close(wake[1]); close(done[0]);
        child_main(slot, n_requests, max_per_child, wake[0], done[1]);
    }
    close(wake[0]); close(done[1]);
    scoreboard[slot] = (scoreboard_slot_t){ pid, SERVER_READY, wake[1], done[0] };
    return 0;
}

/* Waits for every child's report and reaps the ones that exited. */
static uint64_t ap_wait_for_shares(void)
{
    uint64_t total = 0;
    for (int i = 0; i < ap_max_daemons_limit; i++) {
        uint64_t h = 0;
        if (read(scoreboard[i].done_fd, &h, sizeof h) != (ssize_t)sizeof h) {
            fprintf(stderr, "slot %d: child did not report\n", i);
            exit(1);
        }
        total ^= h;
    }
    return total;
}

static void ap_reclaim_child_processes(int block)
{
    for (int i = 0; i < ap_max_daemons_limit; i++) {
        scoreboard_slot_t *s = &scoreboard[i];
        if (!s->pid)
            continue;
        int st;
        pid_t r = waitpid(s->pid, &st, block ? 0 : WNOHANG);
        if (r == s->pid) {
            if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
                fprintf(stderr, "slot %d: child failed\n", i);
            s->status = SERVER_DEAD;
            s->pid = 0;
        }
    }
}

int main(int argc, char **argv)
{
    opt_t opts[] = {
        { "children",     "worker children",                    4, 1, MAX_SLOTS, 0 },
        { "requests",     "requests each child serves",     60000, 1, 100000000, 0 },
        { "max-requests", "MaxConnectionsPerChild (0 = unlimited)", 0, 0, 100000000, 0 },
        { "poll-timeout", "poll rounds before a connect times out", 600000, 1, 100000000, 0 },
    };
    opts_parse(argc, argv, opts, NOPTS(opts));
    int n_children = (int)opt_get(opts, NOPTS(opts), "children");
    long n_requests = opt_get(opts, NOPTS(opts), "requests");
    long max_per_child = opt_get(opts, NOPTS(opts), "max-requests");
    poll_timeout_iters = opt_get(opts, NOPTS(opts), "poll-timeout");
    signal(SIGPIPE, SIG_IGN);

    for (int i = 0; i < n_children; i++)
        if (make_child(i, n_requests, max_per_child) != 0)
            return 1;
    ap_max_daemons_limit = n_children;
    uint64_t served = ap_wait_for_shares();

    /* Children that reached their limit exit on their own; reap them so the
     * scoreboard shows them as dead before the restart. */
    if (max_per_child > 0)
        ap_reclaim_child_processes(1);

    int woken = ap_mpm_mod_killpg();        /* graceful restart */
    ap_reclaim_child_processes(1);
    for (int i = 0; i < n_children; i++) {
        close(scoreboard[i].wake_fd);
        close(scoreboard[i].done_fd);
    }
    printf("%d children served %ld requests each (log %016llx); restart woke %d\n",
           n_children, n_requests, (unsigned long long)served, woken);
    fprintf(stderr, "%llu polls\n", (unsigned long long)n_polls);
    return 0;
}
