/* A topic's subscriber list (tests/report/t_adders.sh): subscribe() adds a
 * session again on every reconnect instead of replacing its subscription,
 * and every publish() walks the stale copies. The normal run reconnects
 * each session once, the buggy one 20 times: publish walks 20 times as
 * far per call, subscribe - cheap, run a few hundred times, never on
 * publish's stack - lacks the check; housekeeping() is the same work in
 * both. Argument: subscriptions per session. */
#include <cstdio>
#include <cstdlib>
#include <vector>

struct Sub { unsigned session; };
struct Topic { std::vector<Sub> subs; };
static Topic topics[16];
static unsigned long delivered;

__attribute__((noinline)) void deliver(unsigned session)
{
    delivered += session;
}

__attribute__((noinline)) void subscribe(Topic *t, unsigned session)
{
    t->subs.push_back({session});   /* the bug: an existing subscription is not replaced */
}

/* the rest of the broker's work, the same in both runs */
__attribute__((noinline)) unsigned long housekeeping(unsigned long n)
{
    unsigned long h = 0;
    for (unsigned long i = 0; i < n; i++)
        h = h * 31 + (i ^ delivered);
    return h;
}

__attribute__((noinline)) void publish(const Topic *t)
{
    for (const Sub &s : t->subs)
        deliver(s.session);
}

int main(int argc, char **argv)
{
    unsigned resub = argc > 1 ? (unsigned)atoi(argv[1]) : 1;
    for (unsigned r = 0; r < resub; r++)
        for (unsigned s = 0; s < 64; s++)
            subscribe(&topics[s % 16], s);
    for (unsigned i = 0; i < 200000; i++)
        publish(&topics[i % 16]);
    printf("%lu %lu\n", delivered, housekeeping(60000000));
    return 0;
}
