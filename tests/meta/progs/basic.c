/* Test program for vprof-meta: globals, locals, params, loops, pointers,
 * struct members, inlining, lexical blocks. Kept short; runs in ~1 ms. */
#include <stdio.h>
#include <stdlib.h>

struct item { int key; long weight; double score; struct item *next; };

long g_total = 7;
static int g_count = 3;
double g_ratio = 0.5;
int *g_ptr;
__thread int g_tls = 5;
const int g_const = 42;

static inline __attribute__((always_inline)) int sq(int v)
{
    int r = v * v;
    return r + g_count;
}

__attribute__((noinline)) long walk(struct item *head, int limit)
{
    long sum = 0;
    int steps = 0;
    for (struct item *p = head; p && steps < limit; p = p->next) {
        int k = p->key;
        sum += k * p->weight;
        steps++;
        if (k > 2) {
            int extra = sq(k);
            sum += extra;
        }
    }
    g_total += sum;
    return sum + steps;
}

__attribute__((noinline)) double mix(double a, float b, unsigned char c,
                                     short d, int *pi)
{
    double acc = a * b;
    for (unsigned i = 0; i < c; i++)
        acc += d * (double)i + *pi;
    g_ratio = acc / (c + 1);
    return acc;
}

__attribute__((noinline)) int use_struct(struct item s, struct item *q)
{
    int total = 0;
    for (int i = 0; i < 3; i++)
        total += s.key + q->key + (int)q->weight;
    return total + g_tls;
}

int main(int argc, char **argv)
{
    struct item items[5];
    int n = argc > 1 ? atoi(argv[1]) : 5;
    static int calls;
    for (int i = 0; i < 5; i++) {
        items[i].key = i + 1;
        items[i].weight = 10 * i;
        items[i].score = i * 0.25;
        items[i].next = i + 1 < 5 ? &items[i + 1] : NULL;
    }
    int seven = 7;
    g_ptr = &seven;
    calls++;
    long w = walk(items, n);
    double m = mix(1.5, 2.5f, 3, -4, g_ptr);
    int u = use_struct(items[1], &items[2]);
    printf("%ld %.3f %d %d %d\n", w, m, u, calls, g_const);
    return 0;
}
