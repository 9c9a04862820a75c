struct queue { int len; int cap; int *items; };
int queue_drain(struct queue *q, int budget);
long stats_sum(const int *v, int n);
