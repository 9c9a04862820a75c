/* A shared library for prog_unwinder.c, built without frame pointers and
 * without -pg: its frames are unwound through its own CFI, between the
 * program's frames (the callback calls back into the program). */
__attribute__((noinline)) static long mix(long (*f)(long), long x, long k)
{
    long a = x, b = k, c = x ^ k, s = 0;
    for (long i = 0; i < k; i++) {
        s += f(a + i);          /* a, b, c live across the call */
        a = a * 3 + b;
        b ^= c;
        c += s;
    }
    return s + a + b + c;
}

long unwlib_apply(long (*f)(long), long n)
{
    long s = 0;
    for (long i = 0; i < n; i++)
        s += mix(f, i, n);
    return s;
}
