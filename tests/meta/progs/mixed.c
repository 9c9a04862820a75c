/* Test program for the vprof-meta oracle: many small functions with the
 * variable shapes real code has - hash table, string scanning, enums, bool,
 * unsigned char/short, floats, recursion, switch, static locals. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

enum color { RED, GREEN = 5, BLUE = 9 };
typedef unsigned long hash_t;

struct entry { const char *key; int count; struct entry *next; };

static struct entry pool[64];
static unsigned pool_used;
static struct entry *table[16];
unsigned long lookups;
float load_factor = 0.0f;

__attribute__((noinline)) static hash_t hash(const char *s, size_t n)
{
    hash_t h = 5381;
    for (size_t i = 0; i < n; i++)
        h = h * 33 + (unsigned char)s[i];
    return h;
}

__attribute__((noinline)) static struct entry *bump(const char *w, size_t n)
{
    hash_t h = hash(w, n);
    unsigned slot = (unsigned)(h & 15);
    lookups++;
    for (struct entry *e = table[slot]; e; e = e->next)
        if (strlen(e->key) == n && !memcmp(e->key, w, n)) {
            e->count++;
            return e;
        }
    if (pool_used >= 64)
        return NULL;
    struct entry *e = &pool[pool_used++];
    e->key = w;
    e->count = 1;
    e->next = table[slot];
    table[slot] = e;
    load_factor = (float)pool_used / 16.0f;
    return e;
}

__attribute__((noinline)) static int classify(unsigned char c, enum color *col)
{
    bool vowel = false;
    short weight = 1;
    switch (c) {
    case 'a': case 'e': case 'i': case 'o': case 'u':
        vowel = true;
        weight = 3;
        *col = GREEN;
        break;
    case ' ':
        weight = 0;
        *col = BLUE;
        break;
    default:
        *col = RED;
    }
    return vowel ? weight * 2 : weight;
}

__attribute__((noinline)) static long fib(int n)
{
    static int depth_max;
    if (n > depth_max)
        depth_max = n;
    return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

__attribute__((noinline)) static double average(const int *v, int n)
{
    double sum = 0.0;
    int nonzero = 0;
    for (int i = 0; i < n; i++) {
        sum += v[i];
        nonzero += v[i] != 0;
    }
    return nonzero ? sum / nonzero : 0.0;
}

int main(void)
{
    static const char text[] = "the quick brown fox jumps over the lazy dog the end";
    int scores[8] = { 0 };
    enum color col = RED;
    size_t start = 0, len = strlen(text);
    for (size_t i = 0; i <= len; i++) {
        if (i == len || text[i] == ' ') {
            struct entry *e = bump(text + start, i - start);
            if (e && e->count > 1)
                scores[e->count & 7]++;
            start = i + 1;
        }
        if (i < len)
            scores[classify((unsigned char)text[i], &col) & 7]++;
    }
    long f = fib(10);
    double avg = average(scores, 8);
    printf("%lu %u %.2f %ld %.3f %d\n", lookups, pool_used, load_factor, f,
           avg, (int)col);
    return 0;
}
