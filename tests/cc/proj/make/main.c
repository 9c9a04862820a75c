#include <stdlib.h>
#include "queue.h"
int main(int argc, char **argv)
{
    struct queue q = { 0, 64, calloc(64, sizeof(int)) };
    int rounds = argc > 1 ? atoi(argv[1]) : 10;
    for (int r = 0; r < rounds; r++) {
        q.len = q.cap;
        queue_drain(&q, 8);
    }
    long s = stats_sum(q.items, q.cap);
    free(q.items);
    return s == 0 ? 0 : 1;
}
