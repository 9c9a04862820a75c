/* mc_load: a small memcached load generator for bench/apps/memcached.
 *
 *   mc_load PORT ITEMS CONNS GETS BATCH [shutdown]
 *
 * 1. Loads ITEMS items key:%08d (values derived from the key, 20-40 bytes)
 *    over one connection with pipelined "set ... noreply" and a final
 *    "version" to know the server has read them all.
 * 2. CONNS threads, each with its own connection, send GETS multi-get
 *    requests of BATCH keys each (keys from a per-thread LCG over ITEMS) and
 *    read each reply up to "END".
 * 3. Prints one line per connection: requests, hits, and an FNV-1a hash of
 *    the reply bytes -- the same for any correct server, so two servers
 *    can be compared by their output -- then optionally sends "shutdown"
 *    (the server must run with -A).
 * Exits non-zero on any protocol or socket error. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static int port;
static long items, gets, batch;

struct conn_result {
    int id;
    long requests, hits;
    uint64_t fnv;
    int err;
};

static void die(const char *what)
{
    fprintf(stderr, "mc_load: %s: %s\n", what, strerror(errno));
    exit(1);
}

static int dial(void)
{
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    for (int tries = 0; tries < 600; tries++) {
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        if (fd < 0)
            die("socket");
        if (connect(fd, (struct sockaddr *)&a, sizeof a) == 0) {
            int one = 1;
            setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            return fd;
        }
        close(fd);
        struct timespec ts = { 0, 50 * 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
    die("connect (30 s)");
    return -1;
}

static void send_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            die("send");
        }
        p += k;
        n -= (size_t)k;
    }
}

/* value of key i: deterministic, 20-40 bytes */
static int value_of(long i, char *out)
{
    return sprintf(out, "v%ld-%0*ld", i * 7919 % 1000003, (int)(12 + i % 21), i);
}

/* reads until the buffer ends with END (or VERSION ...); returns length */
static size_t read_until(int fd, char **buf, size_t *cap, const char *end)
{
    size_t n = 0, el = strlen(end);
    for (;;) {
        if (*cap - n < 65536) {
            *cap = *cap * 2 + 65536;
            if (!(*buf = realloc(*buf, *cap)))
                die("realloc");
        }
        ssize_t k = recv(fd, *buf + n, *cap - n, 0);
        if (k <= 0) {
            if (k < 0 && errno == EINTR)
                continue;
            errno = k == 0 ? ECONNRESET : errno;
            die("recv");
        }
        n += (size_t)k;
        if (n >= el && memcmp(*buf + n - el, end, el) == 0)
            return n;
    }
}

static void load(void)
{
    int fd = dial();
    size_t cap = 1 << 20, n = 0;
    char *out = malloc(cap), v[64];
    if (!out)
        die("malloc");
    for (long i = 0; i < items; i++) {
        int vl = value_of(i, v);
        n += (size_t)sprintf(out + n, "set key:%08ld 0 0 %d noreply\r\n%s\r\n", i, vl, v);
        if (n > cap - 256) {
            send_all(fd, out, n);
            n = 0;
        }
    }
    n += (size_t)sprintf(out + n, "version\r\n");
    send_all(fd, out, n);
    char *in = NULL;
    size_t icap = 0;
    size_t got = read_until(fd, &in, &icap, "\r\n");
    if (got < 8 || strncmp(in, "VERSION ", 8) != 0) {
        fprintf(stderr, "mc_load: unexpected reply to the load: %.60s\n", in);
        exit(1);
    }
    free(in);
    free(out);
    close(fd);
}

static void *getter(void *arg)
{
    struct conn_result *r = arg;
    int fd = dial();
    uint64_t x = 0x9E3779B97F4A7C15ull * (uint64_t)(r->id + 1), h = 1469598103934665603ull;
    char *req = malloc((size_t)batch * 16 + 16), *in = NULL;
    size_t icap = 0;
    if (!req)
        die("malloc");
    for (long q = 0; q < gets; q++) {
        size_t n = (size_t)sprintf(req, "get");
        for (long b = 0; b < batch; b++) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            /* one key in 64 is missing, so misses are exercised too */
            long k = (long)((x >> 33) % (uint64_t)(items + items / 64));
            n += (size_t)sprintf(req + n, " key:%08ld", k);
        }
        n += (size_t)sprintf(req + n, "\r\n");
        send_all(fd, req, n);
        size_t got = read_until(fd, &in, &icap, "END\r\n");
        for (size_t i = 0; i < got; i++)
            h = (h ^ (unsigned char)in[i]) * 1099511628211ull;
        for (char *p = in; (p = memmem(p, got - (size_t)(p - in), "VALUE ", 6)); p += 6)
            r->hits++;
        r->requests++;
    }
    r->fnv = h;
    free(req);
    free(in);
    close(fd);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 6) {
        fprintf(stderr, "usage: mc_load PORT ITEMS CONNS GETS BATCH [shutdown]\n");
        return 2;
    }
    port = atoi(argv[1]);
    items = atol(argv[2]);
    int conns = atoi(argv[3]);
    gets = atol(argv[4]);
    batch = atol(argv[5]);
    if (port <= 0 || items <= 0 || conns <= 0 || conns > 64 || gets < 0 || batch <= 0 || batch > 1000) {
        fprintf(stderr, "mc_load: bad arguments\n");
        return 2;
    }
    load();
    pthread_t t[64];
    struct conn_result r[64];
    for (int i = 0; i < conns; i++) {
        r[i] = (struct conn_result){ .id = i };
        if (pthread_create(&t[i], NULL, getter, &r[i]))
            die("pthread_create");
    }
    for (int i = 0; i < conns; i++)
        pthread_join(t[i], NULL);
    printf("items %ld\n", items);
    for (int i = 0; i < conns; i++)
        printf("conn %d: requests %ld hits %ld fnv %016llx\n", i, r[i].requests, r[i].hits,
               (unsigned long long)r[i].fnv);
    if (argc > 6 && strcmp(argv[6], "shutdown") == 0) {
        int fd = dial();
        send_all(fd, "shutdown\r\n", 10);
        char c;
        while (recv(fd, &c, 1, 0) > 0)
            ;
        close(fd);
    }
    return 0;
}
