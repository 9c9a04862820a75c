/* Fixture: burns about 0.3 s of CPU in a loop whose induction variable and
 * condition variables the runtime can sample, then exits with status 3. */
#include <time.h>

long spins;                                  /* global */

static long step(long k) { return (k * 7 + 3) % 1013; }

int main(void)
{
    clock_t stop = clock() + CLOCKS_PER_SEC * 3 / 10;
    long acc = 0;
    for (long round = 0; clock() < stop; round++)
        for (long k = 0; k < 20000; k++)
            acc += step(k + round);
    spins = acc;
    return 3;
}
