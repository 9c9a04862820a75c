/* lockscan.c - a request path that waits on a lock another thread holds
 * across a scan (LDB's memcached finding, MDEV-23399's shape), for
 * t_latency_lock.sh. The main thread serves 300 requests (parse, then a
 * lookup under table_lock, 1 ms apart); a crawler thread takes table_lock
 * every 2 ms and scans N_ITEMS table entries while holding it.
 * usage: lockscan N_ITEMS   (normal: 2000, ~µs; buggy: 3000000, ~ms) */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "vprof.h"

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static volatile unsigned long table[1 << 20];
static long n_items;
static volatile int done;
volatile unsigned long sink;

static void pause_us(long us)
{
    struct timespec ts = {0, us * 1000};
    nanosleep(&ts, NULL);
}

__attribute__((noinline)) void scan_items(long n)
{
    for (long i = 0; i < n; i++) table[i & ((1 << 20) - 1)] += i;
}

/* -DINLINE_HOLDER: the lock holder inlined into its thread's loop, as -O2
 * does to a small static function; its lock is then taken at a PC of
 * crawler's symbol (t_latency_lock.sh checks the charge still goes to
 * crawl_items). */
#ifdef INLINE_HOLDER
static inline __attribute__((always_inline)) void crawl_items(void)
#else
__attribute__((noinline)) void crawl_items(void)
#endif
{
    pthread_mutex_lock(&table_lock);
    scan_items(n_items);        /* the whole table, under the lock */
    pthread_mutex_unlock(&table_lock);
}

static void *crawler(void *arg)
{
    (void)arg;
    while (!done) { crawl_items(); pause_us(2000); }
    return NULL;
}

__attribute__((noinline)) unsigned long lookup_item(unsigned long key)
{
    pthread_mutex_lock(&table_lock);
    unsigned long v = table[key & ((1 << 20) - 1)];
    pthread_mutex_unlock(&table_lock);
    return v;
}

__attribute__((noinline)) void parse_request(unsigned long id)
{
    for (int i = 0; i < 2000; i++) sink += id * i;
}

__attribute__((noinline)) void handle_request(unsigned long id)
{
    vprof_req_start(id);
    parse_request(id);
    sink += lookup_item(id * 7919);
    vprof_req_end(id);
}

int main(int argc, char **argv)
{
    n_items = argc > 1 ? atol(argv[1]) : 1000;
    pthread_t t;
    pthread_create(&t, NULL, crawler, NULL);
    for (unsigned long id = 1; id <= 300; id++) { handle_request(id); pause_us(1000); }
    done = 1;
    pthread_join(t, NULL);
    return 0;
}
