/* keepvars.c - locals that clang -O2 optimizes out of the debug info (t in
 * prune); `vprof-cc --keep-vars` must keep them readable (t_keepvars.sh). */
#include <stdio.h>
#include <stdlib.h>

typedef struct { int used; unsigned xmax; } Tup;
typedef struct { unsigned horizon; long retries; } State;

static Tup tups[16];
static unsigned probes;

__attribute__((noinline)) static int expired(unsigned xmax, unsigned h)
{
    probes++;
    return xmax != 0 && xmax < h;
}

/* `s` is only read through before the loop ends, `n` only in the test */
__attribute__((noinline)) static void prune(State *s, int n)
{
    for (int i = 0; i < n; i++) {
        Tup *t = &tups[i];
        if (!t->used)
            continue;
        if (expired(t->xmax, s->horizon)) {
            t->used = 0;
            s->retries++;
        }
    }
}

/* `scale` is dead once `lim` is computed; `k` is folded into `lim` */
__attribute__((noinline)) static unsigned count_below(unsigned scale, unsigned k)
{
    unsigned lim = scale * k + 3, c = 0;
    for (int j = 0; j < 16; j++)
        if (tups[j].xmax < lim && expired(tups[j].xmax, lim))
            c++;
    return c;
}

int main(int argc, char **argv)
{
    State s = { argc > 1 ? (unsigned)atoi(argv[1]) : 30, 0 };
    for (int i = 0; i < 16; i++) {
        tups[i].used = i % 3 != 0;
        tups[i].xmax = (unsigned)(i * 7 % 41);
    }
    for (int round = 0; round < 2; round++) {
        prune(&s, 16);
        s.horizon += 10;
    }
    unsigned c = count_below(s.horizon / 10, 3);
    printf("%ld %u %u %u\n", s.retries, s.horizon, probes, c);
    return 0;
}
