/* deep_inlined - the hot loop sits under twelve thin wrappers the compiler
 * inlines into main (tests/report/t_inlined.sh), as a kernel-style write
 * path does: the loop's PCs carry a thirteen-deep inline chain, and the
 * function whose code they are is the innermost one. */
#include <stdlib.h>

volatile long sink;

static inline __attribute__((always_inline)) long deep_spin(long n)
{
    long s = 0;
    for (long i = 0; i < n; i++) s += i ^ sink;
    return s;
}

/* each wrapper adds one level to the chain, as a layer of an I/O stack */
#define LAYER(name, inner) \
    static inline __attribute__((always_inline)) long name(long n) { return inner(n) + 1; }
LAYER(layer12, deep_spin)
LAYER(layer11, layer12)
LAYER(layer10, layer11)
LAYER(layer9, layer10)
LAYER(layer8, layer9)
LAYER(layer7, layer8)
LAYER(layer6, layer7)
LAYER(layer5, layer6)
LAYER(layer4, layer5)
LAYER(layer3, layer4)
LAYER(layer2, layer3)
LAYER(layer1, layer2)

int main(int argc, char **argv)
{
    long limit = argc > 1 ? atol(argv[1]) : 100000;
    long t = 0;
    for (int r = 0; r < 300; r++) t += layer1(limit);
    sink = t;
    return 0;
}
