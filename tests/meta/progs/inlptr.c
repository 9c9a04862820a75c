/* inlptr - pointer parameters of inlined functions that point into their
 * caller's stack objects: at -O2 the DWARF gives such a pointer as an
 * address it computes ("rsp + 24, as a value"); what it points at is plain
 * memory there (tests/meta/t_oracle.sh, vprof-meta locexpr.c/place.c). */
#include <stdlib.h>

struct budget { long limit, used; };
struct state { long pad[3]; struct budget b; long count; };
volatile long sink;

/* keeps the state in memory: its address escapes */
static void __attribute__((noinline)) audit(struct state *st)
{
    sink = st->b.used + st->count;
}

static inline long spend(struct budget *b, long *count, long n)
{
    long s = 0;
    for (long i = 0; i < n && b->used < b->limit; i++) {
        b->used += i & 3;
        *count += 1;
        s += i ^ *count;
        sink = s;
    }
    return s;
}

int main(int argc, char **argv)
{
    struct state st = { {0}, { argc > 1 ? atol(argv[1]) : 5000, 0 }, 0 };
    long t = 0;
    for (int r = 0; r < 4; r++) {
        st.b.used = 0;
        t += spend(&st.b, &st.count, 3000 + r);
        audit(&st);
    }
    return (int)(t & 1);
}
