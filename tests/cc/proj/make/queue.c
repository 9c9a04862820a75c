#include "queue.h"
int queue_drain(struct queue *q, int budget)
{
    int done = 0;
    while (q->len > 0 && done < budget) {
        q->items[q->len - 1] = 0;
        q->len--;
        done++;
    }
    return done;
}
