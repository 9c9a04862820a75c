/* mcload - a closed-loop memcached load generator for bench/waits/run.sh:
 * N connections (one thread each) send GETs and SETs (one SET in ten) of
 * 32-byte values over K keys for D seconds, each waiting for the reply
 * before the next request, and print the requests per second.
 *
 * usage: mcload HOST PORT CONNECTIONS SECONDS [KEYS] */
#include <arpa/inet.h>
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

static struct sockaddr_in addr;
static double seconds;
static long keys = 10000;
static volatile int stop;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Reads until the buffer ends with the reply's terminator. */
static int reply(int fd, char *buf, size_t cap, const char *end)
{
    size_t n = 0, el = strlen(end);
    for (;;) {
        ssize_t r = read(fd, buf + n, cap - n - 1);
        if (r <= 0) return -1;
        n += (size_t)r;
        buf[n] = 0;
        if (n >= el && !strcmp(buf + n - el, end)) return 0;
        if (n + 1 >= cap) return -1;
    }
}

static void *client(void *arg)
{
    long *done = arg;
    int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof addr) < 0) {
        perror("mcload: connect");
        exit(1);
    }
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    uint64_t x = (uint64_t)(uintptr_t)arg | 1;
    char req[256], buf[4096];
    while (!stop) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        long k = (long)(x % (uint64_t)keys);
        int set = x % 10 == 0, len;
        if (set)
            len = snprintf(req, sizeof req, "set key:%ld 0 0 32\r\n%032ld\r\n", k, k);
        else
            len = snprintf(req, sizeof req, "get key:%ld\r\n", k);
        if (write(fd, req, (size_t)len) != len) { perror("mcload: write"); exit(1); }
        if (reply(fd, buf, sizeof buf, set ? "STORED\r\n" : "END\r\n") < 0) {
            fprintf(stderr, "mcload: bad reply\n");
            exit(1);
        }
        (*done)++;
    }
    close(fd);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: mcload HOST PORT CONNECTIONS SECONDS [KEYS]\n");
        return 2;
    }
    addr.sin_family = AF_INET;
    addr.sin_port = htons((uint16_t)atoi(argv[2]));
    if (inet_pton(AF_INET, argv[1], &addr.sin_addr) != 1) { fprintf(stderr, "mcload: bad host\n"); return 2; }
    int n = atoi(argv[3]);
    seconds = atof(argv[4]);
    if (argc > 5) keys = atol(argv[5]);
    if (n < 1 || n > 256 || seconds <= 0 || keys < 1) { fprintf(stderr, "mcload: bad arguments\n"); return 2; }
    pthread_t t[256];
    long done[256] = {0};
    double t0 = now();
    for (int i = 0; i < n; i++) pthread_create(&t[i], NULL, client, &done[i]);
    while (now() - t0 < seconds) usleep(10000);
    stop = 1;
    long all = 0;
    for (int i = 0; i < n; i++) { pthread_join(t[i], NULL); all += done[i]; }
    printf("%.0f\n", (double)all / (now() - t0));
    return 0;
}
