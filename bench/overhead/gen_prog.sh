#!/bin/bash
# Writes a CPU-bound C program with F functions of 4 locals each plus G
# globals (default 250 x 4 + 8 = 1008 variables) to stdout. Every function
# runs a short loop over its locals; main calls all of them round-robin
# for ROUNDS rounds, so ticks land all over the text and the call graph is
# busy (every call goes through mcount).
F=${1:-250} G=${2:-8}
cat <<'H'
#include <stdio.h>
#include <stdlib.h>
H
for ((g = 0; g < G; g++)); do echo "volatile long g_v$g = $g;"; done
for ((f = 0; f < F; f++)); do
cat <<C
__attribute__((noinline)) long f$f(long n)
{
    long a$f = n, b$f = 0;
    int c$f = $f;
    for (long i$f = 0; i$f < n; i$f++) {
        b$f += (a$f ^ i$f) + c$f;
        a$f = a$f * 3 + (b$f >> 7);
        c$f ^= (int)(i$f & 15);
    }
    g_v$((f % G)) += c$f;
    return a$f + b$f;
}
C
done
echo "int main(int argc, char **argv)"
echo "{"
echo "    long rounds = argc > 1 ? atol(argv[1]) : 2000, s = 0;"
echo "    for (long r = 0; r < rounds; r++) {"
for ((f = 0; f < F; f++)); do echo "        s += f$f(40 + (r & 7));"; done
echo "    }"
echo "    printf(\"%ld\\n\", s);"
echo "    return 0;"
echo "}"
