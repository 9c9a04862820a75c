/* returned_verdict - t_verdict_writers.sh: insert()'s pass count, level,
 * comes from random_level(); in the buggy run its cap is higher, so
 * inserts do more passes: the verdict says where level comes from. */
#include <stdlib.h>
static int cap = 2;
volatile long sink;
__attribute__((noinline)) static int random_level(void)
{
    int l = 1;
    while ((rand() & 1) == 0 && l < cap) l++;
    return l;
}
__attribute__((noinline)) static void insert(long key)
{
    int level = random_level();
    for (int p = 0; p < level; p++)
        for (long i = 0; i < 400; i++) sink += key ^ i;
}
int main(int argc, char **argv)
{
    cap = argc > 1 ? 12 : 2;
    for (long k = 0; k < 400000; k++) insert(k);
    return 0;
}
