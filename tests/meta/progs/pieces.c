/* Test program for vprof-meta: a struct local that the optimiser splits
 * into registers (DW_OP_piece), read through the schema as pp.a / pp.b. */
#include <stdio.h>
#include <stdlib.h>

struct pair { int a; int b; };

__attribute__((noinline)) int consume(int x)
{
    return x * 3 + (x & 1);
}

__attribute__((noinline)) int pieces(int x, int y)
{
    struct pair pp = { x + 1, y * 2 };
    int r = 0;
    for (int i = 0; i < pp.a; i++)
        r += consume(pp.b + i);
    return r + pp.b;
}

int main(int argc, char **argv)
{
    int x = argc > 1 ? atoi(argv[1]) : 4;
    printf("%d\n", pieces(x, x + 3));
    return 0;
}
