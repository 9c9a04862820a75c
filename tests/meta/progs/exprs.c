/* exprs - variables whose optimized location is a value the DWARF computes
 * (an expression ending in DW_OP_stack_value): a loop index kept as a
 * scaled pointer difference ("(rax - &table) >> 2"), a masked char minus
 * a constant, "n - 1", clang's DW_OP_convert chains, gcc's unsigned
 * division of a pointer difference, a sum of registers; and a variable in
 * memory at an address computed by several operations
 * (tests/meta/t_oracle.sh: vprof-meta makes them EXPR programs, and the
 * runtime's evaluator must read gdb's values). */
#include <stdlib.h>

volatile long sink;
int table[64];

static void __attribute__((noinline)) walk(const int *a, int n)
{
    for (int i = 0; i < n; i++)
        sink += a[i];
}

static void __attribute__((noinline)) walk2(const long *a, long n)
{
    for (long i = 0; i < n; i++)
        sink += a[i] * 3;
}

/* gcc keeps a pointer into table, not i */
static void __attribute__((noinline)) scan(int n)
{
    for (int i = 0; i < n; i++) {
        sink += table[i];
        sink ^= i;
    }
}

static int __attribute__((noinline)) chars(const char *s)
{
    int h = 0;
    for (; *s; s++) {
        unsigned char c = *s;
        int up = c - 32;
        h = h * 31 + up;
        sink = h;
    }
    return h;
}

static long __attribute__((noinline)) tail(const long *v, long n)
{
    long last = n - 1;
    long t = v[last];
    sink = t;
    sink = last;
    return t;
}

static unsigned __attribute__((noinline)) mix(unsigned x)
{
    unsigned lo = x & 0xff;
    unsigned hi = x >> 8;
    unsigned r = 0;
    for (unsigned k = 0; k < 4; k++) {
        r = r * 17 + (lo ^ k);
        sink = r;
    }
    return r + hi;
}

static int __attribute__((noinline)) low_bytes(const unsigned *w, int n)
{
    int s = 0;
    for (int k = 0; k < n; k++) {
        unsigned char c = (unsigned char)w[k];
        s += c;
        sink = s;
    }
    return s;
}

/* 48-byte records: gcc gives i as (p - r) / 48, dividing as unsigned
 * (DW_OP_convert to unsigned long around DW_OP_div) */
struct rec { long k[6]; };
struct rec recs[12];

static long __attribute__((noinline)) sum_recs(const struct rec *r, int n)
{
    long s = 0;
    for (int i = 0; i < n; i++) {
        s += r[i].k[1];
        sink = s;
    }
    return s;
}

/* An inlined parameter still in memory at an address the DWARF computes:
 * gcc gives key as the memory location "rax * 8 + rsi + 8" (the element
 * of keys), not a value */
struct bucket { unsigned char tag[8]; unsigned long keys[8]; struct bucket *next; };
struct bucket bk[4];

static inline void put(unsigned long key, int slot)
{
    unsigned long h = key * 0x9e3779b97f4a7c15ul;
    sink += (long)(h >> 33) + slot;
    sink ^= (long)key;
}

static void __attribute__((noinline)) rehash(struct bucket *b, int n)
{
    for (int i = 0; i < n; i++)
        for (int k = 0; k < 8; k++)
            if (b[i].tag[k])
                put(b[i].keys[k], k);
}

static inline int clamp(int x, int lo)
{
    int d = x - lo;
    return d < 0 ? lo : x;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 40;
    long v[8];
    unsigned w[16];
    for (int i = 0; i < 64; i++)
        table[i] = i * 7;
    for (int i = 0; i < 8; i++)
        v[i] = 100 + i;
    for (int i = 0; i < 16; i++)
        w[i] = 0x1234u * (unsigned)i + 0x5a;
    walk(table, n);
    walk2(v, 8);
    scan(n);
    for (int i = 0; i < 12; i++)
        recs[i].k[1] = i;
    for (int i = 0; i < 4; i++)
        for (int k = 0; k < 8; k++) {
            bk[i].tag[k] = (unsigned char)((i + k) % 3);
            bk[i].keys[k] = 1000u * (unsigned)i + (unsigned)k;
        }
    rehash(bk, 4);
    long s = sum_recs(recs, 12) + chars("Hello, world") + tail(v, 8) + mix((unsigned)n * 1000u) + low_bytes(w, 16);
    for (int r = 0; r < 5; r++)
        s += clamp(r * 3, 4);
    return (int)(s & 1);
}
