/* Fixture: unusual C the schema pass must survive (t_pass.sh compiles it at
 * several -O levels, checks the schema parses and the code is unchanged). */
#include <complex.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>

struct bits { unsigned a : 3, b : 5; int whole; };
struct outer { struct { int x, y; } in; int arr[4]; union { int i; float f; } u; };
struct flex { int n; int data[]; };
typedef int v4 __attribute__((vector_size(16)));
_Atomic int hits;
static jmp_buf jb;
int (*hook)(int);

static int sum(int n, ...)
{
    va_list ap;
    va_start(ap, n);
    int s = 0;
    for (int k = 0; k < n; k++)
        s += va_arg(ap, int);
    va_end(ap);
    return s;
}

int torture(int n, struct bits *bp, struct outer o, struct flex *fx)
{
    int vla[n > 0 ? n : 1];
    double complex z = n + 2.0 * I;
    v4 v = { n, 1, 2, 3 };
    static void *labels[] = { &&one, &&two };
    int t = 0;
    if (bp->a > 2 && bp->whole)              /* bit-field: whole member only */
        t++;
    if (o.in.x > o.arr[1] && o.u.i)
        t += sum(3, o.in.y, bp->b, n);
    for (int j = 0; j < fx->n && j < n; j++)
        vla[j % n] = fx->data[j];
    t += ({ int q = n * 2; q > 3 ? q : 3; });
    goto *labels[n & 1];
one:
    t++;
two:
    if (setjmp(jb) == 0 && hook)
        t += hook(t);
    atomic_fetch_add(&hits, 1);
    if (creal(z) > 1 || v[0] > 2)
        t--;
    __asm__ volatile("" : "+r"(t));
    return t + vla[0];
}
